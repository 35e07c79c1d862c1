#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace newsflow::extractors {

/// True when `s` is well-formed UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF).
bool is_valid_utf8(std::string_view s);

/// The code point of the UTF-8 sequence at `s[i]` (`i < s.size()`), its length in bytes put in
/// `len`; U+FFFD and a length of 1 for a byte that starts no well-formed sequence.
char32_t decode_utf8(std::string_view s, std::size_t i, std::size_t& len);

/// Appends the UTF-8 encoding of the code point `cp` (at most U+10FFFF) to `out`.
void append_utf8(std::string& out, char32_t cp);

/// `s` with its HTML character references decoded: numeric ones (`&#233;`, `&#xE9;`; none that
/// names no character, a surrogate or NUL) and `&amp;`, `&lt;`, `&gt;`, `&quot;`, `&apos;`,
/// `&nbsp;`; anything else is left as written. For values that a page's template HTML-escaped
/// where no HTML parser reads them (JSON-LD strings).
std::string decode_char_refs(std::string_view s);

/// Replaces every ill-formed UTF-8 sequence in `s` with U+FFFD.
std::string sanitize_utf8(std::string_view s);

/// True when `s` is binary data rather than text by the WHATWG MIME Sniffing Standard (section
/// 7.2, "binary data byte"): its resource header (the first 1,445 bytes) holds a byte
/// 0x00-0x08, 0x0B, 0x0E-0x1A or 0x1C-0x1F. A stray NUL further on does not make an HTML page
/// binary: browsers render it (`replace_controls`). UTF-16/32 text is the caller's to rule out
/// first (its BOM or its zero bytes).
bool looks_binary(std::string_view s);

/// Number of bytes of the resource header that `looks_binary` inspects.
inline constexpr std::size_t kResourceHeaderBytes = 1445;

/// True when `s` holds a NUL or a C0 control character other than tab, line feed, form feed and
/// carriage return.
bool has_controls(std::string_view s);

/// `s` with each run of NULs replaced by one U+FFFD (as the HTML tokenizer replaces a NUL) and
/// each run of other C0 control characters but tab, line feed, form feed and carriage return by
/// one space (browsers show nothing for them).
std::string replace_controls(std::string_view s);

/// True when JSON text `s` opens more than `max_depth` objects and arrays inside one another
/// (brackets inside strings not counted). One linear pass, before a parser or a walk of the parsed
/// document recurses that deep.
bool json_nesting_exceeds(std::string_view s, std::size_t max_depth);

/// True when `s` holds only whitespace (as `whitespace_prefix` knows it), or nothing.
bool is_blank(std::string_view s);

/// Collapses runs of Unicode and ASCII whitespace to one space and trims both ends.
std::string collapse_whitespace(std::string_view s);

/// Cuts `s` to at most `max_bytes`: at the last whitespace in the final 1,024 bytes before the
/// bound when there is one, else at the last UTF-8 character boundary before it (trailing
/// whitespace dropped). Returns whether it was cut.
bool truncate_text(std::string& s, std::size_t max_bytes);

/// True when the three bytes at `i` encode a Han ideograph (U+3400-U+4DBF, U+4E00-U+9FFF,
/// U+F900-U+FAFF) or a kana (U+3040-U+30FF): the characters Chinese and Japanese write without
/// spaces between words.
bool ideograph_or_kana(std::string_view s, std::size_t i);

/// Words of plain text: runs between whitespace, except that a run of ideographs and kana counts
/// one word per two characters (about the length of a Chinese word), as the extractor counts
/// them; so a Chinese teaser weighs by its length as an English one does. The count stops once it
/// is past `stop_after` (a caller that only asks whether a text is short reads no further).
std::size_t count_words(std::string_view text, std::size_t stop_after = SIZE_MAX);

/// Length in bytes of the UTF-8 whitespace character at the start of `s`, or 0 when `s` does not
/// start with whitespace (ASCII space/tab/newline/CR/FF/VT, U+00A0, U+2000-U+200B, U+202F,
/// U+205F, U+3000, U+FEFF).
std::size_t whitespace_prefix(std::string_view s);

/// Decodes standard or URL-safe base64 (padding optional, whitespace ignored); nothing for
/// anything else.
std::optional<std::string> base64_decode(std::string_view in);

/// ASCII lowercase copy.
std::string ascii_lower(std::string_view s);

}  // namespace newsflow::extractors
