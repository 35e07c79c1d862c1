#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <queue>
#include <unordered_map>
#include <utility>
#include <vector>

namespace newsflow::daemon {

/// Hands out the state records of several changelog partitions in `seq` order (the order the
/// articles were judged in): each partition's records wait in a lane of their own, in the
/// order of their offsets, and the lowest `seq` at the lanes' fronts goes first (ties: the
/// lower partition), never while a lane that has not reached its end is empty (it may still
/// deliver a lower one). A heap of the lanes' fronts makes each record O(log partitions): a
/// restore reads a thousand partitions and more, where a pass over every partition per record
/// took longer than applying it. `Record` is any movable value. No I/O, no threads.
template <typename Record>
class SeqMerge {
 public:
  /// A partition to read: nothing goes while it is empty and its end is not reached.
  void add_lane(int partition) { lane(partition); }

  /// A record of `partition`, after those added before it.
  void add(int partition, Record record, std::uint64_t seq) {
    Lane& l = lane(partition);
    if (l.records.empty()) {
      fronts_.push({seq, partition});
      if (!l.ended) --waiting_;
    }
    l.records.push_back({seq, std::move(record)});
    ++size_;
  }

  /// The partition is read to its end: it holds nothing back from now on (records it still
  /// gets go in order with the others).
  void end(int partition) {
    Lane& l = lane(partition);
    if (l.ended) return;
    l.ended = true;
    ++ended_;
    if (l.records.empty()) --waiting_;
  }
  bool ended(int partition) const {
    const auto it = index_.find(partition);
    return it != index_.end() && lanes_[it->second].ended;
  }

  /// The record of the lowest `seq`, when no lane may still deliver a lower one.
  std::optional<Record> next() {
    if (waiting_ > 0 || fronts_.empty()) return std::nullopt;
    const auto [seq, partition] = fronts_.top();
    fronts_.pop();
    Lane& l = lanes_[index_.at(partition)];
    Record r = std::move(l.records.front().second);
    l.records.pop_front();
    --size_;
    if (!l.records.empty()) {
      fronts_.push({l.records.front().first, partition});
    } else if (!l.ended) {
      ++waiting_;
    }
    return r;
  }

  /// Lanes empty that have not reached their end (nothing goes while there is one).
  std::size_t waiting() const { return waiting_; }
  /// Records held, in all lanes and in one.
  std::size_t size() const { return size_; }
  std::size_t size(int partition) const {
    const auto it = index_.find(partition);
    return it == index_.end() ? 0 : lanes_[it->second].records.size();
  }
  /// Every lane read to its end; and all handed out.
  bool all_ended() const { return ended_ == lanes_.size(); }
  bool done() const { return all_ended() && size_ == 0; }

  /// Calls `f(seq, record)` for every record held (to change what they hold, not their order).
  template <typename F>
  void for_each(F&& f) {
    for (Lane& l : lanes_) {
      for (auto& [seq, record] : l.records) f(seq, record);
    }
  }

  /// Every record held goes; the lanes stay as they were (waiting unless ended).
  void clear() {
    for (Lane& l : lanes_) {
      if (!l.records.empty() && !l.ended) ++waiting_;
      l.records.clear();
    }
    fronts_ = {};
    size_ = 0;
  }

 private:
  struct Lane {
    std::deque<std::pair<std::uint64_t, Record>> records;
    bool ended = false;
  };
  Lane& lane(int partition) {
    const auto [it, added] = index_.try_emplace(partition, lanes_.size());
    if (added) {
      lanes_.emplace_back();
      ++waiting_;
    }
    return lanes_[it->second];
  }

  std::vector<Lane> lanes_;
  std::unordered_map<int, std::size_t> index_;  // partition -> lane
  // (seq, partition) of each lane's front record, the lowest on top.
  std::priority_queue<std::pair<std::uint64_t, int>, std::vector<std::pair<std::uint64_t, int>>,
                      std::greater<>>
      fronts_;
  std::size_t waiting_ = 0;
  std::size_t ended_ = 0;
  std::size_t size_ = 0;
};

}  // namespace newsflow::daemon
