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
  std::string language;  ///< BCP-47 tag of the article's text, "" when unknown
};

/// The latest state of a story, as published on the stories topic.
struct Story {
  std::string story_id;
  std::string title;                  ///< title of the representative article
  std::string representative;         ///< id of the article that stands for the story
  std::string language;               ///< language of the article that began it ("" unknown)
  std::vector<StoryMember> articles;  ///< the first `StoryOptions::max_listed` members
  std::size_t article_count = 0;
  std::size_t sources = 0;  ///< distinct sources among the listed members
  std::int64_t first_seen = 0;
  std::int64_t last_updated = 0;
  std::uint64_t version = 0;  ///< increases with every change
  /// Stories merged into this one by its latest update: they are gone (a tombstone each on the
  /// stories topic) and their articles are this story's now.
  std::vector<std::string> merged_from;
};

/// Options of story grouping; filled by `config/`.
struct StoryOptions {
  std::int64_t window_seconds = 72 * 3600;  ///< stories idle this long behind the watermark go
  std::size_t max_listed = 100;             ///< members listed per story
  /// A new article that duplicates nothing joins the most similar recent story when the cosine
  /// of their TF-IDF vectors (`terms_of`), decayed by the time between them, reaches this; 0
  /// disables grouping beyond duplicates. Calibrated by tests/bench/story_calibrate.sh.
  double similarity_threshold = 0.4;
  double decay_hours = 24;      ///< similarity halves... e-folds every this many hours apart
  std::size_t lead_words = 80;  ///< words of the text that count with the title
  /// Words of the text after the lead that count too, each at `body_weight`, a term's share
  /// from the body capped at `body_cap` (a word the article repeats does not drown the title).
  std::size_t body_words = 300;
  double body_weight = 0.25;
  double body_cap = 1.0;
  /// Weight factor of entity-like words: capitalized words inside a sentence and numbers of
  /// two or more digits (names, places, counts and dates are what tell two events apart).
  double entity_boost = 2.0;
  /// The heaviest terms an article keeps (what a state record carries per article).
  std::size_t terms_per_article = 64;
  /// Two stories that began apart (the first reports had too little in common) are merged when
  /// an article matches the other one this well too; 0 never merges.
  double merge_threshold = 0.5;
  /// A story gathers articles of one language: an article whose language is known joins no
  /// story (by similarity) begun in another (Simplified and Traditional Chinese are one).
  bool within_language = true;
};

/// Groups articles into stories: a duplicate joins the story of the article it duplicates,
/// anything else starts a story named after itself. Not thread-safe: one owner.
class StoryBook {
 public:
  explicit StoryBook(StoryOptions options = {}) : options_(options) {}

  /// Puts the article into a story and returns that story's new state: the story of the article
  /// it duplicates, else the most similar recent story by title and lead (`text`), else a new
  /// one. `story_hint` forces a story id (state restored after a restart). An article already
  /// placed returns its story unchanged (replays are idempotent).
  const Story& assign(const StoryMember& member, std::string_view title, const Verdict& verdict,
                      std::int64_t event_time, std::string_view text = {},
                      std::string_view story_hint = {});

  /// An article's weighted terms as stories compare them: its title's (twice), its lead's, its
  /// body's (capped), entity-like words boosted; at most `terms_per_article`, heaviest first.
  using Terms = std::unordered_map<std::string, float>;
  /// `normalized`, when given, is `normalize_text(text)` already made (the fingerprint's).
  static Terms terms_of(std::string_view title, std::string_view text, const StoryOptions& options,
                        std::string_view normalized = {});

  /// `assign` with the article's terms already made (`terms_of`; a restore has no text).
  const Story& assign_terms(const StoryMember& member, std::string_view title,
                            const Verdict& verdict, std::int64_t event_time, const Terms& terms,
                            std::string_view story_hint = {});

  const StoryOptions& options() const { return options_; }

  /// Story id of an article still held (after merges), or empty.
  std::string story_of(std::string_view article_id) const;

  /// Forgets which story the article is in (it left the dedup window: nothing can name it as
  /// the article it duplicates any more); the story keeps its counts and listed members. So the
  /// index is bounded by the window (`window.max_articles`), not by how long a story lives.
  void forget(std::string_view article_id) { story_of_.erase(std::string(article_id)); }

  /// Articles whose story the book knows.
  std::size_t indexed() const { return story_of_.size(); }

  /// Restores a merge recorded in an article (`story_merged_from`): `from` is part of `into`.
  /// Articles restored later with the hint `from` join `into`; a `from` already restored is
  /// merged now.
  void restore_merge(const std::string& from, const std::string& into);

  /// Number of stories held.
  std::size_t size() const { return stories_.size(); }

  /// The `n` stories with the most articles, largest first (ties: most recently updated).
  std::vector<Story> largest(std::size_t n) const;

 private:
  void expire(std::int64_t watermark);

  StoryOptions options_;
  std::unordered_map<std::string, Story> stories_;
  std::unordered_map<std::string, std::string> story_of_;  // article id -> story id
  // Term weights per story (title and lead of its articles), capped, and the index from terms
  // to the stories that have them; rebuilt at every sweep.
  std::unordered_map<std::string, std::unordered_map<std::string, float>> story_terms_;
  std::unordered_map<std::string, std::vector<std::string>> term_stories_;
  // Stories scoring at least `floor` against the terms, best first.
  // With `within_language`, stories begun in another known language are left out.
  std::vector<std::pair<double, std::string>> similar_stories(
      const std::unordered_map<std::string, float>& terms, std::int64_t event_time, double floor,
      std::string_view language) const;
  // Follows merges: the story an id now stands for.
  std::string resolve(std::string id) const;
  // Moves `victim` into `survivor` (both held).
  void merge(Story& survivor, const std::string& victim);
  std::unordered_map<std::string, std::string> merged_into_;  // merged story id -> survivor
  void add_terms(const std::string& story_id, const std::unordered_map<std::string, float>& terms);
  std::int64_t watermark_ = 0;
  std::size_t since_sweep_ = 0;
};

}  // namespace newsflow::dedup
