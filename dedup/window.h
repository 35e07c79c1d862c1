#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>

#include "dedup/fingerprint.h"

namespace newsflow::dedup {

/// What an article is relative to the articles in the window.
enum class DupKind { kUnique, kExact, kNear, kContained };

/// "unique", "exact", "near" or "contained".
std::string_view dup_kind_name(DupKind k);

/// The dedup decision for one article.
struct Verdict {
  DupKind kind = DupKind::kUnique;
  std::string of;           ///< id of the earliest article in the window it duplicates
  double similarity = 0.0;  ///< 1.0 for exact duplicates, 0.0 for unique articles
};

/// Options of the dedup window; filled by `config/`.
struct WindowOptions {
  std::int64_t window_seconds = 72 * 3600;  ///< how far behind the watermark entries live
};

/// The sliding event-time window of recent articles. The watermark is the largest event time
/// seen; entries older than the watermark minus the window length expire, so memory is bounded
/// by the arrival rate times the window. Not thread-safe: one owner (the pipeline).
class DedupWindow {
 public:
  explicit DedupWindow(WindowOptions options = {}) : options_(options) {}

  /// Judges the article `id` with content fingerprint `hash` and event time `event_time`
  /// (seconds since the epoch), then remembers it. Judging an id that is still in the window
  /// returns the verdict it got the first time, so replays after a crash repeat decisions.
  Verdict observe(std::string_view id, const ContentHash& hash, std::int64_t event_time);

  /// Number of articles held.
  std::size_t size() const { return by_id_.size(); }

  /// Largest event time seen (0 before the first article).
  std::int64_t watermark() const { return watermark_; }

 private:
  struct Entry {
    ContentHash hash;
    std::int64_t event_time;
    Verdict verdict;
  };
  void expire();

  WindowOptions options_;
  std::int64_t watermark_ = 0;
  std::unordered_map<std::string, Entry> by_id_;
  // Ids per fingerprint in arrival order; the front is the original.
  std::unordered_map<ContentHash, std::deque<std::string>, ContentHashHasher> by_hash_;
  std::multimap<std::int64_t, std::string> by_time_;
};

}  // namespace newsflow::dedup
