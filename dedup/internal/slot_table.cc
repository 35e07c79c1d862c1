#include "dedup/internal/slot_table.h"

#include <algorithm>
#include <utility>

#include "dedup/internal/codec.h"

namespace newsflow::dedup::internal {

SlotTable::SlotTable() : parts_(kParts) {}

void SlotTable::insert(std::uint32_t key, std::uint32_t slot) {
  const std::uint32_t mixed = mix(key);
  Part& part = parts_[mixed >> 16];
  resizing(part, [](Part& p) { p.reserve_one(85, 70); });
  Probe::place(part.entries(), Entry(static_cast<std::uint16_t>(mixed), slot));
  ++part.size;
  ++size_;
}

void SlotTable::reserve(std::span<const std::uint32_t> more) {
  for (std::size_t p = 0; p < parts_.size() && p < more.size(); ++p) {
    if (more[p] == 0) continue;
    Part& part = parts_[p];
    const std::size_t held = std::size_t{part.size} + more[p];
    if (held * 100 <= std::size_t{part.capacity} * kReservedPercent) continue;
    resizing(part, [held](Part& x) {
      x.resize(std::max(Part::kMinCapacity, held * 100 / kReservedPercent + 1));
    });
  }
}

void SlotTable::erase(std::uint32_t key, std::uint32_t slot) {
  const std::uint32_t mixed = mix(key);
  Part& part = parts_[mixed >> 16];
  const std::span<Entry> entries = part.entries();
  const auto low = static_cast<std::uint16_t>(mixed);
  const std::size_t i = Probe::probe(entries, Traits::hash_of(low), [&](std::size_t k) {
    return entries[k].low() == low && entries[k].slot() == slot;
  });
  if (i == entries.size()) return;  // not held
  Probe::erase_at(entries, i);
  --part.size;
  --size_;
  resizing(part, [](Part& p) { p.shrink_to_fit(); });
}

void SlotTable::save(Writer& w) const {
  w.varint(size_);
  for (const Part& part : parts_) part.save(w);
}

bool SlotTable::load(Reader& r) {
  SlotTable next;
  next.size_ = r.varint();
  std::size_t live = 0;
  for (Part& part : next.parts_) {
    if (!r.ok() || !part.load(r)) return false;
    next.entries_ += part.capacity;
    live += part.size;
  }
  if (!r.ok() || live != next.size_) return false;
  *this = std::move(next);
  return true;
}

}  // namespace newsflow::dedup::internal
