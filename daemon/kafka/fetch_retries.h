#pragma once

// Later tries of the pages feed items link to. A try that fails for a reason time may cure
// (429, 5xx, a timeout, a refused connection, the batch's fetch deadline) does not end the item:
// the process that judged it writes a retry record to `topics.fetch_retries`, in the batch of
// the item's other outputs, and a `FetchRetrier` of some process of the group fetches the page
// when it is due, beside the pipeline, on its own thread. The page goes to `topics.pages` as a
// crawler's page would, naming the item it is for, and is judged and published under the item's
// id (a new version when the item went out with its own short text); a try that fails again is
// written back with a longer wait; the last one is a dead letter. Kafka keeps the retries, their
// order and their owners: nothing waits only in a process's memory.

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "config/config.h"
#include "daemon/kafka/kafka.h"
#include "daemon/kafka/offset_committer.h"
#include "daemon/kafka/offset_ledger.h"
#include "daemon/kafka/transaction.h"
#include "tl/expected.hpp"

typedef struct rd_kafka_message_s rd_kafka_message_t;
typedef struct rd_kafka_topic_partition_list_s rd_kafka_topic_partition_list_t;

namespace newsflow::daemon {

class Fetcher;
class Metrics;

/// A retry record: the feed item whose page is still to be had, and how its tries went.
struct FetchRetry {
  std::string id;                            ///< the article id the page is published under
  std::string link;                          ///< the page
  std::string title;                         ///< the item's headline
  std::optional<std::int64_t> published_at;  ///< the item's date (Unix seconds)
  std::string feed_url;
  std::string feed_id;
  bool published = false;   ///< the item went out with its own short text: the page is version 2
  int attempts = 1;         ///< tries so far (the first is the judging process's)
  std::int64_t due_ms = 0;  ///< Unix milliseconds: not tried before
  std::string reason;       ///< of the last failure (a dead-letter reason, "fetch_...")
  std::string detail;
};

/// One line of JSON, and back (nothing for a value that is not a retry record).
std::string fetch_retry_json(const FetchRetry& retry);
std::optional<FetchRetry> parse_fetch_retry(std::string_view json);

/// How long after its `attempts`-th failure a page is tried again: `requeue_backoff_ms`,
/// doubling with every later failure, at most `requeue_max_backoff_ms`; longer when the site
/// asked for it (`retry_after_seconds`), within the same bound.
std::int64_t fetch_retry_delay_ms(const config::FetchConfig& fetch, int attempts,
                                  std::int64_t retry_after_seconds);

/// Whether a page that failed its `attempts`-th try for `reason` gets another.
bool fetch_retry_left(const config::FetchConfig& fetch, int attempts, std::string_view reason);

/// The consumer of `topics.fetch_retries` in the group `<kafka.group_id>-fetch-retries`, with
/// its own fetcher and producer, on a thread of its own. A record is held until it is due
/// (at most `kMaxWaiting` at once: the partitions pause beyond), its page then fetched with the
/// others due, and the outcome produced: the page to `topics.pages`, the record again with a
/// later due time, or a dead letter. A record's offset is committed once its outcome is
/// acknowledged (exactly_once: in the transaction that produces it); when an outcome cannot be
/// produced, every record not committed is read again. A record that waits long holds back the
/// commit of every record after it in its partition: once it has done so for
/// `fetch.requeue_backoff_ms` and is due later than that, it is written again at the end of its
/// topic (the same record: its tries and due time unchanged) and its first copy is finished, so
/// a rebalance or a restart reads again only what is still waiting. Of two copies of one item's
/// record read together, the one with more tries is kept.
class FetchRetrier {
 public:
  static constexpr std::size_t kMaxWaiting = 10000;

  /// Creates the clients and starts the thread.
  static tl::expected<std::unique_ptr<FetchRetrier>, std::string> start(
      const config::Config& config, const std::string& bootstrap, Metrics& metrics);
  /// Stops the thread (what is done is committed; what waits stays in the topic).
  ~FetchRetrier();
  FetchRetrier(const FetchRetrier&) = delete;
  FetchRetrier& operator=(const FetchRetrier&) = delete;

  /// Asks the thread to end after the round it is in, by `deadline_ms` (steady clock, as
  /// `internal::steady_ms`; 0: no deadline): a fetch in progress is cut short, and the round's
  /// outcomes, the commit and the close wait no longer than that. Thread-safe; the destructor
  /// waits for the thread.
  void request_stop(std::int64_t deadline_ms = 0);

  /// Records held until they are due.
  std::size_t waiting() const { return waiting_count_.load(); }
  /// Records read since the start (read again after a rewind or a rebalance: counted again).
  std::uint64_t read() const { return read_count_.load(); }

  /// False once its transactional producer reached a state no retry can leave
  /// (`Transaction::usable`): the process must restart.
  bool usable() const;

 private:
  struct Waiting {
    FetchRetry retry;
    OffsetLedger::Partition from;
    std::int64_t offset = 0;
    std::int64_t taken_ms = 0;  // Unix milliseconds
  };
  // An outcome queued in the current round, with the record it finishes.
  struct Done {
    OffsetLedger::Partition from;
    std::int64_t offset = 0;
  };

  FetchRetrier(const config::Config& config, Metrics& metrics);
  void run();
  void take(rd_kafka_message_t* msg);
  void fetch_due();
  /// Writes again, at the end of their partitions, the records that wait long and hold back
  /// the commit of finished ones after them (at most once a second).
  void requeue_holding_back();
  /// After every assignment and rewind: librdkafka keeps a partition paused by the application
  /// across an unassign and an assign, so the retrier resumes what it now holds itself.
  void resume_assigned(rd_kafka_t* consumer);
  /// Produces the round's outcomes and commits the offsets they finish; on failure every
  /// record not committed is read again (`rewind`).
  void end_round();
  void rewind();
  /// Moves `partitions` back to their committed offsets.
  void seek_committed(rd_kafka_topic_partition_list_t* partitions);
  /// at_least_once: commits `offsets` (their outcomes acknowledged) by the daemon's rule.
  void commit_finished(const std::map<OffsetLedger::Partition, std::int64_t>& offsets);
  void produce(const std::string& topic, const std::string& key, const std::string& value,
               const std::vector<std::pair<std::string, std::string>>& headers);
  void dead_letter(const Waiting& w, const FetchRetry& retry);
  void pause(bool paused);
  /// How long a flush may wait: `kafka.flush_timeout_ms`, after a stop with a deadline no
  /// longer than what is left of it.
  int flush_timeout_ms() const;
  static void on_rebalance(rd_kafka_t* rk, int err, void* partitions, void* opaque);
  static void on_delivery(rd_kafka_t* rk, const rd_kafka_message_t* msg, void* opaque);

  config::Config config_;
  Metrics& metrics_;
  bool exactly_once_ = false;
  KafkaHandle consumer_;
  KafkaHandle producer_;
  std::unique_ptr<Fetcher> fetcher_;
  OffsetLedger ledger_;
  // at_least_once: the daemon's commit rule (only partitions held, never backwards, a failed
  // commit kept for the next round); exactly_once commits in the round's transaction.
  OffsetCommitter committer_;
  std::set<OffsetLedger::Partition> assigned_;       // set by the rebalance callback
  bool assigned_once_ = false;                       // a first assignment came (even an empty one)
  std::multimap<std::int64_t, Waiting> waiting_;     // by due time (Unix ms)
  std::map<std::string, std::int64_t> waiting_ids_;  // id -> its due time
  std::atomic<std::size_t> waiting_count_{0};
  std::atomic<std::uint64_t> read_count_{0};
  std::vector<Done> round_;                 // outcomes produced in this round
  std::optional<Transaction> transaction_;  // exactly_once: the round's, once it produced
  bool round_failed_ = false;  // an outcome of this round was not produced or not acknowledged
  std::string last_delivery_error_;
  bool paused_ = false;
  std::int64_t next_requeue_check_ms_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<std::int64_t> stop_deadline_ms_{0};  // steady clock; 0: none
  std::thread thread_;
};

}  // namespace newsflow::daemon
