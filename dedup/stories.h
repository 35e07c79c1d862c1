#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dedup/internal/article_index.h"
#include "dedup/internal/packed_strings.h"
#include "dedup/internal/robin_hood.h"
#include "dedup/internal/slot_list.h"
#include "dedup/internal/story_index.h"
#include "dedup/internal/table_part.h"
#include "dedup/story_terms.h"
#include "dedup/term_stats.h"
#include "dedup/window.h"

namespace newsflow::dedup {

namespace internal {
class Reader;
class Writer;
}  // namespace internal

/// One article as a story lists it. A story lists up to `StoryOptions::max_listed`, so the
/// strings share one heap block: 16 bytes a member and the block. A URL on its source's host
/// ("https://www." or "http://" and the source) is kept without that beginning, and an id of
/// lowercase hex digits (the daemon derives 16) two digits a byte.
class StoryMember {
 public:
  StoryMember() = default;
  StoryMember(std::string_view id, std::string_view url, std::string_view source,
              DupKind kind = DupKind::kUnique, std::string_view language = {});

  std::string id() const;
  std::string url() const;
  std::string_view source() const { return strings_[2]; }
  DupKind kind() const { return kind_; }
  std::string_view language() const { return strings_[3]; }  ///< BCP-47, "" when unknown

 private:
  internal::PackedStrings<4> strings_;  // the id, the URL (without its host's part), ...
  DupKind kind_ = DupKind::kUnique;
  std::uint8_t host_ = 0;            // which of the source's beginnings the URL had left (0: none)
  std::uint8_t id_digits_ = kRawId;  // hex digits of the packed id, or kRawId: kept as it came
  static constexpr std::uint8_t kRawId = 0xFF;
};

/// The latest state of a story, as published on the stories topic.
/// What a story's card shows of an article when it represents the story.
struct StoryCard {
  std::string_view image_url;
  std::string_view description;
};

struct Story {
  std::string story_id;
  std::string title;  ///< headline of the representative article
  /// The representative's lead image (absolute http(s) URL) and description: the story's card.
  std::string image_url;
  std::string description;
  /// Id of the article that stands for the story: its most central report, the one whose terms
  /// are the closest to the story's (each new report that is no copy challenges it).
  std::string representative;
  std::string language;               ///< language of the article that began it ("" unknown)
  std::vector<StoryMember> articles;  ///< the first `StoryOptions::max_listed` members
  std::size_t article_count = 0;
  std::size_t sources = 0;  ///< distinct sources among the listed members
  std::size_t copies = 0;   ///< members that duplicate another article (exact, near, contained)
  std::vector<std::string> languages;  ///< the languages of its members, sorted (known ones)
  std::int64_t first_seen = 0;
  std::int64_t last_updated = 0;
  /// Time of its latest report (a member that copies no other): how recent the story's event
  /// is. A copy arrives after its original by however long syndication took, and says nothing
  /// of the event's news.
  std::int64_t last_report = 0;
  std::uint64_t version = 0;  ///< increases with every change
  /// Stories merged into this one by its latest update: they are gone (a tombstone each on the
  /// stories topic) and their articles are this story's now.
  std::vector<std::string> merged_from;
  /// With `StoryOptions::related_across_languages`: stories begun in other languages whose
  /// terms agree with this one's (names, numbers, words the languages share), most alike first,
  /// as of its latest update (a restore, which publishes nothing, leaves them empty).
  std::vector<std::string> related_stories;
};

/// A logistic model of "this article reports the story's event": the probability
/// 1 / (1 + exp(-(bias + cosine * c + containment * k))) from two features of an (article,
/// story) pair, each decayed by the time between the article and the story's latest report
/// (`Story::last_report`, `StoryOptions::decay_hours`):
/// `cosine`, the cosine of the article's TF-IDF vector and the story's centroid, and
/// `containment`, the share of the article's TF-IDF weight on terms the story has. Trained by
/// `newsflow train-stories`; the defaults here are dedup/model/story_model.yaml's (its README
/// has the command and the figures).
struct StoryModel {
  double bias = -1.2662;
  double cosine = 2.7814;
  double containment = 2.5304;
};

/// Options of story grouping; filled by `config/`.
struct StoryOptions {
  std::int64_t window_seconds = 72 * 3600;  ///< stories idle this long behind the watermark go
  std::size_t max_listed = 100;             ///< members listed per story
  /// A new article that duplicates nothing joins the most similar recent story when the
  /// model's probability (`StoryModel`) reaches this; 0 disables grouping beyond duplicates.
  double similarity_threshold = 0.4486;
  double decay_hours = 72;  ///< the features decay by e every this many hours apart
  /// Words of the text that count (after the title, which counts `title_weight` times).
  std::size_t text_words = 1000;
  double title_weight = 2.0;
  /// The text's first `lead_words` words count `lead_weight` times (the lead says who, what and
  /// where; the body wanders); 0 words: every word of the text counts once.
  std::size_t lead_words = 100;
  double lead_weight = 2.0;
  /// A word's term is its first `stem_chars` characters (numbers and words of scripts written
  /// without spaces stay whole): "elections", "elected" and "election" are one term, and so
  /// are the cases of a noun in German, Polish, Russian or Turkish. 0 keeps whole words.
  std::size_t stem_chars = 5;
  /// Weight factor of entity-like words: capitalized words inside a sentence and numbers of
  /// two or more digits (names, places, counts and dates are what tell two events apart).
  double entity_boost = 1.0;
  /// The terms an article keeps (what a state record carries per article): those of the
  /// highest TF-IDF weight when it arrives.
  std::size_t terms_per_article = 64;
  /// Two stories that began apart (the first reports had too little in common) are merged when
  /// an article matches the other one with this probability too; 0 never merges.
  double merge_threshold = 0.5901;
  /// A story gathers articles of one language: an article whose language is known joins no
  /// story (by similarity) begun in another (Simplified and Traditional Chinese are one).
  bool within_language = true;
  /// Links a story to stories begun in other languages (`Story::related_stories`, at most
  /// `related_max`) whose TF-IDF cosine with it, over the terms both have, reaches
  /// `related_threshold`: across languages the shared terms are names, numbers and the words
  /// the languages share. Off by default; it never moves an article between stories.
  bool related_across_languages = false;
  double related_threshold = 0.1;
  std::size_t related_max = 5;
  /// Stories held at most (0: no bound but time); past it those updated longest ago are
  /// forgotten first. The pipeline bounds it by `window.max_articles`.
  std::size_t max_stories = 0;
  StoryModel model;
};

/// The features `StoryModel` scores, of an article against a story.
struct StoryFeatures {
  double cosine = 0;
  double containment = 0;
  double probability(const StoryModel& m) const;
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
  /// `card`: the article's image and description, the story's when it represents the story.
  const Story& assign(const StoryMember& member, std::string_view title, const Verdict& verdict,
                      std::int64_t event_time, std::string_view text = {},
                      std::string_view story_hint = {}, const StoryCard& card = {});

  /// An article's terms as stories compare them: stems of its title's words (`title_weight`
  /// each) and of its text's first `text_words`, stopwords and short words left out, weighted
  /// 1 + ln(count) (entity-like words boosted), the `terms_per_article` of the highest weight
  /// times the inverse document frequency the book knows now. `normalized`, when given, is
  /// `normalize_text(text)` already made (the fingerprint's).
  using Terms = TermCounts;
  /// Document frequencies are counted per language (`language`'s primary subtag; unknown is
  /// one more): a language's function words are common in it, however rare in the whole mix.
  Terms terms_of(std::string_view title, std::string_view text, std::string_view normalized = {},
                 std::string_view language = {}) const;

  /// The second half of `terms_of`: of `story_term_counts`, those it keeps.
  Terms select_terms(Terms counts, std::string_view language = {}) const;

  /// The features of two term vectors (`terms_of`) `hours` apart, with the book's document
  /// frequencies now: what `newsflow train-stories` learns from.
  StoryFeatures features(const Terms& article, const Terms& story, double hours,
                         std::string_view language = {}) const;

  /// Counts an article's terms in the document frequencies (what `assign_terms` does first),
  /// for a trainer that scores pairs without assigning.
  void count_terms(const Terms& terms, std::int64_t event_time, std::string_view language = {});

  /// `assign` with the article's terms already made (`terms_of`; a restore has no text).
  const Story& assign_terms(const StoryMember& member, std::string_view title,
                            const Verdict& verdict, std::int64_t event_time, const Terms& terms,
                            std::string_view story_hint = {}, const StoryCard& card = {});
  /// An article's terms as a state record lists them: in the order its `Terms` gave them.
  using TermList = std::span<const std::pair<std::string, float>>;
  /// `assign_terms` with the terms as a state record lists them (a restore): the same story, and
  /// the terms numbered in the order the live `Terms` gave them, without making a map of them.
  const Story& assign_terms(const StoryMember& member, std::string_view title,
                            const Verdict& verdict, std::int64_t event_time, TermList terms,
                            std::string_view story_hint = {}, const StoryCard& card = {});

  const StoryOptions& options() const { return options_; }

  /// Story id of an article still held (after merges), or empty.
  std::string story_of(std::string_view article_id) const;

  /// Forgets which story the article is in (it left the dedup window: nothing can name it as
  /// the article it duplicates any more); the story keeps its counts and listed members. So the
  /// index is bounded by the window (`window.max_articles`), not by how long a story lives.
  void forget(std::string_view article_id) { story_of_.erase(article_id); }

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

  /// The `n` most recently updated stories, newest first (ties: the larger).
  std::vector<Story> newest(std::size_t n) const;

  /// The story held under `story_id`, or null (merged away, expired or never begun).
  const Story* find(std::string_view story_id) const;

  /// The book as it is, and back: `load` makes a book equal to the one saved (its stories,
  /// index, terms and their numbers, document frequencies), which places every later article
  /// as that one would. False, and the book unchanged, for bytes that are not a saved book.
  void save(internal::Writer& w) const;
  bool load(internal::Reader& r);

 private:
  // Forgets the stories idle for the window behind `watermark`, and those updated before
  // `horizon`.
  void expire(std::int64_t watermark, std::int64_t horizon = INT64_MIN);
  // Forgets the stories updated longest ago until at most 90% of `max_stories` are left.
  void shrink();

  StoryOptions options_;
  // Document frequencies of the articles' terms over the window (stems hashed).
  TermStats df_{options_.window_seconds, 8, 18};
  // Per language: terms hashed with the language's seed, and the language's documents counted
  // under a marker term of its own (looked up once per operation).
  struct Language {
    std::uint64_t seed = 0;
    double documents = 0;
  };
  static std::uint64_t language_seed(std::string_view language);
  Language language_of(std::string_view language) const;
  double idf(std::string_view term, const Language& language) const;
  std::unordered_map<std::string, Story> stories_;
  internal::ArticleIndex story_of_;  // article id -> story id

  // The stories' terms and the index of the stories by term (`internal::StoryIndex`).
  using TermId = internal::StoryIndex::TermId;
  using TermWeights = internal::StoryIndex::TermWeights;
  using Slot = internal::StoryIndex::Slot;
  internal::StoryIndex index_;
  // Stories whose probability reaches `floor` against the terms, best first.
  // With `within_language`, stories begun in another known language are left out.
  std::vector<std::pair<double, std::string>> similar_stories(
      const std::unordered_map<std::string, float>& terms, std::int64_t event_time, double floor,
      std::string_view language) const;
  // Follows merges: the story an id now stands for.
  std::string resolve(std::string id) const;
  // Stories begun in another known language than `story`'s whose cosine with it over the terms
  // both have reaches `related_threshold`, most alike first (ties by id), at most `related_max`.
  std::vector<std::string> related_of(const Story& story) const;
  // Makes the article the story's representative when it is closer to the story's terms than
  // the representative is (or the story has none yet).
  // `List`: `Terms` or `TermList` (stories.cc instantiates both).
  template <class List>
  void challenge_representative(Story& story, const StoryMember& member, std::string_view title,
                                const List& terms, const Language& language, const StoryCard& card);
  // `assign_terms` of either kind of terms, and `count_terms` of them.
  template <class List>
  const Story& place(const StoryMember& member, std::string_view title, const Verdict& verdict,
                     std::int64_t event_time, const List& terms, std::string_view story_hint,
                     const StoryCard& card);
  template <class List>
  void count_list(const List& terms, std::int64_t event_time, std::string_view language);
  // The story an article joins: its hint's, its original's (a copy), or the most similar one's
  // (the stories it resembles go to `similar`, searched unless it has a hint); empty for a story
  // of its own.
  template <class List>
  std::string choose_story(const StoryMember& member, const Verdict& verdict,
                           std::int64_t event_time, const List& terms, std::string_view story_hint,
                           std::vector<std::pair<double, std::string>>& similar);
  // Moves `victim` into `survivor` (both held).
  void merge(Story& survivor, const std::string& victim);
  // The story's index entry gains `terms` (`Terms` or `TermList`).
  template <class List>
  void add_to_index(const std::string& story_id, const List& terms);
  // `story` merged with the `similar` stories that score at least merge_threshold, the older
  // absorbing the younger; returns the story the article is in now.
  Story* merge_similar(Story* story, const std::vector<std::pair<double, std::string>>& similar);
  // A map from 32-bit keys that `similar_stories` reuses from call to call instead of
  // allocating one: a flat table probed as the dedup state's are (`internal::RobinHood`),
  // emptied key by key (its size follows the largest call, not the book). A reference it gives
  // holds until the next key is added.
  template <class V>
  class ScratchMap {
   public:
    // The value under `key`, value-initialized when new.
    V& operator[](std::uint32_t key);
    const std::vector<std::uint32_t>& keys() const { return keys_; }  // in insertion order
    void clear();

   private:
    struct Entry {
      std::uint32_t key = UINT32_MAX;  // UINT32_MAX: free
      V value{};
    };
    struct Traits {
      static bool free(const Entry& e) { return e.key == UINT32_MAX; }
      static std::uint32_t hash(const Entry& e) { return mix(e.key); }
    };
    static std::uint32_t mix(std::uint32_t key) {
      return static_cast<std::uint32_t>((key * 0x9E3779B97F4A7C15ull) >> 32);
    }
    std::size_t find(std::uint32_t key) const;  // table_.size() when absent
    std::vector<Entry> table_;
    std::vector<std::uint32_t> keys_;
  };
  struct Shared {  // what a story's terms share with an article
    int count = 0;
    double norm2 = 0, mass = 0;
  };
  mutable ScratchMap<double> idf_scratch_;     // by term number, in the article's language
  mutable ScratchMap<Shared> shared_scratch_;  // by slot
  std::unordered_map<std::string, std::string> merged_into_;  // merged story id -> survivor
  std::int64_t watermark_ = 0;
  std::size_t since_sweep_ = 0;
};

}  // namespace newsflow::dedup
