#include "extractors/text.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace newsflow::extractors {
namespace {

// Length of the well-formed UTF-8 sequence at s[i], or 0 when it is ill-formed.
std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) return 1;
  std::size_t len;
  unsigned char lo = 0x80, hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;  // no UTF-16 surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  const auto b1 = static_cast<unsigned char>(s[i + 1]);
  if (b1 < lo || b1 > hi) return 0;
  for (std::size_t k = 2; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if (b < 0x80 || b > 0xBF) return 0;
  }
  return len;
}

}  // namespace

char32_t decode_utf8(std::string_view s, std::size_t i, std::size_t& len) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) {
    len = 1;
    return b0;
  }
  len = utf8_sequence_length(s, i);
  if (len == 0) {
    len = 1;
    return 0xFFFD;
  }
  char32_t cp = b0 & (0xFF >> (len + 1));
  for (std::size_t k = 1; k < len; ++k)
    cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  return cp;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

bool is_valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
#if defined(__SSE2__)
    // Fast path over ASCII, 32 bytes at a time.
    while (i + 32 <= s.size()) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i + 16));
      if (_mm_movemask_epi8(_mm_or_si128(a, b)) != 0) break;
      i += 32;
    }
    if (i == s.size()) break;
#endif
    // Fast path over ASCII, eight bytes at a time.
    if (i + 8 <= s.size()) {
      std::uint64_t chunk;
      std::memcpy(&chunk, s.data() + i, 8);
      if ((chunk & 0x8080808080808080ULL) == 0) {
        i += 8;
        continue;
      }
    }
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const std::size_t n = utf8_sequence_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string decode_char_refs(std::string_view s) {
  if (s.find('&') == std::string_view::npos) return std::string(s);
  static constexpr std::pair<std::string_view, char32_t> kNamed[] = {
      {"amp;", U'&'},  {"lt;", U'<'},    {"gt;", U'>'},
      {"quot;", U'"'}, {"apos;", U'\''}, {"nbsp;", U'\u00a0'}};
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    if (s[i] != '&') {
      out += s[i++];
      continue;
    }
    const std::string_view rest = s.substr(i + 1);
    std::size_t used = 0;
    char32_t cp = 0;
    if (rest.starts_with('#')) {
      const bool hex = rest.size() > 1 && (rest[1] == 'x' || rest[1] == 'X');
      std::size_t k = hex ? 2 : 1;
      const std::size_t first = k;
      for (; k < rest.size() && k < first + 8; ++k) {
        const char c = rest[k];
        int d = -1;
        if (c >= '0' && c <= '9') d = c - '0';
        if (hex && c >= 'a' && c <= 'f') d = c - 'a' + 10;
        if (hex && c >= 'A' && c <= 'F') d = c - 'A' + 10;
        if (d < 0) break;
        cp = cp * (hex ? 16 : 10) + static_cast<char32_t>(d);
      }
      if (k > first && k < rest.size() && rest[k] == ';' && cp != 0 && cp <= 0x10FFFF &&
          !(cp >= 0xD800 && cp <= 0xDFFF)) {
        used = k + 1;
      }
    } else {
      for (const auto& [name, c] : kNamed) {
        if (rest.starts_with(name)) {
          cp = c;
          used = name.size();
          break;
        }
      }
    }
    if (used == 0) {
      out += s[i++];
      continue;
    }
    append_utf8(out, cp);
    i += 1 + used;
  }
  return out;
}

std::string sanitize_utf8(std::string_view s) {
  if (is_valid_utf8(s)) return std::string(s);  // nearly every page: one copy
  std::string out;
  out.reserve(s.size() + 16);
  std::size_t i = 0, run = 0;  // s[run, i) is well-formed and not yet copied
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const std::size_t n = utf8_sequence_length(s, i);
    if (n == 0) {
      out.append(s.substr(run, i - run));
      out += "\xEF\xBF\xBD";
      run = ++i;
    } else {
      i += n;
    }
  }
  out.append(s.substr(run));
  return out;
}

namespace {

bool binary_data_byte(unsigned char b) {
  return b <= 0x08 || b == 0x0B || (b >= 0x0E && b <= 0x1A) || (b >= 0x1C && b <= 0x1F);
}

bool control_byte(unsigned char b) {
  return b < 0x20 && b != '\t' && b != '\n' && b != '\f' && b != '\r';
}

}  // namespace

bool looks_binary(std::string_view s) {
  const std::string_view header = s.substr(0, kResourceHeaderBytes);
  return std::any_of(header.begin(), header.end(),
                     [](char c) { return binary_data_byte(static_cast<unsigned char>(c)); });
}

bool has_controls(std::string_view s) {
  std::size_t i = 0;
#if defined(__SSE2__)
  // Sixteen bytes at a time: most pages have no byte below 0x20 but whitespace.
  const __m128i c1f = _mm_set1_epi8(0x1F);
  for (; i + 16 <= s.size(); i += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i));
    const __m128i below_space = _mm_cmpeq_epi8(_mm_min_epu8(x, c1f), x);
    if (_mm_movemask_epi8(below_space) == 0) continue;
    const __m128i spaces = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('\t')),
                                                     _mm_cmpeq_epi8(x, _mm_set1_epi8('\n'))),
                                        _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('\r')),
                                                     _mm_cmpeq_epi8(x, _mm_set1_epi8('\f'))));
    if (_mm_movemask_epi8(_mm_andnot_si128(spaces, below_space)) != 0) return true;
  }
#endif
  for (; i < s.size(); ++i) {
    if (control_byte(static_cast<unsigned char>(s[i]))) return true;
  }
  return false;
}

std::string replace_controls(std::string_view s) {
  // A run as one character: a NUL became three bytes, and a page of them three times its size
  // in Gumbo's buffers, for what a browser shows as nothing in text (or one U+FFFD).
  std::string out;
  out.reserve(s.size() + 16);
  unsigned char prev = 0xFF;
  for (const char c : s) {
    const auto b = static_cast<unsigned char>(c);
    if (b == 0) {
      if (prev != 0) out += "\xEF\xBF\xBD";
    } else if (control_byte(b)) {
      if (prev == 0 || !control_byte(prev)) out += ' ';
    } else {
      out += c;
    }
    prev = b;
  }
  return out;
}

bool json_nesting_exceeds(std::string_view s, std::size_t max_depth) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > max_depth) return true;
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return false;
}

bool is_blank(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = whitespace_prefix(s.substr(i));
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::size_t whitespace_prefix(std::string_view s) {
  if (s.empty()) return 0;
  const auto b0 = static_cast<unsigned char>(s[0]);
  if (b0 == ' ' || b0 == '\t' || b0 == '\n' || b0 == '\r' || b0 == '\f' || b0 == '\v') return 1;
  if (b0 == 0xC2 && s.size() >= 2 && static_cast<unsigned char>(s[1]) == 0xA0) return 2;
  if (s.size() >= 3) {
    const auto b1 = static_cast<unsigned char>(s[1]);
    const auto b2 = static_cast<unsigned char>(s[2]);
    if (b0 == 0xE2 && b1 == 0x80 && (b2 <= 0x8B || b2 == 0xAF)) return 3;  // U+2000-200B, 202F
    if (b0 == 0xE2 && b1 == 0x81 && b2 == 0x9F) return 3;                  // U+205F
    if (b0 == 0xE3 && b1 == 0x80 && b2 == 0x80) return 3;                  // U+3000
    if (b0 == 0xEF && b1 == 0xBB && b2 == 0xBF) return 3;                  // U+FEFF
  }
  return 0;
}

std::string collapse_whitespace(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool pending_space = false;
  std::size_t i = 0;
  while (i < s.size()) {
    if (const std::size_t w = whitespace_prefix(s.substr(i)); w > 0) {
      pending_space = !out.empty();
      i += w;
      continue;
    }
    if (pending_space) out += ' ';
    pending_space = false;
    // A run of printable ASCII (never a space) is appended at once.
    std::size_t j = i + 1;
    while (j < s.size() && static_cast<unsigned char>(s[j]) > 0x20 &&
           static_cast<unsigned char>(s[j]) < 0x7F) {
      ++j;
    }
    out.append(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view in) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
  };
  std::string out;
  out.reserve(in.size() * 3 / 4);
  std::uint32_t acc = 0;
  int bits = 0;
  bool padding = false;
  for (const char c : in) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      padding = true;
      continue;
    }
    const int v = value(c);
    if (v < 0 || padding) return std::nullopt;
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xFF);
    }
  }
  if (bits >= 6) return std::nullopt;  // a lone trailing character
  return out;
}

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) {
    return static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  });
  return out;
}

bool ideograph_or_kana(std::string_view s, std::size_t i) {
  if (i + 2 >= s.size()) return false;
  const auto b0 = static_cast<unsigned char>(s[i]);
  const auto b1 = static_cast<unsigned char>(s[i + 1]);
  const auto b2 = static_cast<unsigned char>(s[i + 2]);
  if (b0 < 0xE3 || b0 > 0xEF || (b1 & 0xC0) != 0x80 || (b2 & 0xC0) != 0x80) return false;
  const std::uint32_t cp = ((b0 & 0x0Fu) << 12) | ((b1 & 0x3Fu) << 6) | (b2 & 0x3Fu);
  return (cp >= 0x3040 && cp <= 0x30FF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0xF900 && cp <= 0xFAFF);
}

std::size_t count_words(std::string_view text, std::size_t stop_after) {
  std::size_t n = 0, i = 0;
  bool in_word = false;
  while (i < text.size() && n <= stop_after) {
    if (ideograph_or_kana(text, i)) {
      ++n;
      i += 3;
      if (ideograph_or_kana(text, i)) i += 3;
      in_word = false;  // what follows the pair starts a word of its own
      continue;
    }
    if (const std::size_t w = whitespace_prefix(text.substr(i)); w > 0) {
      in_word = false;
      i += w;
      continue;
    }
    if (!in_word) ++n;
    in_word = true;
    ++i;
  }
  return n;
}

bool truncate_text(std::string& s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return false;
  std::size_t cut = max_bytes;
  // Not inside a character: back to the lead byte of the one the bound falls in.
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  for (std::size_t k = cut; k > 0 && cut - k < 1024; --k) {
    const char c = s[k - 1];
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      cut = k - 1;
      break;
    }
  }
  while (cut > 0 &&
         (s[cut - 1] == ' ' || s[cut - 1] == '\n' || s[cut - 1] == '\t' || s[cut - 1] == '\r')) {
    --cut;
  }
  s.resize(cut);
  return true;
}

}  // namespace newsflow::extractors
