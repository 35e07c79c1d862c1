#pragma once

#include <cstddef>
#include <functional>
#include <future>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "daemon/kafka/input_task.h"
#include "daemon/kafka/ordered_stage.h"
#include "daemon/kafka/partition_intake.h"
#include "daemon/kafka/record_collector.h"
#include "daemon/kafka/worker_pool.h"
#include "daemon/pipeline/fetcher.h"
#include "daemon/pipeline/pipeline.h"
#include "tl/expected.hpp"

typedef struct rd_kafka_message_s rd_kafka_message_t;

namespace newsflow::daemon {

class CrashGuard;
class Drain;
class ExtractedTopic;
class InjectedFaults;
class Metrics;
class Transaction;
struct Progress;

/// A collected batch from extraction to its outputs: parsed and extracted on the worker pool,
/// its feed items' pages fetched beside the loop, judged against the window (or handed over) in
/// input order on the loop's thread while the articles judged join their stories in the same
/// order on a thread of their own, its records serialized on the output pool and queued in
/// input order.
///
/// at_least_once, batches overlap: the pool extracts batch n+1 while batch n is judged, and
/// batch n+1 then waits (`waiting`) to be judged at the next turn; the judged batch goes to the
/// collector, whose delivery reports the daemon settles. exactly_once, a batch is extracted and
/// judged at once in a transaction of its own that commits its input offsets too.
///
/// Inputs that were in flight when an earlier process died (the crash guard's note) go one at a
/// time, so the one that kills the process is found and, at its second crash, dead-lettered.
/// Every member function runs on the loop's thread.
class BatchProcessor {
 public:
  /// What the processor works with, all owned by the daemon.
  struct Parts {
    const config::Config& config;
    Metrics& metrics;
    Pipeline& pipeline;
    Progress& progress;
    CrashGuard& crash_guard;
    InjectedFaults& faults;
    InputTask& inputs;
    RecordCollector& collector;
    ExtractedTopic& extracted;
    PartitionIntake& intake;
    const Drain& drain;
    /// A sign of life while the loop waits for the sites of a batch's links.
    std::function<void()> tick;
  };

  explicit BatchProcessor(Parts parts);
  BatchProcessor(const BatchProcessor&) = delete;
  BatchProcessor& operator=(const BatchProcessor&) = delete;

  /// Creates the fetcher of feed items' pages when `fetch.enabled`.
  tl::expected<void, std::string> open_fetcher();
  /// The fetcher, or null when fetching is off.
  Fetcher* fetcher() const { return fetcher_.get(); }

  /// Takes `batch` (left empty). at_least_once: extracts it while the waiting batch is judged;
  /// it waits in turn (true). exactly_once: extracts and judges it now, in one transaction (or
  /// one per input when it holds suspects); the inputs of a transaction that did not commit go
  /// back to the front of their partitions (false).
  bool take(std::vector<Taken>& batch);
  /// True while an extracted batch waits to be judged.
  bool waiting() const { return waiting_.has_value(); }
  /// Judges the waiting batch, if any, now.
  void judge_waiting();
  /// A failed delivery: the waiting batch's inputs go back to the front of their partitions.
  void give_back_waiting();
  /// The loop has ended: the waiting batch is judged (`judge`; its outputs are acknowledged
  /// within the drain limit) or its inputs destroyed.
  void finish(bool judge);
  /// A revoked partition: the waiting batch drops its inputs of `p` (extracted, not judged: the
  /// new owner judges them); returns how many.
  std::size_t drop(const PartitionIntake::Partition& p);

 private:
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

  /// True when an input of `batch` was in flight when an earlier process died.
  bool suspect(const std::vector<Taken>& batch) const;
  /// at_least_once: extracts `batch` on the pool while the waiting batch is judged here.
  void overlap(std::vector<Taken>& batch);
  /// exactly_once: `batch` in one transaction, or one each when it holds suspects; the inputs
  /// not delivered go back to their partitions.
  bool transact(std::vector<Taken>& batch, bool one_each);
  /// Parses and extracts the inputs of `stage.batch` on the worker pool; returns at once unless
  /// `wait` (then `pool_.wait()` ends it).
  void extract(Stage& stage, bool wait);
  /// Starts fetching the pages that the extracted `stage`'s feed items link to (those not
  /// published before), on a thread of its own: the loop goes on collecting and the pool
  /// extracting while the sites answer. `judge` waits for them at most `fetch.batch_wait_ms`
  /// (the loop alive meanwhile), then cuts the fetch short: what is not fetched is deferred.
  void fetch_links(Stage& stage);
  /// In input order: gives feed items their linked pages (waiting for `fetch_links`, started
  /// here if it was not), judges (or hands over) every input and queues the outputs.
  /// at_least_once: the batch goes to the collector (true); exactly_once: the transaction is
  /// committed, false when it was not.
  bool judge(Stage& stage);
  /// The linked pages waited for (at most `fetch.batch_wait_ms`) and given to their items.
  void apply_linked_pages(Stage& stage);
  /// The inputs judged (an extractor: handed over) in input order, their records queued.
  void run_inputs(Stage& stage, bool extractor);
  /// Extracts and judges `batch` now (suspects, exactly_once). False when it was not delivered
  /// (exactly_once): its inputs are left in `batch`.
  bool process(std::vector<Taken>& batch);
  /// The crash guard's note: the inputs of `batches` are being processed (none: the note goes).
  void note_processing(std::initializer_list<const std::vector<Taken>*> batches);
  /// exactly_once: commits the batch's transaction with the offsets after `messages`.
  bool commit_transaction(Transaction& transaction,
                          const std::vector<rd_kafka_message_t*>& messages);

  Parts parts_;
  const bool exactly_once_;
  WorkerPool pool_;         // extraction threads (`kafka.workers`)
  WorkerPool output_pool_;  // serializes a judged batch's records while the pool extracts
  OrderedStage grouping_;   // an article joins its story while the next is judged
  // at_least_once: a batch extracted while the one before it was judged; judged next.
  std::optional<Stage> waiting_;
  const Stage* extracting_ = nullptr;  // the batch the pool extracts while `waiting_` is judged
  std::unique_ptr<Fetcher> fetcher_;   // null when fetch.enabled is false
};

}  // namespace newsflow::daemon
