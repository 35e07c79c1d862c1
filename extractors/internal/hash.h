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

}  // namespace newsflow::extractors::internal
