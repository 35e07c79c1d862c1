#include "dedup/internal/band_table.h"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <utility>

#include "dedup/internal/codec.h"

namespace newsflow::dedup::internal {

namespace {
constexpr std::size_t kMinCapacity = 8;
}  // namespace

BandTable::BandTable() : parts_(kParts) {}

void BandTable::resize(Part& part, std::size_t capacity) {
  Part next;
  if (capacity > 0) {
    next.data = std::make_unique<Entry[]>(capacity);
    next.capacity = static_cast<std::uint32_t>(capacity);
    for (const Entry& e : part.entries()) {
      if (!Traits::free(e)) Probe::place(next.entries(), e);
    }
  }
  next.size = part.size;
  entries_ = entries_ - part.capacity + next.capacity;
  part = std::move(next);
}

void BandTable::insert(std::uint32_t key, std::uint32_t slot) {
  const std::uint32_t mixed = mix(key);
  Part& part = parts_[mixed >> 16];
  // Grown at 85% full to 60%, as the other tables.
  if ((part.size + 1) * std::size_t{20} > part.capacity * std::size_t{17}) {
    resize(part, std::max(kMinCapacity, (part.size + 1) * std::size_t{5} / 3));
  }
  Probe::place(part.entries(), {static_cast<std::uint16_t>(mixed), static_cast<std::uint16_t>(slot),
                                static_cast<std::uint16_t>(slot >> 16)});
  ++part.size;
  ++size_;
}

void BandTable::erase(std::uint32_t key, std::uint32_t slot) {
  const std::uint32_t mixed = mix(key);
  Part& part = parts_[mixed >> 16];
  const std::span<Entry> entries = part.entries();
  const auto low = static_cast<std::uint16_t>(mixed);
  const std::size_t i = Probe::probe(entries, Traits::hash_of(low), [&](std::size_t k) {
    return entries[k].low == low && entries[k].slot() == slot;
  });
  if (i == entries.size()) return;  // not held
  Probe::erase_at(entries, i);
  --part.size;
  --size_;
  // An empty part gives its entries back; one below 45% full shrinks to 70%.
  if (part.size == 0) {
    resize(part, 0);
  } else if (part.capacity > kMinCapacity &&
             part.size * std::size_t{20} < part.capacity * std::size_t{9}) {
    resize(part, std::max(kMinCapacity, part.size * std::size_t{10} / 7));
  }
}

void BandTable::save(Writer& w) const {
  w.varint(size_);
  for (const Part& part : parts_) {
    w.varint(part.capacity);
    if (part.capacity > 0) {
      w.raw(std::string_view(reinterpret_cast<const char*>(part.data.get()),
                             part.capacity * sizeof(Entry)));
    }
  }
}

bool BandTable::load(Reader& r) {
  BandTable next;
  next.size_ = r.varint();
  std::size_t live = 0;
  for (std::size_t p = 0; p < kParts && r.ok(); ++p) {
    const std::uint64_t capacity = r.varint();
    if (capacity > UINT32_MAX / sizeof(Entry)) return false;
    const std::string_view bytes = r.raw(static_cast<std::size_t>(capacity) * sizeof(Entry));
    if (!r.ok()) return false;
    Part& part = next.parts_[p];
    if (capacity > 0) {
      part.data = std::make_unique_for_overwrite<Entry[]>(capacity);
      std::memcpy(part.data.get(), bytes.data(), bytes.size());
      part.capacity = static_cast<std::uint32_t>(capacity);
    }
    for (const Entry& e : part.entries()) part.size += !Traits::free(e);
    // Probing ends at a free entry: a part without one is not ours.
    if (part.capacity > 0 && part.size == part.capacity) return false;
    next.entries_ += part.capacity;
    live += part.size;
  }
  if (!r.ok() || live != next.size_) return false;
  *this = std::move(next);
  return true;
}

}  // namespace newsflow::dedup::internal
