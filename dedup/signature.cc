#include "dedup/signature.h"

#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "dedup/internal/stopwords.h"
#include "dedup/normalize.h"

namespace newsflow::dedup {
namespace {

// SpotSigs antecedents: frequent function words that precede content in prose (Theobald et
// al. used "the, a, is, said, was, there, it"); extended to the languages the extractor sees.
bool is_antecedent(std::string_view w) {
  static const std::unordered_set<std::string_view> kWords = {
      "the", "a",   "an",  "is",  "said", "was", "there", "it",  "are",  "were",
      "has", "had", "be",  "der", "die",  "das", "ist",   "ein", "eine", "le",
      "la",  "les", "est", "un",  "une",  "el",  "los",   "las", "es",   "il",
      "lo",  "gli", "è",   "o",   "os",   "as",  "é",     "de",  "het",  "een"};
  return kWords.count(w) > 0;
}

std::vector<std::string_view> split_words(std::string_view text) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t j = std::min(text.find(' ', i), text.size());
    if (j > i) words.push_back(text.substr(i, j - i));
    i = j + 1;
  }
  return words;
}

std::uint64_t hash_words(const std::vector<std::string_view>& words, std::size_t from,
                         std::size_t count) {
  // The words are consecutive in the source text unless SpotSigs skipped stopwords.
  const char* begin = words[from].data();
  const char* end = words[from + count - 1].data() + words[from + count - 1].size();
  bool contiguous = true;
  for (std::size_t k = from + 1; k < from + count && contiguous; ++k) {
    contiguous = words[k].data() == words[k - 1].data() + words[k - 1].size() + 1;
  }
  if (contiguous) return XXH3_64bits(begin, static_cast<std::size_t>(end - begin));
  std::string joined;
  for (std::size_t k = from; k < from + count; ++k) {
    if (k > from) joined += ' ';
    joined.append(words[k]);
  }
  return XXH3_64bits(joined.data(), joined.size());
}

std::uint64_t mix(std::uint64_t x) {  // splitmix64 finalizer
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

}  // namespace

bool parse_signature_scheme(std::string_view name, SignatureScheme& out) {
  if (name == "shingles") {
    out = SignatureScheme::kShingles;
  } else if (name == "spotsigs") {
    out = SignatureScheme::kSpotSigs;
  } else if (name == "sentences") {
    out = SignatureScheme::kSentences;
  } else if (name == "simhash") {
    out = SignatureScheme::kSimHash;
  } else if (name == "weighted") {
    out = SignatureScheme::kWeighted;
  } else {
    return false;
  }
  return true;
}

std::vector<std::uint64_t> phrase_hashes(std::string_view text, const SignatureOptions& options) {
  std::vector<std::uint64_t> out;
  if (options.scheme == SignatureScheme::kSentences) {
    // Sentences end at . ! ? and at paragraph breaks; very short ones (datelines, "Share")
    // carry no evidence.
    std::size_t start = 0;
    for (std::size_t i = 0; i <= text.size(); ++i) {
      const bool end =
          i == text.size() || text[i] == '.' || text[i] == '!' || text[i] == '?' || text[i] == '\n';
      if (!end) continue;
      const std::string s = normalize_text(text.substr(start, i - start));
      start = i + 1;
      if (std::count(s.begin(), s.end(), ' ') < 3) continue;
      out.push_back(XXH3_64bits(s.data(), s.size()));
    }
    if (out.empty()) {
      const std::string all = normalize_text(text);
      if (!all.empty()) out.push_back(XXH3_64bits(all.data(), all.size()));
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
  return phrase_hashes_of_normalized(normalize_text(text), options);
}

std::vector<std::uint64_t> phrase_hashes_of_normalized(std::string_view normalized,
                                                       const SignatureOptions& options) {
  std::vector<std::uint64_t> out;
  if (options.scheme == SignatureScheme::kSentences) return phrase_hashes(normalized, options);
  const auto words = split_words(normalized);
  if (words.empty()) return out;
  if (options.scheme == SignatureScheme::kShingles || options.scheme == SignatureScheme::kSimHash ||
      options.scheme == SignatureScheme::kWeighted) {
    const auto n = static_cast<std::size_t>(std::max(1, options.shingle_words));
    if (words.size() <= n) {
      out.push_back(hash_words(words, 0, words.size()));
    } else {
      out.reserve(words.size() - n + 1);
      for (std::size_t i = 0; i + n <= words.size(); ++i) out.push_back(hash_words(words, i, n));
    }
  } else {
    const auto chain = static_cast<std::size_t>(std::max(1, options.spot_chain));
    std::vector<std::string_view> spot;
    for (std::size_t i = 0; i < words.size(); ++i) {
      if (!is_antecedent(words[i])) continue;
      spot.assign(1, words[i]);
      for (std::size_t j = i + 1; j < words.size() && spot.size() <= chain; ++j) {
        if (!internal::is_stopword(words[j])) spot.push_back(words[j]);
      }
      if (spot.size() == chain + 1) out.push_back(hash_words(spot, 0, spot.size()));
    }
    if (out.empty()) out.push_back(hash_words(words, 0, words.size()));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

namespace {

// The distinct values of `hashes`, in first-seen order (linear probing; 0 marks a free slot,
// so a hash of 0 is kept apart).
std::vector<std::uint64_t> distinct(const std::vector<std::uint64_t>& hashes) {
  std::size_t size = 16;
  while (size < hashes.size() * 2) size <<= 1;
  std::vector<std::uint64_t> table(size, 0);
  std::vector<std::uint64_t> out;
  out.reserve(hashes.size());
  bool zero = false;
  for (const std::uint64_t h : hashes) {
    if (h == 0) {
      if (!zero) out.push_back(0);
      zero = true;
      continue;
    }
    for (std::size_t i = mix(h) & (size - 1);; i = (i + 1) & (size - 1)) {
      if (table[i] == h) break;
      if (table[i] == 0) {
        table[i] = h;
        out.push_back(h);
        break;
      }
    }
  }
  return out;
}

}  // namespace

std::vector<std::uint64_t> term_hashes(std::string_view normalized) {
  std::vector<std::uint64_t> all;
  for (const auto w : split_words(normalized)) all.push_back(XXH3_64bits(w.data(), w.size()));
  return distinct(all);
}

Shingles make_shingles(std::string_view normalized, const SignatureOptions& options) {
  Shingles s;
  const auto words = split_words(normalized);
  s.word_hash.resize(words.size());
  for (std::size_t i = 0; i < words.size(); ++i) {
    s.word_hash[i] = XXH3_64bits(words[i].data(), words[i].size());
  }
  s.terms = distinct(s.word_hash);
  if (words.empty()) return s;
  const auto n =
      std::min(words.size(), static_cast<std::size_t>(std::max(1, options.shingle_words)));
  s.phrase.reserve(words.size() - n + 1);
  for (std::size_t i = 0; i + n <= words.size(); ++i) s.phrase.push_back(hash_words(words, i, n));
  return s;
}

std::vector<std::uint64_t> weighted_phrase_hashes(const Shingles& shingles,
                                                  const TermStats& stats) {
  std::vector<std::uint64_t> out;
  // weight = round(ln((N + 11) / (df + 1))), capped at 8: weight >= k exactly when
  // df + 1 <= (N + 11) / e^(k - 0.5), so eight thresholds replace a logarithm per word.
  constexpr int kMaxWeight = 8;
  // Ten prior documents that hold no word: the first articles of a stream (or after a
  // restart) weigh every shingle alike instead of none, and stay comparable with what follows.
  constexpr double kPriorDocuments = 10;
  const double docs = static_cast<double>(stats.documents()) + 1 + kPriorDocuments;
  double limit[kMaxWeight];
  for (int k = 1; k <= kMaxWeight; ++k) limit[k - 1] = docs / std::exp(k - 0.5);
  // A shingle that occurs twice adds the same copies twice: the sketch takes minima, so only
  // the count (the weighted size) is off, by the rare repeats.
  out.reserve(shingles.word_hash.size() * 4);
  for (std::size_t i = 0; i < shingles.phrase.size(); ++i) {
    const double df1 = static_cast<double>(stats.df(shingles.word_hash[i])) + 1;
    int weight = 0;
    while (weight < kMaxWeight && df1 <= limit[weight]) ++weight;
    if (weight == 0) continue;
    const std::uint64_t phrase = shingles.phrase[i];
    for (int copy = 0; copy < weight; ++copy) {
      out.push_back(mix(phrase + 0x9E3779B97F4A7C15ULL * static_cast<std::uint64_t>(copy)));
    }
  }
  return out;
}

std::vector<std::uint64_t> weighted_phrase_hashes(std::string_view normalized,
                                                  const SignatureOptions& options,
                                                  const TermStats& stats,
                                                  std::vector<std::uint64_t>* terms) {
  Shingles shingles = make_shingles(normalized, options);
  std::vector<std::uint64_t> out = weighted_phrase_hashes(shingles, stats);
  if (terms) *terms = std::move(shingles.terms);
  return out;
}

std::vector<std::uint64_t> plain_phrase_hashes(const Shingles& shingles) {
  std::vector<std::uint64_t> out = shingles.phrase;
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::uint64_t simhash(const std::vector<std::uint64_t>& phrases) {
  int counts[64] = {};
  for (const std::uint64_t p : phrases) {
    const std::uint64_t h = mix(p ^ 0x5851F42D4C957F2DULL);
    for (int b = 0; b < 64; ++b) counts[b] += (h >> b) & 1 ? 1 : -1;
  }
  std::uint64_t out = 0;
  for (int b = 0; b < 64; ++b) {
    if (counts[b] > 0) out |= std::uint64_t{1} << b;
  }
  return out;
}

Sketch minhash_sketch(const std::vector<std::uint64_t>& phrases) {
  std::array<std::uint32_t, kSketchSlots> s;
  s.fill(UINT32_MAX);
  std::array<bool, kSketchSlots> filled{};
  for (const std::uint64_t p : phrases) {
    const std::uint64_t h = mix(p);
    const auto bin = static_cast<std::size_t>(h >> 58);  // top 6 bits: 64 bins
    const auto value = static_cast<std::uint32_t>(h);
    if (value <= s[bin]) s[bin] = value;
    filled[bin] = true;
  }
  Sketch out;
  if (phrases.empty()) {
    out.fill(UINT16_MAX);
    return out;
  }
  // Optimal densification: an empty bin copies the first non-empty bin of its own hash chain.
  const auto raw = s;
  for (std::size_t i = 0; i < kSketchSlots; ++i) {
    if (filled[i]) continue;
    std::uint64_t attempt = 0;
    while (true) {
      const std::size_t j = mix((static_cast<std::uint64_t>(i) << 32) | attempt++) % kSketchSlots;
      if (filled[j]) {
        s[i] = raw[j];
        break;
      }
    }
  }
  for (std::size_t i = 0; i < kSketchSlots; ++i) out[i] = static_cast<std::uint16_t>(s[i]);
  return out;
}

double estimate_jaccard(const Sketch& a, const Sketch& b) {
  int same = 0;
  for (int i = 0; i < kSketchSlots; ++i)
    same += a[static_cast<std::size_t>(i)] == b[static_cast<std::size_t>(i)];
  return static_cast<double>(same) / kSketchSlots;
}

double estimate_containment(double jaccard, std::size_t size_a, std::size_t size_b) {
  if (size_a == 0) return 0.0;
  const double intersection = jaccard * static_cast<double>(size_a + size_b) / (1.0 + jaccard);
  return std::min(1.0, intersection / static_cast<double>(size_a));
}

}  // namespace newsflow::dedup
