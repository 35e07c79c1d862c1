#pragma once

#include <cstdint>
#include <vector>

namespace newsflow::dedup::internal {

class Reader;
class Writer;

/// A flat multimap from 32-bit band keys to window slots: 8 bytes an entry instead of a node
/// per entry, 60-85% full. Robin Hood linear probing (an entry never sits further from its home
/// than the one it passed) keeps probes short at that load, and erasing shifts the entries
/// after it back, so no tombstones accumulate. Not thread-safe.
class LshTable {
 public:
  void insert(std::uint32_t key, std::uint32_t slot);
  void erase(std::uint32_t key, std::uint32_t slot);

  /// Calls `fn(slot)` for every slot stored under `key`.
  template <typename F>
  void for_each(std::uint32_t key, F&& fn) const {
    if (entries_.empty()) return;
    const std::uint32_t mixed = mix(key);
    std::size_t i = home(mixed);
    for (std::size_t d = 0; entries_[i].slot != kEmpty && distance(i) >= d; i = next(i), ++d) {
      if (entries_[i].key == mixed) fn(entries_[i].slot);
    }
  }

  std::size_t size() const { return size_; }
  std::size_t capacity() const { return entries_.size(); }
  std::size_t memory_bytes() const { return entries_.capacity() * sizeof(Entry); }

  /// The table as it is (`load` makes an equal one; false for bytes that are not a table).
  void save(Writer& w) const;
  bool load(Reader& r);

 private:
  struct Entry {
    std::uint32_t key;  // mixed (`mix`)
    std::uint32_t slot;
  };
  static constexpr std::uint32_t kEmpty = UINT32_MAX;

  // Keys are held mixed (a bijection), so a probe finds an entry's home with one multiply, its
  // mixed key scaled to the table (any number of entries below 2^32).
  static std::uint32_t mix(std::uint32_t key) { return key * 0x9E3779B1u; }
  std::size_t home(std::uint32_t mixed) const {
    return static_cast<std::size_t>(std::uint64_t{mixed} * entries_.size() >> 32);
  }
  std::size_t next(std::size_t i) const { return i + 1 == entries_.size() ? 0 : i + 1; }
  // How far the entry at `i` sits from its home.
  std::size_t distance(std::size_t i) const {
    const std::size_t h = home(entries_[i].key);
    return i >= h ? i - h : i + entries_.size() - h;
  }
  void place(Entry e);
  void rehash(std::size_t capacity);

  std::vector<Entry> entries_;
  std::size_t size_ = 0;
};

}  // namespace newsflow::dedup::internal
