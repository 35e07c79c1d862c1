#pragma once

#include <cstdint>
#include <string_view>

namespace newsflow::extractors::internal {

/// FNV-1a, 64 bit: the hash of feature names (stable across builds and platforms, which the
/// committed model relies on).
inline std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

/// FNV-1a built up piece by piece: `Fnv1a().add("wc=").add("3").value()` equals
/// `fnv1a("wc=3")`, without building the string.
class Fnv1a {
 public:
  Fnv1a& add(std::string_view s) {
    for (const char c : s) {
      h_ ^= static_cast<unsigned char>(c);
      h_ *= 1099511628211ULL;
    }
    return *this;
  }
  Fnv1a& add(char c) {
    h_ ^= static_cast<unsigned char>(c);
    h_ *= 1099511628211ULL;
    return *this;
  }
  /// The decimal digits of a small non-negative number, as std::to_string writes them.
  Fnv1a& add_number(int n) {
    char buf[12];
    int len = 0;
    do {
      buf[len++] = static_cast<char>('0' + n % 10);
      n /= 10;
    } while (n > 0 && len < 12);
    while (len > 0) add(buf[--len]);
    return *this;
  }
  std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_ = 1469598103934665603ULL;
};

}  // namespace newsflow::extractors::internal
