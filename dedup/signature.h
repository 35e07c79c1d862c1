#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "dedup/term_stats.h"

namespace newsflow::dedup {

/// Which phrases of an article its near-duplicate signature is made of.
enum class SignatureScheme {
  kShingles,   ///< every run of `shingle_words` consecutive words
  kSpotSigs,   ///< SpotSigs: a stopword antecedent plus the next `spot_chain` non-stopwords
  kSentences,  ///< every sentence (share of shared sentences)
  kSimHash,    ///< 64-bit SimHash of the shingles; near when few bits differ (Charikar; Manku)
  /// Shingles weighted by the inverse document frequency of their first word in the window
  /// (Alonso, Fetterly & Manasse): weighted Jaccard by consistent sampling of integer weights
  /// (a shingle of weight w enters the sketch as w distinct copies); shingles whose first word
  /// occurs in most of the window's documents get no weight.
  kWeighted,
};

/// Options of signature computation; filled by `config/`.
struct SignatureOptions {
  SignatureScheme scheme = SignatureScheme::kWeighted;
  int shingle_words = 7;  ///< 5 for the plain schemes is their measured best
  int spot_chain = 2;
};

/// Parses "shingles", "spotsigs", "sentences", "simhash" or "weighted"; false otherwise.
bool parse_signature_scheme(std::string_view name, SignatureScheme& out);

/// The distinct phrase hashes of a text, sorted: its shingles or SpotSigs of the normalized
/// text (see `normalize_text`), or its normalized sentences. A text shorter than one phrase
/// yields one phrase of all its words. (kSimHash uses the shingles.)
std::vector<std::uint64_t> phrase_hashes(std::string_view text, const SignatureOptions& options);

/// `phrase_hashes` of text already normalized (`normalize_text`), for every scheme but
/// sentences (which need the punctuation normalization removes).
std::vector<std::uint64_t> phrase_hashes_of_normalized(std::string_view normalized,
                                                       const SignatureOptions& options);

/// Distinct hashes of the words of normalized text, in order of first occurrence: the terms
/// `TermStats` counts.
std::vector<std::uint64_t> term_hashes(std::string_view normalized);

/// The weighted scheme's sketch elements: each shingle of normalized text repeated
/// round(ln((N + 11) / (df + 1))) times (ten prior documents without the word), at most 8,
/// where df is the window document frequency of its first word (so a shingle opened by a word
/// in most documents has weight 0), for `minhash_sketch`: unordered, a repeated shingle's
/// copies repeated; empty when every weight is 0. `terms`, when given, receives
/// `term_hashes(normalized)`.
std::vector<std::uint64_t> weighted_phrase_hashes(std::string_view normalized,
                                                  const SignatureOptions& options,
                                                  const TermStats& stats,
                                                  std::vector<std::uint64_t>* terms = nullptr);

/// What the weighted scheme reads of a normalized text apart from the window's document
/// frequencies: its words hashed, its distinct word hashes (`term_hashes`) and the hash of each
/// shingle in order (the shingle of `shingle_words` words starting at every word; one of all
/// the words when there are no more). Made on any thread; `weighted_phrase_hashes` of it gives
/// what it gives of the text.
struct Shingles {
  std::vector<std::uint64_t> word_hash;  ///< each word's, in order
  std::vector<std::uint64_t> terms;      ///< `term_hashes` of the text
  std::vector<std::uint64_t> phrase;     ///< each shingle's, in order of its first word
};
Shingles make_shingles(std::string_view normalized, const SignatureOptions& options);

/// `weighted_phrase_hashes` of the text `shingles` were made of (for `TermStats` weights).
std::vector<std::uint64_t> weighted_phrase_hashes(const Shingles& shingles, const TermStats& stats);

/// The plain shingles of that text, sorted and distinct: `phrase_hashes_of_normalized` of it
/// for the shingles, SimHash and weighted schemes.
std::vector<std::uint64_t> plain_phrase_hashes(const Shingles& shingles);

/// Charikar's SimHash of a set of phrase hashes: bit i is set when more phrases have bit i of
/// their (remixed) hash set than not.
std::uint64_t simhash(const std::vector<std::uint64_t>& phrases);

/// Slots of a MinHash sketch.
inline constexpr int kSketchSlots = 64;

/// A one-permutation MinHash sketch with optimal densification (Shrivastava 2017): slot i holds
/// the low 16 bits of the minimum of the phrase hashes that fall into bin i (empty bins borrow
/// from a pseudo-random non-empty bin), so two sketches agree in a slot with probability equal
/// to the Jaccard similarity of the phrase sets plus 2^-16 (b-bit MinHash). 128 bytes;
/// computed in O(phrases + slots).
using Sketch = std::array<std::uint16_t, kSketchSlots>;

/// Sketch of a set of phrase hashes; all slots are 0xFFFF for an empty set.
Sketch minhash_sketch(const std::vector<std::uint64_t>& phrases);

/// The share of slots in which the two sketches agree: an unbiased estimate of Jaccard.
double estimate_jaccard(const Sketch& a, const Sketch& b);

/// Estimated |A ∩ B| / |A| from the Jaccard estimate and the two set sizes.
double estimate_containment(double jaccard, std::size_t size_a, std::size_t size_b);

}  // namespace newsflow::dedup
