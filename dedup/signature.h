#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace newsflow::dedup {

/// Which phrases of an article its near-duplicate signature is made of.
enum class SignatureScheme {
  kShingles,   ///< every run of `shingle_words` consecutive words
  kSpotSigs,   ///< SpotSigs: a stopword antecedent plus the next `spot_chain` non-stopwords
  kSentences,  ///< every sentence (share of shared sentences)
  kSimHash,    ///< 64-bit SimHash of the shingles; near when few bits differ (Charikar; Manku)
};

/// Options of signature computation; filled by `config/`.
struct SignatureOptions {
  SignatureScheme scheme = SignatureScheme::kShingles;
  int shingle_words = 5;
  int spot_chain = 2;
};

/// Parses "shingles", "spotsigs", "sentences" or "simhash"; false for anything else.
bool parse_signature_scheme(std::string_view name, SignatureScheme& out);

/// The distinct phrase hashes of a text, sorted: its shingles or SpotSigs of the normalized
/// text (see `normalize_text`), or its normalized sentences. A text shorter than one phrase
/// yields one phrase of all its words. (kSimHash uses the shingles.)
std::vector<std::uint64_t> phrase_hashes(std::string_view text, const SignatureOptions& options);

/// `phrase_hashes` of text already normalized (`normalize_text`), for every scheme but
/// sentences (which need the punctuation normalization removes).
std::vector<std::uint64_t> phrase_hashes_of_normalized(std::string_view normalized,
                                                       const SignatureOptions& options);

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
