#pragma once

#include <cstdint>
#include <vector>

namespace newsflow::dedup::internal {

class Reader;
class Writer;

/// A flat multimap from 32-bit band keys to window slots with linear probing: 8 bytes an entry
/// instead of a node per entry, 53-80% full (live entries and tombstones; rebuilt 60% full).
/// Not thread-safe.
class LshTable {
 public:
  void insert(std::uint32_t key, std::uint32_t slot);
  void erase(std::uint32_t key, std::uint32_t slot);

  /// Calls `fn(slot)` for every slot stored under `key`.
  template <typename F>
  void for_each(std::uint32_t key, F&& fn) const {
    if (entries_.empty()) return;
    for (std::size_t i = home(key); entries_[i].slot != kEmpty; i = next(i)) {
      if (entries_[i].key == key && entries_[i].slot != kTombstone) fn(entries_[i].slot);
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
    std::uint32_t key;
    std::uint32_t slot;
  };
  static constexpr std::uint32_t kEmpty = UINT32_MAX;
  static constexpr std::uint32_t kTombstone = UINT32_MAX - 1;

  // Any number of entries (below 2^32): the table grows by half, not double.
  std::size_t home(std::uint32_t key) const {
    const std::uint64_t mixed = static_cast<std::uint64_t>(key) * 0x9E3779B97F4A7C15ULL >> 32;
    return static_cast<std::size_t>(mixed * entries_.size() >> 32);
  }
  std::size_t next(std::size_t i) const { return i + 1 == entries_.size() ? 0 : i + 1; }
  void rehash(std::size_t capacity);

  std::vector<Entry> entries_;
  std::size_t size_ = 0;
  std::size_t tombstones_ = 0;
};

}  // namespace newsflow::dedup::internal
