#pragma once

// An article's story terms from its text: the words a story is told by, stemmed and counted, with
// no state of the story book (so they can be made on any thread). `StoryBook` weighs them against
// its window's document frequencies and groups by them.

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace newsflow::dedup {

struct StoryOptions;

/// Story terms and their weights.
using TermCounts = std::unordered_map<std::string, float>;

/// The stemmed words of an article's title (`title_weight` each) and of its text's first
/// `text_words` (its first `lead_words` weigh `lead_weight`), stopwords and short words left
/// out, each weighted 1 + ln(count), entity-like words boosted by `entity_boost`. `normalized`
/// is `normalize_text(text)` when the caller has it (else the text's beginning is normalized
/// here). All of them, before `StoryBook` keeps the `terms_per_article` heaviest by TF-IDF.
TermCounts story_term_counts(std::string_view title, std::string_view text,
                             std::string_view normalized, const StoryOptions& options);

namespace internal {

/// A word of one character of a script written without spaces (a Chinese or Japanese particle,
/// a kanji read alone) or of hiragana only (Japanese inflections and particles): no story term.
bool weak_unspaced_word(std::string_view w);

/// Normalized forms of the text's entity-like words: capitalized words that do not begin a
/// sentence (a title-cased headline counts none) and numbers of two or more digits.
std::unordered_set<std::string> entity_words(std::string_view text);

/// The term of a normalized word: its first `chars` characters, unless it is a number or of a
/// script written without spaces (ICU's dictionary words already: kept whole).
std::string_view stem(std::string_view w, std::size_t chars);

}  // namespace internal

}  // namespace newsflow::dedup
