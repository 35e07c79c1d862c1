#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "dedup/internal/robin_hood.h"
#include "dedup/internal/table_part.h"

namespace newsflow::dedup::internal {

class Reader;
class Writer;

/// The window's indexes (article ids, exact fingerprints, LSH bands): a flat multimap from
/// 32-bit keys to window slots below 2^24 - 1, 5 bytes an entry. Keys are mixed (a bijection)
/// and split: the high 16 bits pick one of 65,536 parts, each a Robin Hood table (`RobinHood`,
/// 70-85% full) of the low 16 bits and the slot, so the whole key is kept. Each part grows and
/// shrinks alone: no insert waits for the whole table to be made again. Not thread-safe.
class SlotTable {
 public:
  /// Slots are below this: 16,777,215 articles at most (the window's hard bound).
  static constexpr std::uint32_t kFreeSlot = 0xFFFFFF;

  SlotTable();

  void insert(std::uint32_t key, std::uint32_t slot);
  void erase(std::uint32_t key, std::uint32_t slot);

  /// Calls `fn(slot)` for every slot stored under `key`.
  template <typename F>
  void for_each(std::uint32_t key, F&& fn) const {
    const std::uint32_t mixed = mix(key);
    const std::span<const Entry> part = parts_[mixed >> 16].entries();
    const auto low = static_cast<std::uint16_t>(mixed);
    Probe::probe(part, Traits::hash_of(low), [&](std::size_t i) {
      if (part[i].low() == low) fn(part[i].slot());
      return false;
    });
  }

  /// For inserting many entries at once (a window's bands made whole): a key mixed (its high
  /// 16 bits name its part), room made in each part for `more[part]` more entries (each made
  /// again once, just under `kReservedPercent` full, where one at a time made a part again every
  /// fifth of its size and left it 70-85% full), and an insert of a mixed key into a part with
  /// room (no growth; the same entry as `insert` of the key).
  static constexpr std::size_t kReservedPercent = 84;
  static constexpr std::size_t kParts = 1 << 16;
  static std::uint32_t mixed(std::uint32_t key) { return mix(key); }
  void reserve(std::span<const std::uint32_t> more);
  void insert_mixed(std::uint32_t mixed, std::uint32_t slot) {
    Part& part = parts_[mixed >> 16];
    Probe::place(part.entries(), Entry(static_cast<std::uint16_t>(mixed), slot));
    ++part.size;
    ++size_;
  }

  std::size_t size() const { return size_; }
  /// Bytes on the heap: the parts' entries and the parts themselves.
  std::size_t memory_bytes() const {
    return entries_ * sizeof(Entry) + parts_.capacity() * sizeof(Part);
  }

  /// The table as it is (`load` makes an equal one; false for bytes that are not a table).
  void save(Writer& w) const;
  bool load(Reader& r);

 private:
  // 5 bytes, unaligned: the key's low 16 bits (mixed) and a 24-bit slot (all ones: a free
  // entry), little-endian.
  struct Entry {
    std::uint8_t b[5] = {0, 0, 0xFF, 0xFF, 0xFF};
    Entry() = default;
    Entry(std::uint16_t low16, std::uint32_t slot)
        : b{static_cast<std::uint8_t>(low16), static_cast<std::uint8_t>(low16 >> 8),
            static_cast<std::uint8_t>(slot), static_cast<std::uint8_t>(slot >> 8),
            static_cast<std::uint8_t>(slot >> 16)} {}
    std::uint16_t low() const { return static_cast<std::uint16_t>(b[0] | b[1] << 8); }
    std::uint32_t slot() const {
      return std::uint32_t{b[2]} | b[3] << 8 | std::uint32_t{b[4]} << 16;
    }
  };
  static_assert(sizeof(Entry) == 5);
  struct Traits {
    static bool free(const Entry& e) { return e.slot() == kFreeSlot; }
    // The low bits spread over 32 (a part's home is the hash scaled to its size).
    static std::uint32_t hash_of(std::uint16_t low) { return std::uint32_t{low} << 16 | low; }
    static std::uint32_t hash(const Entry& e) { return hash_of(e.low()); }
  };
  using Probe = RobinHood<Entry, Traits>;

  // A bijection of 32 bits (MurmurHash3's finalizer): every bit of the key moves the part and
  // the low bits alike.
  static std::uint32_t mix(std::uint32_t k) {
    k ^= k >> 16;
    k *= 0x85EBCA6Bu;
    k ^= k >> 13;
    k *= 0xC2B2AE35u;
    k ^= k >> 16;
    return k;
  }
  using Part = TablePart<Entry, Traits>;
  // Resizes through `fn` and keeps the count of all parts' entries.
  template <class F>
  void resizing(Part& part, F&& fn) {
    entries_ -= part.capacity;
    fn(part);
    entries_ += part.capacity;
  }

  std::vector<Part> parts_;
  std::size_t size_ = 0;
  std::size_t entries_ = 0;  // entries of all parts, free ones included
};

}  // namespace newsflow::dedup::internal
