#include "dedup/stories.h"

// Terms and their weights: the document frequencies per language, an article's terms kept by
// TF-IDF, and the features of an article against a story.

#include <xxhash.h>

#include <algorithm>
#include <cmath>

#include "dedup/internal/story_compare.h"

namespace newsflow::dedup {

using internal::compare;
using internal::Weighted;

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
  count_list(terms, event_time, language);
}

template <class List>
void StoryBook::count_list(const List& terms, std::int64_t event_time, std::string_view language) {
  const std::uint64_t seed = language_seed(language);
  std::vector<std::uint64_t> hashes;
  hashes.reserve(terms.size() + 1);
  hashes.push_back(XXH3_64bits_withSeed(kDocuments.data(), kDocuments.size(), seed));
  for (const auto& [t, w] : terms) hashes.push_back(XXH3_64bits_withSeed(t.data(), t.size(), seed));
  df_.add(hashes, event_time);
}

template void StoryBook::count_list(const Terms&, std::int64_t, std::string_view);
template void StoryBook::count_list(const TermList&, std::int64_t, std::string_view);

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

}  // namespace newsflow::dedup
