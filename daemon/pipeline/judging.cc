// Judging, the second half: each article judged against the window in input order (`judge`),
// then joined to its story (`group`); the state record it leaves is filled on the way.
#include <string>

#include "daemon/ops/metrics.h"
#include "daemon/pipeline/internal/parts.h"
#include "daemon/pipeline/pipeline.h"
#include "dedup/fingerprint.h"
#include "extractors/language.h"

namespace newsflow::daemon {

using pipeline_internal::Clock;
using pipeline_internal::derived_id;
using pipeline_internal::page_id;
using pipeline_internal::seconds_since;

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

namespace {

// The article as it is published: a feed item under its feed, a page under its input's identity
// and times.
void as_published(Output& out, const Extracted& extracted, const Input& input) {
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
}

}  // namespace

// Event time: the input's own published/fetched time (for feed items, the item's date). A date
// printed on a page is not trusted for windowing: templates carry stale dates and copies keep
// the original's.
std::int64_t Pipeline::event_time_of(const Extracted& extracted, const Input& input) const {
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
  return event_time;
}

void Pipeline::report_judged(const extractors::Article& a, double seconds) {
  metrics_->stage_seconds("dedup", seconds);
  for (const auto& w : a.warnings) metrics_->extract_warning(w);
  metrics_->window_size(static_cast<double>(window_.size()),
                        static_cast<double>(window_.memory_bytes()));
  if (window_.evicted() > evictions_reported_) {
    metrics_->window_evicted(static_cast<double>(window_.evicted() - evictions_reported_));
    evictions_reported_ = window_.evicted();
  }
}

Pipeline::Judged Pipeline::judge_one(Extracted extracted, const Input& input) {
  if (!extracted.language_known) set_language(extracted);
  Judged judged;
  Output& out = judged.out;
  out.article = std::move(extracted.article);
  as_published(out, extracted, input);
  extractors::Article& a = out.article;

  const auto t0 = Clock::now();
  const std::int64_t event_time = event_time_of(extracted, input);
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
  if (metrics_) report_judged(a, seconds_since(t0));
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

}  // namespace newsflow::daemon
