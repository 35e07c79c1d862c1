#include "dedup/internal/lsh_table.h"

#include <algorithm>
#include <utility>

#include "dedup/internal/codec.h"

namespace newsflow::dedup::internal {

namespace {
constexpr std::size_t kMinCapacity = 1024;
}  // namespace

void LshTable::insert(std::uint32_t key, std::uint32_t slot) {
  // Grown at 90% full to 72% (by a quarter).
  if ((size_ + 1) * 10 > entries_.size() * 9) {
    rehash(std::max(kMinCapacity, (size_ + 1) * 25 / 18));
  }
  place({key, slot});
  ++size_;
}

void LshTable::place(Entry e) {
  // Robin Hood: an entry further from its home takes the place of one nearer to its own.
  std::size_t i = home(e.key);
  for (std::size_t d = 0;; i = next(i), ++d) {
    if (entries_[i].slot == kEmpty) {
      entries_[i] = e;
      return;
    }
    if (const std::size_t held = distance(i); held < d) {
      std::swap(entries_[i], e);
      d = held;
    }
  }
}

void LshTable::erase(std::uint32_t key, std::uint32_t slot) {
  if (entries_.empty()) return;
  std::size_t i = home(key);
  for (std::size_t d = 0;; i = next(i), ++d) {
    if (entries_[i].slot == kEmpty || distance(i) < d) return;  // not held
    if (entries_[i].key == key && entries_[i].slot == slot) break;
  }
  // Backward shift: the entries after it that are not at home move one place back.
  for (std::size_t j = next(i); entries_[j].slot != kEmpty && distance(j) > 0; j = next(j)) {
    entries_[i] = entries_[j];
    i = j;
  }
  entries_[i].slot = kEmpty;
  --size_;
  // Shrunk below 45% full to 72%, so a window that shrinks gives its memory back.
  if (entries_.size() > kMinCapacity && size_ * 20 < entries_.size() * 9) {
    rehash(std::max(kMinCapacity, size_ * 25 / 18));
  }
}

void LshTable::rehash(std::size_t capacity) {
  std::vector<Entry> old;
  old.swap(entries_);
  entries_.assign(capacity, Entry{0, kEmpty});
  for (const Entry& e : old) {
    if (e.slot != kEmpty) place(e);
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
