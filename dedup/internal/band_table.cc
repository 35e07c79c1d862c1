#include "dedup/internal/band_table.h"

#include <algorithm>
#include <utility>

#include "dedup/internal/codec.h"

namespace newsflow::dedup::internal {

namespace {
constexpr std::size_t kMinCapacity = 8;
}  // namespace

BandTable::BandTable() : parts_(kParts), sizes_(kParts, 0) {}

void BandTable::resize(std::size_t p, std::size_t capacity) {
  std::vector<Entry>& part = parts_[p];
  entries_ -= part.size();
  if (capacity == 0) {
    std::vector<Entry>().swap(part);
  } else {
    Probe::rebuild(part, capacity);
  }
  entries_ += part.size();
}

void BandTable::insert(std::uint32_t key, std::uint32_t slot) {
  const std::uint32_t mixed = mix(key);
  const std::size_t p = mixed >> 16;
  std::vector<Entry>& part = parts_[p];
  // Grown at 85% full to 60%, as the other tables.
  if ((sizes_[p] + 1) * 20 > part.size() * 17) {
    resize(p, std::max(kMinCapacity, (sizes_[p] + 1) * std::size_t{5} / 3));
  }
  Probe::place(part, {static_cast<std::uint16_t>(mixed), static_cast<std::uint16_t>(slot),
                      static_cast<std::uint16_t>(slot >> 16)});
  ++sizes_[p];
  ++size_;
}

void BandTable::erase(std::uint32_t key, std::uint32_t slot) {
  const std::uint32_t mixed = mix(key);
  const std::size_t p = mixed >> 16;
  std::vector<Entry>& part = parts_[p];
  const auto low = static_cast<std::uint16_t>(mixed);
  const std::size_t i = Probe::probe(part, Traits::hash_of(low), [&](std::size_t k) {
    return part[k].low == low && part[k].slot() == slot;
  });
  if (i == part.size()) return;  // not held
  Probe::erase_at(part, i);
  --sizes_[p];
  --size_;
  // An empty part gives its entries back; one below 45% full shrinks to 70%.
  if (sizes_[p] == 0) {
    resize(p, 0);
  } else if (part.size() > kMinCapacity && sizes_[p] * 20 < part.size() * 9) {
    resize(p, std::max(kMinCapacity, sizes_[p] * std::size_t{10} / 7));
  }
}

void BandTable::save(Writer& w) const {
  w.varint(size_);
  for (const std::vector<Entry>& part : parts_) w.array(part);
}

bool BandTable::load(Reader& r) {
  BandTable next;
  next.size_ = r.varint();
  std::size_t live = 0;
  for (std::size_t p = 0; p < kParts && r.ok(); ++p) {
    std::vector<Entry>& part = next.parts_[p];
    if (!r.array(part)) return false;
    std::uint32_t held = 0;
    for (const Entry& e : part) held += !Traits::free(e);
    // Probing ends at a free entry: a part without one is not ours.
    if (!part.empty() && held == part.size()) return false;
    next.sizes_[p] = held;
    next.entries_ += part.size();
    live += held;
  }
  if (!r.ok() || live != next.size_) return false;
  *this = std::move(next);
  return true;
}

}  // namespace newsflow::dedup::internal
