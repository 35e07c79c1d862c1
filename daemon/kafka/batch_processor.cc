#include "daemon/kafka/batch_processor.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "daemon/kafka/crash_guard.h"
#include "daemon/kafka/drain.h"
#include "daemon/kafka/extracted_topic.h"
#include "daemon/kafka/faults.h"
#include "daemon/kafka/loop_status.h"
#include "daemon/kafka/message.h"
#include "daemon/kafka/transaction.h"
#include "daemon/ops/crash_scope.h"
#include "daemon/ops/log.h"
#include "daemon/ops/metrics.h"

namespace newsflow::daemon {

using namespace internal;

namespace {

std::size_t worker_count(const config::Config& config) {
  return config.kafka.workers > 0 ? static_cast<std::size_t>(config.kafka.workers)
                                  : std::max<std::size_t>(1, std::thread::hardware_concurrency());
}

// The offsets to commit after `messages`: one past the last message of each partition.
Transaction::Offsets next_offsets(const std::vector<rd_kafka_message_t*>& messages) {
  Transaction::Offsets next;
  for (const auto* m : messages) {
    auto& o = next[{rd_kafka_topic_name(m->rkt), m->partition}];
    o = std::max(o, m->offset + 1);
  }
  return next;
}

// The feed items of a batch that link to their page, in input order.
std::vector<Pipeline::Extracted*> link_items(std::vector<Work>& work) {
  std::vector<Pipeline::Extracted*> items;
  for (auto& w : work) {
    if (!w.prepared) continue;
    for (auto& e : *w.prepared) {
      if (!e.fetch_url.empty()) items.push_back(&e);
    }
  }
  return items;
}

}  // namespace

BatchProcessor::BatchProcessor(Parts parts)
    : parts_(std::move(parts)),
      exactly_once_(parts_.config.kafka.delivery == config::Delivery::kExactlyOnce),
      pool_(worker_count(parts_.config)),
      output_pool_(worker_count(parts_.config)) {}

tl::expected<void, std::string> BatchProcessor::open_fetcher() {
  if (!parts_.config.fetch.enabled) return {};
  auto f = Fetcher::create(parts_.config.fetch, &parts_.metrics);
  if (!f) return tl::unexpected(f.error());
  fetcher_ = std::move(*f);
  return {};
}

bool BatchProcessor::suspect(const std::vector<Taken>& batch) const {
  for (const auto& t : batch) {
    if (parts_.crash_guard.crashes(rd_kafka_topic_name(t.msg->rkt), t.msg->partition,
                                   t.msg->offset) > 0) {
      return true;
    }
  }
  return false;
}

bool BatchProcessor::take(std::vector<Taken>& batch) {
  const bool one_each = suspect(batch);
  if (exactly_once_) return transact(batch, one_each && batch.size() > 1);
  // Queued when judged; acknowledged, committed or sent back by the daemon's `settle`.
  if (one_each) {
    judge_waiting();
    for (const Taken& t : batch) {
      std::vector<Taken> one{t};
      process(one);
    }
    batch.clear();
  } else {
    overlap(batch);
  }
  return true;
}

void BatchProcessor::overlap(std::vector<Taken>& batch) {
  Stage next;
  next.batch = std::move(batch);
  batch.clear();
  note_processing({&next.batch, waiting_ ? &waiting_->batch : nullptr});
  extract(next, /*wait=*/false);
  extracting_ = &next;
  if (waiting_) {
    judge(*waiting_);
    waiting_.reset();
  }
  pool_.wait();  // this thread extracts what the pool has not taken yet
  extracting_ = nullptr;
  waiting_ = std::move(next);
  note_processing({&waiting_->batch});
  fetch_links(*waiting_);  // while the next batch is collected and extracted
}

bool BatchProcessor::transact(std::vector<Taken>& batch, bool one_each) {
  bool delivered = true;
  std::size_t done = batch.size();
  if (one_each) {
    for (std::size_t i = 0; i < batch.size(); ++i) {
      std::vector<Taken> one{batch[i]};
      if (!process(one)) {
        done = i;
        delivered = false;
        break;
      }
    }
  } else {
    delivered = process(batch);
    if (!delivered) done = 0;
  }
  // Messages not delivered wait at the front of their partitions for the next try.
  for (std::size_t i = 0; i < done; ++i) rd_kafka_message_destroy(batch[i].msg);
  parts_.intake.give_back(batch.begin() + static_cast<std::ptrdiff_t>(done), batch.end());
  batch.clear();
  return delivered;
}

void BatchProcessor::judge_waiting() {
  if (!waiting_) return;
  judge(*waiting_);
  waiting_.reset();
  note_processing({});
}

void BatchProcessor::give_back_waiting() {
  if (!waiting_) return;
  parts_.intake.give_back(waiting_->batch.begin(), waiting_->batch.end());
  waiting_.reset();
  note_processing({});
}

void BatchProcessor::finish(bool judge) {
  if (judge) {
    judge_waiting();
    return;
  }
  if (!waiting_) return;
  for (const Taken& t : waiting_->batch) rd_kafka_message_destroy(t.msg);
  waiting_.reset();
  note_processing({});
}

std::size_t BatchProcessor::drop(const PartitionIntake::Partition& p) {
  if (!waiting_) return 0;
  Stage& w = *waiting_;
  std::size_t kept = 0;
  for (std::size_t j = 0; j < w.batch.size(); ++j) {
    rd_kafka_message_t* m = w.batch[j].msg;
    if (partition_of(m) == p) {
      rd_kafka_message_destroy(m);
      continue;
    }
    if (kept != j) {
      w.batch[kept] = w.batch[j];
      w.messages[kept] = w.messages[j];
      w.work[kept] = std::move(w.work[j]);
    }
    ++kept;
  }
  const std::size_t dropped = w.batch.size() - kept;
  w.batch.resize(kept);
  w.messages.resize(kept);
  w.work.resize(kept);
  return dropped;
}

void BatchProcessor::extract(Stage& stage, bool wait) {
  stage.messages.clear();
  for (const Taken& t : stage.batch) stage.messages.push_back(t.msg);
  stage.work.clear();
  stage.work.resize(stage.messages.size());
  for (rd_kafka_message_t* m : stage.messages) {
    parts_.metrics.consumed(rd_kafka_topic_name(m->rkt), m->partition);
    ++parts_.progress.consumed;
  }
  // Extraction is stateless: one input at a time to each of the pool's threads; judging stays
  // in input order on the loop's thread.
  pool_.start(
      stage.messages.size(), [this, &messages = stage.messages, &work = stage.work](std::size_t i) {
        const std::string topic = rd_kafka_topic_name(messages[i]->rkt);
        const int partition = messages[i]->partition;
        const std::int64_t offset = messages[i]->offset;
        if (parts_.crash_guard.crashes(topic, partition, offset) >= 2) {
          work[i].parsed.failure =
              Failure{Reason::kWorkerCrash, parts_.crash_guard.crash_detail(topic, partition, offset)};
          return;
        }
        // A fatal signal from here on names this input (the crash guard's note).
        const CrashScope scope(CrashGuard::scope_note(topic, partition, offset));
        if (parts_.faults.crashes_on(payload(messages[i]))) {
          std::abort();
        }
        try {
          const auto t0 = Clock::now();
          if (parts_.config.role == config::Role::kDedup) {
            // An extractor's record: extraction is done; the article goes straight to
            // judging.
            auto record = parse_extracted(payload(messages[i]));
            parts_.metrics.stage_seconds("parse", seconds_since(t0));
            if (!record) {
              work[i].parsed.failure = Failure{Reason::kInvalidExtracted, record.error()};
              return;
            }
            work[i].parsed.input = std::move(record->second);
            parts_.pipeline.ready_to_judge(record->first);
            work[i].prepared = std::vector<Pipeline::Extracted>{};
            work[i].prepared->push_back(std::move(record->first));
            return;
          }
          work[i].parsed = parts_.inputs.parse(messages[i]);
          parts_.metrics.stage_seconds("parse", seconds_since(t0));
          if (!work[i].parsed.failure) {
            // An extractor hands its articles over: the judging is another process's.
            work[i].prepared = parts_.pipeline.prepare(
                work[i].parsed.input, parts_.config.role != config::Role::kExtract);
          }
        } catch (const std::exception& e) {
          work[i].prepared = tl::unexpected(Failure{Reason::kInternalError, e.what()});
        }
      });
  if (wait) pool_.wait();
}

bool BatchProcessor::commit_transaction(Transaction& transaction,
                                        const std::vector<rd_kafka_message_t*>& messages) {
  const auto committed = transaction.commit(next_offsets(messages), parts_.intake.consumer(),
                                            [this] { return parts_.collector.failure(); });
  if (committed) return true;
  log::error("transaction_failed", {{"error", committed.error().message},
                                    {"fatal", committed.error().fatal ? "true" : "false"}});
  return false;
}

void BatchProcessor::note_processing(std::initializer_list<const std::vector<Taken>*> batches) {
  if (!parts_.crash_guard.enabled()) return;
  std::vector<CrashGuard::Input> inputs;
  for (const auto* batch : batches) {
    if (!batch) continue;
    for (const auto& t : *batch) {
      inputs.push_back({rd_kafka_topic_name(t.msg->rkt), t.msg->partition, t.msg->offset});
    }
  }
  if (inputs.empty()) {
    parts_.crash_guard.end();
  } else {
    parts_.crash_guard.begin(inputs);
  }
}

void BatchProcessor::fetch_links(Stage& stage) {
  if (!fetcher_ || stage.linked_pages.valid()) return;
  // Which links are new is read here, on the loop's thread; `judge` asks again before it uses
  // a page (one published meanwhile is skipped).
  stage.link_urls = parts_.pipeline.links_to_fetch(link_items(stage.work));
  if (stage.link_urls.empty()) return;
  // One batch's links at a time (the fetcher serves one thread at a time): the batch before
  // has been judged.
  stage.linked_pages = std::async(std::launch::async, [this, urls = stage.link_urls] {
    return parts_.pipeline.fetch_pages(urls, *fetcher_);
  });
}

bool BatchProcessor::process(std::vector<Taken>& batch) {
  note_processing({&batch});
  Stage stage;
  stage.batch = std::move(batch);
  batch.clear();
  extract(stage, /*wait=*/true);
  const bool delivered = judge(stage);
  // exactly_once: a batch not delivered goes back to the caller (at_least_once: `settle`).
  batch = std::move(stage.batch);
  parts_.crash_guard.end();
  return delivered;
}

bool BatchProcessor::judge(Stage& stage) {
  RecordCollector& collector = parts_.collector;
  Pipeline& pipeline = parts_.pipeline;
  Metrics& metrics = parts_.metrics;
  const bool extractor = parts_.config.role == config::Role::kExtract;
  collector.reset_errors();
  std::vector<rd_kafka_message_t*>& messages = stage.messages;
  std::vector<Taken>& batch = stage.batch;
  if (fetcher_) apply_linked_pages(stage);
  const auto t0 = Clock::now();
  std::optional<Transaction> transaction;
  if (exactly_once_) {
    auto begun =
        Transaction::begin(collector.producer(), std::max(1, parts_.drain.flush_timeout_ms()));
    if (!begun) {
      log::error("transaction_begin_failed", {{"error", begun.error().message}});
      return false;
    }
    transaction.emplace(std::move(*begun));
  }
  // The batch's records, each with the input it came from (exactly_once too: a record refused
  // for good names its input to the batch's next judging).
  collector.begin_batch();
  run_inputs(stage, extractor);
  std::unique_ptr<RecordCollector::Batch> flight = collector.end_batch();
  metrics.producer_queue(rd_kafka_outq_len(collector.producer()));
  if (!exactly_once_) {
    // The next batch is judged while this one's outputs are on their way (`settle`).
    flight->queued = Clock::now();
    flight->links = pipeline.take_pending_links();
    flight->kill = parts_.faults.kill_armed();
    flight->inputs = std::move(batch);
    batch.clear();
    collector.queue(std::move(flight));
    metrics.stage_seconds("produce", seconds_since(t0));
    return true;
  }
  // Outputs and input offsets commit together or not at all.
  const bool delivered = commit_transaction(*transaction, messages);
  // Delivery reports of an aborted transaction's records may still be due: they find it here.
  collector.prune();
  collector.retire(std::move(flight));
  metrics.stage_seconds("produce", seconds_since(t0));
  metrics.producer_queue(rd_kafka_outq_len(collector.producer()));
  if (!delivered) {
    pipeline.drop_pending_links();
    return false;
  }
  pipeline.confirm_links();
  metrics.committed();
  parts_.progress.committed += messages.size();
  return true;
}

// Waits for the pages the batch's feed items link to (fetched beside the loop), and gives them
// to their items.
void BatchProcessor::apply_linked_pages(Stage& stage) {
  if (!stage.linked_pages.valid()) fetch_links(stage);
  if (stage.linked_pages.valid()) {
    // Bounded by `fetch.batch_wait_ms`: then what a slow site has not sent is cut short and
    // goes on as a later try (fetch_deferred), so the batch's other inputs keep their pace;
    // the loop is not stalled meanwhile. Asked again each round: the fetch may not have begun.
    const int wait_ms = parts_.config.fetch.batch_wait_ms;
    const auto cut_at = Clock::now() + std::chrono::milliseconds(wait_ms);
    for (;;) {
      auto step = std::chrono::milliseconds(250);
      if (wait_ms > 0) {
        step = std::clamp(std::chrono::ceil<std::chrono::milliseconds>(cut_at - Clock::now()),
                          std::chrono::milliseconds(20), step);
      }
      if (stage.linked_pages.wait_for(step) == std::future_status::ready) break;
      parts_.tick();
      if (wait_ms > 0 && Clock::now() >= cut_at) fetcher_->cut_short();
    }
    std::vector<Pipeline::LinkedPage> pages;
    try {
      pages = stage.linked_pages.get();
    } catch (const std::exception& e) {
      log::error("fetch_failed", {{"error", e.what()}});
    }
    parts_.pipeline.apply_pages(link_items(stage.work), stage.link_urls, std::move(pages));
  }
}

// Each input of the batch judged (or, for an extractor, handed over) in input order, and its
// records queued.
void BatchProcessor::run_inputs(Stage& stage, bool extractor) {
  RecordCollector& collector = parts_.collector;
  Pipeline& pipeline = parts_.pipeline;
  InputTask& inputs = parts_.inputs;
  std::vector<rd_kafka_message_t*>& messages = stage.messages;
  std::vector<Work>& work = stage.work;
  std::vector<Taken>& batch = stage.batch;
  // An article joins its story on the grouping thread while the next is judged here.
  if (!extractor) grouping_.start([&inputs, &work](std::size_t i) { inputs.group(work[i]); });
  for (std::size_t i = 0; i < messages.size(); ++i) {
    // Expiry never runs ahead of what a partition may still deliver.
    pipeline.hold_expiry_at(batch[i].low_watermark);
    if (extractor) {
      collector.begin_input(messages[i]);
      inputs.hand_over(messages[i], work[i]);
      collector.end_input();
    } else {
      inputs.judge(messages[i], work[i]);
      grouping_.release(i + 1);
    }
  }
  if (!extractor) {
    grouping_.wait();
    // The records are written on the output pool (and this thread) while the extraction pool
    // extracts the next batch, then queued in input order.
    output_pool_.start(work.size(), [&inputs, &work](std::size_t i) { inputs.serialize(work[i]); });
    output_pool_.wait();
    for (std::size_t i = 0; i < messages.size(); ++i) {
      collector.begin_input(messages[i]);
      inputs.publish(messages[i], work[i]);
      collector.end_input();
    }
  } else {
    // After the batch's records, in the same partitions: how far the inputs have come.
    parts_.extracted.emit_watermarks(parts_.intake, extracting_ ? &extracting_->batch : nullptr);
  }
}

}  // namespace newsflow::daemon
