#include "dedup/stories.h"

#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <unordered_set>
#include <utility>

#include "dedup/internal/codec.h"
#include "dedup/internal/grow.h"
#include "dedup/internal/id_pair.h"

namespace newsflow::dedup {

namespace {

// An article's TF-IDF weights by term (those a story can share, sorted), their squared norm and
// their sum (over all its terms).
template <class Key>
struct Weighted {
  std::vector<std::pair<Key, double>> weights;
  double norm2 = 0, mass = 0;
};

// The features of an article against a story's terms (sorted as the article's are), `decay`
// applied.
template <class Key, class StoryTerms, class Idf>
StoryFeatures compare(const Weighted<Key>& a, const StoryTerms& story, double decay, Idf&& idf) {
  StoryFeatures f;
  double dot = 0, s_norm2 = 0, shared_mass = 0;
  auto at = a.weights.begin();
  for (const auto& [t, w] : story) {
    const double x = w * idf(t);
    s_norm2 += x * x;
    while (at != a.weights.end() && at->first < t) ++at;
    if (at != a.weights.end() && at->first == t) {
      dot += x * at->second;
      shared_mass += at->second;
    }
  }
  if (a.norm2 <= 0 || s_norm2 <= 0) return f;
  f.cosine = dot / std::sqrt(a.norm2 * s_norm2) * decay;
  f.containment = shared_mass / a.mass * decay;
  return f;
}

// Adds a language to a story's sorted list (an unknown one, "", is not listed).
void add_language(Story& story, std::string_view language) {
  if (language.empty()) return;
  auto& ls = story.languages;
  const auto at = std::lower_bound(ls.begin(), ls.end(), language);
  if (at == ls.end() || *at != language) ls.insert(at, std::string(language));
}

}  // namespace

double StoryFeatures::probability(const StoryModel& m) const {
  const double z = m.bias + m.cosine * cosine + m.containment * containment;
  return 1 / (1 + std::exp(-z));
}

namespace {
constexpr std::string_view kDocuments = "\x01documents";
}  // namespace

std::uint64_t StoryBook::language_seed(std::string_view language) {
  const std::string_view primary = language.substr(0, language.find('-'));
  return XXH3_64bits(primary.data(), primary.size());
}

StoryBook::Language StoryBook::language_of(std::string_view language) const {
  Language l;
  l.seed = language_seed(language);
  l.documents = df_.df(XXH3_64bits_withSeed(kDocuments.data(), kDocuments.size(), l.seed));
  return l;
}

double StoryBook::idf(std::string_view term, const Language& language) const {
  const double df = df_.df(XXH3_64bits_withSeed(term.data(), term.size(), language.seed));
  return std::log((language.documents + 1) / (df + 1)) + 1;
}

StoryBook::Terms StoryBook::terms_of(std::string_view title, std::string_view text,
                                     std::string_view normalized, std::string_view language) const {
  return select_terms(story_term_counts(title, text, normalized, options_), language);
}

StoryBook::Terms StoryBook::select_terms(Terms counts, std::string_view language) const {
  const StoryOptions& o = options_;
  const Language lang = language_of(language);
  if (counts.size() > o.terms_per_article) {
    // The heaviest by TF-IDF now, ties by term (the same terms in a replay and live).
    std::vector<std::pair<double, Terms::iterator>> by_weight;
    by_weight.reserve(counts.size());
    for (auto it = counts.begin(); it != counts.end(); ++it) {
      by_weight.emplace_back(it->second * idf(it->first, lang), it);
    }
    std::nth_element(by_weight.begin(), by_weight.begin() + o.terms_per_article, by_weight.end(),
                     [](const auto& a, const auto& b) {
                       return a.first != b.first ? a.first > b.first
                                                 : a.second->first < b.second->first;
                     });
    Terms kept;
    kept.reserve(o.terms_per_article);
    for (std::size_t i = 0; i < o.terms_per_article; ++i) {
      kept.emplace(by_weight[i].second->first, by_weight[i].second->second);
    }
    return kept;
  }
  return counts;
}

void StoryBook::count_terms(const Terms& terms, std::int64_t event_time,
                            std::string_view language) {
  const std::uint64_t seed = language_seed(language);
  std::vector<std::uint64_t> hashes;
  hashes.reserve(terms.size() + 1);
  hashes.push_back(XXH3_64bits_withSeed(kDocuments.data(), kDocuments.size(), seed));
  for (const auto& [t, w] : terms) hashes.push_back(XXH3_64bits_withSeed(t.data(), t.size(), seed));
  df_.add(hashes, event_time);
}

StoryFeatures StoryBook::features(const Terms& article, const Terms& story, double hours,
                                  std::string_view language) const {
  const Language lang = language_of(language);
  const auto idf_of = [this, &lang](std::string_view t) { return idf(t, lang); };
  Weighted<std::string_view> a;
  for (const auto& [t, w] : article) {
    const double x = w * idf_of(t);
    a.weights.emplace_back(t, x);
    a.norm2 += x * x;
    a.mass += x;
  }
  std::sort(a.weights.begin(), a.weights.end());
  std::vector<std::pair<std::string_view, float>> s(story.begin(), story.end());
  std::sort(s.begin(), s.end());
  return compare(a, s, std::exp(-std::abs(hours) / options_.decay_hours), idf_of);
}

namespace {

// The beginnings a URL on its source's host has: "https://www." and the source, ...
constexpr std::array<std::string_view, 4> kSchemes = {"https://www.", "https://", "http://www.",
                                                      "http://"};

}  // namespace

StoryMember::StoryMember(std::string_view id, std::string_view url, std::string_view source,
                         DupKind kind, std::string_view language)
    : kind_(kind) {
  std::string_view tail = url;
  for (std::size_t i = 0; i < kSchemes.size() && !source.empty(); ++i) {
    if (url.starts_with(kSchemes[i]) && url.substr(kSchemes[i].size()).starts_with(source)) {
      tail = url.substr(kSchemes[i].size() + source.size());
      host_ = static_cast<std::uint8_t>(i + 1);
      break;
    }
  }
  std::string packed;
  if (id.size() < kRawId && internal::is_lower_hex(id)) {
    packed.resize((id.size() + 1) / 2);
    internal::pack_hex(id, reinterpret_cast<std::uint8_t*>(packed.data()));
    id_digits_ = static_cast<std::uint8_t>(id.size());
    id = packed;
  }
  strings_ = internal::PackedStrings<4>({id, tail, source, language});
}

std::string StoryMember::id() const {
  const std::string_view stored = strings_[0];
  if (id_digits_ == kRawId) return std::string(stored);
  return internal::unpack_hex(reinterpret_cast<const std::uint8_t*>(stored.data()), id_digits_);
}

std::string StoryMember::url() const {
  if (host_ == 0) return std::string(strings_[1]);
  std::string url(kSchemes[host_ - 1]);
  url += strings_[2];
  url += strings_[1];
  return url;
}

template <class V>
std::size_t StoryBook::ScratchMap<V>::find(std::uint32_t key) const {
  return internal::RobinHood<Entry, Traits>::probe(
      table_, mix(key), [&](std::size_t i) { return table_[i].key == key; });
}

template <class V>
V& StoryBook::ScratchMap<V>::operator[](std::uint32_t key) {
  using Probing = internal::RobinHood<Entry, Traits>;
  if (const std::size_t i = find(key); i != table_.size()) return table_[i].value;
  if ((keys_.size() + 1) * 2 > table_.size()) {  // at most half full
    Probing::rebuild(table_, std::max<std::size_t>(64, table_.size() * 2));
  }
  keys_.push_back(key);
  return table_[Probing::place(table_, Entry{key, V{}})].value;
}

template <class V>
void StoryBook::ScratchMap<V>::clear() {
  for (const std::uint32_t key : keys_) {
    internal::RobinHood<Entry, Traits>::erase_at(table_, find(key));
  }
  keys_.clear();
}

std::vector<std::pair<double, std::string>> StoryBook::similar_stories(
    const std::unordered_map<std::string, float>& terms, std::int64_t event_time, double floor,
    std::string_view language) const {
  const std::string_view primary = language.substr(0, language.find('-'));
  std::vector<std::pair<double, std::string>> out;
  if (floor <= 0 || terms.empty()) return out;
  // Inverse document frequencies in the article's language, once per term of this call (by
  // term number, in the book's scratch map).
  const Language lang = language_of(language);
  ScratchMap<double>& idfs = idf_scratch_;
  idfs.clear();
  const auto idf_of = [&](TermId t) {
    double& x = idfs[t];
    if (x == 0) x = idf(index_.terms().text(t), lang);  // 0: not met yet in this call
    return x;
  };
  // The article's weights; of the terms some story may have, by term number.
  Weighted<TermId> article;
  for (const auto& [t, w] : terms) {
    const double x = w * idf(t, lang);
    article.norm2 += x * x;
    article.mass += x;
    if (const std::optional<TermId> id = index_.terms().find(t))
      article.weights.emplace_back(*id, x);
  }
  if (article.norm2 <= 0) return out;
  std::sort(article.weights.begin(), article.weights.end());
  // Candidates: stories sharing at least two terms (a term in thousands of stories says
  // nothing of any), with what the shared terms weigh in the article: the containment itself
  // and a bound of the cosine (Cauchy-Schwarz), so a story that cannot reach `floor` is left
  // without reading its terms.
  ScratchMap<Shared>& shared = shared_scratch_;  // by slot
  shared.clear();
  Shared everywhere;  // terms too common to follow: any story may have them
  for (const auto& [t, x] : article.weights) {
    const internal::SlotList& slots = index_.terms().stories(t);
    if (slots.size() >= 2000) {
      everywhere.norm2 += x * x;
      everywhere.mass += x;
    } else {
      for (const std::uint32_t slot : slots) {
        Shared& c = shared[slot];
        ++c.count;
        c.norm2 += x * x;
        c.mass += x;
      }
    }
  }
  const StoryModel& m = options_.model;
  const bool bounded = m.cosine >= 0 && m.containment >= 0;
  for (const std::uint32_t slot : shared.keys()) {
    const Shared c = shared[slot];
    if (c.count < 2) continue;
    if (bounded) {
      StoryFeatures most;  // the decay is at most 1
      most.cosine = std::sqrt((c.norm2 + everywhere.norm2) / article.norm2);
      most.containment = (c.mass + everywhere.mass) / article.mass;
      if (most.probability(m) < floor - 1e-9) continue;
    }
    const Slot& st = index_.slot(slot);
    const auto story = stories_.find(st.story_id);
    if (story == stories_.end()) continue;
    if (options_.within_language && !primary.empty() && !story->second.language.empty()) {
      const std::string_view other = story->second.language;
      if (other.substr(0, other.find('-')) != primary) continue;
    }
    // Features decay with the time since the story's latest report, as they do in training
    // (the time between two reports): its copies, however late, make the event no newer.
    const double hours =
        std::abs(static_cast<double>(event_time - story->second.last_report)) / 3600;
    const StoryFeatures f =
        compare(article, st.terms, std::exp(-hours / options_.decay_hours), idf_of);
    const double score = f.probability(options_.model);
    if (score >= floor) out.emplace_back(score, st.story_id);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  return out;
}

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

const Story& StoryBook::assign_terms(const StoryMember& member, std::string_view title,
                                     const Verdict& verdict, std::int64_t event_time,
                                     const Terms& terms, std::string_view story_hint,
                                     const StoryCard& card) {
  const std::string id = member.id();  // unpacked once
  if (const std::string* placed = story_of_.find(id)) {
    if (auto story = stories_.find(resolve(*placed)); story != stories_.end()) {
      return story->second;
    }
  }
  watermark_ = std::max(watermark_, event_time);
  count_terms(terms, event_time, member.language());
  // A sweep costs as much as the book holds: one every half a book's worth of articles keeps
  // it O(1) per article (a sweep every 1,024 made a restore of 100,000 articles quadratic).
  if (++since_sweep_ >= std::max<std::size_t>(1024, story_of_.size() / 2)) expire(watermark_);
  if (options_.max_stories > 0 && stories_.size() >= options_.max_stories) shrink();

  std::string story_id = story_hint.empty() ? std::string() : resolve(std::string(story_hint));
  if (story_id.empty() && verdict.kind != DupKind::kUnique) {
    if (const std::string* of = story_of_.find(verdict.of)) {
      if (std::string s = resolve(*of); stories_.count(s)) story_id = s;
    }
  }
  std::vector<std::pair<double, std::string>> similar;
  if (story_hint.empty()) {
    double floor = options_.similarity_threshold;
    if (options_.merge_threshold > 0 && (floor <= 0 || options_.merge_threshold < floor)) {
      floor = options_.merge_threshold;
    }
    similar = similar_stories(terms, event_time, floor, member.language());
    if (story_id.empty() && !similar.empty() && options_.similarity_threshold > 0 &&
        similar.front().first >= options_.similarity_threshold) {
      story_id = similar.front().second;
    }
  }
  if (story_id.empty()) story_id = id;
  {
    TermWeights weights;
    weights.reserve(terms.size());
    for (const auto& [t, w] : terms) weights.emplace_back(index_.terms().intern(t), w);
    index_.add_terms(index_.slot_for(story_id), weights);
  }
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
    internal::grow_by_quarter(story->articles, options_.max_listed);
    story->articles.push_back(member);
  }
  std::unordered_set<std::string_view> sources;
  for (const auto& m : story->articles) sources.insert(m.source());
  story->sources = sources.size();
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

std::vector<std::string> StoryBook::related_of(const Story& story) const {
  // A term in this many stories names no one event (a year, a weekday, a common word): it
  // counts in the cosine but does not make candidates.
  constexpr std::size_t kRelatedCommon = 200;
  std::vector<std::string> out;
  const auto primary = [](std::string_view l) { return l.substr(0, l.find('-')); };
  const std::string_view own = primary(story.language);
  const auto held = index_.find(story.story_id);
  if (own.empty() || !held) return out;
  const TermWeights& terms = index_.slot(*held).terms;
  const Language lang = language_of(story.language);
  // The story's TF-IDF weights (its language's frequencies), and the stories of other languages
  // that share at least two terms with it.
  std::unordered_map<TermId, double> mine;
  mine.reserve(terms.size());
  double norm2 = 0;
  // Per slot: terms in common and what they weigh in this story, whose share of its norm bounds
  // the cosine (Cauchy-Schwarz), so most candidates are left without reading their terms.
  std::unordered_map<std::uint32_t, Shared> shared;
  double everywhere2 = 0;  // terms too common to follow: any story may have them
  for (const auto& [t, w] : terms) {
    const double x = w * idf(index_.terms().text(t), lang);
    mine.emplace(t, x);
    norm2 += x * x;
    const internal::SlotList& slots = index_.terms().stories(t);
    if (slots.size() >= kRelatedCommon) {
      everywhere2 += x * x;
      continue;
    }
    for (const std::uint32_t slot : slots) {
      if (slot == *held) continue;
      Shared& c = shared[slot];
      ++c.count;
      c.norm2 += x * x;
    }
  }
  if (norm2 <= 0) return out;
  const double bound2 = options_.related_threshold * options_.related_threshold * norm2;
  std::vector<std::pair<double, std::string>> found;
  for (const auto& [slot, c] : shared) {
    if (c.count < 2) continue;
    const Slot& other = index_.slot(slot);
    const auto s = stories_.find(other.story_id);
    if (s == stories_.end()) continue;
    const std::string_view theirs = primary(s->second.language);
    if (theirs.empty() || theirs == own) continue;
    if (c.norm2 + everywhere2 < bound2 * (1 - 1e-9)) continue;
    const Language their_lang = language_of(s->second.language);
    double dot = 0, other_norm2 = 0;
    for (const auto& [t, w] : other.terms) {
      const double x = w * idf(index_.terms().text(t), their_lang);
      other_norm2 += x * x;
      if (const auto m = mine.find(t); m != mine.end()) dot += x * m->second;
    }
    if (other_norm2 <= 0) continue;
    const double cosine = dot / std::sqrt(norm2 * other_norm2);
    if (cosine >= options_.related_threshold) found.emplace_back(cosine, other.story_id);
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  for (std::size_t i = 0; i < found.size() && i < options_.related_max; ++i) {
    out.push_back(std::move(found[i].second));
  }
  return out;
}

void StoryBook::challenge_representative(Story& story, const StoryMember& member,
                                         std::string_view title, const Terms& terms,
                                         const Language& language, const StoryCard& card) {
  constexpr std::size_t kRepresentativeTerms = 16;
  // The article's heaviest terms by TF-IDF now, ties by term.
  std::vector<std::pair<double, Terms::const_iterator>> by_weight;
  by_weight.reserve(terms.size());
  for (auto it = terms.begin(); it != terms.end(); ++it) {
    by_weight.emplace_back(it->second * idf(it->first, language), it);
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
