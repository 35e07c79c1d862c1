#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <future>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "config/config.h"
#include "daemon/kafka/changelog_tail.h"
#include "daemon/kafka/crash_guard.h"
#include "daemon/kafka/dead_letters.h"
#include "daemon/kafka/dedup_lease.h"
#include "daemon/kafka/event_order.h"
#include "daemon/kafka/faults.h"
#include "daemon/kafka/fetch_retries.h"
#include "daemon/kafka/kafka.h"
#include "daemon/kafka/offset_committer.h"
#include "daemon/kafka/record_collector.h"
#include "daemon/kafka/state_store.h"
#include "daemon/kafka/transaction.h"
#include "daemon/kafka/worker_pool.h"
#include "daemon/ops/notify.h"
#include "daemon/ops/status_page.h"
#include "daemon/pipeline/fetcher.h"
#include "daemon/pipeline/input.h"
#include "daemon/pipeline/pipeline.h"
#include "tl/expected.hpp"

typedef struct rd_kafka_message_s rd_kafka_message_t;
typedef struct rd_kafka_s rd_kafka_t;
typedef struct rd_kafka_queue_s rd_kafka_queue_t;

namespace newsflow::daemon {

class Metrics;

/// Totals since start, readable from any thread.
struct Progress {
  std::atomic<std::uint64_t> consumed{0};
  std::atomic<std::uint64_t> articles{0};
  std::atomic<std::uint64_t> duplicates{0};
  std::atomic<std::uint64_t> dead_letters{0};
  std::atomic<std::uint64_t> stories{0};
  std::atomic<std::uint64_t> committed{0};  ///< inputs whose offsets were committed
};

/// The streaming daemon: consumes the pages and feeds topics in a consumer group, runs the
/// pipeline, produces articles, story updates and dead letters with an idempotent producer, and
/// commits input offsets only after every output of a batch is acknowledged (at-least-once;
/// output keys are stable, so a re-run rewrites the same keys). `run` owns the calling thread;
/// `stop`, `ready` and `progress` are thread-safe.
/// The event-time order's patience as `kafka` sets it.
EventOrderOptions order_options(const config::KafkaConfig& kafka);

class Daemon {
 public:
  Daemon(const config::Config& config, Metrics& metrics);
  ~Daemon();

  /// Creates the Kafka clients against `bootstrap`, restores the window (`StateStore::restore`) and
  /// subscribes. Property errors and connection setup errors come back as one message each.
  tl::expected<void, std::vector<config::Problem>> start(const std::string& bootstrap);

  /// Processes batches until `stop`; returns the process exit code (0 after a clean drain).
  int run();

  /// Asks `run` to finish the current batch, commit and return within
  /// `kafka.drain_timeout_ms`.
  void stop();

  /// True while partitions are assigned (or, a dedup standby, while it tails the changelog) and
  /// the last poll succeeded.
  bool ready() const { return (assigned_.load() > 0 || lease_.standby()) && !stop_.load(); }

  const Progress& progress() const { return progress_; }

  /// False when the processing loop has started but not gone round for `stall_limit` (a hung
  /// pipeline, not a Kafka outage: polls keep the loop turning while brokers are away).
  bool live(std::chrono::milliseconds stall_limit) const;

  /// A copy of what the status page shows (refreshed about once a second). Thread-safe.
  StatusSnapshot status() const;

  /// The pipeline's state; read it only after `run` has returned.
  const Pipeline& pipeline() const { return pipeline_; }

 private:
  // One input of a batch: parsed and extracted (in parallel), then published in order.
  struct Work {
    ParsedInput parsed;
    tl::expected<std::vector<Pipeline::Extracted>, Failure> prepared =
        tl::unexpected(Failure{"internal_error", "not prepared"});
    // Judged (in input order): its outputs, then their records, serialized on the pool.
    struct Records {
      std::string article, state, story;
    };
    std::vector<Output> outputs;
    std::vector<Records> records;
    std::optional<Failure> failed;  // a dead letter instead: nothing of it is published
    bool judged = false;            // it has outputs to publish
  };
  using InFlight = RecordCollector::Batch;
  // A batch on its way from the event-time order to the judging: its inputs, and what the
  // pool parsed and extracted of each.
  struct Stage {
    std::vector<Taken> batch;
    std::vector<rd_kafka_message_t*> messages;
    std::vector<Work> work;
    /// The pages its feed items link to, being fetched beside the loop (`fetch_links`).
    std::vector<std::string> link_urls;
    std::future<std::vector<Pipeline::LinkedPage>> linked_pages;
  };
  /// Starts fetching the pages that the extracted `stage`'s feed items link to (those not
  /// published before), on a thread of its own: the loop goes on collecting and the pool
  /// extracting while the sites answer. `judge` waits for them (at most
  /// `fetch.batch_deadline_ms`, and the loop stays alive meanwhile).
  void fetch_links(Stage& stage);
  /// Extracts and judges `batch` now (inputs with crashes, exactly_once). False when it was not
  /// delivered (exactly_once): its inputs are left in `batch`.
  bool process_batch(std::vector<Taken>& batch);
  /// Parses and extracts the inputs of `stage.batch` on the worker pool; returns at once unless
  /// `wait` (then `pool_->wait()` ends it).
  void extract(Stage& stage, bool wait);
  /// In input order on the loop's thread: gives feed items their linked pages (waiting for
  /// `fetch_links`, started here if it was not), judges (or hands over) every
  /// input and queues the outputs. at_least_once: the batch goes to `in_flight_` (true);
  /// exactly_once: the transaction is committed, false when it was not.
  bool judge(Stage& stage);
  /// Judges `waiting_`, if any, now.
  void judge_waiting();
  /// The crash guard's note: the inputs of `batches` are being processed (none: the note goes).
  void note_processing(std::initializer_list<const std::vector<Taken>*> batches);
  /// A partition this consumer now reads: event-time order, metrics, its own queue.
  void adopt_partition(rd_kafka_t* rk, const std::string& topic, int partition,
                       std::chrono::steady_clock::time_point now);
  /// Collects the next batch in event-time order across the assigned partitions (at most
  /// `kafka.batch_max_messages`/`_bytes`, within `kafka.batch_max_ms`); without `wait`, only
  /// what librdkafka holds already. False on a fatal consumer error.
  bool collect_batch(std::vector<Taken>& batch, bool wait = true);
  /// Returns unprocessed messages to the front of their partitions' buffers (their batch is
  /// processed again), last first; messages of partitions revoked meanwhile are destroyed.
  void give_back(std::vector<Taken>::const_iterator first, std::vector<Taken>::const_iterator last);
  /// Files a polled message (or end-of-partition event) with the merger; false on a fatal error.
  bool take(rd_kafka_message_t* msg);
  /// Moves a few messages of each partition queue into the merger.
  bool take_fetched();
  /// exactly_once: commits the batch's transaction with the offsets after `messages`.
  bool commit_transaction(Transaction& transaction,
                          const std::vector<rd_kafka_message_t*>& messages);
  ParsedInput parse(rd_kafka_message_t* msg) const;
  /// In input order: judges `msg` (its outputs go to `work.outputs`) or dead-letters it.
  void judge_one(rd_kafka_message_t* msg, Work& work);
  /// Any order, on any thread: the records of `work.outputs` (`work.failed` if one cannot be
  /// written).
  void serialize(Work& work) const;
  /// In input order: queues the records of a judged message.
  void publish(rd_kafka_message_t* msg, Work& work);
  /// Dead-letters a message that failed (true: nothing else to do with it) and its feed items
  /// whose pages could not be fetched.
  bool dead_letters_of(rd_kafka_message_t* msg, Work& work);
  /// `--role extract`: the message's articles to `topics.extracted` (dead letters as `publish`).
  void hand_over(rd_kafka_message_t* msg, Work& work);
  static void on_rebalance(rd_kafka_t* rk, int err, void* partitions, void* opaque);
  // The result of an asynchronous commit, served by the consumer poll.
  static void on_commit(rd_kafka_t* rk, int err, void* partitions, void* opaque);
  static int on_statistics(rd_kafka_t* rk, char* json, size_t len, void* opaque);
  void refresh_status(bool force);
  int flush_timeout_ms() const;
  /// How long a consumer's close may take (`close_consumer`).
  std::chrono::milliseconds close_timeout() const;
  void tick();

  config::Config config_;
  Metrics& metrics_;
  Pipeline pipeline_;
  std::size_t workers_;
  // The producer, the batches whose records are on their way, and what became of them.
  RecordCollector collector_;
  // Inputs that yield no article, and feed items whose page is to be fetched again later.
  DeadLetters dead_letters_;
  // at_least_once: a batch extracted while the one before it was judged; judged next.
  std::optional<Stage> waiting_;
  const Stage* extracting_ = nullptr;  // the batch the pool extracts while `waiting_` is judged
  std::unique_ptr<WorkerPool> pool_;   // extraction threads (`kafka.workers`)
  // Serializes a judged batch's records (`serialize`) while the pool extracts the next batch.
  std::unique_ptr<WorkerPool> output_pool_;
  /// Serves delivery reports; moves the offsets of batches acknowledged in full, in order, to
  /// the offsets to commit, and commits them when `kafka.commit_interval_ms` has passed (or
  /// `drain`: once everything queued is acknowledged or the flush limit passed, at once). A
  /// failed batch at the front (`rewind` true) goes back with every batch after it. False when
  /// a batch failed.
  bool settle(bool drain, bool rewind = true);
  /// A batch's inputs are done: destroys them (after `settle`).
  void release(InFlight& f);
  /// Closes and destroys the input consumer, within `kafka.drain_timeout_ms` (see the body
  /// for librdkafka 2.0's abort).
  void close_input_consumer();
  KafkaHandle consumer_;
  bool consumer_cooperative_ = false;      // its assignment strategy is cooperative-sticky
  bool subscribed_ = false;                // its partitions come from its group (not a lease)
  bool assigned_once_ = false;             // it has had an assignment (`close_input_consumer`)
  std::string instance_id_;                // the input consumer's group.instance.id ("" : dynamic)
  std::unique_ptr<Fetcher> fetcher_;       // null when fetch.enabled is false
  std::unique_ptr<FetchRetrier> retrier_;  // later tries of linked pages (roles that fetch)
  const bool exactly_once_;
  CrashGuard crash_guard_;
  InjectedFaults faults_ = InjectedFaults::from_environment();  // the fault tests' only
  std::vector<Taken>* collecting_ = nullptr;                    // the batch being polled together
  // Fetched messages waiting for their turn in event-time order, a few per partition; the rest
  // wait in each assigned partition's own librdkafka queue.
  EventTimeMerger<rd_kafka_message_t*> merger_;
  std::map<std::pair<std::string, int>, rd_kafka_queue_t*> partition_queues_;
  // Per assigned partition, the offset after the last message taken: below the partition's end
  // as last fetched, the partition lags and the order waits for it (`fetch_lags`).
  std::map<std::pair<std::string, int>, std::int64_t> next_offset_;
  bool fetch_lags(const std::pair<std::string, int>& p) const;
  // at_least_once: the offsets of acknowledged batches on their way to the coordinator.
  OffsetCommitter committer_;
  std::uint64_t passed_over_reported_ = 0;  // merger_.passed_over() as last counted
  // The consumer queue (rebalances, errors) is looked at this often while the partition queues
  // keep every batch full: a backlog would otherwise hold a rebalance back until it is drained.
  std::chrono::steady_clock::time_point last_consumer_poll_{};
  /// Commits what `committer_` holds: synchronously on revoke and stop (`sync`), else
  /// asynchronously (a synchronous commit blocked the loop for seconds while the group
  /// rebalanced, and the rebalance waited for the loop's poll). False when it failed.
  bool commit_offsets(bool sync);
  /// Counts and logs what a commit did.
  void note_commit(const OffsetCommitter::Result& result);
  std::atomic<bool> stop_{false};
  std::atomic<std::int64_t> drain_deadline_ms_{0};  // steady clock, set by stop()
  std::atomic<std::int64_t> last_tick_ms_{0};       // steady clock; 0 before run()
  SystemdNotifier notifier_;
  bool notified_ready_ = false;
  std::chrono::steady_clock::time_point last_status_{};
  std::chrono::steady_clock::time_point last_sample_{};
  std::chrono::steady_clock::time_point last_notify_status_{};
  mutable std::mutex status_mu_;
  StatusSnapshot status_;  // guarded by status_mu_
  std::atomic<int> assigned_{0};
  Progress progress_;
  // `--role extract`: partitions of `topics.extracted`, and where each input topic's begin.
  tl::expected<void, std::string> lay_out_extracted();
  int extracted_partitions_ = 0;
  std::map<std::string, int> extracted_offset_;
  /// `--role extract`: tells the dedup role, per extracted partition, how far its input has
  /// come (a watermark record: header `watermark`, no value).
  void emit_watermarks(bool own_transaction = false);
  static constexpr std::int64_t kUnknownWatermark = std::numeric_limits<std::int64_t>::min();
  std::map<std::int32_t, std::pair<std::int64_t, std::chrono::steady_clock::time_point>>
      sent_watermarks_;
  std::set<std::int32_t> wrote_since_watermark_;  // extracted partitions with records since

  // The changelog's state: restore, snapshots, committed offsets, the handover ledger.
  StateStore store_;
  /// Writes a snapshot when `state_snapshot_articles` articles were judged since the last one,
  /// once every judged input is acknowledged and committed (the snapshot holds committed state
  /// only). The owner's loop calls it between batches.
  void maybe_snapshot();

  // `--role dedup` with `topics.dedup_lease`: the owner judges, a standby follows.
  DedupLease lease_;
  /// Assigns every partition of `topic` to the input consumer by hand (a dedup owner's
  /// takeover): their number.
  tl::expected<int, std::string> assign_every_partition(const std::string& topic);
  // `--role extract` with a changelog: the links published, learned from it.
  std::unique_ptr<ChangelogTail> links_tail_;
};

}  // namespace newsflow::daemon
