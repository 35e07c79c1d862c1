#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "dedup/stories.h"

namespace newsflow::daemon {

/// What the live status page shows; the daemon refreshes a copy after its batches.
struct StatusSnapshot {
  struct DeadLetter {
    std::int64_t at = 0;  ///< unix seconds
    std::string reason;
    std::string detail;
    std::string topic;
    int partition = 0;
    std::int64_t offset = 0;
  };
  /// Running totals at one moment; rates are the differences between neighbours.
  struct Sample {
    std::int64_t at = 0;  ///< unix seconds
    std::uint64_t consumed = 0;
    std::uint64_t articles = 0;
    std::uint64_t duplicates = 0;
    std::uint64_t dead_letters = 0;
  };
  static constexpr std::size_t kMaxDeadLetters = 20;
  static constexpr std::size_t kMaxSamples = 90;  ///< 15 minutes at one sample per 10 s

  std::string version;
  std::int64_t started = 0;
  std::int64_t now = 0;
  bool ready = false;
  std::size_t window_articles = 0;
  std::size_t window_bytes = 0;
  std::size_t stories_active = 0;
  std::vector<dedup::Story> stories;  ///< the largest, largest first
  std::vector<dedup::Story> newest;   ///< the most recently updated, newest first
  /// The stories those list as related (`stories.related_across_languages`): headline and
  /// language by story id, for those still held.
  struct Related {
    std::string title;
    std::string language;
  };
  std::map<std::string, Related> related;
  std::deque<DeadLetter> dead_letters;  ///< newest first
  std::deque<Sample> samples;           ///< oldest first
};

/// The status page: one self-contained HTML document (inline CSS and SVG, no scripts, no
/// external assets), refreshed by the browser every 10 s.
std::string render_status_page(const StatusSnapshot& status);

/// The stories page (/stories): the largest and the newest stories of the window with their
/// headlines, counts of articles, copies and outlets, languages and outlets, the stories of other
/// languages each is related to, reloaded by the browser every 10 s. Each story is an `li` with
/// `data-story-id`, `data-articles` and `data-copies`, so a test or a scraper reads it without
/// parsing the prose.
std::string render_stories_page(const StatusSnapshot& status);

/// `text` with &, <, >, " and ' escaped for HTML text and attribute values.
std::string html_escape(std::string_view text);

/// Whether `url` may be written into an href: an absolute http or https URL (any case) with no
/// space, control character or backslash. Anything else (javascript:, data:, a relative path)
/// is shown as text, so a page or feed cannot put script on the ops origin.
bool is_web_url(std::string_view url);

}  // namespace newsflow::daemon
