#pragma once

#include <string>
#include <string_view>

namespace newsflow::dedup {

/// Normalizes article text for comparison: Unicode NFKC with case folding, every run of
/// punctuation, symbols, separators and control characters becomes one space, ends trimmed,
/// and text in scripts written without spaces (Chinese, Japanese, Thai, Lao, Khmer, Burmese)
/// cut into words (see `segment_words`), so every later step reads words between spaces.
/// Two texts that differ only in case, typography (curly vs straight quotes, dashes, NBSP) or
/// layout normalize to the same string. Invalid UTF-8 bytes are dropped.
///
///   normalize_text("“Hello,”  WORLD!") == "hello world"
std::string normalize_text(std::string_view text);

/// Puts a space between the words of every token of `normalized` that holds characters of a
/// script written without spaces, by ICU's word break iterator (Unicode UAX #29 rules with
/// ICU's dictionaries for Chinese and Japanese, Thai, Lao, Khmer and Burmese); other tokens are
/// kept as they are.
///
///   segment_words("新华社北京电") == "新华社 北京 电"
std::string segment_words(std::string_view normalized);

/// Whether `word` holds a character of a script written without spaces (Thai, Lao, Myanmar,
/// Khmer, kana, Han): what `normalize_text` hands to `segment_words`.
bool has_unspaced_script(std::string_view word);

}  // namespace newsflow::dedup
