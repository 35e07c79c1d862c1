#include "extractors/internal/stopwords.h"

#include <array>
#include <cstdint>
#include <cstring>

namespace newsflow::extractors::internal {

namespace {

// A word of at most seven bytes as one integer: its bytes, then its length in the top byte.
std::uint64_t pack(std::string_view w) {
  std::uint64_t key = std::uint64_t{w.size()} << 56;
  std::memcpy(&key, w.data(), w.size());
  return key;
}

std::size_t slot_of(std::uint64_t key) { return (key * 0x9E3779B97F4A7C15ULL) >> 55; }  // 9 bits

}  // namespace

bool is_stopword(std::string_view w) {
  if (w.empty() || w.size() > 5) return false;  // the longest ("nicht", "della") have five bytes
  // Open addressing over packed words: this runs for every word of every page.
  static const auto kTable = [] {
    constexpr std::string_view kWords[] = {
        // en
        "the", "a", "an", "and", "or", "of", "to", "in", "on", "at", "for", "with", "by", "from",
        "is", "was", "are", "were", "be", "been", "has", "have", "had", "it", "its", "that", "this",
        "as", "but", "not", "he", "she", "they", "we", "his", "her", "their", "which", "who",
        "said", "there", "will", "would", "can", "than", "also",
        // de
        "der", "die", "das", "und", "ist", "nicht", "ein", "eine", "zu", "den", "mit", "von",
        "sich", "des", "auf", "für", "im", "dem", "auch", "es", "wird", "sie", "er", "wie", "bei",
        // fr
        "le", "la", "les", "et", "un", "une", "du", "de", "des", "est", "pas", "que", "qui", "dans",
        "pour", "sur", "au", "aux", "il", "elle", "ce", "se", "par", "avec", "son", "sa",
        // es
        "el", "los", "las", "y", "en", "que", "del", "por", "con", "una", "para", "es", "su", "al",
        "lo", "como", "más", "pero", "sus",
        // it
        "il", "di", "che", "è", "e", "per", "non", "della", "con", "sono", "gli", "nel", "alla",
        // pt
        "o", "os", "as", "um", "uma", "não", "do", "da", "dos", "das", "em", "na", "no", "com",
        "foi", "ao", "mais",
        // nl
        "de", "het", "een", "en", "van", "ik", "te", "dat", "zijn", "niet", "op", "aan", "met",
        "voor", "ook", "er", "maar", "om", "dit", "wordt", "werd"};
    std::array<std::uint64_t, 512> table{};  // 0 is an empty slot (a packed word never is)
    for (const std::string_view word : kWords) {
      const std::uint64_t key = pack(word);
      std::size_t i = slot_of(key);
      while (table[i] != 0 && table[i] != key) i = (i + 1) % table.size();
      table[i] = key;
    }
    return table;
  }();
  const std::uint64_t key = pack(w);
  for (std::size_t i = slot_of(key);; i = (i + 1) % kTable.size()) {
    if (kTable[i] == key) return true;
    if (kTable[i] == 0) return false;
  }
}

}  // namespace newsflow::extractors::internal
