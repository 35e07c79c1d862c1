#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "daemon/kafka/kafka.h"
#include "dedup/state.h"
#include "tl/expected.hpp"

typedef struct rd_kafka_message_s rd_kafka_message_t;

namespace newsflow::daemon {

/// A hot standby's view of the state changelog: reads every partition of `topic` on from where
/// the restore ended and applies the records in the order the owner judged the articles
/// (`seq`), so the standby's window and stories stay those of the owner, a few milliseconds
/// behind. Records come from several partitions: one whose predecessor has not arrived waits up
/// to `hold` for it (a predecessor may also be gone for good: compacted away, or never
/// acknowledged), then goes. Not thread-safe: the run loop owns it.
class ChangelogTail {
 public:
  using Clock = std::chrono::steady_clock;
  using Apply = std::function<void(const dedup::ArticleState&)>;

  /// `consumer`: a consumer of its own (it is assigned, never subscribed); `positions`: the
  /// next offset of each partition (partitions missing start at their beginning); `last_seq`:
  /// the last record the restore applied.
  static tl::expected<std::unique_ptr<ChangelogTail>, std::string> open(
      KafkaHandle consumer, const std::string& topic, const std::map<int, std::int64_t>& positions,
      std::uint64_t last_seq, std::chrono::milliseconds hold);
  ~ChangelogTail();
  ChangelogTail(const ChangelogTail&) = delete;
  ChangelogTail& operator=(const ChangelogTail&) = delete;

  /// Applies what has arrived, in `seq` order; returns the number of records applied. A record
  /// that belongs before one already applied goes at once (`late`).
  std::size_t poll(const Apply& apply);

  /// Reads every partition up to its end as of now and applies all of it in `seq` order (the
  /// owner is gone: nothing older can arrive any more). Returns the records applied.
  tl::expected<std::size_t, std::string> catch_up(const Apply& apply,
                                                  std::chrono::milliseconds timeout);

  std::uint64_t last_seq() const { return last_seq_; }
  /// Records read and not yet applied.
  std::size_t pending() const { return buffer_.size(); }
  /// Records the partitions hold beyond what was read (from the consumer's statistics of the
  /// fetch positions; refreshed by `poll`).
  std::int64_t behind() const { return behind_; }
  /// Records applied after one with a higher `seq`.
  std::uint64_t late() const { return late_; }

 private:
  ChangelogTail(KafkaHandle consumer, std::string topic, std::uint64_t last_seq,
                std::chrono::milliseconds hold)
      : consumer_(std::move(consumer)),
        topic_(std::move(topic)),
        last_seq_(last_seq),
        hold_(hold) {}
  // Files one polled message (and takes it over).
  void file(rd_kafka_message_t* m);
  std::size_t apply_ready(const Apply& apply, bool everything);

  struct Held {
    rd_kafka_message_t* msg;
    Clock::time_point arrived;
  };
  KafkaHandle consumer_;
  std::string topic_;
  std::uint64_t last_seq_;
  std::chrono::milliseconds hold_;
  std::map<std::uint64_t, Held> buffer_;  // by seq
  std::map<int, std::int64_t> position_;  // partition -> next offset to read
  std::int64_t behind_ = 0;
  std::uint64_t late_ = 0;
  Clock::time_point last_lag_check_{};
};

}  // namespace newsflow::daemon
