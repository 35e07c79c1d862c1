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

std::string normalize_text(std::string_view text) {
  utf8proc_uint8_t* mapped = nullptr;
  const auto options = static_cast<utf8proc_option_t>(
      UTF8PROC_COMPOSE | UTF8PROC_COMPAT | UTF8PROC_CASEFOLD | UTF8PROC_IGNORE | UTF8PROC_STRIPCC);
  const utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                   static_cast<utf8proc_ssize_t>(text.size()), &mapped, options);
  std::string folded;
  if (n < 0) {
    // Invalid UTF-8: keep the valid characters only and try again.
    std::string clean;
    clean.reserve(text.size());
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
    return normalize_text(clean);
  }
  std::unique_ptr<utf8proc_uint8_t, void (*)(void*)> guard(mapped, std::free);
  std::string out;
  out.reserve(static_cast<std::size_t>(n));
  const utf8proc_uint8_t* p = mapped;
  utf8proc_ssize_t left = n;
  bool pending_space = false;
  while (left > 0) {
    utf8proc_int32_t cp;
    const utf8proc_ssize_t len = utf8proc_iterate(p, left, &cp);
    if (len <= 0) break;  // utf8proc_map's output is valid; defensive only
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
  return out;
}

}  // namespace newsflow::dedup
