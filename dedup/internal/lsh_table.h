#pragma once

#include <cstdint>
#include <vector>

#include "dedup/internal/robin_hood.h"

namespace newsflow::dedup::internal {

class Reader;
class Writer;

/// A flat multimap from 32-bit band keys to window slots: 8 bytes an entry instead of a node
/// per entry, in a Robin Hood table (`RobinHood`) 60-85% full that shrinks with what it holds.
/// Not thread-safe.
class LshTable {
 public:
  void insert(std::uint32_t key, std::uint32_t slot);
  void erase(std::uint32_t key, std::uint32_t slot);

  /// Calls `fn(slot)` for every slot stored under `key`.
  template <typename F>
  void for_each(std::uint32_t key, F&& fn) const {
    const std::uint32_t mixed = mix(key);
    Probe::probe(entries_, mixed, [&](std::size_t i) {
      if (entries_[i].key == mixed) fn(entries_[i].slot);
      return false;
    });
  }

  std::size_t size() const { return size_; }
  std::size_t capacity() const { return entries_.size(); }
  std::size_t memory_bytes() const { return entries_.capacity() * sizeof(Entry); }

  /// The table as it is (`load` makes an equal one; false for bytes that are not a table).
  void save(Writer& w) const;
  bool load(Reader& r);

 private:
  static constexpr std::uint32_t kEmpty = UINT32_MAX;
  struct Entry {
    std::uint32_t key = 0;  // mixed (`mix`)
    std::uint32_t slot = kEmpty;
  };
  struct Traits {
    static bool free(const Entry& e) { return e.slot == kEmpty; }
    static std::uint32_t hash(const Entry& e) { return e.key; }
  };
  using Probe = RobinHood<Entry, Traits>;

  // Keys are held mixed (a bijection), so a probe finds an entry's home with one multiply.
  static std::uint32_t mix(std::uint32_t key) { return key * 0x9E3779B1u; }

  std::vector<Entry> entries_;
  std::size_t size_ = 0;
};

}  // namespace newsflow::dedup::internal
