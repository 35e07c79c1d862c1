#include "dedup/internal/stopwords.h"

#include <unordered_set>

namespace newsflow::dedup::internal {

// The most frequent function words of the languages the extractor meets most (en, de, fr, es,
// it, pt, nl), normalized as `normalize_text` leaves them (case folded, accents kept). Words
// that are content words in another of these languages are left out ("die" stays: German
// article; "son" is French and left in, an English noun rarely decisive). A few Chinese and
// Japanese function words of two characters as `segment_words` cuts them.
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
      "zou", "hij", "zij", "ze", "wij", "ik", "je",
      // zh (as segment_words cuts them; one-character words never count as terms)
      "我们", "你们", "他们", "她们", "一个", "这个", "那个", "这些", "那些", "可以", "没有",
      "因为", "所以", "如果", "但是", "以及", "或者", "已经", "通过", "由于", "其中", "并且",
      "而且", "自己", "什么", "如何", "为了", "对于", "关于", "我們", "你們", "他們", "這個",
      "這些", "沒有", "因為", "所以", "但是", "已經", "通過", "由於", "對於", "關於", "為了",
      // ja (hiragana-only words never count as terms)
      "こと", "もの", "ため", "よう", "これ", "それ", "あれ", "場合", "必要"};
  return kWords.count(w) > 0;
}

}  // namespace newsflow::dedup::internal
