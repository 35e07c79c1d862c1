#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "daemon/kafka/batch_processor.h"
#include "daemon/kafka/changelog_tail.h"
#include "daemon/kafka/crash_guard.h"
#include "daemon/kafka/dead_letters.h"
#include "daemon/kafka/dedup_lease.h"
#include "daemon/kafka/drain.h"
#include "daemon/kafka/extracted_topic.h"
#include "daemon/kafka/faults.h"
#include "daemon/kafka/fetch_retries.h"
#include "daemon/kafka/kafka.h"
#include "daemon/kafka/loop_status.h"
#include "daemon/kafka/offset_committer.h"
#include "daemon/kafka/partition_intake.h"
#include "daemon/kafka/record_collector.h"
#include "daemon/kafka/roles.h"
#include "daemon/kafka/state_store.h"
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

  // The loop's steps (daemon.cc).

  /// `start` for the extractor: lays out `topics.extracted` and learns the links published.
  tl::expected<void, std::vector<config::Problem>> start_extractor(const std::string& bootstrap);
  /// After a batch that was not delivered: waits before it is tried again, longer each time
  /// (`backoff`); false when the producer failed for good.
  bool back_off(std::chrono::milliseconds& backoff);
  /// After the loop: the last batch judged (`exit_code` 0), what is acknowledged committed, the
  /// clients closed in order.
  void shut_down(int exit_code);

  // Acknowledgements and commits.

  /// Serves delivery reports; moves the offsets of batches acknowledged in full, in order, to
  /// the offsets to commit, and commits them when `kafka.commit_interval_ms` has passed (or
  /// `drain`: once everything queued is acknowledged or the flush limit passed, at once). A
  /// failed batch at the front (`rewind` true) goes back with every batch after it. False when
  /// a batch failed.
  bool settle(bool drain, bool rewind = true);
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
  const Role& role_;  // what this process reads, does with an input, writes and keeps
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
  // Batches from extraction to their outputs (it uses the intake: declared before it, as what
  // the intake's listener uses).
  BatchProcessor processor_;
  // The input consumer, its partitions and the event-time order of their records (it tells
  // the judging of revokes: declared after what its listener uses).
  PartitionIntake intake_;

  std::unique_ptr<FetchRetrier> retrier_;  // later tries of linked pages (roles that fetch)
  // `--role extract` with a changelog: the links published, learned from it.
  std::unique_ptr<ChangelogTail> links_tail_;
};

}  // namespace newsflow::daemon
