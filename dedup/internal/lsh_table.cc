#include "dedup/internal/lsh_table.h"

#include <algorithm>

#include "dedup/internal/codec.h"

namespace newsflow::dedup::internal {

void LshTable::insert(std::uint32_t key, std::uint32_t slot) {
  // Rehash at 80% use (live entries and tombstones) to a load of 60%.
  if ((size_ + tombstones_ + 1) * 10 > entries_.size() * 8) {
    rehash(std::max<std::size_t>(1024, (size_ + 1) * 5 / 3));
  }
  std::size_t i = home(key);
  while (entries_[i].slot != kEmpty && entries_[i].slot != kTombstone) i = next(i);
  if (entries_[i].slot == kTombstone) --tombstones_;
  entries_[i] = {key, slot};
  ++size_;
}

void LshTable::erase(std::uint32_t key, std::uint32_t slot) {
  if (entries_.empty()) return;
  for (std::size_t i = home(key); entries_[i].slot != kEmpty; i = next(i)) {
    if (entries_[i].key == key && entries_[i].slot == slot) {
      entries_[i].slot = kTombstone;
      --size_;
      ++tombstones_;
      return;
    }
  }
}

void LshTable::rehash(std::size_t capacity) {
  std::vector<Entry> old;
  old.swap(entries_);
  entries_.assign(capacity, Entry{0, kEmpty});
  size_ = 0;
  tombstones_ = 0;
  for (const Entry& e : old) {
    if (e.slot == kEmpty || e.slot == kTombstone) continue;
    std::size_t i = home(e.key);
    while (entries_[i].slot != kEmpty) i = next(i);
    entries_[i] = e;
    ++size_;
  }
}

void LshTable::save(Writer& w) const {
  w.array(entries_);
  w.varint(size_);
  w.varint(tombstones_);
}

bool LshTable::load(Reader& r) {
  if (!r.array(entries_)) return false;
  size_ = r.varint();
  tombstones_ = r.varint();
  std::size_t live = 0, dead = 0, empty = 0;
  for (const Entry& e : entries_) {
    live += e.slot != kEmpty && e.slot != kTombstone;
    dead += e.slot == kTombstone;
    empty += e.slot == kEmpty;
  }
  // Probing ends at an empty entry: a table without one is not ours.
  return r.ok() && live == size_ && dead == tombstones_ && (entries_.empty() || empty > 0);
}

}  // namespace newsflow::dedup::internal
