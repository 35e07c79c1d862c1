// Linked pages: the pages feed items link to, fetched between extraction and judging, and the
// links published (seen once, not fetched again).
#include <chrono>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "daemon/ops/crash_scope.h"
#include "daemon/ops/metrics.h"
#include "daemon/pipeline/fetcher.h"
#include "daemon/pipeline/internal/parts.h"
#include "daemon/pipeline/pipeline.h"
#include "extractors/charset.h"
#include "extractors/html.h"
#include "extractors/text.h"
#include "extractors/urls.h"

namespace newsflow::daemon {

using pipeline_internal::Clock;
using pipeline_internal::derived_id;
using pipeline_internal::page_id;
using pipeline_internal::seconds_since;

namespace {

// Whether `e` still waits for its linked page.
bool wants_page(const Pipeline::Extracted& e) { return !e.fetch_url.empty() && !e.skip; }

}  // namespace

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
      p.failure = Failure{Reason::kWorkerCrash, urls[i] +
                                                    ": the process died of a fatal signal while "
                                                    "extracting this page; not extracted again"};
      continue;
    }
    if (!r.ok()) {
      p.retry_after_seconds = r.retry_after_seconds;
      p.failure = Failure{fetch_reason(r.outcome),
                          r.url + ": " + r.detail + " (" + std::to_string(r.attempts) +
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
      p.failure = Failure{reason_of(page.error().reason),
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

void Pipeline::remember_published_links(const dedup::ArticleState& s) {
  if (!s.from_feed || s.link.empty()) return;
  remember_link(s.link, s.event_time);
  remember_link(item_key(s.id), s.event_time);
}

}  // namespace newsflow::daemon
