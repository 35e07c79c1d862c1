#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "dedup/internal/packed_strings.h"

namespace newsflow::dedup::internal {

/// Whether `s` is lowercase hex digits only (what `pack_hex` keeps in half the bytes).
inline bool is_lower_hex(std::string_view s) {
  for (const char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

/// Lowercase hex digits two to a byte, the first in the high half: `(s.size() + 1) / 2` bytes.
inline void pack_hex(std::string_view s, std::uint8_t* out) {
  for (std::size_t k = 0; k < s.size(); ++k) {
    const char c = s[k];
    const auto v = static_cast<std::uint8_t>(c <= '9' ? c - '0' : c - 'a' + 10);
    out[k / 2] = static_cast<std::uint8_t>(k % 2 ? out[k / 2] | v : v << 4);
  }
}

/// The `k`-th digit `pack_hex` packed into `in`.
inline char hex_digit(const std::uint8_t* in, std::size_t k) {
  const std::uint8_t b = in[k / 2];
  return "0123456789abcdef"[k % 2 ? b & 0xF : b >> 4];
}

/// The `digits` digits `pack_hex` packed into `in`.
inline std::string unpack_hex(const std::uint8_t* in, std::size_t digits) {
  std::string out(digits, '\0');
  for (std::size_t k = 0; k < digits; ++k) out[k] = hex_digit(in, k);
  return out;
}

/// Two article ids (a window slot's own and its verdict's `of`) in 18 bytes, aligned to 1, with
/// no heap block while both are lowercase hex of at most 16 digits: the ids the daemon derives
/// from URLs and feed items are 16 (`%016x`), so a slot keeps them in place of the 8-byte pointer
/// and the 32- or 48-byte block (glibc's) it needed. Any other ids share a heap block
/// (`PackedStrings<2>`) whose pointer the same bytes hold. Values: copies copy the block.
class IdPair {
 public:
  IdPair() = default;
  IdPair(std::string_view first, std::string_view second) {
    if (packable(first) && packable(second)) {
      digits_[0] = static_cast<std::uint8_t>(first.size());
      digits_[1] = static_cast<std::uint8_t>(second.size());
      pack_hex(first, bytes_);
      pack_hex(second, bytes_ + 8);
      return;
    }
    digits_[0] = kHeap;
    char* block = PackedStrings<2>({first, second}).release();
    std::memcpy(bytes_, &block, sizeof block);
  }
  IdPair(const IdPair& o) { copy_from(o); }
  IdPair& operator=(const IdPair& o) {
    if (this != &o) {
      free_block();
      copy_from(o);
    }
    return *this;
  }
  IdPair(IdPair&& o) noexcept { take_from(o); }
  IdPair& operator=(IdPair&& o) noexcept {
    if (this != &o) {
      free_block();
      take_from(o);
    }
    return *this;
  }
  ~IdPair() { free_block(); }

  /// The `i`-th id (0 or 1).
  std::string get(std::size_t i) const {
    if (heap()) return std::string(view_block()[i]);
    return unpack_hex(bytes_ + i * 8, digits_[i]);
  }
  /// Whether the `i`-th id is `s` (no copy made).
  bool equals(std::size_t i, std::string_view s) const {
    if (heap()) return view_block()[i] == s;
    if (s.size() != digits_[i]) return false;
    for (std::size_t k = 0; k < s.size(); ++k) {
      if (s[k] != hex_digit(bytes_ + i * 8, k)) return false;
    }
    return true;
  }
  /// Bytes of the heap block (0 without one), as `PackedStrings::heap_bytes` counts them.
  std::size_t heap_bytes() const { return heap() ? view_block().heap_bytes() : 0; }

 private:
  static constexpr std::uint8_t kHeap = 0xFF;
  static bool packable(std::string_view s) { return s.size() <= 16 && is_lower_hex(s); }
  bool heap() const { return digits_[0] == kHeap; }
  char* block() const {
    char* p;
    std::memcpy(&p, bytes_, sizeof p);
    return p;
  }
  // The block as a `PackedStrings` that does not own it (released before it goes).
  struct View {
    explicit View(char* p) : strings(PackedStrings<2>::adopt(p)) {}
    ~View() { (void)strings.release(); }
    View(const View&) = delete;
    View& operator=(const View&) = delete;
    std::string_view operator[](std::size_t i) const { return strings[i]; }
    std::size_t heap_bytes() const { return strings.heap_bytes(); }
    PackedStrings<2> strings;
  };
  View view_block() const { return View(block()); }
  void free_block() {
    if (heap()) PackedStrings<2>::adopt(block());  // destroyed here
    digits_[0] = digits_[1] = 0;
  }
  void copy_from(const IdPair& o) {
    std::memcpy(digits_, o.digits_, sizeof digits_);
    std::memcpy(bytes_, o.bytes_, sizeof bytes_);
    if (!o.heap()) return;
    const View from(o.block());
    char* block = PackedStrings<2>(from.strings).release();
    std::memcpy(bytes_, &block, sizeof block);
  }
  void take_from(IdPair& o) {
    std::memcpy(digits_, o.digits_, sizeof digits_);
    std::memcpy(bytes_, o.bytes_, sizeof bytes_);
    o.digits_[0] = o.digits_[1] = 0;
  }

  // Two digits a byte, 8 bytes an id; or the block's pointer, first: a holder that places the
  // pair at an offset of 8 bytes' alignment keeps the pointer where leak checkers look for one
  // (LeakSanitizer scans aligned words only; the window's slot does).
  std::uint8_t bytes_[16] = {};
  std::uint8_t digits_[2] = {0, 0};  // hex digits of each id; kHeap in [0]: a heap block
};
static_assert(sizeof(IdPair) == 18 && alignof(IdPair) == 1);

}  // namespace newsflow::dedup::internal
