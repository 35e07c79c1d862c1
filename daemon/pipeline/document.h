#pragma once

// The data every part of the pipeline shares: an input document, an article out of extraction,
// an output article with its verdict and story, and a failure. Files that need only these (the
// record collector, the dead letters, the records) include this header, not `pipeline.h`.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/pipeline/reasons.h"
#include "dedup/boilerplate.h"
#include "dedup/signature.h"
#include "dedup/state.h"
#include "dedup/stories.h"
#include "dedup/story_terms.h"
#include "dedup/window.h"
#include "extractors/article.h"

namespace newsflow::daemon {

/// What the body of an input document is.
enum class BodyKind {
  kHtmlText,   ///< HTML already decoded to UTF-8 (replay `html`)
  kHtmlBytes,  ///< raw HTML bytes in an unknown charset (Kafka values, replay `html_b64`)
  kText,       ///< already extracted text (replay `text`, with optional `title`)
  kFeedText,   ///< RSS/Atom already decoded to UTF-8 (replay `feed`)
  kFeedBytes,  ///< raw RSS/Atom bytes (Kafka feeds topic, replay `feed_b64`)
};

/// One input document, from a replay line or a Kafka message.
struct Input {
  std::string id;  ///< may be empty: derived from the canonical URL
  std::string url;
  std::string content_type;
  std::optional<extractors::UnixSeconds> fetched_at;
  std::optional<extractors::UnixSeconds> published_at;
  BodyKind kind = BodyKind::kHtmlText;
  std::string body;
  /// Instead of `body`, bytes this input borrows: a consumed page's Kafka payload, read where
  /// the consumer put it (a page is ~100 KiB; copying each cost ~5% of the daemon's CPU). Its
  /// owner keeps it alive while the input is prepared. `bytes()` is whichever of the two is set.
  std::string_view payload;
  std::string_view bytes() const { return payload.data() ? payload : std::string_view(body); }
  std::string title;  ///< for kText; for a feed item's page (`link`), the item's headline
  /// A feed item's page fetched after the item was judged (the daemon's fetch retries): the
  /// item's link (it counts as fetched once this page is published), the feed it came from,
  /// and the version of the article this page makes: 2 when the item was published with its
  /// own short text before, else 1.
  std::string link;
  std::string feed_url;
  std::string feed_id;
  int version = 1;
};

/// One article out of the pipeline with its dedup verdict and story.
struct Output {
  extractors::Article article;
  std::string content_hash;  ///< hex of the 128-bit fingerprint
  dedup::Verdict verdict;
  std::string story_id;
  dedup::Story story;           ///< the story's state after this article joined it
  std::string feed_url;         ///< for feed items: the feed's URL
  std::string feed_id;          ///< for feed items: the feed input's id
  std::int64_t event_time = 0;  ///< the time the window filed it under
  int version = 1;              ///< 2 and up: the article published again, with more text
  /// What this article left in the window and the stories: its state changelog record.
  dedup::ArticleState state;
};

/// Why an input produced no article: `reason` is a metric label and the DLQ reason, the name of
/// a `Reason` (`reasons.h`), so a failure is made from a `Reason`, never from a string.
struct Failure {
  Failure() = default;
  Failure(Reason r, std::string why) : reason(reason_name(r)), detail(std::move(why)) {}
  /// A WARC or ARC record's own reason (docs/input-formats.md), which its reader names.
  static Failure named(std::string reason, std::string detail) {
    Failure f;
    f.reason = std::move(reason);
    f.detail = std::move(detail);
    return f;
  }
  std::string reason;
  std::string detail;
};

/// An article out of extraction, before dedup (`Pipeline::prepare`): what the extract role
/// hands the judging role (`extracted_json`), and what judging reads.
struct Extracted {
  extractors::Article article;
  std::optional<std::int64_t> event_time;
  bool from_feed = false;
  /// A feed item without full text: the page to fetch for it (see `Pipeline::resolve_links`).
  std::string fetch_url;
  std::string feed_text;  ///< the item's own short text, kept if the page cannot be had
  /// Why the page could not be had (the item then carries `feed_text`, or is skipped).
  std::optional<Failure> fetch_failure;
  std::int64_t retry_after_seconds = 0;  ///< what the site asked for with a 429 or 5xx
  bool skip = false;                     ///< no output: already published, or nothing to publish
  bool language_known = false;  ///< `article.language` detected (in `prepare`, on the cores)
  /// What judging needs of it that reads no state, made on the cores (`Pipeline::ready_to_judge`).
  struct Ahead {
    /// The text's paragraphs and normalized form; made again when judging if the text is
    /// not the one they were made of.
    dedup::PageParagraphs paragraphs;
    /// The story terms of the title and the whole text (`dedup::story_term_counts`): the
    /// article's when the boilerplate filter keeps the whole text and the title stays.
    std::optional<dedup::TermCounts> story_terms;
    std::string title;  ///< the title they were counted with
    /// The whole text's shingles (the weighted scheme): the article's when the filter keeps
    /// the whole text.
    std::optional<dedup::Shingles> shingles;
  } ahead;
};
}  // namespace newsflow::daemon
