#include "daemon/pipeline/pipeline.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "daemon/ops/crash_scope.h"
#include "daemon/ops/metrics.h"
#include "daemon/pipeline/extracted_simdjson.h"
#include "daemon/pipeline/fetcher.h"
#include "daemon/pipeline/json_writer.h"
#include "dedup/fingerprint.h"
#include "dedup/internal/codec.h"
#include "dedup/normalize.h"
#include "extractors/authors.h"
#include "extractors/charset.h"
#include "extractors/feed.h"
#include "extractors/html.h"
#include "extractors/language.h"
#include "extractors/metadata.h"
#include "extractors/text.h"
#include "extractors/urls.h"

namespace newsflow::daemon {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A time as RFC 3339 in the local time the page wrote it in (the day is the one the page
// shows), or null.
void rfc3339_or_null(JsonWriter& w, const std::optional<extractors::UnixSeconds>& t,
                     int utc_offset) {
  if (t) {
    w.string(extractors::format_rfc3339(*t, utc_offset));
  } else {
    w.null();
  }
}

// UTF-16 and UTF-32 text holds NUL bytes; it is not binary when a BOM or an ASCII '<' shows
// which it is.
bool wide_unicode(std::string_view b) {
  if (b.size() < 4) return false;
  const auto u = [&b](std::size_t i) { return static_cast<unsigned char>(b[i]); };
  if ((u(0) == 0xFF && u(1) == 0xFE) || (u(0) == 0xFE && u(1) == 0xFF)) return true;
  return (u(0) == '<' && u(1) == 0) || (u(0) == 0 && (u(1) == '<' || (u(1) == 0 && u(3) == '<')));
}

// Id of an input without one: 16 hex digits of the canonical URL's hash, so a page re-crawled
// under the same canonical URL keeps its key downstream.
std::string derived_id(const std::string& canonical_url) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx",
                static_cast<unsigned long long>(dedup::hash64(canonical_url)));
  return buf;
}

// The lead image as the records write it (null when none).
void image_json(JsonWriter& w, const std::optional<extractors::LeadImage>& image) {
  if (!image) {
    w.null();
    return;
  }
  w.begin_object();
  w.key("url").string(image->url);
  w.key("width");
  image->width > 0 ? w.integer(image->width) : w.null();
  w.key("height");
  image->height > 0 ? w.integer(image->height) : w.null();
  w.key("caption");
  w.string_or_null(image->caption);
  w.end_object();
}

// An extracted record's image back (nothing for null or anything else).
std::optional<extractors::LeadImage> read_image(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  const auto url = j.find("url");
  if (url == j.end() || !url->is_string()) return std::nullopt;
  extractors::LeadImage image;
  image.url = url->get<std::string>();
  if (const auto w = j.find("width"); w != j.end() && w->is_number_integer()) image.width = *w;
  if (const auto h = j.find("height"); h != j.end() && h->is_number_integer()) image.height = *h;
  if (const auto c = j.find("caption"); c != j.end() && c->is_string()) image.caption = *c;
  return image;
}

// A page's article id: the input's, else derived from its canonical URL.
std::string page_id(const std::string& canonical_url, const Input& input) {
  return !input.id.empty() ? input.id : derived_id(extractors::canonical_url(canonical_url));
}

}  // namespace

std::string article_json(const Output& out) {
  const extractors::Article& a = out.article;
  JsonWriter w;
  w.begin_object();
  w.key("id").string(a.id);
  w.key("url").string(a.url);
  w.key("canonical_url").string(a.canonical_url);
  w.key("source").string(a.source);
  w.key("title").string(a.title);
  w.key("byline").string_or_null(a.byline);
  w.key("authors").strings(a.authors);
  w.key("credit").string_or_null(a.credit);
  w.key("text").string(a.text);
  w.key("lang").string_or_null(a.lang);
  w.key("language").string_or_null(a.language);
  w.key("published_at");
  rfc3339_or_null(w, a.published_at, a.published_utc_offset);
  w.key("modified_at");
  rfc3339_or_null(w, a.modified_at, a.modified_utc_offset);
  w.key("fetched_at");
  rfc3339_or_null(w, a.fetched_at, 0);
  w.key("description").string_or_null(a.description);
  w.key("image");
  image_json(w, a.image);
  w.key("section").string_or_null(a.section);
  w.key("tags").strings(a.tags);
  w.key("site_name").string_or_null(a.site_name);
  w.key("paywalled").boolean(a.paywalled);
  w.key("content_hash").string(out.content_hash);
  w.key("dup").begin_object();
  w.key("kind").string(dedup::dup_kind_name(out.verdict.kind));
  w.key("of").string_or_null(out.verdict.of);
  w.key("similarity").number(out.verdict.similarity);
  w.end_object();
  w.key("story_id").string(out.story_id);
  // Stories this article's arrival merged into its story (restored with the window).
  if (!out.story.merged_from.empty()) w.key("story_merged_from").strings(out.story.merged_from);
  w.key("event_time").string(extractors::format_rfc3339(out.event_time));
  // What was repaired to read the page (e.g. a title never closed): the text may be less sure.
  if (!a.warnings.empty()) w.key("warnings").strings(a.warnings);
  if (!out.feed_url.empty()) {
    w.key("feed_url").string(out.feed_url);
    w.key("feed_id").string_or_null(out.feed_id);
  }
  // Published again under the same id: the page a feed item linked to, fetched after the item
  // went out with its own short text.
  if (out.version > 1) w.key("version").integer(out.version);
  w.end_object();
  return w.take();
}

std::string story_json(const dedup::Story& s) {
  JsonWriter w;
  w.begin_object();
  w.key("story_id").string(s.story_id);
  w.key("title").string(s.title);
  // The card: the representative's lead image and description.
  w.key("image_url").string_or_null(s.image_url);
  w.key("description").string_or_null(s.description);
  w.key("representative").string(s.representative);
  w.key("language").string_or_null(s.language);
  w.key("articles").begin_array();
  for (const auto& m : s.articles) {
    w.begin_object();
    w.key("id").string(m.id());
    w.key("url").string(m.url());
    w.key("source").string(m.source());
    w.key("dup").string(dedup::dup_kind_name(m.kind()));
    w.end_object();
  }
  w.end_array();
  w.key("article_count").unsigned_integer(s.article_count);
  w.key("sources").unsigned_integer(s.sources);
  w.key("copies").unsigned_integer(s.copies);
  w.key("languages").strings(s.languages);
  w.key("first_seen").string(extractors::format_rfc3339(s.first_seen));
  w.key("last_updated").string(extractors::format_rfc3339(s.last_updated));
  // With first_seen, the time span of its reports: the latest one that copies no other.
  w.key("last_report").string(extractors::format_rfc3339(s.last_report));
  w.key("version").unsigned_integer(s.version);
  if (!s.merged_from.empty()) w.key("merged_from").strings(s.merged_from);
  if (!s.related_stories.empty()) w.key("related_stories").strings(s.related_stories);
  w.end_object();
  return w.take();
}

namespace {

// The story book and the boilerplate filter bounded by the window's bound: a story per article
// held, and 32 paragraphs (a page has 19 on average), so memory follows `window.max_articles`
// when articles come faster than the window's time lets go of them.
dedup::StoryOptions bounded(dedup::StoryOptions o, std::uint64_t max_articles) {
  o.max_stories = static_cast<std::size_t>(max_articles);
  return o;
}

dedup::BoilerplateOptions bounded(dedup::BoilerplateOptions o, std::uint64_t max_articles) {
  o.max_entries = static_cast<std::size_t>(max_articles * 32);
  return o;
}

}  // namespace

Pipeline::Pipeline(const config::Config& config, Metrics* metrics)
    : config_(config),
      metrics_(metrics),
      window_(config.window),
      stories_(bounded(config.stories, config.window.max_articles)),
      boilerplate_(bounded(config.boilerplate, config.window.max_articles)),
      // 8 slices of 2^20 counters (16 MiB) for the weighted scheme; a token table otherwise.
      term_stats_(config.window.window_seconds, 8,
                  config.signature.scheme == dedup::SignatureScheme::kWeighted
                      ? dedup::TermStats::kWeightedBits
                      : 8) {
  // What leaves the window leaves the story book's index (`forget_left`).
  window_.track_left();
}

void Pipeline::forget_left() {
  for (const std::string& id : window_.take_left()) stories_.forget(id);
}

tl::expected<std::vector<Pipeline::Extracted>, Failure> Pipeline::extract_feed(
    const Input& input) const {
  auto fail = [](const extractors::ExtractError& e) {
    return tl::unexpected(Failure{std::string(extractors::reason_name(e.reason)), e.detail});
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
    const extractors::FeedItem& item = feed->items[i];
    Extracted e;
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
      ++without_text;
      continue;
    }
    a.lang = feed->language.substr(0, 2);
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
    a.site_name = feed->title.size() <= 200 ? feed->title : std::string();
    a.credit = extractors::take_credits(a.authors, a.site_name);
    const std::string& key = !item.id.empty()     ? item.id
                             : !item.link.empty() ? item.link
                                                  : item.title;
    a.id = derived_id("feed:" + input.url + "#" + key);
    e.event_time = a.published_at;
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
        "feed_too_many_items",
        "the feed has " + std::to_string(feed->items.size()) + " items; the first " +
            std::to_string(read) + " were read (extract.max_feed_items), items " +
            std::to_string(read + 1) + " to " + std::to_string(feed->items.size()) + " were not"};
    out.push_back(std::move(e));
  }
  if (out.empty() || (out.size() == 1 && out.front().skip)) {
    return tl::unexpected(Failure{
        "feed_no_items", feed->items.empty()
                             ? "the feed has no items"
                             : std::to_string(without_text) +
                                   " items, none with text or an http(s) link to fetch" +
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
    return tl::unexpected(Failure{std::string(extractors::reason_name(e.reason)), e.detail});
  };
  switch (input.kind) {
    case BodyKind::kText: {
      if (!extractors::is_valid_utf8(input.body) || !extractors::is_valid_utf8(input.title)) {
        return tl::unexpected(Failure{"invalid_utf8", "text is not UTF-8"});
      }
      extractors::Article a;
      a.url = input.url;
      a.canonical_url = input.url;
      a.source = extractors::url_source(input.url);
      a.title = extractors::collapse_whitespace(input.title);
      a.text = input.body;
      if (extractors::collapse_whitespace(a.text).size() < config_.extract.min_text_chars) {
        return tl::unexpected(Failure{"empty_document", "text is empty"});
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
  return tl::unexpected(Failure{"internal_error", "unknown body kind"});
}

tl::expected<std::vector<Pipeline::Extracted>, Failure> Pipeline::prepare(const Input& input,
                                                                          bool judged_here) const {
  if (input.url.empty()) return tl::unexpected(Failure{"missing_url", "input has no url"});
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

void Pipeline::remember_link(const std::string& link, std::int64_t event_time) {
  if (link.empty() || config_.fetch.seen_urls_max == 0) return;
  // Forget links beyond the bound, and links older than the window (by the time they were
  // last seen).
  seen_links_.remember(link_key(link), event_time,
                       window_.watermark() - config_.window.window_seconds,
                       config_.fetch.seen_urls_max);
}

// The seen-set entry of a feed item's identity (its id derives from the feed URL and guid).
std::string Pipeline::item_key(const std::string& article_id) { return "item:" + article_id; }

// The seen-set entry of a link: its canonical URL (utm_* and fragments do not make a new page).
std::string Pipeline::link_key(const std::string& link) {
  return link.starts_with("item:") ? link : extractors::canonical_url(link);
}

dedup::Fingerprint Pipeline::fingerprint(const std::string& id, std::string_view core,
                                         std::string_view normalized,
                                         const dedup::Shingles* shingles, std::int64_t event_time,
                                         std::vector<std::uint32_t>* df_terms) {
  if (config_.signature.scheme != dedup::SignatureScheme::kWeighted) {
    return dedup::fingerprint_of_normalized(normalized, core, config_.signature);
  }
  // Weights from the window's document frequencies before this article joins them; an article
  // seen again (a batch re-run after a failed delivery) is not counted twice.
  std::vector<std::uint64_t> own_terms;
  dedup::Fingerprint fp;
  if (shingles) {
    fp = dedup::fingerprint_of_shingles(normalized, *shingles, term_stats_);
  } else {
    fp = dedup::fingerprint_of_normalized(normalized, core, config_.signature, &term_stats_,
                                          &own_terms);
  }
  const std::vector<std::uint64_t>& terms = shingles ? shingles->terms : own_terms;
  if (!window_.contains(id)) term_stats_.add(terms, event_time);
  if (df_terms) {
    // The counters index terms by their low bits (at most 28): 32 bits say the same. A re-run's
    // record carries them too: compaction may keep only it.
    df_terms->reserve(terms.size());
    for (const std::uint64_t t : terms) df_terms->push_back(static_cast<std::uint32_t>(t));
  }
  return fp;
}

void Pipeline::confirm_links() {
  confirm_links(pending_links_);
  pending_links_.clear();
}

void Pipeline::confirm_links(const std::vector<std::pair<std::string, std::int64_t>>& links) {
  for (const auto& [url, t] : links) remember_link(url, t);
}

void Pipeline::resolve_links(const std::vector<Extracted*>& items, Fetcher& fetcher) {
  const std::vector<std::string> urls = links_to_fetch(items);
  if (urls.empty()) return;
  apply_pages(items, urls, fetch_pages(urls, fetcher));
}

namespace {

// Whether `e` still waits for its linked page.
bool wants_page(const Pipeline::Extracted& e) { return !e.fetch_url.empty() && !e.skip; }

}  // namespace

bool Pipeline::skip_if_seen(Extracted& e) {
  // Published before: an earlier poll of the feed (the same guid, maybe under a new link), or
  // another feed with the same link.
  if (!seen_links_.contains(link_key(e.fetch_url)) &&
      !seen_links_.contains(item_key(e.article.id))) {
    return false;
  }
  e.skip = true;
  if (metrics_) metrics_->fetch("already_seen");
  return true;
}

std::vector<std::string> Pipeline::links_to_fetch(const std::vector<Extracted*>& items) {
  std::vector<std::string> urls;
  std::unordered_set<std::string_view> listed;
  for (Extracted* e : items) {
    if (!wants_page(*e) || skip_if_seen(*e)) continue;
    if (listed.insert(e->fetch_url).second) urls.push_back(e->fetch_url);
  }
  return urls;
}

std::vector<Pipeline::LinkedPage> Pipeline::fetch_pages(const std::vector<std::string>& urls,
                                                        Fetcher& fetcher) const {
  std::vector<LinkedPage> pages(urls.size());
  if (urls.empty()) return pages;
  const auto t0 = Clock::now();
  std::vector<FetchResult> results = fetcher.fetch(urls);
  if (metrics_) metrics_->stage_seconds("fetch", seconds_since(t0));
  for (std::size_t i = 0; i < urls.size(); ++i) {
    FetchResult& r = results[i];
    LinkedPage& p = pages[i];
    p.final_url = r.final_url;
    if (refused_links_.contains(urls[i])) {
      p.failure = Failure{"worker_crash", urls[i] +
                                              ": the process died of a fatal signal while "
                                              "extracting this page; not extracted again"};
      continue;
    }
    if (!r.ok()) {
      p.retry_after_seconds = r.retry_after_seconds;
      p.failure = Failure{"fetch_" + r.outcome, r.url + ": " + r.detail + " (" +
                                                    std::to_string(r.attempts) +
                                                    (r.attempts == 1 ? " attempt)" : " attempts)")};
      continue;
    }
    auto decoded = extractors::decode_to_utf8(r.body, r.content_type);
    // Fetched just now: no later date is the page's.
    const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    const CrashScope scope(link_crash_note(urls[i]));
    auto page = decoded ? extractors::extract_html(*decoded, r.final_url, config_.extract, now)
                        : tl::unexpected(decoded.error());
    if (page) {
      p.article = std::move(*page);
    } else {
      p.failure = Failure{std::string(extractors::reason_name(page.error().reason)),
                          "page " + r.final_url + ": " + page.error().detail};
    }
  }
  return pages;
}

void Pipeline::apply_pages(const std::vector<Extracted*>& items,
                           const std::vector<std::string>& urls, std::vector<LinkedPage> pages) {
  std::unordered_map<std::string_view, std::size_t> index;
  for (std::size_t i = 0; i < urls.size() && i < pages.size(); ++i) index.emplace(urls[i], i);
  // How many items take each page: the last one takes it, the others a copy.
  std::vector<std::size_t> takers(pages.size(), 0);
  std::vector<Extracted*> to_fill;
  for (Extracted* e : items) {
    if (!wants_page(*e) || skip_if_seen(*e)) continue;
    const auto it = index.find(e->fetch_url);
    if (it == index.end()) continue;  // not fetched: keeps what it has (its feed text)
    ++takers[it->second];
    to_fill.push_back(e);
  }
  for (Extracted* e : to_fill) {
    const std::size_t i = index.at(e->fetch_url);
    LinkedPage& p = pages[i];
    extractors::Article& a = e->article;
    if (p.article) {
      extractors::Article page = --takers[i] == 0 ? std::move(*p.article) : *p.article;
      // The feed knows the headline and the date; the page has the text and its metadata.
      a.text = std::move(page.text);
      if (a.title.empty()) a.title = page.title;
      a.canonical_url = page.canonical_url.empty() ? p.final_url : page.canonical_url;
      a.source = page.source.empty() ? a.source : page.source;
      if (a.lang.empty()) a.lang = page.lang;
      if (a.byline.empty()) a.byline = page.byline;
      if (a.authors.empty()) a.authors = std::move(page.authors);
      if (a.credit.empty()) a.credit = std::move(page.credit);
      if (!a.published_at) {
        a.published_at = page.published_at;
        a.published_utc_offset = page.published_utc_offset;
      }
      if (!a.modified_at) {
        a.modified_at = page.modified_at;
        a.modified_utc_offset = page.modified_utc_offset;
      }
      // The page's own description and image are the article's; the feed's are teasers.
      if (!page.description.empty()) a.description = std::move(page.description);
      if (page.image) a.image = std::move(page.image);
      if (a.section.empty()) a.section = std::move(page.section);
      if (a.tags.empty()) a.tags = std::move(page.tags);
      if (!page.site_name.empty()) a.site_name = std::move(page.site_name);
      a.paywalled = page.paywalled;
    } else {
      e->retry_after_seconds = p.retry_after_seconds;
      e->fetch_failure = p.failure;
    }
    if (e->fetch_failure) {
      if (extractors::collapse_whitespace(e->feed_text).size() >= config_.extract.min_text_chars &&
          !e->feed_text.empty()) {
        a.text = e->feed_text;  // the teaser is better than nothing
      } else {
        e->skip = true;
      }
    }
  }
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

std::vector<Output> Pipeline::commit(std::vector<Extracted> extracted, const Input& input) {
  return group(judge(std::move(extracted), input));
}

std::vector<Pipeline::Judged> Pipeline::judge(std::vector<Extracted> extracted,
                                              const Input& input) {
  std::vector<Judged> judged;
  judged.reserve(extracted.size());
  for (auto& e : extracted) {
    if (!publishable(e)) continue;
    // A feed item's link, fetched now or, for a page the fetch retries brought, before.
    const std::string link = e.from_feed ? e.fetch_url : input.link;
    const std::string key = link.empty() ? std::string() : item_key(article_id(e, input));
    judged.push_back(judge_one(std::move(e), input));
    if (!link.empty()) {
      pending_links_.emplace_back(link, judged.back().out.event_time);
      pending_links_.emplace_back(key, judged.back().out.event_time);
    }
  }
  return judged;
}

std::vector<Output> Pipeline::group(std::vector<Judged> judged) {
  std::vector<Output> outputs;
  outputs.reserve(judged.size());
  for (auto& j : judged) outputs.push_back(group_one(std::move(j)));
  return outputs;
}

std::vector<Pipeline::Extracted> Pipeline::hand_over(std::vector<Extracted> extracted,
                                                     const Input& input) {
  std::vector<Extracted> out;
  out.reserve(extracted.size());
  for (auto& e : extracted) {
    if (!publishable(e)) continue;
    if (!e.language_known) set_language(e);
    if (const std::string& link = e.from_feed ? e.fetch_url : input.link; !link.empty()) {
      // Seen by this extractor from now on (once acknowledged); the window's event time is the
      // dedup role's to know, so the link is kept by the seen-set's size bound.
      const std::int64_t t = e.event_time.value_or(0);
      pending_links_.emplace_back(link, t);
      pending_links_.emplace_back(item_key(article_id(e, input)), t);
    }
    e.feed_text.clear();
    out.push_back(std::move(e));
  }
  return out;
}

tl::expected<std::vector<Output>, Failure> Pipeline::process(const Input& input) {
  auto extracted = prepare(input);
  if (!extracted) return tl::unexpected(extracted.error());
  return commit(std::move(*extracted), input);
}

bool Pipeline::restore(std::string_view article_json) {
  const auto j = nlohmann::json::parse(article_json, nullptr, false);
  if (!j.is_object() || !j.contains("id") || !j["id"].is_string() || !j.contains("text") ||
      !j["text"].is_string() || !j.contains("dup") || !j["dup"].is_object()) {
    return false;
  }
  auto str = [&j](const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  std::optional<std::int64_t> event_time = extractors::parse_iso8601(str("event_time"));
  if (!event_time) event_time = extractors::parse_iso8601(str("fetched_at"));
  if (!event_time) return false;
  dedup::Verdict verdict;
  const auto& dup = j["dup"];
  const std::string kind = dup.value("kind", "unique");
  verdict.kind = kind == "exact"       ? dedup::DupKind::kExact
                 : kind == "near"      ? dedup::DupKind::kNear
                 : kind == "contained" ? dedup::DupKind::kContained
                                       : dedup::DupKind::kUnique;
  if (dup.contains("of") && dup["of"].is_string()) verdict.of = dup["of"].get<std::string>();
  if (dup.contains("similarity") && dup["similarity"].is_number()) {
    verdict.similarity = dup["similarity"].get<double>();
  }
  const std::string id = str("id");
  const std::string text = str("text");
  std::string normalized;
  const std::string core =
      boilerplate_.filter(dedup::PageParagraphs(str("source"), text), str("url"), text, *event_time,
                          str("title"), nullptr, true, &normalized);
  const dedup::Fingerprint fp = fingerprint(id, core, normalized, nullptr, *event_time, nullptr);
  window_.restore(id, fp, *event_time, verdict);
  if (j.contains("feed_url")) {
    remember_link(str("url"), *event_time);
    remember_link(item_key(id), *event_time);
  }
  std::string image_url;
  if (const auto im = j.find("image"); im != j.end() && im->is_object()) {
    if (const auto u = im->find("url"); u != im->end() && u->is_string()) image_url = *u;
  }
  const std::string description = str("description");
  stories_.assign({id, str("url"), str("source"), verdict.kind, str("language")}, str("title"),
                  verdict, *event_time, core, str("story_id"), {image_url, description});
  if (const auto merged = j.find("story_merged_from"); merged != j.end() && merged->is_array()) {
    for (const auto& from : *merged) {
      if (from.is_string()) stories_.restore_merge(from.get<std::string>(), str("story_id"));
    }
  }
  if (!window_.contains(id)) stories_.forget(id);
  forget_left();
  return true;
}

void Pipeline::restore(const dedup::ArticleState& s) { restore_stories(s, restore_window(s)); }

Pipeline::WindowRestored Pipeline::restore_window(const dedup::ArticleState& s) {
  next_seq_ = std::max(next_seq_, s.seq + 1);
  const bool held = window_.contains(s.id);
  // The record of an article judged again counts nothing again (as `finish` does).
  if (!held) boilerplate_.record(s.source, s.url, s.paragraphs, s.event_time);
  if (!held && !s.df_terms.empty() &&
      config_.signature.scheme == dedup::SignatureScheme::kWeighted) {
    term_stats_.add(std::span<const std::uint32_t>(s.df_terms), s.event_time);
  }
  window_.restore(s.id, s.fp, s.event_time, s.verdict);
  remember_published_links(s);
  return {window_.contains(s.id), window_.take_left()};
}

void Pipeline::restore_stories(const dedup::ArticleState& s, const WindowRestored& w) {
  // The terms in the order the live book had them, so they are numbered as there.
  stories_.assign_terms({s.id, s.url, s.source, s.verdict.kind, s.language}, s.title, s.verdict,
                        s.event_time, dedup::StoryBook::TermList(s.story_terms), s.story_id,
                        {s.image_url, s.description});
  for (const auto& from : s.merged_from) stories_.restore_merge(from, s.story_id);
  // A record too old for the window counts in its story, which does not index it (as one
  // judged live is not once it expired); what left the window leaves the story book's index.
  if (!w.held) stories_.forget(s.id);
  for (const std::string& id : w.left) stories_.forget(id);
}

std::string Pipeline::save_state() const {
  dedup::internal::Writer w;
  save_to(w);
  return w.take();
}

void Pipeline::save_state(std::size_t chunk,
                          const std::function<void(std::string_view, bool last)>& sink) const {
  dedup::internal::Writer w(chunk, sink);
  save_to(w);
  w.finish();
}

void Pipeline::save_to(dedup::internal::Writer& w) const {
  w.raw("NFP5");
  w.varint(next_seq_);
  w.varint(evictions_reported_);
  window_.save(w);
  term_stats_.save(w);
  boilerplate_.save(w);
  stories_.save(w);
  w.varint(seen_links_.order().size());
  for (const auto& [t, url] : seen_links_.order()) {
    w.signed_varint(t);
    w.string(url);
  }
  w.varint(seen_links_.last_seen().size());
  for (const auto& [url, t] : seen_links_.last_seen()) {
    w.string(url);
    w.signed_varint(t);
  }
}

bool Pipeline::load_state(std::string_view bytes) {
  dedup::internal::Reader r(bytes, bytes.size());
  if (!r.expect("NFP5")) return false;
  const std::uint64_t next_seq = r.varint();
  const std::uint64_t evictions = r.varint();
  dedup::DedupWindow window(config_.window);
  window.track_left();
  dedup::TermStats term_stats = term_stats_;
  dedup::BoilerplateFilter boilerplate = boilerplate_;
  dedup::StoryBook stories = stories_;
  if (!window.load(r) || !term_stats.load(r) || !boilerplate.load(r) || !stories.load(r)) {
    return false;
  }
  std::deque<std::pair<std::int64_t, std::string>> order(r.count());
  for (auto& [t, url] : order) {
    t = r.signed_varint();
    url = r.string();
  }
  std::unordered_map<std::string, std::int64_t> links;
  const std::size_t n = r.count();
  links.reserve(n);
  for (std::size_t i = 0; i < n && r.ok(); ++i) {
    std::string url = r.string();
    links.emplace(std::move(url), r.signed_varint());
  }
  if (!r.done()) return false;
  next_seq_ = next_seq;
  evictions_reported_ = evictions;
  window_ = std::move(window);
  term_stats_ = std::move(term_stats);
  boilerplate_ = std::move(boilerplate);
  stories_ = std::move(stories);
  seen_links_.load(std::move(order), std::move(links));
  return true;
}

void Pipeline::remember_published_links(const dedup::ArticleState& s) {
  if (!s.from_feed || s.link.empty()) return;
  remember_link(s.link, s.event_time);
  remember_link(item_key(s.id), s.event_time);
}

std::string Pipeline::article_id(const Extracted& e, const Input& input) {
  return e.from_feed ? e.article.id : page_id(e.article.canonical_url, input);
}

void Pipeline::set_language(Extracted& e) {
  const extractors::Article& a = e.article;
  e.article.language =
      extractors::detect_language(a.title, a.text, a.lang, extractors::url_host(a.url));
  e.language_known = true;
}

Pipeline::Judged Pipeline::judge_one(Extracted extracted, const Input& input) {
  if (!extracted.language_known) set_language(extracted);
  Judged judged;
  Output& out = judged.out;
  out.article = std::move(extracted.article);
  extractors::Article& a = out.article;
  if (extracted.from_feed) {
    out.feed_url = input.url;
    out.feed_id = input.id;
  } else {
    // A feed item's page fetched later is published as the item: its headline, its feed.
    if (!input.title.empty() && (a.title.empty() || !input.link.empty())) a.title = input.title;
    if (!input.link.empty()) {
      out.feed_url = input.feed_url;
      out.feed_id = input.feed_id;
    }
    if (input.published_at) {
      a.published_at = input.published_at;
      a.published_utc_offset = 0;
    }
    // Identity by the canonical URL without tracking parameters, fragment or default port.
    a.id = page_id(a.canonical_url, input);
  }
  a.fetched_at = input.fetched_at;
  out.version = input.version;

  const auto t0 = Clock::now();
  // Event time: the input's own published/fetched time (for feed items, the item's date). A
  // date printed on a page is not trusted for windowing: templates carry stale dates and copies
  // keep the original's.
  std::int64_t event_time = window_.watermark();
  if (extracted.event_time) {
    event_time = *extracted.event_time;
  } else if (input.published_at) {
    event_time = *input.published_at;
  } else if (input.fetched_at) {
    event_time = *input.fetched_at;
  }
  if (input.fetched_at && event_time > *input.fetched_at + config_.max_event_lead_seconds) {
    event_time = *input.fetched_at;
  }
  // The site's own furniture that extraction let through says nothing about the article.
  dedup::ArticleState& state = out.state;
  // An article the window holds is judged again (a rewind, a re-extraction after a rebalance):
  // its paragraphs were counted the first time; counting them again would make the site's
  // other pages lose paragraphs a single pass keeps.
  const bool again = window_.contains(a.id);
  Extracted::Ahead& ahead = extracted.ahead;
  if (!ahead.paragraphs.of(a.source, a.text)) {
    ahead.paragraphs = dedup::PageParagraphs(a.source, a.text);
    ahead.story_terms.reset();
    ahead.shingles.reset();
  }
  judged.core = boilerplate_.filter(ahead.paragraphs, a.url, a.text, event_time, a.title,
                                    &state.paragraphs, /*learn=*/!again, &judged.normalized);
  // What was made ahead is the article's when the filter kept the whole text (the terms: and
  // the title is the one they were counted with).
  const bool whole = judged.core == a.text;
  const dedup::Fingerprint fp = fingerprint(a.id, judged.core, judged.normalized,
                                            whole && ahead.shingles ? &*ahead.shingles : nullptr,
                                            event_time, &state.df_terms);
  if (whole && ahead.title == a.title) judged.story_terms = std::move(ahead.story_terms);
  out.content_hash = fp.exact.hex();
  out.event_time = event_time;
  out.verdict = window_.observe(a.id, fp, event_time, low_watermark_);
  judged.left = window_.take_left();
  state.seq = next_seq_++;
  state.id = a.id;
  state.event_time = event_time;
  state.fp = fp;
  state.verdict = out.verdict;
  state.url = a.url;
  state.source = a.source;
  state.title = a.title;
  state.from_feed = extracted.from_feed || !input.link.empty();
  state.language = a.language;
  state.link = extracted.from_feed ? extracted.fetch_url : input.link;
  if (a.image) state.image_url = a.image->url;
  state.description = a.description;
  if (metrics_) {
    metrics_->stage_seconds("dedup", seconds_since(t0));
    for (const auto& w : a.warnings) metrics_->extract_warning(w);
    metrics_->window_size(static_cast<double>(window_.size()),
                          static_cast<double>(window_.memory_bytes()));
    if (window_.evicted() > evictions_reported_) {
      metrics_->window_evicted(static_cast<double>(window_.evicted() - evictions_reported_));
      evictions_reported_ = window_.evicted();
    }
  }
  return judged;
}

Output Pipeline::group_one(Judged judged) {
  const auto t0 = Clock::now();
  Output& out = judged.out;
  const extractors::Article& a = out.article;
  const dedup::StoryBook::Terms terms =
      judged.story_terms ? stories_.select_terms(std::move(*judged.story_terms), a.language)
                         : stories_.terms_of(a.title, judged.core, judged.normalized, a.language);
  const std::string_view image_url = a.image ? std::string_view(a.image->url) : std::string_view();
  out.story =
      stories_.assign_terms({a.id, a.url, a.source, out.verdict.kind, a.language}, a.title,
                            out.verdict, out.event_time, terms, {}, {image_url, a.description});
  out.story_id = out.story.story_id;
  for (const std::string& id : judged.left) stories_.forget(id);
  dedup::ArticleState& state = out.state;
  state.story_id = out.story_id;
  state.merged_from = out.story.merged_from;
  state.story_terms.assign(terms.begin(), terms.end());
  if (metrics_) {
    metrics_->stage_seconds("cluster", seconds_since(t0));
    if (out.story.version == 1) {
      metrics_->story_created();
    } else {
      metrics_->story_updated();
    }
    metrics_->stories_active(static_cast<double>(stories_.size()));
  }
  return std::move(out);
}

namespace {

void seconds_or_null(JsonWriter& w, const std::optional<std::int64_t>& t) {
  if (t) {
    w.integer(*t);
  } else {
    w.null();
  }
}

std::optional<std::int64_t> read_time(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<std::int64_t>();
}

}  // namespace

std::string extracted_json(const Pipeline::Extracted& e, const Input& input) {
  const extractors::Article& a = e.article;
  JsonWriter w;
  w.begin_object();
  w.key("article").begin_object();
  w.key("id").string(a.id);
  w.key("url").string(a.url);
  w.key("canonical_url").string(a.canonical_url);
  w.key("source").string(a.source);
  w.key("title").string(a.title);
  w.key("text").string(a.text);
  w.key("lang").string(a.lang);
  w.key("language").string(a.language);
  w.key("byline").string(a.byline);
  w.key("authors").strings(a.authors);
  w.key("credit").string(a.credit);
  w.key("published_at");
  seconds_or_null(w, a.published_at);
  w.key("published_utc_offset").integer(a.published_utc_offset);
  w.key("modified_at");
  seconds_or_null(w, a.modified_at);
  w.key("modified_utc_offset").integer(a.modified_utc_offset);
  w.key("description").string(a.description);
  w.key("image");
  image_json(w, a.image);
  w.key("section").string(a.section);
  w.key("tags").strings(a.tags);
  w.key("site_name").string(a.site_name);
  w.key("paywalled").boolean(a.paywalled);
  w.key("warnings").strings(a.warnings);
  w.end_object();
  w.key("event_time");
  seconds_or_null(w, e.event_time);
  w.key("from_feed").boolean(e.from_feed);
  w.key("fetch_url").string(e.fetch_url);
  // What `commit` reads of the input: identity, the feed an item came from, the times.
  w.key("input").begin_object();
  w.key("id").string(input.id);
  w.key("url").string(input.url);
  w.key("title").string(input.title);
  w.key("published_at");
  seconds_or_null(w, input.published_at);
  w.key("fetched_at");
  seconds_or_null(w, input.fetched_at);
  // A feed item's page fetched later (added fields: older dedup roles ignore them).
  if (!input.link.empty()) {
    w.key("link").string(input.link);
    w.key("feed_url").string(input.feed_url);
    w.key("feed_id").string(input.feed_id);
    w.key("version").integer(input.version);
  }
  w.end_object();
  w.end_object();
  return w.take();
}

tl::expected<std::pair<Pipeline::Extracted, Input>, std::string> parse_extracted(
    std::string_view text) {
  if (auto fast = read_extracted_fast(text)) return std::move(*fast);
  return parse_extracted_general(text);
}

tl::expected<std::pair<Pipeline::Extracted, Input>, std::string> parse_extracted_general(
    std::string_view text) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return tl::unexpected(std::string("not a JSON object"));
  const auto art = j.find("article");
  const auto in = j.find("input");
  if (art == j.end() || !art->is_object() || in == j.end() || !in->is_object()) {
    return tl::unexpected(std::string("no article or input object"));
  }
  std::string problem;
  auto str = [&problem](const nlohmann::json& o, const char* key) {
    const auto it = o.find(key);
    if (it == o.end() || !it->is_string()) {
      if (problem.empty()) problem = std::string("'") + key + "' is not a string";
      return std::string();
    }
    return it->get<std::string>();
  };
  std::pair<Pipeline::Extracted, Input> out;
  Pipeline::Extracted& e = out.first;
  extractors::Article& a = e.article;
  a.id = str(*art, "id");
  a.url = str(*art, "url");
  a.canonical_url = str(*art, "canonical_url");
  a.source = str(*art, "source");
  a.title = str(*art, "title");
  a.text = str(*art, "text");
  a.lang = str(*art, "lang");
  a.language = str(*art, "language");
  a.byline = str(*art, "byline");
  a.published_at = read_time(*art, "published_at");
  // Added later: a record of an older extractor has none of these.
  a.modified_at = read_time(*art, "modified_at");
  for (auto [key, field] : {std::pair{"published_utc_offset", &a.published_utc_offset},
                            std::pair{"modified_utc_offset", &a.modified_utc_offset}}) {
    if (const auto o = art->find(key); o != art->end() && o->is_number_integer()) {
      *field = static_cast<int>(std::clamp<std::int64_t>(*o, -86399, 86399));
    }
  }
  const auto strings = [](const nlohmann::json& o, const char* key) {
    std::vector<std::string> list;
    if (const auto it = o.find(key); it != o.end() && it->is_array()) {
      for (const auto& x : *it) {
        if (x.is_string()) list.push_back(x.get<std::string>());
      }
    }
    return list;
  };
  const auto optional_string = [](const nlohmann::json& o, const char* key) {
    const auto it = o.find(key);
    return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  a.authors = strings(*art, "authors");
  a.credit = optional_string(*art, "credit");
  a.description = optional_string(*art, "description");
  if (const auto im = art->find("image"); im != art->end()) a.image = read_image(*im);
  a.section = optional_string(*art, "section");
  a.tags = strings(*art, "tags");
  a.site_name = optional_string(*art, "site_name");
  if (const auto p = art->find("paywalled"); p != art->end() && p->is_boolean()) a.paywalled = *p;
  if (const auto w = art->find("warnings"); w != art->end() && w->is_array()) {
    for (const auto& x : *w) {
      if (x.is_string()) a.warnings.push_back(x.get<std::string>());
    }
  }
  e.event_time = read_time(j, "event_time");
  if (const auto f = j.find("from_feed"); f != j.end() && f->is_boolean()) e.from_feed = *f;
  e.fetch_url = str(j, "fetch_url");
  e.language_known = true;
  Input& input = out.second;
  input.id = str(*in, "id");
  input.url = str(*in, "url");
  input.title = str(*in, "title");
  input.published_at = read_time(*in, "published_at");
  input.fetched_at = read_time(*in, "fetched_at");
  input.link = optional_string(*in, "link");
  input.feed_url = optional_string(*in, "feed_url");
  input.feed_id = optional_string(*in, "feed_id");
  if (const auto v = in->find("version"); v != in->end() && v->is_number_integer()) {
    input.version = static_cast<int>(std::clamp<std::int64_t>(*v, 1, 1000));
  }
  if (!problem.empty()) return tl::unexpected(problem);
  if (a.text.empty()) return tl::unexpected(std::string("the article has no text"));
  return out;
}

}  // namespace newsflow::daemon
