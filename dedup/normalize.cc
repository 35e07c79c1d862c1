#include "dedup/normalize.h"

#include <unicode/brkiter.h>
#include <unicode/locid.h>
#include <unicode/unistr.h>
#include <utf8proc.h>

#include <cstdlib>
#include <memory>

namespace newsflow::dedup {
namespace {

bool is_word_char(utf8proc_int32_t cp) {
  switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      return true;
    default:
      return false;
  }
}

// Scripts written without spaces between words: Thai, Lao, Myanmar, Khmer, kana and Han.
bool unspaced_script(utf8proc_int32_t cp) {
  return (cp >= 0x0E00 && cp <= 0x0EFF) || (cp >= 0x1000 && cp <= 0x109F) ||
         (cp >= 0x1780 && cp <= 0x17FF) || (cp >= 0x19E0 && cp <= 0x19FF) ||
         (cp >= 0x3040 && cp <= 0x30FF) || (cp >= 0x31F0 && cp <= 0x31FF) ||
         (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x4E00 && cp <= 0x9FFF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x20000 && cp <= 0x3FFFF);
}

bool any_unspaced(std::string_view word) {
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(word.data());
  auto left = static_cast<utf8proc_ssize_t>(word.size());
  while (left > 0) {
    utf8proc_int32_t cp;
    const utf8proc_ssize_t len = utf8proc_iterate(p, left, &cp);
    if (len <= 0) return false;
    if (unspaced_script(cp)) return true;
    p += len;
    left -= len;
  }
  return false;
}

// ICU's word break iterator (UAX #29 with dictionaries for Chinese, Japanese, Thai, Lao, Khmer
// and Burmese); one per thread, as creating one loads its rules.
icu::BreakIterator* word_breaker() {
  thread_local std::unique_ptr<icu::BreakIterator> it = [] {
    UErrorCode status = U_ZERO_ERROR;
    std::unique_ptr<icu::BreakIterator> b(
        icu::BreakIterator::createWordInstance(icu::Locale::getRoot(), status));
    return U_SUCCESS(status) ? std::move(b) : nullptr;
  }();
  return it.get();
}

// Appends the words of `run` (word characters only, no spaces) to `out`, separated by spaces.
void append_segmented(std::string_view run, std::string& out) {
  icu::BreakIterator* it = word_breaker();
  if (!it) {
    out.append(run);
    return;
  }
  const icu::UnicodeString text = icu::UnicodeString::fromUTF8(
      icu::StringPiece(run.data(), static_cast<std::int32_t>(run.size())));
  it->setText(text);
  std::string piece;
  bool first = true;
  for (std::int32_t start = it->first(), end = it->next(); end != icu::BreakIterator::DONE;
       start = end, end = it->next()) {
    piece.clear();
    text.tempSubStringBetween(start, end).toUTF8String(piece);
    if (!first) out += ' ';
    out += piece;
    first = false;
  }
}

}  // namespace

bool has_unspaced_script(std::string_view word) { return any_unspaced(word); }

std::string segment_words(std::string_view normalized) {
  std::string out;
  out.reserve(normalized.size() + normalized.size() / 4);
  std::size_t pos = 0;
  while (pos < normalized.size()) {
    std::size_t end = normalized.find(' ', pos);
    if (end == std::string_view::npos) end = normalized.size();
    const std::string_view word = normalized.substr(pos, end - pos);
    if (!out.empty()) out += ' ';
    if (any_unspaced(word)) {
      append_segmented(word, out);
    } else {
      out.append(word);
    }
    pos = end + 1;
  }
  return out;
}

namespace {

// NFKC + case folding of a piece of text, then words kept and everything else turned into
// word breaks, appended to `out`.
void normalize_unicode(std::string_view text, std::string& out, bool& pending_space,
                       bool& unspaced) {
  utf8proc_uint8_t* mapped = nullptr;
  const auto options = static_cast<utf8proc_option_t>(
      UTF8PROC_COMPOSE | UTF8PROC_COMPAT | UTF8PROC_CASEFOLD | UTF8PROC_IGNORE | UTF8PROC_STRIPCC);
  std::string clean;
  utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                    static_cast<utf8proc_ssize_t>(text.size()), &mapped, options);
  if (n < 0) {
    // Invalid UTF-8: keep the valid characters only and try again.
    const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
    utf8proc_ssize_t left = static_cast<utf8proc_ssize_t>(text.size());
    while (left > 0) {
      utf8proc_int32_t cp;
      const utf8proc_ssize_t len = utf8proc_iterate(p, left, &cp);
      if (len <= 0) {
        ++p;
        --left;
        continue;
      }
      clean.append(reinterpret_cast<const char*>(p), static_cast<std::size_t>(len));
      p += len;
      left -= len;
    }
    n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(clean.data()),
                     static_cast<utf8proc_ssize_t>(clean.size()), &mapped, options);
    if (n < 0) return;
  }
  std::unique_ptr<utf8proc_uint8_t, void (*)(void*)> guard(mapped, std::free);
  const utf8proc_uint8_t* p = mapped;
  utf8proc_ssize_t left = n;
  while (left > 0) {
    utf8proc_int32_t cp;
    const utf8proc_ssize_t len = utf8proc_iterate(p, left, &cp);
    if (len <= 0) break;
    if (is_word_char(cp)) {
      unspaced = unspaced || unspaced_script(cp);
      if (pending_space && !out.empty()) out += ' ';
      pending_space = false;
      out.append(reinterpret_cast<const char*>(p), static_cast<std::size_t>(len));
    } else {
      pending_space = true;
    }
    p += len;
    left -= len;
  }
}

bool ascii_word(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

}  // namespace

std::string normalize_text(std::string_view text) {
  // ASCII, most of most texts, goes through a byte loop; each run of other characters (with
  // the ASCII letter before it, which a combining mark may compose with) goes through utf8proc.
  std::string out;
  out.reserve(text.size());
  bool pending_space = false, unspaced = false;
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      const bool starts_unicode =
          i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80;
      const char lower = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
      if (!starts_unicode || !ascii_word(lower)) {
        if (ascii_word(lower)) {
          if (pending_space && !out.empty()) out += ' ';
          pending_space = false;
          out += lower;
        } else {
          pending_space = true;
        }
        ++i;
        continue;
      }
    }
    std::size_t j = i + 1;
    while (j < text.size() && static_cast<unsigned char>(text[j]) >= 0x80) ++j;
    normalize_unicode(text.substr(i, j - i), out, pending_space, unspaced);
    i = j;
  }
  return unspaced ? segment_words(out) : out;
}

}  // namespace newsflow::dedup
