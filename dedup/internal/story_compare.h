#pragma once

// How an article's terms compare with a story's: what the features of the story model
// (`features`, `similar_stories`) are made of.

#include <cmath>
#include <utility>
#include <vector>

#include "dedup/stories.h"

namespace newsflow::dedup::internal {

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

}  // namespace newsflow::dedup::internal
