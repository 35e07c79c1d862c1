#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>

#include "dedup/internal/codec.h"
#include "dedup/internal/robin_hood.h"

namespace newsflow::dedup::internal {

/// One part of a table split by the high bits of its keys (`SlotTable`, the boilerplate
/// filter's), so that its entries keep only the other bits: a Robin Hood table (`RobinHood`) of
/// its own that grows at 85% full to 60% and shrinks below 45% to 70%, and gives its entries
/// back when empty. 16 bytes, so 65,536 parts take 1 MiB. A part grows alone: no insert waits
/// for the whole table to be made again.
template <class Entry, class Traits>
struct TablePart {
  using Probe = RobinHood<Entry, Traits>;
  static constexpr std::size_t kMinCapacity = 4;

  TablePart() = default;
  TablePart(const TablePart& o) : capacity(o.capacity), size(o.size) {
    if (capacity == 0) return;
    data = std::make_unique_for_overwrite<Entry[]>(capacity);
    std::copy_n(o.data.get(), capacity, data.get());
  }
  TablePart& operator=(const TablePart& o) {
    if (this != &o) *this = TablePart(o);
    return *this;
  }
  TablePart(TablePart&&) noexcept = default;
  TablePart& operator=(TablePart&&) noexcept = default;

  std::span<Entry> entries() { return {data.get(), capacity}; }
  std::span<const Entry> entries() const { return {data.get(), capacity}; }

  /// Made again at `n` entries (0: none) with those it holds.
  void resize(std::size_t n) {
    TablePart next;
    if (n > 0) {
      next.data = std::make_unique<Entry[]>(n);
      next.capacity = static_cast<std::uint32_t>(n);
      for (const Entry& e : entries()) {
        if (!Traits::free(e)) Probe::place(next.entries(), e);
      }
    }
    next.size = size;
    *this = std::move(next);
  }
  /// Room for one more: made again `to`% full when one more would make it more than `full`%.
  void reserve_one(std::size_t full = 85, std::size_t to = 60) {
    if ((size + 1) * std::size_t{100} > capacity * full) {
      resize(std::max(kMinCapacity, (size + 1) * std::size_t{100} / to));
    }
  }
  /// After an erase: an empty part gives its entries back, a sparse one shrinks.
  void shrink_to_fit() {
    if (size == 0) {
      resize(0);
    } else if (capacity > kMinCapacity && size * std::size_t{20} < capacity * std::size_t{9}) {
      resize(std::max(kMinCapacity, size * std::size_t{10} / 7));
    }
  }

  /// The part as it is, and back (false for bytes that are not a part).
  void save(Writer& w) const {
    w.varint(capacity);
    if (capacity > 0) {
      w.raw(std::string_view(reinterpret_cast<const char*>(data.get()), capacity * sizeof(Entry)));
    }
  }
  bool load(Reader& r) {
    const std::uint64_t n = r.varint();
    if (n > UINT32_MAX / sizeof(Entry)) return false;
    const std::string_view bytes = r.raw(static_cast<std::size_t>(n) * sizeof(Entry));
    if (!r.ok()) return false;
    TablePart next;
    if (n > 0) {
      next.data = std::make_unique_for_overwrite<Entry[]>(n);
      std::memcpy(static_cast<void*>(next.data.get()), bytes.data(), bytes.size());
      next.capacity = static_cast<std::uint32_t>(n);
    }
    for (const Entry& e : next.entries()) next.size += !Traits::free(e);
    // Probing ends at a free entry: a part without one is not ours.
    if (next.capacity > 0 && next.size == next.capacity) return false;
    *this = std::move(next);
    return true;
  }

  std::unique_ptr<Entry[]> data;
  std::uint32_t capacity = 0;
  std::uint32_t size = 0;  // entries held
};

}  // namespace newsflow::dedup::internal
