#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>

namespace newsflow::daemon {

/// Offsets of records taken in order and finished in any order: what may be committed per
/// partition is the offset of the oldest record not finished yet (or after the newest taken,
/// when all are finished), so a restart never skips a record that is not done. Not
/// thread-safe.
class OffsetLedger {
 public:
  using Partition = std::pair<std::string, int>;

  /// A record at `offset` of `p` was taken and is not finished.
  void taken(const Partition& p, std::int64_t offset) {
    State& s = partitions_[p];
    s.open.insert(offset);
    s.next = std::max(s.next, offset + 1);
  }

  /// The record at `offset` of `p` is finished (its results are durable).
  void finished(const Partition& p, std::int64_t offset) {
    const auto it = partitions_.find(p);
    if (it != partitions_.end()) it->second.open.erase(offset);
  }

  /// The offset to commit for `p` (-1: nothing taken).
  std::int64_t committable(const Partition& p) const {
    const auto it = partitions_.find(p);
    if (it == partitions_.end()) return -1;
    const State& s = it->second;
    return s.open.empty() ? s.next : *s.open.begin();
  }

  /// Whether the record at `offset` of `p` is the oldest not finished there while a record after
  /// it is finished: the one thing that keeps that record's offset from being committed.
  bool holds_back(const Partition& p, std::int64_t offset) const {
    const auto it = partitions_.find(p);
    if (it == partitions_.end() || it->second.open.empty()) return false;
    const State& s = it->second;
    if (*s.open.begin() != offset) return false;
    // Taken after it: next - offset - 1 records, of which open.size() - 1 are not finished.
    return s.next - offset - 1 > static_cast<std::int64_t>(s.open.size()) - 1;
  }

  /// Every partition with its committable offset that moved since the last `committed`.
  std::map<Partition, std::int64_t> to_commit() const {
    std::map<Partition, std::int64_t> out;
    for (const auto& [p, s] : partitions_) {
      const std::int64_t c = s.open.empty() ? s.next : *s.open.begin();
      if (c > s.committed) out.emplace(p, c);
    }
    return out;
  }

  /// `offsets` (from `to_commit`) are committed.
  void committed(const std::map<Partition, std::int64_t>& offsets) {
    for (const auto& [p, c] : offsets) {
      const auto it = partitions_.find(p);
      if (it != partitions_.end()) it->second.committed = std::max(it->second.committed, c);
    }
  }

  /// `p` is no longer this consumer's: what was open there is someone else's now.
  void forget(const Partition& p) { partitions_.erase(p); }
  void clear() { partitions_.clear(); }

  /// Records taken and not finished, over all partitions.
  std::size_t open() const {
    std::size_t n = 0;
    for (const auto& [p, s] : partitions_) n += s.open.size();
    return n;
  }

 private:
  struct State {
    std::set<std::int64_t> open;
    std::int64_t next = 0;
    std::int64_t committed = -1;
  };
  std::map<Partition, State> partitions_;
};

}  // namespace newsflow::daemon
