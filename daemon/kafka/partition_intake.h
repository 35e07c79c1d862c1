#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "daemon/kafka/event_order.h"
#include "daemon/kafka/kafka.h"
#include "daemon/kafka/record_collector.h"
#include "tl/expected.hpp"

typedef struct rd_kafka_message_s rd_kafka_message_t;
typedef struct rd_kafka_s rd_kafka_t;
typedef struct rd_kafka_queue_s rd_kafka_queue_t;

namespace newsflow::daemon {

class Metrics;
class StateStore;

/// The event-time order's patience as `kafka` sets it.
EventOrderOptions order_options(const config::KafkaConfig& kafka);

/// The input consumer and the order its records are taken in: the role's consumer group (or,
/// a dedup owner, every partition assigned by hand), one librdkafka queue per assigned partition,
/// the event-time merge across them, and the batches collected from that order. Revokes are
/// told to a listener, which lets go of what it holds of those partitions; the intake drops
/// what it holds itself (the merge's buffers, the batch being collected).
///
/// The run loop owns it (not thread-safe), except `assigned()`. Rebalances and commit answers
/// are served inside its polls, so the listener is called from `collect` and `close`.
class PartitionIntake {
 public:
  using Clock = std::chrono::steady_clock;
  using Partition = std::pair<std::string, int>;  // topic, partition

  struct Listener {
    /// Partitions are about to be revoked: outputs of judged batches are acknowledged and their
    /// offsets committed now, so the new owner does not judge them again.
    std::function<void()> before_revoke;
    /// A partition is revoked: the listener drops what it holds of it (uncommitted: its new
    /// owner reads it again) and returns how many messages it dropped.
    std::function<std::size_t(const Partition&)> revoked;
    /// The answer to an asynchronous commit (`err`, an `rd_kafka_topic_partition_list_t*`).
    std::function<void(int err, void* offsets)> commit_answered;
    /// Outputs are on their way or offsets wait to be committed: an empty collect returns
    /// early so the loop serves them.
    std::function<bool()> busy;
  };

  /// `store` tells a dedup role's input handed over again (its handover ledger); `stop` ends a
  /// collect.
  PartitionIntake(const config::Config& config, Metrics& metrics, const StateStore& store,
                  const std::atomic<bool>& stop, Listener listener);
  ~PartitionIntake();
  PartitionIntake(const PartitionIntake&) = delete;
  PartitionIntake& operator=(const PartitionIntake&) = delete;

  /// Creates the consumer: this role's group, static membership for the roles that subscribe
  /// (`leased`: a dedup process under a lease assigns its partitions itself).
  tl::expected<void, std::vector<config::Problem>> open(const std::string& bootstrap, bool leased);
  /// Subscribes to the role's input topics.
  tl::expected<void, std::string> subscribe();
  /// Assigns every partition of `topic` by hand, from the offsets the group committed (a dedup
  /// owner's takeover): their number.
  tl::expected<int, std::string> assign_every_partition(const std::string& topic);

  /// Collects the next batch in event-time order across the assigned partitions (at most `most`
  /// inputs and `kafka.batch_max_bytes`, within `kafka.batch_max_ms`); without `wait`, only what
  /// librdkafka holds already. False on a fatal consumer error.
  bool collect(std::vector<Taken>& batch, bool wait, int most);
  /// Returns unprocessed messages to the front of their partitions (their batch is processed
  /// again), last first; messages of partitions revoked meanwhile are destroyed.
  void give_back(std::vector<Taken>::const_iterator first, std::vector<Taken>::const_iterator last);

  /// Whether this consumer still reads `p` (a revoked partition's offsets are its new owner's).
  bool owns(const Partition& p) const { return merger_.assigned(p); }
  /// Calls `f(partition, watermark)` for each assigned partition: the oldest event time it may
  /// still deliver (nothing: unknown).
  template <typename F>
  void for_each_watermark(F&& f) const {
    for (const auto& [p, q] : queues_) f(p, merger_.watermark_of(p));
  }
  /// Reports the order's buffer and what it passed over to the metrics.
  void count_order();

  rd_kafka_t* consumer() const { return consumer_.get(); }
  /// The number of partitions assigned. Thread-safe.
  int assigned() const { return assigned_.load(); }
  const std::string& group() const { return group_; }
  /// Its group.instance.id ("": dynamic membership).
  const std::string& instance_id() const { return instance_id_; }

  /// Closes and destroys the consumer within `limit` (see the body for librdkafka 2.0's abort).
  void close(std::chrono::milliseconds limit);

 private:
  // The dedup role reads `topics.extracted`, whose records carry their order time in a header.
  bool extracted_inputs() const { return config_.role == config::Role::kDedup; }
  static void on_rebalance(rd_kafka_t* rk, int err, void* partitions, void* opaque);
  static void on_commit(rd_kafka_t* rk, int err, void* partitions, void* opaque);
  static int on_statistics(rd_kafka_t* rk, char* json, std::size_t len, void* opaque);
  void take_assignment(rd_kafka_t* rk, void* partitions);
  void let_go(rd_kafka_t* rk, int err, void* partitions);
  /// A partition this consumer now reads: event-time order, metrics, its own queue.
  void adopt(rd_kafka_t* rk, const std::string& topic, int partition, Clock::time_point now);
  // Moves what the event-time order lets go at `now` into `batch` while it has room (`most`
  // inputs, `kafka.batch_max_bytes` counted in `batch_bytes`); returns how many.
  std::size_t release(std::vector<Taken>& batch, std::int64_t& batch_bytes, int most,
                      Clock::time_point now);
  /// Files a polled message (or end-of-partition event) with the merge; false on a fatal error.
  bool take(rd_kafka_message_t* msg);
  /// Moves a few messages of each partition queue into the merge.
  bool take_fetched();
  /// Whether `p`'s end as last fetched lies beyond what was taken (the order waits for it).
  bool fetch_lags(const Partition& p) const;

  const config::Config& config_;
  Metrics& metrics_;
  const StateStore& store_;
  const std::atomic<bool>& stop_;
  Listener listener_;

  KafkaHandle consumer_;
  std::string group_;
  std::string instance_id_;
  bool cooperative_ = false;    // its assignment strategy is cooperative-sticky
  bool subscribed_ = false;     // its partitions come from its group (not a lease)
  bool assigned_once_ = false;  // it has had an assignment (`close`)
  std::atomic<int> assigned_{0};
  // Fetched messages waiting for their turn in event-time order, a few per partition; the rest
  // wait in each assigned partition's own librdkafka queue.
  EventTimeMerger<rd_kafka_message_t*> merger_;
  std::map<Partition, rd_kafka_queue_t*> queues_;
  // Per assigned partition, the offset after the last message taken: below the partition's end
  // as last fetched, the partition lags and the order waits for it (`fetch_lags`).
  std::map<Partition, std::int64_t> next_offset_;
  std::vector<Taken>* collecting_ = nullptr;  // the batch being collected
  std::uint64_t passed_over_reported_ = 0;    // merger_.passed_over() as last counted
  // The consumer queue (rebalances, errors) is looked at this often while the partition queues
  // keep every batch full: a backlog would otherwise hold a rebalance back until it is drained.
  Clock::time_point last_consumer_poll_{};
};

}  // namespace newsflow::daemon
