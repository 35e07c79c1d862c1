#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace newsflow::extractors {

/// True when `s` is well-formed UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF).
bool is_valid_utf8(std::string_view s);

/// Replaces every ill-formed UTF-8 sequence in `s` with U+FFFD.
std::string sanitize_utf8(std::string_view s);

/// True when `s` looks like binary data rather than text: it holds NUL bytes, or more than 10%
/// of its first 64 KiB are C0 control characters other than tab, newline, carriage return and
/// form feed.
bool looks_binary(std::string_view s);

/// True when `s` holds only whitespace (as `whitespace_prefix` knows it), or nothing.
bool is_blank(std::string_view s);

/// Collapses runs of Unicode and ASCII whitespace to one space and trims both ends.
std::string collapse_whitespace(std::string_view s);

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
