#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "daemon/kafka/ordered_work.h"
#include "dedup/state.h"

namespace newsflow::daemon {

/// Decoded states given back once applied, for later records to be decoded into
/// (`dedup::decode_state_into`): their strings and lists keep their room, so a record decoded
/// allocates next to nothing, and nothing decoded is freed by a thread other than the one that
/// made it. Keeps at most `most`. Thread-safe.
class StatePool {
 public:
  explicit StatePool(std::size_t most = 4096) : most_(most) {}
  /// A state given back, or a new one.
  dedup::ArticleState take() {
    std::lock_guard lock(mu_);
    if (spare_.empty()) return {};
    dedup::ArticleState s = std::move(spare_.back());
    spare_.pop_back();
    return s;
  }
  void give(dedup::ArticleState state) {
    std::lock_guard lock(mu_);
    if (spare_.size() < most_) spare_.push_back(std::move(state));
  }

 private:
  const std::size_t most_;
  std::mutex mu_;
  std::vector<dedup::ArticleState> spare_;
};

/// Decodes state records (`dedup::decode_state` of each record's `value`) on a thread of its own
/// while the restore applies the ones before them: records go in in the order they are to be
/// applied and come out, decoded, in that same order, so what the restore applies is what a
/// decode on its own thread would give, record for record (`OrderedWork`). `Record` is any
/// movable type with a `std::string value` (freed where the record is: by the thread that made
/// it, whose heap it is on, not contending with it for that heap's lock).
template <typename Record>
class DecodeAhead {
 public:
  struct Item {
    Record record;
    std::optional<dedup::ArticleState> state;  // nothing: no value, or not a record of ours
  };

  /// `batch`: records handed over at a time; `pool`, when given: states are decoded into the
  /// ones it holds (the caller gives them back once applied).
  explicit DecodeAhead(std::size_t batch = 256, StatePool* pool = nullptr)
      : work_([pool](Item& item) { decode(item, pool); }, /*keep=*/true, batch) {}

  /// The next record to apply; a full batch goes to the decoding thread.
  void push(Record record) { work_.push({std::move(record), std::nullopt}); }
  /// The records pushed since the last batch went are handed over too.
  void flush() { work_.flush(); }
  /// The next record in the order pushed, decoded (`OrderedWork::pop`).
  std::optional<Item> pop(bool wait) { return work_.pop(wait); }
  /// Records pushed and not popped yet.
  std::size_t in_flight() const { return work_.in_flight(); }
  /// Nothing handed over is left to pop (nothing is decoded until the next `flush`).
  bool idle() { return work_.idle(); }

 private:
  static void decode(Item& item, StatePool* pool) {
    if (item.record.value.empty()) return;
    dedup::ArticleState state = pool ? pool->take() : dedup::ArticleState();
    if (dedup::decode_state_into(item.record.value, state)) {
      item.state = std::move(state);
    } else if (pool) {
      pool->give(std::move(state));
    }
  }

  OrderedWork<Item> work_;
};

}  // namespace newsflow::daemon
