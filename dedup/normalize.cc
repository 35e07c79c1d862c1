#include "dedup/normalize.h"

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

}  // namespace

namespace {

// NFKC + case folding of a piece of text, then words kept and everything else turned into
// word breaks, appended to `out`.
void normalize_unicode(std::string_view text, std::string& out, bool& pending_space) {
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
  bool pending_space = false;
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
    normalize_unicode(text.substr(i, j - i), out, pending_space);
    i = j;
  }
  return out;
}

}  // namespace newsflow::dedup
