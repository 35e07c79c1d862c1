#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "daemon/kafka/changelog_tail.h"
#include "daemon/kafka/crash_guard.h"
#include "daemon/kafka/dead_letters.h"
#include "daemon/kafka/dedup_lease.h"
#include "daemon/kafka/drain.h"
#include "daemon/kafka/extracted_topic.h"
#include "daemon/kafka/faults.h"
#include "daemon/kafka/fetch_retries.h"
#include "daemon/kafka/input_task.h"
#include "daemon/kafka/kafka.h"
#include "daemon/kafka/loop_status.h"
#include "daemon/kafka/offset_committer.h"
#include "daemon/kafka/partition_intake.h"
#include "daemon/kafka/record_collector.h"
#include "daemon/kafka/state_store.h"
#include "daemon/kafka/transaction.h"
#include "daemon/kafka/worker_pool.h"
#include "daemon/pipeline/fetcher.h"
#include "daemon/pipeline/input.h"
#include "daemon/pipeline/pipeline.h"
#include "tl/expected.hpp"

typedef struct rd_kafka_message_s rd_kafka_message_t;

namespace newsflow::daemon {

class Metrics;

/// The streaming daemon: consumes the pages and feeds topics in a consumer group, runs the
/// pipeline, produces articles, story updates and dead letters with an idempotent producer, and
/// commits input offsets only after every output of a batch is acknowledged (at-least-once;
/// output keys are stable, so a re-run rewrites the same keys). `run` owns the calling thread;
/// `stop`, `ready` and `progress` are thread-safe.
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
  bool ready() const { return (intake_.assigned() > 0 || lease_.standby()) && !stop_.load(); }

  const Progress& progress() const { return progress_; }

  /// False when the processing loop has started but not gone round for `stall_limit` (a hung
  /// pipeline, not a Kafka outage: polls keep the loop turning while brokers are away).
  bool live(std::chrono::milliseconds stall_limit) const { return status_.live(stall_limit); }

  /// A copy of what the status page shows (refreshed about once a second). Thread-safe.
  StatusSnapshot status() const { return status_.snapshot(); }

  /// The pipeline's state; read it only after `run` has returned.
  const Pipeline& pipeline() const { return pipeline_; }

 private:
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

  // A batch from extraction to commit (judge.cc).

  /// Parses and extracts the inputs of `stage.batch` on the worker pool; returns at once unless
  /// `wait` (then `pool_->wait()` ends it).
  void extract(Stage& stage, bool wait);
  /// Starts fetching the pages that the extracted `stage`'s feed items link to (those not
  /// published before), on a thread of its own: the loop goes on collecting and the pool
  /// extracting while the sites answer. `judge` waits for them (at most
  /// `fetch.batch_deadline_ms`, and the loop stays alive meanwhile).
  void fetch_links(Stage& stage);
  /// In input order on the loop's thread: gives feed items their linked pages (waiting for
  /// `fetch_links`, started here if it was not), judges (or hands over) every input and queues
  /// the outputs. at_least_once: the batch goes to the collector (true); exactly_once: the
  /// transaction is committed, false when it was not.
  bool judge(Stage& stage);
  /// Judges `waiting_`, if any, now.
  void judge_waiting();
  /// Extracts and judges `batch` now (inputs with crashes, exactly_once). False when it was not
  /// delivered (exactly_once): its inputs are left in `batch`.
  bool process_batch(std::vector<Taken>& batch);
  /// The crash guard's note: the inputs of `batches` are being processed (none: the note goes).
  void note_processing(std::initializer_list<const std::vector<Taken>*> batches);
  /// exactly_once: commits the batch's transaction with the offsets after `messages`.
  bool commit_transaction(Transaction& transaction,
                          const std::vector<rd_kafka_message_t*>& messages);
  /// Serves delivery reports; moves the offsets of batches acknowledged in full, in order, to
  /// the offsets to commit, and commits them when `kafka.commit_interval_ms` has passed (or
  /// `drain`: once everything queued is acknowledged or the flush limit passed, at once). A
  /// failed batch at the front (`rewind` true) goes back with every batch after it. False when
  /// a batch failed.
  bool settle(bool drain, bool rewind = true);
  /// A batch's inputs are done: destroys them (after `settle`).
  void release(InFlight& f);
  /// Commits what `committer_` holds: synchronously on revoke and stop (`sync`), else
  /// asynchronously (a synchronous commit blocked the loop for seconds while the group
  /// rebalanced, and the rebalance waited for the loop's poll). False when it failed.
  bool commit_offsets(bool sync);
  /// Counts and logs what a commit did.
  void note_commit(const OffsetCommitter::Result& result);
  /// What the intake tells the judging: revokes, commit answers, whether outputs are pending.
  PartitionIntake::Listener intake_listener();
  /// Writes a snapshot when `state_snapshot_articles` articles were judged since the last one,
  /// once every judged input is acknowledged and committed (the snapshot holds committed state
  /// only). The owner's loop calls it between batches.
  void maybe_snapshot();

  config::Config config_;
  Metrics& metrics_;
  Pipeline pipeline_;
  const bool exactly_once_;
  std::atomic<bool> stop_{false};
  Drain drain_{config_.kafka};  // started by stop()
  Progress progress_;
  LoopStatus status_{metrics_, pipeline_, progress_};  // the status page, systemd, liveness
  InjectedFaults faults_ = InjectedFaults::from_environment();  // the fault tests' only
  CrashGuard crash_guard_;

  // The producer, the batches whose records are on their way, and what became of them.
  RecordCollector collector_;
  // `--role extract`: where the extracted records go, and the watermarks.
  ExtractedTopic extracted_;
  // Inputs that yield no article, and feed items whose page is to be fetched again later.
  DeadLetters dead_letters_;
  // The changelog's state: restore, snapshots, committed offsets, the handover ledger.
  StateStore store_;
  // What becomes of each input: judged and published, or handed over; or a dead letter.
  InputTask inputs_;
  // `--role dedup` with `topics.dedup_lease`: the owner judges, a standby follows.
  DedupLease lease_;
  // at_least_once: the offsets of acknowledged batches on their way to the coordinator.
  OffsetCommitter committer_;
  // The input consumer, its partitions and the event-time order of their records (it tells
  // the judging of revokes: declared after what its listener uses).
  PartitionIntake intake_;

  std::size_t workers_;
  std::unique_ptr<WorkerPool> pool_;  // extraction threads (`kafka.workers`)
  // Serializes a judged batch's records while the pool extracts the next batch.
  std::unique_ptr<WorkerPool> output_pool_;
  // at_least_once: a batch extracted while the one before it was judged; judged next.
  std::optional<Stage> waiting_;
  const Stage* extracting_ = nullptr;  // the batch the pool extracts while `waiting_` is judged

  std::unique_ptr<Fetcher> fetcher_;       // null when fetch.enabled is false
  std::unique_ptr<FetchRetrier> retrier_;  // later tries of linked pages (roles that fetch)
  // `--role extract` with a changelog: the links published, learned from it.
  std::unique_ptr<ChangelogTail> links_tail_;
};

}  // namespace newsflow::daemon
