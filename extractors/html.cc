#include "extractors/html.h"

#include <utility>
#include <vector>

#include "extractors/metadata.h"
#include "extractors/mss.h"
#include "extractors/page.h"
#include "extractors/text.h"

namespace newsflow::extractors {
namespace {

// Kadane's maximum-sum contiguous run; returns [begin, end) of the best run.
std::pair<std::size_t, std::size_t> max_subarray(const std::vector<double>& scores) {
  double best = 0, current = 0;
  std::size_t best_begin = 0, best_end = 0, begin = 0;
  for (std::size_t i = 0; i < scores.size(); ++i) {
    if (current <= 0) {
      current = 0;
      begin = i;
    }
    current += scores[i];
    if (current > best) {
      best = current;
      best_begin = begin;
      best_end = i + 1;
    }
  }
  return {best_begin, best_end};
}

// Finn et al.: +1 per word token, -1 per tag token, the maximum-sum run of tokens.
std::string finn_text(const ParsedPage& page) {
  std::vector<double> scores(page.tokens.size());
  for (std::size_t i = 0; i < page.tokens.size(); ++i) scores[i] = page.tokens[i] >= 0 ? 1 : -1;
  const auto [begin, end] = max_subarray(scores);
  std::size_t first = SIZE_MAX, last = 0;
  for (std::size_t t = begin; t < end; ++t) {
    if (page.tokens[t] < 0) continue;
    const auto w = static_cast<std::size_t>(page.tokens[t]);
    first = std::min(first, w);
    last = w + 1;
  }
  return first == SIZE_MAX ? std::string() : render_words(page, first, last);
}

}  // namespace

bool looks_like_consent_wall(std::string_view text, std::size_t* phrases) {
  if (text.size() > 400 * 32) return false;  // no 400 words are that long: not counted
  const std::size_t words = count_words(text, 400);
  if (words == 0 || words > 400) return false;  // a wall is short; an article on cookies is not
  // Lowercase (ASCII; the other letters match as written, lowercase in the lists).
  std::string lower(text);
  for (char& c : lower) c = c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c;
  const auto count = [&lower](std::initializer_list<std::string_view> list) {
    std::size_t n = 0;
    for (std::string_view w : list) {
      for (std::size_t p = lower.find(w); p != std::string::npos; p = lower.find(w, p + w.size())) {
        ++n;
      }
    }
    return n;
  };
  // What a wall is about, in the languages newsflow reads (most texts stop here).
  const std::size_t topic =
      count({"cookie", "consent", "einwilligung", "zustimmung", "consentement", "consentimiento",
             "consenso", "toestemming", "zgod", "souhlas", "согласи", "çerez", "tracking",
             "ملفات تعريف الارتباط", "ملفات الارتباط"});
  if (topic == 0) {
    if (phrases) *phrases = 0;
    return false;
  }
  // What it asks the reader to do.
  const std::size_t action = count({"accept all",
                                    "accept cookies",
                                    "i accept",
                                    "i agree",
                                    "agree and continue",
                                    "alle akzeptieren",
                                    "akzeptieren",
                                    "zustimmen",
                                    "einverstanden",
                                    "tout accepter",
                                    "accepter",
                                    "j'accepte",
                                    "aceptar",
                                    "acepto",
                                    "accetta",
                                    "accetto",
                                    "accepteren",
                                    "akceptuj",
                                    "zaakceptuj",
                                    "принять",
                                    "kabul et",
                                    "manage preferences",
                                    "manage options",
                                    "cookie settings",
                                    "privacy settings",
                                    "einstellungen",
                                    "paramètres",
                                    "configuración",
                                    "impostazioni",
                                    "reject all",
                                    "alle ablehnen",
                                    "tout refuser",
                                    "rechazar"});
  if (phrases) *phrases = topic + action;
  // Both, and densely: about one consent phrase per 40 words or more.
  return topic >= 1 && action >= 1 && (topic + action) * 40 >= words;
}

bool parse_extract_method(std::string_view name, ExtractMethod& out) {
  if (name == "finn") {
    out = ExtractMethod::kFinn;
    return true;
  }
  if (name == "mss") {
    out = ExtractMethod::kMss;
    return true;
  }
  return false;
}

namespace {

tl::expected<Article, ExtractError> extract(std::string_view html, bool known_utf8,
                                            std::string_view url, const ExtractOptions& options,
                                            std::optional<UnixSeconds> fetched_at) {
  auto page = parse_page(html, {.max_html_bytes = options.max_html_bytes,
                                .max_nesting_depth = options.max_nesting_depth,
                                .known_utf8 = known_utf8,
                                .max_words = options.max_page_words,
                                .max_elements = options.max_elements});
  if (!page) return tl::unexpected(page.error());

  Article article;
  article.url = std::string(url);
  std::vector<std::uint32_t> blocks;
  if (options.method == ExtractMethod::kFinn) {
    article.text = finn_text(*page);
  } else {
    const MssModel& model = options.model ? *options.model : MssModel::builtin();
    blocks = segment_mss(*page, model, options.segment);
    article.text = render_blocks(*page, blocks);
  }
  if (article.text.size() < std::max<std::size_t>(1, options.min_text_chars)) {
    return tl::unexpected(ExtractError{
        ExtractReason::kNoText,
        "no main text found among " + std::to_string(page->words.size()) + " visible words"});
  }
  if (std::size_t phrases = 0; looks_like_consent_wall(article.text, &phrases)) {
    return tl::unexpected(
        ExtractError{ExtractReason::kConsentWall, "the main text is a cookie or consent wall (" +
                                                      std::to_string(count_words(article.text)) +
                                                      " words, " + std::to_string(phrases) +
                                                      " consent phrases): the page was fetched "
                                                      "without the consent the site asks for"});
  }
  MetadataContext context;
  context.article_blocks = options.method == ExtractMethod::kFinn ? nullptr : &blocks;
  context.article_text = article.text;
  context.fetched_at = fetched_at;
  context.disabled_date_sources = options.disabled_date_sources;
  PageMetadata meta = resolve_metadata(*page, url, context);
  article.title = std::move(meta.title);
  article.canonical_url = std::move(meta.canonical_url);
  article.source = std::move(meta.source);
  article.lang = std::move(meta.lang);
  article.byline = std::move(meta.byline);
  article.authors = std::move(meta.authors);
  article.credit = std::move(meta.credit);
  article.published_at = meta.published_at;
  article.modified_at = meta.modified_at;
  article.published_utc_offset = meta.published_utc_offset;
  article.modified_utc_offset = meta.modified_utc_offset;
  article.description = std::move(meta.description);
  article.image = std::move(meta.image);
  article.section = std::move(meta.section);
  article.tags = std::move(meta.tags);
  article.site_name = std::move(meta.site_name);
  article.paywalled = meta.paywalled;
  article.sources = std::move(meta.sources);
  article.passed_over = std::move(meta.passed_over);
  article.warnings = std::move(page->warnings);
  return article;
}

}  // namespace

tl::expected<Article, ExtractError> extract_html(std::string_view html, std::string_view url,
                                                 const ExtractOptions& options,
                                                 std::optional<UnixSeconds> fetched_at) {
  return extract(html, false, url, options, fetched_at);
}

tl::expected<Article, ExtractError> extract_html(const Decoded& document, std::string_view url,
                                                 const ExtractOptions& options,
                                                 std::optional<UnixSeconds> fetched_at) {
  return extract(document.text, true, url, options, fetched_at);
}

std::string_view reason_name(ExtractReason r) {
  switch (r) {
    case ExtractReason::kEmpty:
      return "empty_document";
    case ExtractReason::kTooLarge:
      return "too_large";
    case ExtractReason::kBinary:
      return "binary_content";
    case ExtractReason::kInvalidUtf8:
      return "invalid_utf8";
    case ExtractReason::kCharset:
      return "charset_error";
    case ExtractReason::kParse:
      return "parse_error";
    case ExtractReason::kNoText:
      return "no_text";
    case ExtractReason::kConsentWall:
      return "consent_wall";
  }
  return "unknown";
}

}  // namespace newsflow::extractors
