#pragma once

// The records a process produces and what became of them, in the manner of Kafka Streams'
// RecordCollector: it owns the producer, tags every record with the batch and the input it came
// from, counts each batch's records still on their way from the delivery reports, remembers the
// inputs one of whose records the cluster refused for good, and holds the batches in flight in
// the order they were judged until the daemon settles them.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "daemon/kafka/kafka.h"
#include "daemon/pipeline/document.h"

typedef struct rd_kafka_message_s rd_kafka_message_t;
typedef struct rd_kafka_s rd_kafka_t;

namespace newsflow::daemon {

class Metrics;

/// One input of a batch as the event-time order handed it out, with the low watermark then.
struct Taken {
  rd_kafka_message_t* msg;
  std::int64_t low_watermark;
};

class RecordCollector {
 public:
  struct Batch;
  /// One input of a batch whose records are on their way (a delivery report's opaque): a
  /// record the cluster refuses for good names the input it came from. `offset` -1: the batch
  /// itself.
  struct Sent {
    Batch* batch = nullptr;
    std::string topic;
    std::int32_t partition = -1;
    std::int64_t offset = -1;
  };
  /// A batch whose records are queued, with its inputs, until every record is acknowledged
  /// (then its offsets may be committed) or one fails (then it and every batch after it are
  /// judged again).
  struct Batch {
    Batch() : whole{this, {}, -1, -1} {}
    Batch(const Batch&) = delete;
    Batch& operator=(const Batch&) = delete;
    Sent whole;             ///< records of no one input (watermarks, dead letters while judging)
    std::deque<Sent> sent;  ///< the inputs whose records it queued (stable addresses)
    /// Its records refused for their size, with their size: a broker refuses a whole request,
    /// so only those at least half the size of the largest are blamed (the others rode along).
    std::vector<std::pair<Sent*, std::size_t>> refused_sizes;
    std::vector<Taken> inputs;
    std::size_t outstanding = 0;  ///< records not acknowledged yet
    bool failed = false;          ///< a record failed (or the batch waited past the flush limit)
    std::chrono::steady_clock::time_point queued{};
    std::vector<std::pair<std::string, std::int64_t>> links;  ///< the links it publishes
    bool kill = false;  ///< fault injection: killed once acknowledged, before the commit
  };

  /// What the collector asks its owner while producing.
  struct Hooks {
    /// Whether this process may publish no more (a dedup owner whose lease is gone): every
    /// record then fails at once.
    std::function<bool()> fenced;
    /// While the producer's queue is full: why to stop waiting for room (the drain deadline
    /// passed, the lease was lost), or nothing to go on waiting.
    std::function<std::optional<std::string>()> stop_waiting;
  };

  RecordCollector(Metrics& metrics, std::string dead_letter_topic, Hooks hooks);
  ~RecordCollector();
  RecordCollector(const RecordCollector&) = delete;
  RecordCollector& operator=(const RecordCollector&) = delete;

  /// Creates the producer from `conf` (`make_kafka_conf`, consumed) with the collector's
  /// delivery reports; reads the largest record it may send (`message.max.bytes`).
  tl::expected<void, std::string> open(KafkaConf conf);
  rd_kafka_t* producer() const { return producer_.get(); }

  /// Starts a batch: the records produced until `end_batch` are its.
  Batch& begin_batch();
  /// Ends it: the caller queues it (`queue`) or drops it (`retire`).
  std::unique_ptr<Batch> end_batch();
  /// The records produced until `end_input` are those of input `msg` of the batch begun.
  void begin_input(const rd_kafka_message_t* msg);
  void end_input() { sending_ = nullptr; }

  /// Queues one record; `tombstone` sends a null value (a deletion under compaction);
  /// `partition` -1 lets the partitioner choose; `timestamp_ms` 0 is the time of producing.
  /// False when it was not queued (the batch begun has failed, unless it was a dead letter
  /// refused for good, which is said and lets the batch go on).
  bool produce(const std::string& topic, const std::string& key, const std::string& value,
               const std::vector<std::pair<std::string, std::string>>& headers,
               bool tombstone = false, std::int32_t partition = -1, std::int64_t timestamp_ms = 0);

  /// Failed records since `reset_errors`, and the last one's error.
  void reset_errors() {
    errors_ = 0;
    last_error_.clear();
  }
  std::uint64_t errors() const { return errors_; }
  const std::string& last_error() const { return last_error_; }
  /// A record that failed since `reset_errors`: its error ("" while none did).
  std::string failure() const { return errors_ == 0 ? std::string() : last_error_; }

  /// The dead letter `msg` ends as because a record of it was refused for good, if any. Kept for
  /// the input's later judgings too: the batch that carries the dead letter may fail for another
  /// record and be judged again (the most recent kRefusedKept refusals are kept).
  std::optional<Failure> take_refused(const rd_kafka_message_t* msg);
  /// output_too_large when a record of `bytes` (the `what` record of article `id`) is more than
  /// the producer may send.
  std::optional<Failure> too_large(std::string_view what, std::string_view id,
                                   std::size_t bytes) const;
  /// The producer's message.max.bytes (0: not known).
  std::size_t max_record_bytes() const { return max_record_bytes_; }

  /// The batches in flight, in the order they were judged.
  bool empty() const { return in_flight_.empty(); }
  std::size_t size() const { return in_flight_.size(); }
  Batch& front() { return *in_flight_.front(); }
  void queue(std::unique_ptr<Batch> batch);
  /// Takes the oldest batch out of the flight (acknowledged in full).
  std::unique_ptr<Batch> pop_front();
  /// A batch no longer in flight whose delivery reports may still come: kept until they have.
  void retire(std::unique_ptr<Batch> batch);
  /// Takes every batch out of the flight, the latest first, each given to `f` before it is
  /// retired.
  void retire_all(const std::function<void(Batch&)>& f);
  /// Serves delivery reports until at most `max` batches are in flight or the oldest one is
  /// acknowledged, has failed, has waited `limit`, or `stop()` says so.
  void wait_for_room(std::size_t max, std::chrono::milliseconds limit,
                     const std::function<bool()>& stop);
  /// Forgets retired batches whose every delivery report came.
  void prune();

 private:
  static void on_delivery(rd_kafka_t* rk, const rd_kafka_message_t* msg, void* opaque);
  /// Notes that a record of `sent` was refused for good (`bytes` long, to `topic`).
  void blame(Sent& sent, int err, std::string_view topic, std::size_t bytes);
  void fail(const std::string& error);

  Metrics& metrics_;
  const std::string dead_letter_topic_;
  Hooks hooks_;
  // Declared before the producer, so they outlive its last delivery report.
  std::deque<std::unique_ptr<Batch>> in_flight_;
  std::vector<std::unique_ptr<Batch>> retired_;
  std::unique_ptr<Batch> open_;  // the batch begun
  Batch* producing_ = nullptr;
  Sent* sending_ = nullptr;
  // Inputs one of whose records the producer or the cluster refused for good (too large, an
  // invalid record), with the dead letter each ends as when it is judged again, and the order
  // they were refused in (the oldest are forgotten past kRefusedKept: an input needs its entry
  // only until a batch carrying its dead letter is delivered, a few batches at most).
  using Position = std::tuple<std::string, std::int32_t, std::int64_t>;
  static constexpr std::size_t kRefusedKept = 4096;
  void refuse(const Position& at, Failure failure);
  std::map<Position, Failure> refused_;
  std::deque<Position> refused_order_;
  std::size_t max_record_bytes_ = 0;
  std::uint64_t errors_ = 0;  // touched only on the run thread (delivery reports are served there)
  std::string last_error_;
  KafkaHandle producer_;
};

}  // namespace newsflow::daemon
