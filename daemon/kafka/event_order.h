#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace newsflow::daemon {

/// How long `EventTimeMerger` waits for a partition that may still deliver an older record.
struct EventOrderOptions {
  std::chrono::milliseconds max_idle{1000};
  /// How long a partition that expects watermarks (`expect_watermarks`) holds the others
  /// back before its writer's first: a writer starting up is slower than one that pauses, so
  /// the daemon makes this at least `writer_silence` (`order_options`).
  std::chrono::milliseconds first_watermark{60000};
  /// How long a partition whose writer has spoken (a watermark, a record) and then fell
  /// silent holds the others back: a writer that died is replaced (its input goes to another
  /// writer) within about this long, and the replacement's records still go in order.
  std::chrono::milliseconds writer_silence{60000};
  /// How long an empty partition known to lag (`set_behind`: the broker holds records it has
  /// not yet delivered) holds the others back: on a loaded machine one fetch can take longer
  /// than `max_idle`, and going on without the partition would reorder a backlog. Bounded so
  /// a partition whose leader is gone stalls the others only this long.
  std::chrono::milliseconds behind{30000};
  /// How long a record, once fetched, waits for an empty partition whose writer said it holds
  /// nothing (`advance` with `kEnd`). One writer hands a batch over into several partitions at
  /// once, and a reader's fetch may bring one partition's share 5-15 ms before another's: going
  /// on at once judged the first records of a live stream out of the order its extractor
  /// handed them over (broker test `broker_standby_takeover_*`). Kafka Streams'
  /// `max.task.idle.ms` is the same wait. 0: none.
  std::chrono::milliseconds end_slack{0};
  /// How long after it was written (its timestamp, `add`'s `written`) a record waits for an
  /// empty partition at its end (`end_of_partition`) whose stream time is older than the
  /// record's. A broker appends the partitions of one produce request one after another, and a
  /// fetch between two appends brings the later record first: going on at once judged 10 of
  /// 3,000 pages produced at 150/s out of order (`tests/bench/kafka_broker_kills.sh`). Counted
  /// from the write, not the fetch, so a backlog's records never wait and a live stream's wait
  /// at the same time. A live record's latency grows by at most this much. 0: none.
  std::chrono::milliseconds live_slack{0};
};

/// Hands out the records of several partitions in event-time order, as Kafka Streams does since
/// KIP-353: each partition's records wait in a small buffer, the record with the lowest event
/// time across the buffers goes first, and nothing goes while an assigned partition may still
/// deliver an older record: one with an empty buffer that has neither reported its end nor
/// stayed empty for `max_idle`; one its reader knows to hold more than it delivered (its fetch
/// lags: KIP-695's known lag) stays waited for up to `behind`. A backlog (an outage, a new consumer
/// group, a backfill) is then consumed in the order `replay` of the same stream reads it, while a
/// live stream, whose partitions sit at their end, passes each record on at once. The caller keeps
/// each buffer short (the daemon takes two records per partition; the rest wait in librdkafka's
/// partition queues). `Record` is an owning handle the caller destroys; no I/O, no threads: the
/// consumer loop drives it.
template <typename Record>
class EventTimeMerger {
 public:
  using Clock = std::chrono::steady_clock;
  using Partition = std::pair<std::string, int>;  // topic, partition

  using Options = EventOrderOptions;

  explicit EventTimeMerger(Options options) : options_(options) {}

  /// A newly assigned partition: nothing buffered, its end not yet seen.
  void assign(const Partition& p, Clock::time_point now) {
    State& s = partitions_[p];
    s.empty_since = now;
    s.at_end = false;
  }

  /// A revoked partition: its buffered records come back to be destroyed (uncommitted, so the
  /// new owner reads them again).
  std::vector<Record> revoke(const Partition& p) {
    std::vector<Record> out;
    auto it = partitions_.find(p);
    if (it == partitions_.end()) return out;
    for (auto& item : it->second.buffer) out.push_back(std::move(item.record));
    buffered_bytes_ -= it->second.bytes;
    partitions_.erase(it);
    return out;
  }

  /// Every record held, for a shutdown.
  std::vector<Record> clear() {
    std::vector<Record> out;
    for (auto& [p, s] : partitions_) {
      for (auto& item : s.buffer) out.push_back(std::move(item.record));
    }
    partitions_.clear();
    buffered_bytes_ = 0;
    return out;
  }

  /// A record fetched from `p` (in offset order) with its event time, fetched at `fetched`,
  /// written (its timestamp, on this clock) at `written`.
  void add(const Partition& p, Record record, std::int64_t event_time, std::size_t bytes,
           Clock::time_point fetched = Clock::now(),
           Clock::time_point written = Clock::time_point::min()) {
    State& s = partitions_[p];
    s.heard = true;  // a record is as good a sign of life as a watermark
    // Its writer's last watermark spoke of what it held before this record: what follows is
    // known again only from the next one (or from the records themselves, `stream_time`).
    s.watermark = kNever;
    s.buffer.push_back({std::move(record), event_time, bytes, fetched, written});
    s.bytes += bytes;
    s.at_end = false;
    buffered_bytes_ += bytes;
  }

  /// Puts a record handed out by `next` back in front of its partition's buffer (its batch is
  /// processed again). Give back a batch's records last first.
  void give_back(const Partition& p, Record record, std::int64_t event_time, std::size_t bytes) {
    auto it = partitions_.find(p);
    if (it == partitions_.end()) return;  // revoked meanwhile: the caller destroys it
    State& s = it->second;
    // It waited for its writer's other partitions when it was first handed out.
    s.buffer.push_front(
        {std::move(record), event_time, bytes, Clock::time_point::min(), Clock::time_point::min()});
    s.bytes += bytes;
    buffered_bytes_ += bytes;
  }

  /// True when `p` is still assigned (a record given back to a revoked partition is not held).
  bool assigned(const Partition& p) const { return partitions_.count(p) > 0; }

  /// The partition has delivered everything it holds for now (librdkafka's partition EOF).
  void end_of_partition(const Partition& p) {
    auto it = partitions_.find(p);
    if (it != partitions_.end()) it->second.at_end = true;
  }

  /// Whether the reader knows `p` to hold records it has not delivered yet (its position is
  /// below the partition's end as last fetched, or nothing was fetched yet). Only looked at
  /// while its buffer is empty and its end not reached.
  void set_behind(const Partition& p, bool behind) {
    auto it = partitions_.find(p);
    if (it != partitions_.end()) it->second.behind = behind;
  }

  /// The partition's writer says it will write nothing older than `watermark` (kEnd: nothing
  /// it holds now; what comes later is newer). From then on the partition's end of data means
  /// nothing: while empty it holds back exactly the records newer than its watermark, and for
  /// at most `writer_silence` after it last heard from its writer. Used where the records are
  /// written while they are read (the dedup role reading what extractors hand over).
  void advance(const Partition& p, std::int64_t watermark, Clock::time_point now) {
    auto it = partitions_.find(p);
    if (it == partitions_.end()) return;
    it->second.watermarked = true;
    it->second.heard = true;
    it->second.watermark = watermark;
    it->second.empty_since = now;  // a sign of life
  }

  /// Marks a partition as written by a writer that sends watermarks (`advance`): until the
  /// first arrives (or a record) it holds everything back for `first_watermark`.
  void expect_watermarks(const Partition& p) {
    auto it = partitions_.find(p);
    if (it != partitions_.end()) it->second.watermarked = true;
  }

  /// What this reader can promise about `p` to a reader downstream: the time of its next
  /// record, kEnd when it sits at its end with nothing held, or nothing when it may still
  /// deliver anything (empty, its end not seen).
  std::optional<std::int64_t> watermark_of(const Partition& p) const {
    const auto it = partitions_.find(p);
    if (it == partitions_.end()) return std::nullopt;
    const State& s = it->second;
    if (!s.buffer.empty()) return s.buffer.front().event_time;
    if (s.at_end) return kEnd;
    return std::nullopt;
  }

  /// No record is older than this: a watermark for "nothing held, the rest comes later".
  static constexpr std::int64_t kEnd = std::numeric_limits<std::int64_t>::max();

  /// The record with the lowest event time, when no assigned partition may still deliver an
  /// older one; `low_watermark`, when given, receives the lowest time any partition may still
  /// deliver (the record's own time, or older for a partition that went idle).
  std::optional<Record> next(Clock::time_point now, std::int64_t* low_watermark = nullptr) {
    State* best = nullptr;
    const Partition* best_partition = nullptr;
    std::int64_t low = std::numeric_limits<std::int64_t>::max();
    bool watermarked_empty = false;
    bool ended_empty = false;
    bool passed_over = false;  // a partition that may still deliver an older record
    for (auto& [p, s] : partitions_) {
      if (s.buffer.empty()) {
        if (s.watermarked) {
          watermarked_empty = true;  // judged against the best record below
          continue;
        }
        if (s.at_end) {
          ended_empty = true;  // held back for the best record's slack below
          continue;
        }
        if (now - s.empty_since < idle_patience(s)) return std::nullopt;  // wait for it
        // Idle too long: go on without it, but keep its stream time as the low watermark.
        if (s.stream_time != kNever) low = std::min(low, s.stream_time);
        passed_over = true;
        continue;
      }
      // Strictly lower wins: ties go to the first partition in (topic, partition) order.
      if (!best || s.buffer.front().event_time < best->buffer.front().event_time) {
        best = &s;
        best_partition = &p;
      }
    }
    if (!best) return std::nullopt;
    if (ended_empty && in_live_slack(best->buffer.front(), now)) {
      const std::int64_t t = best->buffer.front().event_time;
      for (const auto& [p, s] : partitions_) {
        if (!s.buffer.empty() || s.watermarked || !s.at_end) continue;
        // Its records come in order: once past `t` it cannot deliver an older one.
        if (s.stream_time < t || (s.stream_time == t && p < *best_partition)) return std::nullopt;
      }
    }
    if (watermarked_empty) {
      const std::int64_t t = best->buffer.front().event_time;
      for (auto& [p, s] : partitions_) {
        if (!s.buffer.empty() || !s.watermarked) continue;
        // It may still deliver a record that goes first: wait, unless its writer fell silent.
        // (Its records come in order: nothing older than what it already delivered.)
        const std::int64_t w = std::max(s.watermark, s.stream_time);
        const bool may_precede = w < t || (w == t && p < *best_partition);
        const auto patience = s.heard ? options_.writer_silence : options_.first_watermark;
        if (may_precede && now - s.empty_since < patience) return std::nullopt;
        // Its writer's batch that brought the best record may have a share for it still on
        // its way.
        if (w == kEnd && in_slack(best->buffer.front(), now)) return std::nullopt;
        passed_over = passed_over || may_precede;
        if (w != kNever && w != kEnd) low = std::min(low, w);
      }
    }
    Item item = std::move(best->buffer.front());
    best->buffer.pop_front();
    best->bytes -= item.bytes;
    buffered_bytes_ -= item.bytes;
    best->stream_time = std::max(best->stream_time, item.event_time);
    if (best->buffer.empty()) best->empty_since = now;
    if (low_watermark) *low_watermark = std::min(low, item.event_time);
    if (passed_over) ++passed_over_;
    return std::move(item.record);
  }

  /// True when some assigned partition holds the others back (empty, not at its end, not idle
  /// for long): the loop should poll again soon.
  bool waiting(Clock::time_point now) const {
    bool fresh = false;       // a record still waits out end_slack
    bool fresh_live = false;  // ... or live_slack
    for (const auto& [p, s] : partitions_) {
      if (s.buffer.empty()) continue;
      fresh = fresh || in_slack(s.buffer.front(), now);
      fresh_live = fresh_live || in_live_slack(s.buffer.front(), now);
    }
    for (const auto& [p, s] : partitions_) {
      if (fresh && s.buffer.empty() && s.watermarked && s.watermark == kEnd) return true;
      if (fresh_live && s.buffer.empty() && !s.watermarked && s.at_end) return true;
      const auto patience = !s.watermarked ? idle_patience(s)
                            : s.heard      ? options_.writer_silence
                                           : options_.first_watermark;
      if (!s.buffer.empty() || now - s.empty_since >= patience) continue;
      if (s.watermarked ? s.watermark != kEnd : !s.at_end) return true;
    }
    return false;
  }

  std::size_t buffered_bytes() const { return buffered_bytes_; }
  std::size_t buffered_records() const {
    std::size_t n = 0;
    for (const auto& [p, s] : partitions_) n += s.buffer.size();
    return n;
  }
  std::size_t buffered_records(const Partition& p) const {
    const auto it = partitions_.find(p);
    return it == partitions_.end() ? 0 : it->second.buffer.size();
  }
  std::size_t partitions() const { return partitions_.size(); }

  /// Records handed out while a partition that might still have delivered an older one was
  /// passed over (idle for `max_idle`, lagging for `behind`, or its writer silent): each may be
  /// out of event-time order. A backlog that counts many wants a larger `max_idle`.
  std::uint64_t passed_over() const { return passed_over_; }

 private:
  static constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::min();
  struct State;
  std::chrono::milliseconds idle_patience(const State& s) const {
    return s.behind ? std::max(options_.behind, options_.max_idle) : options_.max_idle;
  }
  struct Item {
    Record record;
    std::int64_t event_time;
    std::size_t bytes;
    Clock::time_point fetched;
    Clock::time_point written;
  };
  bool in_slack(const Item& item, Clock::time_point now) const {
    return options_.end_slack.count() > 0 && item.fetched != Clock::time_point::min() &&
           now - item.fetched < options_.end_slack;
  }
  bool in_live_slack(const Item& item, Clock::time_point now) const {
    return options_.live_slack.count() > 0 && item.written != Clock::time_point::min() &&
           now - item.written < options_.live_slack;
  }
  struct State {
    std::deque<Item> buffer;
    std::size_t bytes = 0;
    bool at_end = false;
    bool behind = false;  // its fetch lags: more records are on the broker
    Clock::time_point empty_since{};
    std::int64_t stream_time = kNever;  // highest event time handed out
    bool watermarked = false;           // its writer sends watermarks (`advance`)
    bool heard = false;                 // ... and has sent one
    std::int64_t watermark = kNever;    // nothing older than this is still to come
  };

  Options options_;
  std::map<Partition, State> partitions_;
  std::size_t buffered_bytes_ = 0;
  std::uint64_t passed_over_ = 0;
};

}  // namespace newsflow::daemon
