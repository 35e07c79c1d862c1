#include "extractors/internal/stopwords.h"

#include <string>
#include <unordered_set>

namespace newsflow::extractors::internal {

bool is_stopword(std::string_view w) {
  if (w.empty() || w.size() > 5) return false;  // the longest ("nicht", "della") have five bytes
  static const std::unordered_set<std::string_view> kWords = {
      // en
      "the", "a", "an", "and", "or", "of", "to", "in", "on", "at", "for", "with", "by", "from",
      "is", "was", "are", "were", "be", "been", "has", "have", "had", "it", "its", "that", "this",
      "as", "but", "not", "he", "she", "they", "we", "his", "her", "their", "which", "who", "said",
      "there", "will", "would", "can", "than", "also",
      // de
      "der", "die", "das", "und", "ist", "nicht", "ein", "eine", "zu", "den", "mit", "von", "sich",
      "des", "auf", "für", "im", "dem", "auch", "es", "wird", "sie", "er", "wie", "bei",
      // fr
      "le", "la", "les", "et", "un", "une", "du", "de", "des", "est", "pas", "que", "qui", "dans",
      "pour", "sur", "au", "aux", "il", "elle", "ce", "se", "par", "avec", "son", "sa",
      // es
      "el", "los", "las", "y", "en", "que", "del", "por", "con", "una", "para", "es", "su", "al",
      "lo", "como", "más", "pero", "sus",
      // it
      "il", "di", "che", "è", "e", "per", "non", "della", "con", "sono", "gli", "nel", "alla",
      // pt
      "o", "os", "as", "um", "uma", "não", "do", "da", "dos", "das", "em", "na", "no", "com", "foi",
      "ao", "mais",
      // nl
      "de", "het", "een", "en", "van", "ik", "te", "dat", "zijn", "niet", "op", "aan", "met",
      "voor", "ook", "er", "maar", "om", "dit", "wordt", "werd"};
  return kWords.count(w) > 0;
}

}  // namespace newsflow::extractors::internal
