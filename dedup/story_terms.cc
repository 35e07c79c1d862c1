#include "dedup/story_terms.h"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>

#include "dedup/internal/stopwords.h"
#include "dedup/normalize.h"
#include "dedup/stories.h"

namespace newsflow::dedup {

namespace internal {

bool weak_unspaced_word(std::string_view w) {
  if (w.size() < 3 || static_cast<unsigned char>(w[0]) < 0xE0) return false;
  bool hiragana = true;
  std::size_t chars = 0;
  for (std::size_t i = 0; i < w.size();) {
    const auto b0 = static_cast<unsigned char>(w[i]);
    if (b0 < 0xE0 || b0 >= 0xF0 || i + 3 > w.size()) return chars == 0;
    const std::uint32_t cp = ((b0 & 0x0Fu) << 12) |
                             ((static_cast<unsigned char>(w[i + 1]) & 0x3Fu) << 6) |
                             (static_cast<unsigned char>(w[i + 2]) & 0x3Fu);
    hiragana = hiragana && cp >= 0x3041 && cp <= 0x309F;
    i += 3;
    ++chars;
  }
  return chars == 1 || hiragana;
}

std::unordered_set<std::string> entity_words(std::string_view text) {
  std::unordered_set<std::string> out;
  bool sentence_start = true;
  std::size_t pos = 0;
  while (pos < text.size()) {
    // (find_first_of would call memchr on the separators for every byte.)
    const auto space = [](char ch) { return ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r'; };
    std::size_t begin = pos;
    while (begin < text.size() && space(text[begin])) ++begin;
    if (begin == text.size()) break;
    std::size_t end = begin;
    while (end < text.size() && !space(text[end])) ++end;
    pos = end;
    std::string_view w = text.substr(begin, end - begin);
    const bool starts = sentence_start;
    const char last = w.back();
    sentence_start = last == '.' || last == '!' || last == '?' || last == ':';
    while (!w.empty() && !std::isalnum(static_cast<unsigned char>(w.front())) &&
           static_cast<unsigned char>(w.front()) < 0x80) {
      w.remove_prefix(1);
    }
    if (w.empty()) continue;
    const auto c = static_cast<unsigned char>(w.front());
    UChar32 cp = 0;
    std::int32_t at = 0;
    U8_NEXT(w.data(), at, static_cast<std::int32_t>(std::min<std::size_t>(w.size(), 4)), cp);
    const bool capital = cp > 0 && (u_isupper(cp) || u_istitle(cp));
    const bool number =
        std::isdigit(c) && w.size() >= 2 && std::isdigit(static_cast<unsigned char>(w[1]));
    if ((capital && !starts) || number) {
      while (!w.empty() && static_cast<unsigned char>(w.back()) < 0x80 &&
             !std::isalnum(static_cast<unsigned char>(w.back()))) {
        w.remove_suffix(1);
      }
      // ASCII letters and digits normalize to themselves lowercased; anything else (accents,
      // other scripts, inner punctuation) goes through the normalizer the terms went through.
      const bool plain = std::all_of(w.begin(), w.end(), [](char ch) {
        return static_cast<unsigned char>(ch) < 0x80 &&
               std::isalnum(static_cast<unsigned char>(ch));
      });
      if (!plain) {
        out.insert(normalize_text(w));
        continue;
      }
      std::string lower(w);
      for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      out.insert(std::move(lower));
    }
  }
  return out;
}

std::string_view stem(std::string_view w, std::size_t chars) {
  if (chars == 0 || w.empty() || (w[0] >= '0' && w[0] <= '9')) return w;
  if (static_cast<unsigned char>(w[0]) >= 0xE0 && has_unspaced_script(w)) return w;
  std::size_t at = 0, n = 0;
  while (at < w.size() && n < chars) {
    const auto b = static_cast<unsigned char>(w[at]);
    at += b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
    ++n;
  }
  return w.substr(0, std::min(at, w.size()));
}

}  // namespace internal

TermCounts story_term_counts(std::string_view title, std::string_view text,
                             std::string_view normalized, const StoryOptions& o) {
  TermCounts counts;
  auto add = [&](std::string_view words_text, float weight, std::size_t limit) {
    std::size_t count = 0, pos = 0;
    while (pos < words_text.size() && count < limit) {
      std::size_t end = words_text.find(' ', pos);
      if (end == std::string_view::npos) end = words_text.size();
      const std::string_view w = words_text.substr(pos, end - pos);
      pos = end + 1;
      ++count;
      const bool digits = !w.empty() && w[0] >= '0' && w[0] <= '9';
      if ((w.size() < 3 && !digits) || internal::is_stopword(w) || internal::weak_unspaced_word(w))
        continue;
      counts[std::string(internal::stem(w, o.stem_chars))] += weight;
    }
  };
  add(normalize_text(title), static_cast<float>(o.title_weight), 64);
  std::string own;
  if (normalized.empty() && !text.empty()) {
    own = normalize_text(text.substr(0, o.text_words * 12));
    normalized = own;
  }
  add(normalized, 1.0f, o.text_words);
  if (o.lead_words > 0 && o.lead_weight != 1.0) {
    add(normalized, static_cast<float>(o.lead_weight - 1.0), std::min(o.lead_words, o.text_words));
  }
  for (auto& [t, w] : counts) w = 1 + std::log(std::max(w, 1.0f));
  if (o.entity_boost != 1.0) {
    const auto boost = static_cast<float>(o.entity_boost);
    std::unordered_set<std::string_view> boosted;
    const auto entities = internal::entity_words(text.substr(0, o.text_words * 12));
    for (const std::string& e : entities) {
      const std::string_view t = internal::stem(e, o.stem_chars);
      if (auto it = counts.find(std::string(t)); it != counts.end() && boosted.insert(t).second) {
        it->second *= boost;
      }
    }
  }
  return counts;
}

}  // namespace newsflow::dedup
