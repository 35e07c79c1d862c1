#include "dedup/internal/stopwords.h"

#include <unordered_set>

namespace newsflow::dedup::internal {

// The most frequent function words of the languages the extractor meets most (en, de, fr, es,
// it, pt, nl), normalized as `normalize_text` leaves them (case folded, accents kept). Words
// that are content words in another of these languages are left out ("die" stays: German
// article; "son" is French and left in, an English noun rarely decisive).
bool is_stopword(std::string_view w) {
  static const std::unordered_set<std::string_view> kWords = {
      // en
      "the", "a", "an", "and", "or", "but", "if", "of", "to", "in", "on", "at", "by", "for", "with",
      "from", "as", "is", "are", "was", "were", "be", "been", "being", "it", "its", "this", "that",
      "these", "those", "he", "she", "they", "we", "you", "i", "his", "her", "their", "our", "your",
      "my", "me", "him", "them", "us", "not", "no", "so", "than", "then", "there", "here", "which",
      "who", "whom", "whose", "what", "when", "where", "why", "how", "all", "any", "each", "both",
      "more", "most", "other", "some", "such", "only", "own", "same", "too", "very", "can", "will",
      "just", "would", "should", "could", "may", "might", "must", "do", "does", "did", "has",
      "have", "had", "into", "over", "under", "about", "after", "before", "between", "through",
      "during", "up", "down", "out", "off", "again", "once", "said", "says", "also",
      // de
      "der", "die", "das", "und", "ist", "ein", "eine", "einer", "eines", "einem", "einen", "zu",
      "den", "dem", "des", "mit", "von", "im", "auf", "für", "nicht", "sich", "auch", "es", "als",
      "wie", "bei", "aus", "nach", "oder", "aber", "wird", "wurde", "werden", "hat", "haben",
      "sind", "sie", "er", "wir", "ihr", "ich", "dass", "noch", "nur", "um", "am", "vom", "zum",
      "zur", "über", "unter", "vor", "durch", "bis", "man", "kann",
      // fr
      "le", "la", "les", "et", "un", "une", "des", "du", "de", "au", "aux", "en", "est", "sont",
      "ont", "été", "il", "elle", "ils", "elles", "nous", "vous", "je", "ce", "cet", "cette", "ces",
      "qui", "que", "dont", "où", "dans", "sur", "sous", "pour", "par", "avec", "sans", "pas", "ne",
      "plus", "mais", "ou", "donc", "car", "son", "sa", "ses", "leur", "leurs", "se", "était",
      "être",
      // es
      "el", "los", "las", "y", "unos", "unas", "del", "al", "fue", "ha", "han", "con", "por",
      "para", "su", "sus", "lo", "le", "como", "más", "pero", "sin", "sobre", "entre", "hasta",
      "desde", "este", "esta", "estos", "estas", "ese", "esa", "eso", "ya", "muy", "también", "es",
      "son",
      // it
      "lo", "gli", "e", "uno", "di", "della", "dei", "degli", "delle", "da", "dal", "alla", "ai",
      "nel", "nella", "è", "che", "non", "si", "ma", "anche", "più", "hanno", "questo", "questa",
      "quello", "quella",
      // pt
      "o", "os", "um", "uma", "uns", "umas", "do", "da", "dos", "das", "no", "na", "nos", "nas",
      "é", "são", "foi", "com", "não", "mais", "mas", "ao", "aos", "seu", "suas", "seus", "já",
      // nl
      "het", "een", "van", "op", "te", "dat", "voor", "met", "zijn", "niet", "aan", "er", "ook",
      "bij", "maar", "door", "naar", "dan", "nog", "wel", "tot", "uit", "wordt", "werd", "zal",
      "zou", "hij", "zij", "ze", "wij", "ik", "je"};
  return kWords.count(w) > 0;
}

}  // namespace newsflow::dedup::internal
