#include "dedup/internal/lsh_table.h"

namespace newsflow::dedup::internal {

void LshTable::insert(std::uint32_t key, std::uint32_t slot) {
  // Rehash at 80% use (live entries and tombstones) to a load of at most 50%.
  if ((size_ + tombstones_ + 1) * 10 > entries_.size() * 8) {
    std::size_t capacity = 1024;
    while (capacity < (size_ + 1) * 2) capacity *= 2;
    rehash(capacity);
  }
  const std::size_t mask = entries_.size() - 1;
  std::size_t i = home(key);
  while (entries_[i].slot != kEmpty && entries_[i].slot != kTombstone) i = (i + 1) & mask;
  if (entries_[i].slot == kTombstone) --tombstones_;
  entries_[i] = {key, slot};
  ++size_;
}

void LshTable::erase(std::uint32_t key, std::uint32_t slot) {
  if (entries_.empty()) return;
  const std::size_t mask = entries_.size() - 1;
  for (std::size_t i = home(key); entries_[i].slot != kEmpty; i = (i + 1) & mask) {
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
  const std::size_t mask = capacity - 1;
  for (const Entry& e : old) {
    if (e.slot == kEmpty || e.slot == kTombstone) continue;
    std::size_t i = home(e.key);
    while (entries_[i].slot != kEmpty) i = (i + 1) & mask;
    entries_[i] = e;
    ++size_;
  }
}

}  // namespace newsflow::dedup::internal
