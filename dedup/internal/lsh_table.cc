#include "dedup/internal/lsh_table.h"

#include <algorithm>
#include <utility>

#include "dedup/internal/codec.h"

namespace newsflow::dedup::internal {

namespace {
constexpr std::size_t kMinCapacity = 1024;
}  // namespace

void LshTable::insert(std::uint32_t key, std::uint32_t slot) {
  // Grown at 85% full to 60% (fewer, longer moves than growing by less: each costs a pass).
  if ((size_ + 1) * 20 > entries_.size() * 17) {
    Probe::rebuild(entries_, std::max(kMinCapacity, (size_ + 1) * 5 / 3));
  }
  Probe::place(entries_, {mix(key), slot});
  ++size_;
}

void LshTable::erase(std::uint32_t key, std::uint32_t slot) {
  const std::uint32_t mixed = mix(key);
  const std::size_t i = Probe::probe(entries_, mixed, [&](std::size_t k) {
    return entries_[k].key == mixed && entries_[k].slot == slot;
  });
  if (i == entries_.size()) return;  // not held
  Probe::erase_at(entries_, i);
  --size_;
  // Shrunk below 45% full to 70%, so a window that shrinks gives its memory back.
  if (entries_.size() > kMinCapacity && size_ * 20 < entries_.size() * 9) {
    Probe::rebuild(entries_, std::max(kMinCapacity, size_ * 10 / 7));
  }
}

void LshTable::save(Writer& w) const {
  w.array(entries_);
  w.varint(size_);
}

bool LshTable::load(Reader& r) {
  std::vector<Entry> entries;
  if (!r.array(entries)) return false;
  const std::size_t size = r.varint();
  std::size_t live = 0;
  for (const Entry& e : entries) live += e.slot != kEmpty;
  // Probing ends at an empty entry: a table without one is not ours.
  if (!r.ok() || live != size || (!entries.empty() && live == entries.size())) return false;
  entries_ = std::move(entries);
  size_ = size;
  return true;
}

}  // namespace newsflow::dedup::internal
