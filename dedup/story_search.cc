#include "dedup/stories.h"

// Finding the stories an article is like: candidates by the terms they share in the story index,
// scored by the story model; and the stories of other languages a story is like.

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "dedup/internal/story_compare.h"

namespace newsflow::dedup {

using internal::compare;
using internal::Weighted;

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

}  // namespace newsflow::dedup
