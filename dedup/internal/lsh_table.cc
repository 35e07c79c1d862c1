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
    rehash(std::max(kMinCapacity, (size_ + 1) * 5 / 3));
  }
  place({mix(key), slot});
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
  const std::uint32_t mixed = mix(key);
  std::size_t i = home(mixed);
  for (std::size_t d = 0;; i = next(i), ++d) {
    if (entries_[i].slot == kEmpty || distance(i) < d) return;  // not held
    if (entries_[i].key == mixed && entries_[i].slot == slot) break;
  }
  // Backward shift: the entries after it that are not at home move one place back.
  for (std::size_t j = next(i); entries_[j].slot != kEmpty && distance(j) > 0; j = next(j)) {
    entries_[i] = entries_[j];
    i = j;
  }
  entries_[i].slot = kEmpty;
  --size_;
  // Shrunk below 45% full to 70%, so a window that shrinks gives its memory back.
  if (entries_.size() > kMinCapacity && size_ * 20 < entries_.size() * 9) {
    rehash(std::max(kMinCapacity, size_ * 10 / 7));
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
