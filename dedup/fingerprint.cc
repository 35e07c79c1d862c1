#include "dedup/fingerprint.h"

#include <xxhash.h>

#include <cstdio>

namespace newsflow::dedup {

std::string ContentHash::hex() const {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(high),
                static_cast<unsigned long long>(low));
  return buf;
}

ContentHash content_hash(std::string_view normalized_text) {
  const XXH128_hash_t h = XXH3_128bits(normalized_text.data(), normalized_text.size());
  return {h.high64, h.low64};
}

std::uint64_t hash64(std::string_view bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }

}  // namespace newsflow::dedup
