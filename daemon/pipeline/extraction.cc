// Extraction, the first half of judging an input: a page or a feed decoded and extracted into
// articles, each readied for judging on any core (`Pipeline::prepare`, `ready_to_judge`).
#include <algorithm>
#include <string>

#include "daemon/ops/metrics.h"
#include "daemon/pipeline/internal/parts.h"
#include "daemon/pipeline/pipeline.h"
#include "extractors/authors.h"
#include "extractors/charset.h"
#include "extractors/feed.h"
#include "extractors/html.h"
#include "extractors/language.h"
#include "extractors/metadata.h"
#include "extractors/text.h"
#include "extractors/urls.h"

namespace newsflow::daemon {

using pipeline_internal::Clock;
using pipeline_internal::derived_id;
using pipeline_internal::page_id;
using pipeline_internal::seconds_since;

namespace {

// UTF-16 and UTF-32 text holds NUL bytes; it is not binary when a BOM or an ASCII '<' shows
// which it is.
bool wide_unicode(std::string_view b) {
  if (b.size() < 4) return false;
  const auto u = [&b](std::size_t i) { return static_cast<unsigned char>(b[i]); };
  if ((u(0) == 0xFF && u(1) == 0xFE) || (u(0) == 0xFE && u(1) == 0xFF)) return true;
  return (u(0) == '<' && u(1) == 0) || (u(0) == 0 && (u(1) == '<' || (u(1) == 0 && u(3) == '<')));
}

}  // namespace

// A feed item as an article (its page to fetch when it has no more than a teaser); false when it
// has neither text nor a link to fetch.
bool Pipeline::feed_item(const extractors::FeedItem& item, const extractors::Feed& feed,
                         const Input& input, Extracted& e) const {
  e.from_feed = true;
  extractors::Article& a = e.article;
  a.url = item.link.empty() ? input.url : item.link;
  a.canonical_url = a.url;
  a.source = extractors::url_source(a.url);
  a.title = item.title;
  a.byline = extractors::clean_byline(item.author);
  a.text = extractors::html_fragment_text(item.content_html);
  if (a.text.empty()) a.text = extractors::html_fragment_text(item.summary_html);
  // Any absolute link: one of another scheme (file:, gopher:) goes to the fetcher too, which
  // refuses it as fetch_blocked_scheme (a dead letter that says so; the item keeps its text).
  const bool linked = !item.link.empty() && !extractors::url_scheme_of(item.link).empty();
  if (config_.fetch.enabled && linked &&
      extractors::count_words(a.text) < static_cast<std::size_t>(config_.fetch.min_feed_words)) {
    // A teaser or nothing: the article is on the linked page.
    e.fetch_url = item.link;
    e.feed_text = std::move(a.text);
    a.text.clear();
  } else if (a.text.empty()) {
    return false;
  }
  a.lang = feed.language.substr(0, 2);
  a.published_at = item.published ? item.published : item.updated;
  if (item.published && item.updated && *item.updated > *item.published) {
    a.modified_at = item.updated;
  }
  a.authors = extractors::split_authors(item.author);
  if (const std::string summary = extractors::html_fragment_text(item.summary_html);
      !summary.empty()) {
    a.description = extractors::cut_description(summary);
  }
  for (const auto& enclosure : item.enclosures) {
    if (!enclosure.type.starts_with("image/")) continue;
    const std::string scheme = extractors::url_scheme_of(enclosure.url);
    if (scheme != "http" && scheme != "https") continue;
    a.image = extractors::LeadImage{enclosure.url, 0, 0, {}};
    break;
  }
  for (const auto& c : item.categories) {
    if (a.tags.size() < 32 && !c.empty() && c.size() <= 100) a.tags.push_back(c);
  }
  a.site_name = feed.title.size() <= 200 ? feed.title : std::string();
  a.credit = extractors::take_credits(a.authors, a.site_name);
  const std::string& key = !item.id.empty() ? item.id : !item.link.empty() ? item.link : item.title;
  a.id = derived_id("feed:" + input.url + "#" + key);
  e.event_time = a.published_at;
  return true;
}

tl::expected<std::vector<Pipeline::Extracted>, Failure> Pipeline::extract_feed(
    const Input& input) const {
  auto fail = [](const extractors::ExtractError& e) {
    return tl::unexpected(Failure{reason_of(e.reason), e.detail});
  };
  if (input.bytes().size() > config_.extract.max_html_bytes) {
    return fail({extractors::ExtractReason::kTooLarge,
                 "feed has " + std::to_string(input.bytes().size()) + " bytes, limit " +
                     std::to_string(config_.extract.max_html_bytes)});
  }
  std::string decoded_text, charset_warning;
  std::string_view xml = input.bytes();
  if (input.kind == BodyKind::kFeedBytes) {
    auto decoded = extractors::decode_to_utf8(input.bytes(), input.content_type);
    if (!decoded) return fail(decoded.error());
    decoded_text = std::move(decoded->text);
    charset_warning = std::move(decoded->warning);
    xml = decoded_text;
  }
  auto feed = extractors::parse_feed(xml, input.url);
  if (!feed) return fail(feed.error());
  if (!charset_warning.empty()) feed->warnings.push_back(std::move(charset_warning));
  for (const auto& w : feed->warnings) {
    if (metrics_) metrics_->feed_warning();
    (void)w;
  }
  std::vector<Extracted> out;
  std::size_t without_text = 0;
  const std::size_t read = std::min(feed->items.size(), config_.extract.max_feed_items);
  for (std::size_t i = 0; i < read; ++i) {
    Extracted e;
    if (!feed_item(feed->items[i], *feed, input, e)) {
      ++without_text;
      continue;
    }
    out.push_back(std::move(e));
  }
  if (read < feed->items.size()) {
    // The items past the bound: one dead letter for all of them, as a linked page that could
    // not be had is one (no output; keyed by the feed's URL).
    Extracted e;
    e.from_feed = true;
    e.skip = true;
    e.fetch_url = input.url;
    e.article.id = derived_id("feed:" + input.url + "#items-from-" + std::to_string(read + 1));
    e.fetch_failure = Failure{
        Reason::kFeedTooManyItems,
        "the feed has " + std::to_string(feed->items.size()) + " items; the first " +
            std::to_string(read) + " were read (extract.max_feed_items), items " +
            std::to_string(read + 1) + " to " + std::to_string(feed->items.size()) + " were not"};
    out.push_back(std::move(e));
  }
  if (out.empty() || (out.size() == 1 && out.front().skip)) {
    return tl::unexpected(Failure{
        Reason::kFeedNoItems,
        feed->items.empty()
            ? "the feed has no items"
            : std::to_string(without_text) + " items, none with text or an http(s) link to fetch" +
                  (config_.fetch.enabled ? "" : " (fetch.enabled is false)")});
  }
  return out;
}

tl::expected<std::vector<Pipeline::Extracted>, Failure> Pipeline::extract(
    const Input& input) const {
  if (input.kind == BodyKind::kFeedText || input.kind == BodyKind::kFeedBytes) {
    return extract_feed(input);
  }
  auto one = [](extractors::Article a) {
    std::vector<Extracted> v(1);
    v[0].article = std::move(a);
    return v;
  };
  using extractors::ExtractReason;
  auto fail = [](const extractors::ExtractError& e) {
    return tl::unexpected(Failure{reason_of(e.reason), e.detail});
  };
  switch (input.kind) {
    case BodyKind::kText: {
      if (!extractors::is_valid_utf8(input.body) || !extractors::is_valid_utf8(input.title)) {
        return tl::unexpected(Failure{Reason::kInvalidUtf8, "text is not UTF-8"});
      }
      extractors::Article a;
      a.url = input.url;
      a.canonical_url = input.url;
      a.source = extractors::url_source(input.url);
      a.title = extractors::collapse_whitespace(input.title);
      a.text = input.body;
      if (extractors::collapse_whitespace(a.text).size() < config_.extract.min_text_chars) {
        return tl::unexpected(Failure{Reason::kEmptyDocument, "text is empty"});
      }
      return one(std::move(a));
    }
    case BodyKind::kHtmlBytes: {
      if (input.bytes().size() > config_.extract.max_html_bytes) {
        return fail({ExtractReason::kTooLarge,
                     "document has " + std::to_string(input.bytes().size()) + " bytes, limit " +
                         std::to_string(config_.extract.max_html_bytes)});
      }
      if (extractors::looks_binary(input.bytes()) && !wide_unicode(input.bytes())) {
        return fail({ExtractReason::kBinary,
                     "binary data bytes in the first 1,445 bytes (WHATWG MIME sniffing)"});
      }
      auto decoded = extractors::decode_to_utf8(input.bytes(), input.content_type);
      if (!decoded) return fail(decoded.error());
      auto a = extractors::extract_html(*decoded, input.url, config_.extract, input.fetched_at);
      if (!a) return fail(a.error());
      return one(std::move(*a));
    }
    case BodyKind::kHtmlText: {
      auto a = extractors::extract_html(input.body, input.url, config_.extract, input.fetched_at);
      if (!a) return fail(a.error());
      return one(std::move(*a));
    }
    case BodyKind::kFeedText:
    case BodyKind::kFeedBytes:
      break;
  }
  return tl::unexpected(Failure{Reason::kInternalError, "unknown body kind"});
}

tl::expected<std::vector<Pipeline::Extracted>, Failure> Pipeline::prepare(const Input& input,
                                                                          bool judged_here) const {
  if (input.url.empty()) return tl::unexpected(Failure{Reason::kMissingUrl, "input has no url"});
  const auto t0 = Clock::now();
  auto extracted = extract(input);
  if (extracted) {
    // The language of what has its text now; a feed item's fetched page gets it in `finish`.
    for (auto& e : *extracted) {
      if (e.skip || e.article.text.empty() || !e.fetch_url.empty()) continue;
      set_language(e);
      if (judged_here) ready_to_judge(e);
    }
  }
  if (metrics_) metrics_->stage_seconds("extract", seconds_since(t0));
  return extracted;
}

// Whether an item gives an output: not skipped, and with text (a feed item whose page was not
// fetched falls back to its own text; without any there is nothing to publish). Text and title
// are cut to their bounds here, whatever gave them (a page, a feed, a text input).
bool Pipeline::publishable(Extracted& e) const {
  if (e.skip) return false;
  if (!e.fetch_url.empty() && e.article.text.empty()) {
    if (e.feed_text.empty()) return false;
    e.article.text = e.feed_text;
  }
  bound(e.article);
  return true;
}

// Cuts text and title to their bounds; once cut, they are within them (a second call cuts and
// warns no more).
void Pipeline::bound(extractors::Article& a) const {
  if (extractors::truncate_text(a.text, config_.extract.max_text_bytes)) {
    a.warnings.emplace_back("text_truncated");
  }
  constexpr std::size_t kMaxTitleBytes = 2048;
  if (extractors::truncate_text(a.title, kMaxTitleBytes)) {
    a.warnings.emplace_back("title_truncated");
  }
}

void Pipeline::ready_to_judge(Extracted& e) const {
  if (e.skip || e.article.text.empty() || !e.fetch_url.empty()) return;
  bound(e.article);
  e.ahead.paragraphs = dedup::PageParagraphs(e.article.source, e.article.text);
  e.ahead.title = e.article.title;
  if (config_.signature.scheme == dedup::SignatureScheme::kWeighted) {
    e.ahead.shingles = dedup::make_shingles(e.ahead.paragraphs.normalized(), config_.signature);
  }
  e.ahead.story_terms = dedup::story_term_counts(e.article.title, e.article.text,
                                                 e.ahead.paragraphs.normalized(), config_.stories);
}

void Pipeline::set_language(Extracted& e) {
  const extractors::Article& a = e.article;
  e.article.language =
      extractors::detect_language(a.title, a.text, a.lang, extractors::url_host(a.url));
  e.language_known = true;
}

}  // namespace newsflow::daemon
