#pragma once

#include <cstddef>
#include <string_view>

#include "extractors/article.h"
#include "extractors/charset.h"
#include "extractors/dates.h"
#include "extractors/error.h"
#include "extractors/mss.h"
#include "tl/expected.hpp"

namespace newsflow::extractors {

/// How the main text is chosen from the page's token stream.
enum class ExtractMethod {
  kFinn,  ///< Finn et al.'s body text extraction: +1 per word, -1 per tag, maximum-sum run
  kMss,   ///< maximum subsequence segmentation over blocks scored by the trained model
};

/// Options of HTML extraction; filled by `config/`.
struct ExtractOptions {
  ExtractMethod method = ExtractMethod::kMss;
  const MssModel* model = nullptr;  ///< null: the built-in model; not owned
  SegmentOptions segment;
  std::size_t max_html_bytes = 8 * 1024 * 1024;  ///< larger documents fail with kTooLarge
  std::size_t min_text_chars = 1;                ///< shorter main text fails with kNoText
  /// Longer article text is cut (at a word, `truncate_text`) with the warning "text_truncated"
  /// where every kind of input meets before it is published (the daemon's pipeline), so an
  /// article record stays within what a producer may send.
  std::size_t max_text_bytes = 512 * 1024;
  /// Deeper tag nesting fails with kParse before parsing (tree building is quadratic in depth).
  std::size_t max_nesting_depth = 5000;
  /// The items read of one feed; the rest are one dead letter (`feed_too_many_items`).
  std::size_t max_feed_items = 1000;
  /// More elements fail with kParse before parsing (`ParseLimits::max_elements`).
  std::size_t max_elements = 100000;
  /// The words of a page after this many are not read, with the warning
  /// "words_beyond_limit_not_read", so a page's memory stays a few times its bytes whatever they
  /// are (`ParseLimits::max_words`).
  std::size_t max_page_words = 200000;
  /// Date sources not read (`DateEvidence::disabled`): set only by the hidden CLI option
  /// `--disable-date-sources`, to measure what each source is worth; not configurable.
  DateSources disabled_date_sources = 0;
};

/// Extracts the main article and its metadata from a UTF-8 HTML document fetched from `url`
/// at `fetched_at` (when known: no later date is taken for the page's). The returned article has
/// `id` and `fetched_at` unset. Never throws; thread-safe (no shared state).
///
///   auto a = extract_html("<html><body><p>Hello world</p></body></html>", "https://x.test/a", {});
///   // a->text == "Hello world", a->source == "x.test"
tl::expected<Article, ExtractError> extract_html(
    std::string_view html, std::string_view url, const ExtractOptions& options,
    std::optional<UnixSeconds> fetched_at = std::nullopt);

/// The same for a document `decode_to_utf8` produced: its text is UTF-8 by construction, so it is
/// not validated a second time (a few percent of the extraction).
tl::expected<Article, ExtractError> extract_html(
    const Decoded& document, std::string_view url, const ExtractOptions& options,
    std::optional<UnixSeconds> fetched_at = std::nullopt);

/// True when extracted text is a cookie or consent wall rather than an article: short (at most
/// 400 words), about consent or cookies and asking the reader to accept or choose, in one of the
/// languages newsflow reads, densely (about one such phrase per 40 words or more). `phrases`,
/// when given, receives how many such phrases were counted.
bool looks_like_consent_wall(std::string_view text, std::size_t* phrases = nullptr);

/// Parses a method name ("mss", "finn"); returns false for an unknown name.
bool parse_extract_method(std::string_view name, ExtractMethod& out);

}  // namespace newsflow::extractors
