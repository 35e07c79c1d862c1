#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace newsflow::dedup {

/// A 128-bit content fingerprint (XXH3-128 of the normalized text).
struct ContentHash {
  std::uint64_t high = 0;
  std::uint64_t low = 0;
  friend bool operator==(const ContentHash&, const ContentHash&) = default;
  /// 32 lowercase hex digits, high half first.
  std::string hex() const;
};

/// Fingerprint of already normalized text (see `normalize_text`).
ContentHash content_hash(std::string_view normalized_text);

/// 64-bit XXH3 of arbitrary bytes, for ids and hash tables.
std::uint64_t hash64(std::string_view bytes);

struct ContentHashHasher {
  std::size_t operator()(const ContentHash& h) const noexcept { return h.low ^ (h.high * 31); }
};

}  // namespace newsflow::dedup
