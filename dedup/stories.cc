#include "dedup/stories.h"

#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <type_traits>
#include <utility>

#include "dedup/internal/codec.h"
#include "dedup/internal/grow.h"
#include "dedup/internal/id_pair.h"

namespace newsflow::dedup {

namespace {

// Adds a language to a story's sorted list (an unknown one, "", is not listed).
void add_language(Story& story, std::string_view language) {
  if (language.empty()) return;
  auto& ls = story.languages;
  const auto at = std::lower_bound(ls.begin(), ls.end(), language);
  if (at == ls.end() || *at != language) ls.insert(at, std::string(language));
}

// Distinct sources among the story's listed members (at most `max_listed`).
void count_sources(Story& story) {
  std::vector<std::string_view> seen;
  seen.reserve(story.articles.size());
  for (const auto& m : story.articles) {
    const std::string_view source = m.source();
    if (std::find(seen.begin(), seen.end(), source) == seen.end()) seen.push_back(source);
  }
  story.sources = seen.size();
}

}  // namespace

std::string StoryBook::resolve(std::string id) const {
  for (int hops = 0; hops < 64; ++hops) {
    const auto it = merged_into_.find(id);
    if (it == merged_into_.end()) break;
    id = it->second;
  }
  return id;
}

void StoryBook::merge(Story& survivor, const std::string& victim_id) {
  const auto v = stories_.find(victim_id);
  if (v == stories_.end() || v->first == survivor.story_id) return;
  Story& victim = v->second;
  for (auto& m : victim.articles) {
    if (survivor.articles.size() >= options_.max_listed) break;
    survivor.articles.push_back(std::move(m));
  }
  survivor.article_count += victim.article_count;
  survivor.copies += victim.copies;
  for (const std::string& l : victim.languages) add_language(survivor, l);
  survivor.first_seen = std::min(survivor.first_seen, victim.first_seen);
  survivor.last_updated = std::max(survivor.last_updated, victim.last_updated);
  survivor.last_report = std::max(survivor.last_report, victim.last_report);
  count_sources(survivor);
  survivor.merged_from.push_back(victim_id);
  if (const auto victim_slot = index_.find(victim_id)) {
    const TermWeights terms = index_.slot(*victim_slot).terms;
    // Before the victim's terms are released.
    index_.add_terms(index_.slot_for(survivor.story_id), terms);
    index_.drop(*victim_slot);
  }
  merged_into_[victim_id] = survivor.story_id;
  stories_.erase(v);
}

void StoryBook::restore_merge(const std::string& from, const std::string& into) {
  const std::string target = resolve(into);
  const std::string source = resolve(from);
  if (source == target) return;
  if (auto s = stories_.find(target); s != stories_.end()) {
    merge(s->second, source);
    s->second.merged_from.clear();
  }
  merged_into_[source] = target;
}

const Story& StoryBook::assign(const StoryMember& member, std::string_view title,
                               const Verdict& verdict, std::int64_t event_time,
                               std::string_view text, std::string_view story_hint,
                               const StoryCard& card) {
  return assign_terms(member, title, verdict, event_time,
                      terms_of(title, text, {}, member.language()), story_hint, card);
}

template <class List>
void StoryBook::add_to_index(const std::string& story_id, const List& terms) {
  // Looked up in one pass, the table's entries fetched ahead.
  std::vector<std::string_view> texts;
  texts.reserve(terms.size());
  for (const auto& [t, w] : terms) texts.push_back(t);
  std::vector<TermId> ids(texts.size());
  index_.terms().intern_all(texts, ids);
  TermWeights weights;
  weights.reserve(terms.size());
  std::size_t k = 0;
  for (const auto& [t, w] : terms) weights.emplace_back(ids[k++], w);
  index_.add_terms(index_.slot_for(story_id), weights);
}

Story* StoryBook::merge_similar(Story* story,
                                const std::vector<std::pair<double, std::string>>& similar) {
  for (const auto& [score, other] : similar) {
    if (score < options_.merge_threshold || other == story->story_id) continue;
    const auto o = stories_.find(other);
    if (o == stories_.end()) continue;
    if (o->second.first_seen < story->first_seen ||
        (o->second.first_seen == story->first_seen && other < story->story_id)) {
      Story& older = o->second;
      older.merged_from.clear();
      const std::string younger = story->story_id;
      merge(older, younger);  // invalidates `story`
      story = &stories_.find(other)->second;
    } else {
      merge(*story, other);
    }
  }
  return story;
}

const Story& StoryBook::assign_terms(const StoryMember& member, std::string_view title,
                                     const Verdict& verdict, std::int64_t event_time,
                                     const Terms& terms, std::string_view story_hint,
                                     const StoryCard& card) {
  return place(member, title, verdict, event_time, terms, story_hint, card);
}

const Story& StoryBook::assign_terms(const StoryMember& member, std::string_view title,
                                     const Verdict& verdict, std::int64_t event_time,
                                     TermList terms, std::string_view story_hint,
                                     const StoryCard& card) {
  return place(member, title, verdict, event_time, terms, story_hint, card);
}

template <class List>
std::string StoryBook::choose_story(const StoryMember& member, const Verdict& verdict,
                                    std::int64_t event_time, const List& terms,
                                    std::string_view story_hint,
                                    std::vector<std::pair<double, std::string>>& similar) {
  std::string story_id = story_hint.empty() ? std::string() : resolve(std::string(story_hint));
  if (story_id.empty() && verdict.kind != DupKind::kUnique) {
    if (const std::string* of = story_of_.find(verdict.of)) {
      if (std::string s = resolve(*of); stories_.count(s)) story_id = s;
    }
  }
  if (story_hint.empty()) {
    double floor = options_.similarity_threshold;
    if (options_.merge_threshold > 0 && (floor <= 0 || options_.merge_threshold < floor)) {
      floor = options_.merge_threshold;
    }
    if constexpr (std::is_same_v<List, Terms>) {
      similar = similar_stories(terms, event_time, floor, member.language());
    } else {  // a record without its story (none writes one): the map the search reads
      similar =
          similar_stories(Terms(terms.begin(), terms.end()), event_time, floor, member.language());
    }
    if (story_id.empty() && !similar.empty() && options_.similarity_threshold > 0 &&
        similar.front().first >= options_.similarity_threshold) {
      story_id = similar.front().second;
    }
  }
  return story_id;
}

template <class List>
const Story& StoryBook::place(const StoryMember& member, std::string_view title,
                              const Verdict& verdict, std::int64_t event_time, const List& terms,
                              std::string_view story_hint, const StoryCard& card) {
  const std::string id = member.id();  // unpacked once
  if (const std::string* placed = story_of_.find(id)) {
    if (auto story = stories_.find(resolve(*placed)); story != stories_.end()) {
      return story->second;
    }
  }
  watermark_ = std::max(watermark_, event_time);
  count_list(terms, event_time, member.language());
  // A sweep costs as much as the book holds: one every half a book's worth of articles keeps
  // it O(1) per article (a sweep every 1,024 made a restore of 100,000 articles quadratic).
  if (++since_sweep_ >= std::max<std::size_t>(1024, story_of_.size() / 2)) expire(watermark_);
  if (options_.max_stories > 0 && stories_.size() >= options_.max_stories) shrink();

  std::vector<std::pair<double, std::string>> similar;
  std::string story_id = choose_story(member, verdict, event_time, terms, story_hint, similar);
  if (story_id.empty()) story_id = id;
  add_to_index(story_id, terms);
  auto [it, created] = stories_.try_emplace(story_id);
  Story* story = &it->second;
  story->merged_from.clear();
  if (created) {
    story->story_id = story_id;
    story->language = member.language();
    story->first_seen = event_time;
  }
  // Other stories the article matches as well as a story's own articles do were one story all
  // along: the older one absorbs the younger (stable ids for the bigger share of readers).
  if (options_.merge_threshold > 0 && !created) {  // a new story matched nothing well enough
    story = merge_similar(story, similar);
  }
  story->first_seen = std::min(story->first_seen, event_time);
  story->last_updated = std::max(story->last_updated, event_time);
  if (created) {
    story->last_report = event_time;
  } else if (member.kind() == DupKind::kUnique) {
    story->last_report = std::max(story->last_report, event_time);
  }
  ++story->article_count;
  if (member.kind() != DupKind::kUnique) ++story->copies;
  add_language(*story, member.language());
  if (created || member.kind() == DupKind::kUnique) {
    challenge_representative(*story, member, title, terms, language_of(member.language()), card);
  }
  ++story->version;
  if (story->articles.size() < options_.max_listed) {
    // `sources` counts the listed members' (made again by a merge): one more when this one's
    // source is new to them. A full list, most of a large story's updates, changes nothing.
    const std::string_view source = member.source();
    const bool known = std::any_of(story->articles.begin(), story->articles.end(),
                                   [source](const StoryMember& m) { return m.source() == source; });
    internal::grow_by_quarter(story->articles, options_.max_listed);
    story->articles.push_back(member);
    if (!known) ++story->sources;
  }
  // Links are published, never restored: a restore (a story hint) leaves them to the next update,
  // as a loaded snapshot does, and costs no candidate search per record.
  if (options_.related_across_languages && story_hint.empty()) {
    story->related_stories = related_of(*story);
  }
  story_of_.set(id, story->story_id);
  return *story;
}

const Story* StoryBook::find(std::string_view story_id) const {
  const auto it = stories_.find(std::string(story_id));
  return it == stories_.end() ? nullptr : &it->second;
}

template <class List>
void StoryBook::challenge_representative(Story& story, const StoryMember& member,
                                         std::string_view title, const List& terms,
                                         const Language& language, const StoryCard& card) {
  constexpr std::size_t kRepresentativeTerms = 16;
  // The article's heaviest terms by TF-IDF now, ties by term.
  std::vector<std::pair<double, decltype(&*terms.begin())>> by_weight;
  by_weight.reserve(terms.size());
  for (const auto& term : terms) {
    by_weight.emplace_back(term.second * idf(term.first, language), &term);
  }
  const std::size_t n = std::min(kRepresentativeTerms, by_weight.size());
  std::partial_sort(by_weight.begin(), by_weight.begin() + static_cast<std::ptrdiff_t>(n),
                    by_weight.end(), [](const auto& a, const auto& b) {
                      return a.first != b.first ? a.first > b.first
                                                : a.second->first < b.second->first;
                    });
  std::vector<std::pair<std::string_view, float>> heaviest;
  heaviest.reserve(n);
  for (std::size_t i = 0; i < n; ++i) heaviest.emplace_back(*by_weight[i].second);
  const auto held = index_.find(story.story_id);
  if (!held) return;
  Slot& slot = index_.slot(*held);
  if (!story.representative.empty()) {
    if (title.empty()) return;
    // Cosines with the story's TF-IDF vector (its norm and weights made once).
    std::unordered_map<TermId, double> story_weights;
    story_weights.reserve(slot.terms.size());
    for (const auto& [t, w] : slot.terms)
      story_weights.emplace(t, w * idf(index_.terms().text(t), language));
    const auto weight_in_story = [&](TermId t) {
      const auto at = story_weights.find(t);
      return at == story_weights.end() ? 0.0 : at->second;
    };
    const auto cosine = [&](const auto& v, auto&& id_of, auto&& text_of) {
      double dot = 0, norm2 = 0;
      for (const auto& [t, w] : v) {
        const double x = w * idf(text_of(t), language);
        norm2 += x * x;
        if (const std::optional<TermId> id = id_of(t)) dot += x * weight_in_story(*id);
      }
      return norm2 > 0 ? dot / std::sqrt(norm2) : 0;  // the story's norm is common to both
    };
    const double challenger = cosine(
        heaviest, [this](std::string_view t) { return index_.terms().find(t); },
        [](std::string_view t) { return t; });
    const double holder = cosine(
        slot.representative, [](TermId t) { return std::optional(t); },
        [this](TermId t) -> std::string_view { return index_.terms().text(t); });
    if (challenger <= holder) return;
  }
  story.representative = member.id();
  story.title = std::string(title);
  story.image_url = std::string(card.image_url);
  story.description = std::string(card.description);
  TermWeights adopted;
  adopted.reserve(heaviest.size());
  for (const auto& [t, w] : heaviest) {
    adopted.emplace_back(index_.terms().intern(t), w);
    index_.terms().use(adopted.back().first);
  }
  for (const auto& [t, w] : slot.representative) index_.terms().release(t);
  slot.representative = std::move(adopted);
}

std::string StoryBook::story_of(std::string_view article_id) const {
  const std::string* story = story_of_.find(article_id);
  return story ? resolve(*story) : std::string();
}

namespace {

// The first `n` of the stories by `before`, copied.
template <class Before>
std::vector<Story> first_stories(const std::unordered_map<std::string, Story>& stories,
                                 std::size_t n, Before before) {
  std::vector<const Story*> all;
  all.reserve(stories.size());
  for (const auto& [id, story] : stories) all.push_back(&story);
  n = std::min(n, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n), all.end(), before);
  std::vector<Story> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) out.push_back(*all[i]);
  return out;
}

}  // namespace

std::vector<Story> StoryBook::largest(std::size_t n) const {
  return first_stories(stories_, n, [](const Story* a, const Story* b) {
    if (a->article_count != b->article_count) return a->article_count > b->article_count;
    if (a->last_updated != b->last_updated) return a->last_updated > b->last_updated;
    return a->story_id < b->story_id;
  });
}

std::vector<Story> StoryBook::newest(std::size_t n) const {
  return first_stories(stories_, n, [](const Story* a, const Story* b) {
    if (a->last_updated != b->last_updated) return a->last_updated > b->last_updated;
    if (a->article_count != b->article_count) return a->article_count > b->article_count;
    return a->story_id < b->story_id;
  });
}

void StoryBook::shrink() {
  // The time from which the newest 90% were updated; the stories updated before it go. Ties at
  // it stay, unless that would leave the book full.
  std::vector<std::int64_t> times;
  times.reserve(stories_.size());
  for (const auto& [id, story] : stories_) times.push_back(story.last_updated);
  const std::size_t keep = options_.max_stories * 9 / 10;
  if (times.size() <= keep) return;
  const auto cut = times.end() - static_cast<std::ptrdiff_t>(keep);
  std::nth_element(times.begin(), cut, times.end());
  const std::int64_t horizon = keep > 0 ? *cut : INT64_MAX;
  const auto kept = static_cast<std::size_t>(std::count_if(
      times.begin(), times.end(), [horizon](std::int64_t t) { return t >= horizon; }));
  expire(watermark_, kept >= options_.max_stories ? horizon + 1 : horizon);
}

void StoryBook::expire(std::int64_t watermark, std::int64_t horizon) {
  since_sweep_ = 0;
  horizon = std::max(horizon, watermark - options_.window_seconds);
  for (auto it = stories_.begin(); it != stories_.end();) {
    it = it->second.last_updated < horizon ? stories_.erase(it) : std::next(it);
  }
  story_of_.retain([this](const std::string& story) { return stories_.count(resolve(story)) > 0; });
  for (auto it = merged_into_.begin(); it != merged_into_.end();) {
    it = stories_.count(resolve(it->second)) ? std::next(it) : merged_into_.erase(it);
  }
  // The slots of stories gone are freed.
  index_.sweep([this](const std::string& story_id) { return !stories_.count(story_id); });
}

namespace {

void save_strings(internal::Writer& w, const std::vector<std::string>& v) {
  w.varint(v.size());
  for (const auto& x : v) w.string(x);
}

bool load_strings(internal::Reader& r, std::vector<std::string>& v) {
  v.resize(r.count());
  for (auto& x : v) x = r.string();
  return r.ok();
}

template <class Map>
void save_map(internal::Writer& w, const Map& m) {
  w.varint(m.size());
  for (const auto& [k, v] : m) {
    w.string(k);
    w.string(v);
  }
}

template <class Map>
bool load_map(internal::Reader& r, Map& m) {
  const std::size_t n = r.count();
  m.reserve(n);
  for (std::size_t i = 0; i < n && r.ok(); ++i) {
    std::string k = r.string();
    m.emplace(std::move(k), r.string());
  }
  return r.ok();
}

}  // namespace

void StoryBook::save(internal::Writer& w) const {
  w.raw("NFB4");
  df_.save(w);
  w.varint(stories_.size());
  for (const auto& [id, s] : stories_) {
    w.string(s.story_id);
    w.string(s.title);
    w.string(s.image_url);
    w.string(s.description);
    w.string(s.representative);
    w.string(s.language);
    w.varint(s.articles.size());
    for (const StoryMember& m : s.articles) {
      w.string(m.id());
      w.string(m.url());
      w.string(m.source());
      w.varint(static_cast<std::uint64_t>(m.kind()));
      w.string(m.language());
    }
    w.varint(s.article_count);
    w.varint(s.sources);
    w.varint(s.copies);
    save_strings(w, s.languages);
    w.signed_varint(s.first_seen);
    w.signed_varint(s.last_updated);
    w.signed_varint(s.last_report);
    w.varint(s.version);
    save_strings(w, s.merged_from);
  }
  story_of_.save(w);
  save_map(w, merged_into_);
  index_.save(w);
  w.signed_varint(watermark_);
  w.varint(since_sweep_);
}

bool StoryBook::load(internal::Reader& r) {
  StoryBook next(options_);
  // NFB3 (before story cards) is read still, for one upgrade.
  internal::Reader v3 = r;
  const bool cards = r.expect("NFB4");
  if (!cards) {
    r = v3;
    if (!r.expect("NFB3")) return false;
  }
  if (!next.df_.load(r)) return false;
  const std::size_t stories = r.count();
  next.stories_.reserve(stories);
  for (std::size_t i = 0; i < stories && r.ok(); ++i) {
    Story s;
    s.story_id = r.string();
    s.title = r.string();
    if (cards) {
      s.image_url = r.string();
      s.description = r.string();
    }
    s.representative = r.string();
    s.language = r.string();
    s.articles.resize(r.count());
    for (StoryMember& m : s.articles) {
      const std::string_view id = r.view();
      const std::string_view url = r.view();
      const std::string_view source = r.view();
      const std::uint64_t kind = r.varint();
      if (kind > static_cast<std::uint64_t>(DupKind::kContained)) return false;
      m = StoryMember(id, url, source, static_cast<DupKind>(kind), r.view());
    }
    s.article_count = r.varint();
    s.sources = r.varint();
    // Counted again: a snapshot of an earlier version may hold the count of the members before
    // a restore's merge (it counted them at the story's next update).
    count_sources(s);
    s.copies = r.varint();
    if (!load_strings(r, s.languages)) return false;
    s.first_seen = r.signed_varint();
    s.last_updated = r.signed_varint();
    s.last_report = r.signed_varint();
    s.version = r.varint();
    if (!load_strings(r, s.merged_from)) return false;
    std::string id = s.story_id;
    next.stories_.emplace(std::move(id), std::move(s));
  }
  if (!next.story_of_.load(r) || !load_map(r, next.merged_into_)) return false;
  if (!next.index_.load(r)) return false;
  next.watermark_ = r.signed_varint();
  next.since_sweep_ = r.varint();
  if (!r.ok()) return false;
  *this = std::move(next);
  return true;
}

}  // namespace newsflow::dedup
