#pragma once

#include <string>
#include <string_view>

namespace newsflow::dedup {

/// Normalizes article text for comparison: Unicode NFKC with case folding, every run of
/// punctuation, symbols, separators and control characters becomes one space, ends trimmed.
/// Two texts that differ only in case, typography (curly vs straight quotes, dashes, NBSP) or
/// layout normalize to the same string. Invalid UTF-8 bytes are dropped.
///
///   normalize_text("“Hello,”  WORLD!") == "hello world"
std::string normalize_text(std::string_view text);

}  // namespace newsflow::dedup
