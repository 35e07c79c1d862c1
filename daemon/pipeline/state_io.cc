// The judging state's two halves: the whole state saved and loaded (`save_state`, `load_state`,
// one format), and an article put back from its published record or its state record.
#include <deque>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <unordered_map>

#include "daemon/pipeline/pipeline.h"
#include "dedup/internal/codec.h"
#include "extractors/timestamp.h"

namespace newsflow::daemon {

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

}  // namespace newsflow::daemon
