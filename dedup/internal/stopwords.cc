#include "dedup/internal/stopwords.h"

#include <unordered_set>

namespace newsflow::dedup::internal {

bool is_stopword(std::string_view w) {
  static const std::unordered_set<std::string_view> kWords = {
      "the", "a",    "an",   "is",   "said", "was",   "there", "it",    "are", "were",
      "has", "had",  "be",   "of",   "to",   "in",    "and",   "or",    "for", "on",
      "at",  "by",   "with", "from", "that", "this",  "as",    "but",   "not", "he",
      "she", "they", "we",   "his",  "her",  "their", "its",   "which", "der", "die",
      "das", "und",  "ist",  "ein",  "eine", "zu",    "den",   "mit",   "von", "le",
      "la",  "les",  "et",   "un",   "une",  "du",    "des",   "est",   "el",  "los",
      "las", "y",    "en",   "que",  "es",   "il",    "di",    "che",   "è",   "e",
      "o",   "os",   "as",   "é",    "de",   "het",   "een",   "van"};
  return kWords.count(w) > 0;
}

}  // namespace newsflow::dedup::internal
