#pragma once

#include <deque>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "config/config.h"
#include "daemon/pipeline/document.h"
#include "daemon/pipeline/records.h"
#include "daemon/pipeline/seen_links.h"
#include "dedup/boilerplate.h"
#include "dedup/state.h"
#include "dedup/stories.h"
#include "dedup/term_stats.h"
#include "dedup/window.h"
#include "extractors/article.h"
#include "extractors/feed.h"
#include "tl/expected.hpp"

namespace newsflow::dedup::internal {
class Writer;
}  // namespace newsflow::dedup::internal

namespace newsflow::daemon {

class Metrics;
class Fetcher;

/// The processing pipeline shared by `replay` and the daemon: decode, extract, fingerprint,
/// judge against the window, assign a story. Owns the window and the story book; not
/// thread-safe. Never throws for bad input: every document ends as outputs or a Failure.
class Pipeline {
 public:
  /// `metrics` may be null (batch mode without metrics).
  Pipeline(const config::Config& config, Metrics* metrics);

  tl::expected<std::vector<Output>, Failure> process(const Input& input);

  using Extracted = daemon::Extracted;

  /// The first half of `process`: decode and extract, and, unless `judged_here` is false (the
  /// extract role hands its articles over), `ready_to_judge` each item with its text.
  /// Thread-safe (reads only the configuration and the model), so a batch can be extracted on
  /// several cores.
  tl::expected<std::vector<Extracted>, Failure> prepare(const Input& input,
                                                        bool judged_here = true) const;

  /// The part of judging an item that reads no state (its text cut to the bounds, split in
  /// paragraphs and normalized, its story terms counted), done on any thread before `commit`
  /// does the rest in input order. Nothing for an item that waits for its page or has no text.
  void ready_to_judge(Extracted& e) const;

  /// Between the halves, for feed items that only link to their page: fetches the pages of
  /// `items` (pointers into the results of several `prepare` calls, so one batch fetches
  /// concurrently) and extracts them into the items. An item whose link was published within
  /// the window (an earlier poll of the feed, or another feed) is skipped, not fetched again;
  /// one whose page cannot be had records `fetch_failure` and keeps its feed text, or is
  /// skipped when it has none. Not thread-safe. The same as `links_to_fetch`, `fetch_pages`
  /// and `apply_pages` in turn, which the daemon runs apart so that the fetching is done beside
  /// its loop.
  void resolve_links(const std::vector<Extracted*>& items, Fetcher& fetcher);

  /// A linked page as `fetch_pages` had it: its article, or why there is none.
  struct LinkedPage {
    std::optional<extractors::Article> article;
    std::optional<Failure> failure;
    std::int64_t retry_after_seconds = 0;  ///< a 429 or 5xx answer's Retry-After
    std::string final_url;                 ///< after redirects
  };
  /// The links of `items` to fetch, each once: those not published within the window (the
  /// others' items are skipped). Not thread-safe.
  std::vector<std::string> links_to_fetch(const std::vector<Extracted*>& items);
  /// Fetches `urls` and extracts their pages, in order. Thread-safe as `prepare` is (reads only
  /// the configuration); `fetcher` is used by one thread at a time.
  std::vector<LinkedPage> fetch_pages(const std::vector<std::string>& urls, Fetcher& fetcher) const;
  /// Gives each of `items` the page of its link (`urls` and `pages` from the two calls above);
  /// an item whose link was published since `links_to_fetch` is skipped. Not thread-safe.
  void apply_pages(const std::vector<Extracted*>& items, const std::vector<std::string>& urls,
                   std::vector<LinkedPage> pages);

  /// The links of items committed since the last call count as published (their outputs are
  /// acknowledged): later items with the same link are skipped.
  void confirm_links();
  /// Forgets the links committed since the last `confirm_links` (their outputs were not
  /// acknowledged; the batch is processed again).
  void drop_pending_links() { pending_links_.clear(); }
  /// The links committed since the last call, to be confirmed later (`confirm_links(links)`)
  /// when the outputs of their batch are acknowledged, or dropped.
  std::vector<std::pair<std::string, std::int64_t>> take_pending_links() {
    return std::exchange(pending_links_, {});
  }
  void confirm_links(const std::vector<std::pair<std::string, std::int64_t>>& links);

  /// The second half: dedup and stories, in input order; skipped items give no output. Not
  /// thread-safe. The same as `judge` and `group` in turn.
  std::vector<Output> commit(std::vector<Extracted> extracted, const Input& input);

  /// An article judged against the window on its way to its story: its output without the
  /// story, and what `group` reads.
  struct Judged {
    Output out;
    /// The story terms counted ahead (`Extracted::Ahead`) when they are the article's;
    /// otherwise `group` counts them of `core`, the text the boilerplate filter kept.
    std::optional<dedup::TermCounts> story_terms;
    std::string core, normalized;
    /// The ids that left the window when it came in: they leave the story book after it joins
    /// its story.
    std::vector<std::string> left;
  };
  /// The first stage of `commit`, in input order: each item judged against the window (the
  /// boilerplate filter, the document frequencies, the links seen); skipped items give none.
  std::vector<Judged> judge(std::vector<Extracted> extracted, const Input& input);
  /// The second stage, in the order `judge` judged: each article joins its story. The two
  /// stages share no state: `group` of one input may run on another thread while `judge` takes
  /// the next (`judge` reads nothing `group` writes, and the reverse), one `group` at a time.
  std::vector<Output> group(std::vector<Judged> judged);

  /// For `--role extract`, instead of `commit`: the items that would be judged (skipped ones
  /// dropped, a fetched item without a page given its feed text, the language detected), their
  /// links pending as `commit` leaves them. Their `extracted_json` goes to the dedup role.
  std::vector<Extracted> hand_over(std::vector<Extracted> extracted, const Input& input);
  /// The id the article will be published under: a feed item's own, else the input's, else
  /// derived from the canonical URL (so a re-crawl keeps its key).
  static std::string article_id(const Extracted& e, const Input& input);

  /// Puts an article published earlier (its article JSON, as on the articles topic) back into
  /// the window and its story, with the verdict it was published with: the state a restarted
  /// process rebuilds. Returns false for a value that is not article JSON.
  bool restore(std::string_view article_json);

  /// Puts an article back from its state changelog record (`Output::state`): the window, the
  /// document frequencies, the boilerplate filter, the story book and the links seen as the
  /// article left them. Applied in `seq` order, the records rebuild what an uninterrupted run
  /// holds.
  void restore(const dedup::ArticleState& state);
  /// `restore` in two halves, for two threads taking the records in the same order: the
  /// window's (the window, document frequencies, boilerplate filter and links seen), then the
  /// story book's, told what the first left: whether the window holds the article, and the
  /// articles that left it. Neither half touches what the other does.
  struct WindowRestored {
    bool held = false;
    std::vector<std::string> left;
  };
  WindowRestored restore_window(const dedup::ArticleState& state);
  void restore_stories(const dedup::ArticleState& state, const WindowRestored& window);
  /// Many records are about to be restored (a restart's): when the window holds nothing yet, it
  /// makes its LSH bands once at `end_restore` instead of an article at a time, and the
  /// boilerplate filter grows its parts in larger steps until then.
  void begin_restore() {
    window_.defer_bands();
    if (window_.size() == 0) boilerplate_.begin_bulk();
  }
  void end_restore() {
    window_.build_bands();
    boilerplate_.end_bulk();
  }

  /// The whole judging state (window, document frequencies, boilerplate filter, stories, links
  /// seen, the next record's `seq`) as bytes, and back: a pipeline that loads them judges every
  /// later input as this one would, without applying records one by one. `load_state` is false,
  /// and the pipeline unchanged, for bytes that are not a saved state of this configuration.
  std::string save_state() const;
  /// The same bytes, `chunk` at a time to `sink(bytes, last)`, without holding them all.
  void save_state(std::size_t chunk,
                  const std::function<void(std::string_view, bool last)>& sink) const;
  /// The `seq` of the last state record made (0 before the first).
  std::uint64_t last_seq() const { return next_seq_ - 1; }
  /// A state record with this `seq` exists (read at a restore or by a tail, applied or not: an
  /// input not committed is judged again): the next record made comes after it, so no two
  /// records of different articles share a `seq`.
  void reserve_seq(std::uint64_t seq) { next_seq_ = std::max(next_seq_, seq + 1); }
  /// The article `id` was judged but will not be published (a dead letter: a record of it the
  /// producer or the cluster refused): later articles no longer find it in the window, and its
  /// story no longer knows it as a member to place again.
  void forget(std::string_view id) {
    window_.forget(id);
    stories_.forget(id);
  }
  bool load_state(std::string_view bytes);

  /// Only what a state record says of links: the feed item's link and identity were published,
  /// so they are not fetched again. Extractors, which hold no window, learn this way from the
  /// changelog what every extractor has fetched.
  void remember_published_links(const dedup::ArticleState& state);

  /// The lowest event time an input partition may still deliver: the window does not expire
  /// beyond it (the daemon's event-time order sets it before each input; replay never does).
  void hold_expiry_at(std::int64_t low_watermark) { low_watermark_ = low_watermark; }

  const dedup::DedupWindow& window() const { return window_; }
  const dedup::TermStats& term_stats() const { return term_stats_; }
  const dedup::StoryBook& stories() const { return stories_; }
  const dedup::BoilerplateFilter& boilerplate() const { return boilerplate_; }

  /// Links whose page killed an earlier process while it was extracted (the crash guard's
  /// note, `link_crash_note`): not extracted again; their items are dead letters
  /// (`worker_crash`).
  void refuse_links(std::set<std::string> links) { refused_links_ = std::move(links); }

 private:
  /// Skips `e` when its link or its item was published (counted as "already_seen").
  bool skip_if_seen(Extracted& e);
  void save_to(dedup::internal::Writer& w) const;
  dedup::Fingerprint fingerprint(const std::string& id, std::string_view core,
                                 std::string_view normalized, const dedup::Shingles* shingles,
                                 std::int64_t event_time, std::vector<std::uint32_t>* df_terms);
  static std::string item_key(const std::string& article_id);
  static std::string link_key(const std::string& link);
  tl::expected<std::vector<Extracted>, Failure> extract(const Input& input) const;
  tl::expected<std::vector<Extracted>, Failure> extract_feed(const Input& input) const;
  bool feed_item(const extractors::FeedItem& item, const extractors::Feed& feed, const Input& input,
                 Extracted& e) const;
  Judged judge_one(Extracted extracted, const Input& input);
  std::int64_t event_time_of(const Extracted& extracted, const Input& input) const;
  void report_judged(const extractors::Article& a, double seconds);
  Output group_one(Judged judged);
  bool publishable(Extracted& e) const;
  void bound(extractors::Article& a) const;
  /// Detects the language of an extracted article (`extractors::detect_language`).
  static void set_language(Extracted& e);

  config::Config config_;
  Metrics* metrics_;
  dedup::DedupWindow window_;
  void forget_left();  // ids that left the window leave the story book's index
  dedup::StoryBook stories_;
  dedup::BoilerplateFilter boilerplate_;
  dedup::TermStats term_stats_;  // document frequencies for the weighted scheme
  std::int64_t low_watermark_ = INT64_MAX;
  std::uint64_t next_seq_ = 1;  // of the state records: the order articles were judged in
  std::uint64_t evictions_reported_ = 0;
  // Links whose page was fetched or published, with their event time, oldest first.
  void remember_link(const std::string& url, std::int64_t event_time);
  SeenLinks seen_links_;
  std::set<std::string> refused_links_;
  std::vector<std::pair<std::string, std::int64_t>> pending_links_;
};

}  // namespace newsflow::daemon
