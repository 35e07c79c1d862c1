#pragma once

// The words of dates: text read as tokens (numbers, lowercased words, single punctuation
// characters) one at a time, month names in twenty languages, and the words that say what the
// date after them is. `find_text_dates` (text_dates.cc) matches dates over these tokens.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "extractors/dates.h"

namespace newsflow::extractors::internal {

/// A token of text: a number (ASCII, Arabic-Indic or fullwidth digits), a word (letters,
/// lowercased; an ideograph or a Hangul syllable is a word of its own) or one other character.
struct DateToken {
  enum class Type : std::uint8_t { kNumber, kWord, kPunct };
  Type type;
  bool space_before;
  std::uint8_t digits;  ///< of a number (more than 4 are counted as 5)
  int value;            ///< of a number
  char punct;           ///< an ASCII punctuation character; '\0' for any other
  std::size_t begin, end;
  std::string word;  ///< lowercased, of a word (at most 32 bytes kept)
};

/// The next token of `text` from `i` on (whitespace skipped; `space` says whether some was, and
/// starts true), or false at the end. One token at a time, so the caller holds only the few it
/// matches against, whatever the text's length.
bool next_date_token(std::string_view text, std::size_t& i, bool& space, DateToken& t);

/// The month (1-12) a word names, in any of the languages `find_text_dates` reads; 0 for none.
int month_of(const DateToken& t);

/// What a word says of the date after it ("updated", "veröffentlicht", "datum").
DateRole role_word(std::string_view w);

/// True for the suffixes of ordinal days ("st", "th", "er", "º").
bool is_ordinal_suffix(const DateToken& t);

}  // namespace newsflow::extractors::internal
