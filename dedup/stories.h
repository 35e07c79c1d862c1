#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dedup/window.h"

namespace newsflow::dedup {

/// One article as a story lists it.
struct StoryMember {
  std::string id;
  std::string url;
  std::string source;
  DupKind kind = DupKind::kUnique;
};

/// The latest state of a story, as published on the stories topic.
struct Story {
  std::string story_id;
  std::string title;                  ///< title of the representative article
  std::string representative;         ///< id of the article that stands for the story
  std::vector<StoryMember> articles;  ///< the first `StoryOptions::max_listed` members
  std::size_t article_count = 0;
  std::size_t sources = 0;  ///< distinct sources among the listed members
  std::int64_t first_seen = 0;
  std::int64_t last_updated = 0;
  std::uint64_t version = 0;  ///< increases with every change
};

/// Options of story grouping; filled by `config/`.
struct StoryOptions {
  std::int64_t window_seconds = 72 * 3600;  ///< stories idle this long behind the watermark go
  std::size_t max_listed = 100;             ///< members listed per story
};

/// Groups articles into stories: a duplicate joins the story of the article it duplicates,
/// anything else starts a story named after itself. Not thread-safe: one owner.
class StoryBook {
 public:
  explicit StoryBook(StoryOptions options = {}) : options_(options) {}

  /// Puts the article into a story and returns that story's new state. An article already
  /// placed returns its story unchanged (replays are idempotent).
  const Story& assign(const StoryMember& member, std::string_view title, const Verdict& verdict,
                      std::int64_t event_time);

  /// Story id of an article still held, or empty.
  std::string story_of(std::string_view article_id) const;

  /// Number of stories held.
  std::size_t size() const { return stories_.size(); }

  /// The `n` stories with the most articles, largest first (ties: most recently updated).
  std::vector<Story> largest(std::size_t n) const;

 private:
  void expire(std::int64_t watermark);

  StoryOptions options_;
  std::unordered_map<std::string, Story> stories_;
  std::unordered_map<std::string, std::string> story_of_;  // article id -> story id
  std::int64_t watermark_ = 0;
  std::size_t since_sweep_ = 0;
};

}  // namespace newsflow::dedup
