#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>

namespace newsflow::dedup::internal {

/// `N` strings in one heap block (each one's size as a varint, then its bytes), held by one
/// pointer: 8 bytes where `N` std::strings take 32 each and a block each past 15 bytes. No block
/// when every string is empty. Values: copies copy the block.
template <std::size_t N>
class PackedStrings {
 public:
  PackedStrings() = default;
  explicit PackedStrings(const std::array<std::string_view, N>& strings) {
    std::size_t bytes = 0;
    for (const std::string_view s : strings) bytes += varint_size(s.size()) + s.size();
    if (bytes == N) return;  // all empty
    block_ = std::make_unique_for_overwrite<char[]>(bytes);
    char* p = block_.get();
    for (const std::string_view s : strings) {
      for (std::size_t n = s.size();; n >>= 7) {
        *p++ = static_cast<char>((n & 0x7F) | (n > 0x7F ? 0x80 : 0));
        if (n <= 0x7F) break;
      }
      if (!s.empty()) std::memcpy(p, s.data(), s.size());
      p += s.size();
    }
  }
  PackedStrings(const PackedStrings& o) { *this = o; }
  PackedStrings& operator=(const PackedStrings& o) {
    if (this == &o) return *this;
    if (!o.block_) {
      block_.reset();
      return *this;
    }
    const std::size_t bytes = o.size_bytes();
    block_ = std::make_unique_for_overwrite<char[]>(bytes);
    std::memcpy(block_.get(), o.block_.get(), bytes);
    return *this;
  }
  PackedStrings(PackedStrings&&) noexcept = default;
  PackedStrings& operator=(PackedStrings&&) noexcept = default;

  /// The block, given up by this object (nullptr when every string is empty), and an object
  /// that owns such a block again: for a holder that keeps the pointer among other bytes.
  [[nodiscard]] char* release() { return block_.release(); }
  static PackedStrings adopt(char* block) {
    PackedStrings out;
    out.block_.reset(block);
    return out;
  }

  /// The `i`-th string.
  std::string_view operator[](std::size_t i) const {
    if (!block_) return {};
    const char* p = block_.get();
    for (;;) {
      std::size_t n = 0;
      p = read_size(p, n);
      if (i-- == 0) return {p, n};
      p += n;
    }
  }

  /// Bytes of the block (0 without one).
  std::size_t size_bytes() const {
    if (!block_) return 0;
    const char* p = block_.get();
    for (std::size_t i = 0; i < N; ++i) {
      std::size_t n = 0;
      p = read_size(p, n) + n;
    }
    return static_cast<std::size_t>(p - block_.get());
  }

  /// Bytes the allocator gives the block (glibc: the size and its 8-byte header in 16-byte
  /// steps, at least 32), for memory estimates.
  std::size_t heap_bytes() const {
    const std::size_t bytes = size_bytes();
    return bytes == 0 ? 0 : std::max<std::size_t>(32, (bytes + 8 + 15) & ~std::size_t{15});
  }

 private:
  static std::size_t varint_size(std::size_t n) {
    std::size_t k = 1;
    while (n > 0x7F) n >>= 7, ++k;
    return k;
  }
  static const char* read_size(const char* p, std::size_t& n) {
    n = 0;
    for (int shift = 0;; shift += 7) {
      const auto b = static_cast<unsigned char>(*p++);
      n |= static_cast<std::size_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) return p;
    }
  }

  std::unique_ptr<char[]> block_;
};

}  // namespace newsflow::dedup::internal
