#include "daemon/kafka/daemon.h"

// A batch from extraction to commit: extracted on the worker pool, judged in input order on
// the loop's thread, its outputs queued and acknowledged by delivery reports, its offsets
// committed (or, exactly_once, all in one transaction).

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "daemon/kafka/message.h"
#include "daemon/ops/log.h"
#include "daemon/ops/metrics.h"
#include "daemon/pipeline/input.h"
#include "daemon/version.h"

namespace newsflow::daemon {

using namespace internal;

void Daemon::extract(Stage& stage, bool wait) {
  stage.messages.clear();
  for (const Taken& t : stage.batch) stage.messages.push_back(t.msg);
  stage.work.clear();
  stage.work.resize(stage.messages.size());
  for (rd_kafka_message_t* m : stage.messages) {
    metrics_.consumed(rd_kafka_topic_name(m->rkt), m->partition);
    ++progress_.consumed;
  }
  // Extraction is stateless: one input at a time to each of the pool's threads; judging stays
  // in input order on the loop's thread.
  pool_->start(
      stage.messages.size(), [this, &messages = stage.messages, &work = stage.work](std::size_t i) {
        if (crash_guard_.crashes(rd_kafka_topic_name(messages[i]->rkt), messages[i]->partition,
                                 messages[i]->offset) >= 2) {
          work[i].parsed.failure =
              Failure{"worker_crash", "the process died twice while processing this input"};
          return;
        }
        if (faults_.crashes_on(payload(messages[i]))) {
          std::abort();
        }
        try {
          const auto t0 = Clock::now();
          if (config_.role == config::Role::kDedup) {
            // An extractor's record: extraction is done; the article goes straight to judging.
            auto record = parse_extracted(payload(messages[i]));
            metrics_.stage_seconds("parse", seconds_since(t0));
            if (!record) {
              work[i].parsed.failure = Failure{"invalid_extracted", record.error()};
              return;
            }
            work[i].parsed.input = std::move(record->second);
            pipeline_.ready_to_judge(record->first);
            work[i].prepared = std::vector<Pipeline::Extracted>{};
            work[i].prepared->push_back(std::move(record->first));
            return;
          }
          work[i].parsed = inputs_.parse(messages[i]);
          metrics_.stage_seconds("parse", seconds_since(t0));
          if (!work[i].parsed.failure) {
            // An extractor hands its articles over: the judging is another process's.
            work[i].prepared =
                pipeline_.prepare(work[i].parsed.input, config_.role != config::Role::kExtract);
          }
        } catch (const std::exception& e) {
          work[i].prepared = tl::unexpected(Failure{"internal_error", e.what()});
        }
      });
  if (wait) pool_->wait();
}

namespace {

// The offsets to commit after `messages`: one past the last message of each partition.
Transaction::Offsets next_offsets(const std::vector<rd_kafka_message_t*>& messages) {
  Transaction::Offsets next;
  for (const auto* m : messages) {
    auto& o = next[{rd_kafka_topic_name(m->rkt), m->partition}];
    o = std::max(o, m->offset + 1);
  }
  return next;
}

}  // namespace

bool Daemon::commit_transaction(Transaction& transaction,
                                const std::vector<rd_kafka_message_t*>& messages) {
  const auto committed = transaction.commit(next_offsets(messages), intake_.consumer(),
                                            [this] { return collector_.failure(); });
  if (committed) return true;
  log::error("transaction_failed", {{"error", committed.error().message},
                                    {"fatal", committed.error().fatal ? "true" : "false"}});
  return false;
}

void Daemon::note_processing(std::initializer_list<const std::vector<Taken>*> batches) {
  if (!crash_guard_.enabled()) return;
  std::vector<CrashGuard::Input> inputs;
  for (const auto* batch : batches) {
    if (!batch) continue;
    for (const auto& t : *batch) {
      inputs.push_back({rd_kafka_topic_name(t.msg->rkt), t.msg->partition, t.msg->offset});
    }
  }
  if (inputs.empty()) {
    crash_guard_.end();
  } else {
    crash_guard_.begin(inputs);
  }
}

namespace {

// The feed items of a batch that link to their page, in input order.
template <class Work>
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

void Daemon::fetch_links(Stage& stage) {
  if (!fetcher_ || stage.linked_pages.valid()) return;
  // Which links are new is read here, on the loop's thread; `judge` asks again before it uses
  // a page (one published meanwhile is skipped).
  stage.link_urls = pipeline_.links_to_fetch(link_items(stage.work));
  if (stage.link_urls.empty()) return;
  // One batch's links at a time (the fetcher serves one thread at a time): the batch before
  // has been judged.
  stage.linked_pages = std::async(std::launch::async, [this, urls = stage.link_urls] {
    return pipeline_.fetch_pages(urls, *fetcher_);
  });
}

void Daemon::judge_waiting() {
  if (!waiting_) return;
  judge(*waiting_);
  waiting_.reset();
  note_processing({});
}

bool Daemon::process_batch(std::vector<Taken>& batch) {
  note_processing({&batch});
  Stage stage;
  stage.batch = std::move(batch);
  batch.clear();
  extract(stage, /*wait=*/true);
  const bool delivered = judge(stage);
  // exactly_once: a batch not delivered goes back to the caller (at_least_once: `settle`).
  batch = std::move(stage.batch);
  crash_guard_.end();
  return delivered;
}

bool Daemon::judge(Stage& stage) {
  collector_.reset_errors();
  std::vector<rd_kafka_message_t*>& messages = stage.messages;
  std::vector<Work>& work = stage.work;
  std::vector<Taken>& batch = stage.batch;
  if (fetcher_) {
    if (!stage.linked_pages.valid()) fetch_links(stage);
    if (stage.linked_pages.valid()) {
      // Bounded by the fetcher's batch deadline; the loop is not stalled meanwhile.
      while (stage.linked_pages.wait_for(std::chrono::milliseconds(250)) !=
             std::future_status::ready) {
        status_.tick(ready(), intake_.assigned());
      }
      std::vector<Pipeline::LinkedPage> pages;
      try {
        pages = stage.linked_pages.get();
      } catch (const std::exception& e) {
        log::error("fetch_failed", {{"error", e.what()}});
      }
      pipeline_.apply_pages(link_items(work), stage.link_urls, std::move(pages));
    }
  }
  const auto t0 = Clock::now();
  std::optional<Transaction> transaction;
  if (exactly_once_) {
    auto begun = Transaction::begin(collector_.producer(), std::max(1, drain_.flush_timeout_ms()));
    if (!begun) {
      log::error("transaction_begin_failed", {{"error", begun.error().message}});
      return false;
    }
    transaction.emplace(std::move(*begun));
  }
  // The batch's records, each with the input it came from (exactly_once too: a record refused
  // for good names its input to the batch's next judging).
  collector_.begin_batch();
  for (std::size_t i = 0; i < messages.size(); ++i) {
    // Expiry never runs ahead of what a partition may still deliver.
    pipeline_.hold_expiry_at(batch[i].low_watermark);
    if (config_.role == config::Role::kExtract) {
      collector_.begin_input(messages[i]);
      inputs_.hand_over(messages[i], work[i]);
      collector_.end_input();
    } else {
      inputs_.judge(messages[i], work[i]);
    }
  }
  if (config_.role != config::Role::kExtract) {
    // The records are written on the output pool (and this thread) while the extraction pool
    // extracts the next batch, then queued in input order.
    output_pool_->start(work.size(), [this, &work](std::size_t i) { inputs_.serialize(work[i]); });
    output_pool_->wait();
    for (std::size_t i = 0; i < messages.size(); ++i) {
      collector_.begin_input(messages[i]);
      inputs_.publish(messages[i], work[i]);
      collector_.end_input();
    }
  }
  // After the batch's records, in the same partitions: how far the inputs have come.
  if (config_.role == config::Role::kExtract) {
    extracted_.emit_watermarks(intake_, extracting_ ? &extracting_->batch : nullptr);
  }
  std::unique_ptr<InFlight> flight = collector_.end_batch();
  metrics_.producer_queue(rd_kafka_outq_len(collector_.producer()));
  if (!exactly_once_) {
    // The next batch is judged while this one's outputs are on their way (`settle`).
    flight->queued = Clock::now();
    flight->links = pipeline_.take_pending_links();
    flight->kill = faults_.kill_armed();
    flight->inputs = std::move(batch);
    batch.clear();
    collector_.queue(std::move(flight));
    metrics_.stage_seconds("produce", seconds_since(t0));
    return true;
  }
  // Outputs and input offsets commit together or not at all.
  const bool delivered = commit_transaction(*transaction, messages);
  // Delivery reports of an aborted transaction's records may still be due: they find it here.
  collector_.prune();
  collector_.retire(std::move(flight));
  metrics_.stage_seconds("produce", seconds_since(t0));
  metrics_.producer_queue(rd_kafka_outq_len(collector_.producer()));
  if (!delivered) {
    pipeline_.drop_pending_links();
    return false;
  }
  pipeline_.confirm_links();
  metrics_.committed();
  progress_.committed += messages.size();
  return true;
}

void Daemon::release(InFlight& f) {
  for (const Taken& t : f.inputs) rd_kafka_message_destroy(t.msg);
  f.inputs.clear();
}

bool Daemon::settle(bool drain, bool rewind) {
  if (drain && !collector_.empty()) {
    // Everything queued, acknowledged within the flush limit (after SIGTERM, the drain limit).
    rd_kafka_flush(collector_.producer(), drain_.flush_timeout_ms());
  } else {
    rd_kafka_poll(collector_.producer(), 0);
  }
  const auto limit = std::chrono::milliseconds(config_.kafka.flush_timeout_ms);
  // Outputs in flight are bounded: the judging waits while the oldest of kMaxInFlight batches
  // is on its way.
  constexpr std::size_t kMaxInFlight = 4;
  collector_.wait_for_room(kMaxInFlight, limit, [this] { return drain_.over(); });
  bool ok = true;
  const auto now = Clock::now();
  while (!collector_.empty()) {
    InFlight& f = collector_.front();
    if (!f.failed && f.outstanding > 0) {
      if (!drain && now - f.queued < limit) break;  // on its way
      f.failed = true;                              // not acknowledged in time
    }
    if (f.failed) {
      if (!rewind) break;
      log::error("batch_not_delivered",
                 {{"errors", std::to_string(collector_.errors())},
                  {"unacknowledged", std::to_string(f.outstanding)},
                  {"batches_judged_again", std::to_string(collector_.size())},
                  {"last_error", collector_.last_error()}});
      // Its inputs and those of every later batch go back to the front of their partitions,
      // the latest first, and are judged again (the window repeats its verdicts for ids it
      // knows). Delivery reports still due for them find them among the retired.
      if (waiting_) {
        intake_.give_back(waiting_->batch.begin(), waiting_->batch.end());
        waiting_.reset();
        note_processing({});
      }
      collector_.retire_all([this](InFlight& later) {
        intake_.give_back(later.inputs.begin(), later.inputs.end());
        later.inputs.clear();
      });
      ok = false;
      break;
    }
    // Acknowledged in full, and every batch before it too.
    metrics_.stage_seconds("acknowledge", std::chrono::duration<double>(now - f.queued).count());
    pipeline_.confirm_links(f.links);
    if (f.kill) {
      log::error("fault_injected", {{"fault", "a state record lost, killed before the commit"}});
      std::raise(SIGKILL);
    }
    if (!faults_.commits_lost()) {  // fault injection: from then on the commit "fails"
      for (const Taken& t : f.inputs) {
        // A partition revoked since its batch was judged is its new owner's to commit: its
        // offsets would move that owner's position (as on_commit knows too).
        const auto tp = partition_of(t.msg);
        if (!intake_.owns(tp)) continue;
        committer_.acknowledged(tp, t.msg->offset + 1);
      }
    }
    release(f);
    collector_.pop_front();
  }
  collector_.prune();
  if (committer_.due(std::chrono::milliseconds(config_.kafka.commit_interval_ms), drain, now)) {
    commit_offsets(/*sync=*/drain);
  }
  return ok;
}

bool Daemon::commit_offsets(bool sync) {
  if (!committer_.waiting() || faults_.commits_blocked()) return true;
  // A dedup owner that lost its lease commits nothing: its consumer is assigned by hand, so the
  // broker would take the commit and move the new owner's position.
  if (lease_.lost()) return false;
  const OffsetCommitter::Result result = committer_.commit(sync, Clock::now());
  note_commit(result);
  return result.ok;
}

void Daemon::note_commit(const OffsetCommitter::Result& result) {
  if (result.committed) {
    metrics_.committed();
    progress_.committed += result.messages;
  } else if (!result.ok) {
    // The offsets go with the next batch's, or on their own a moment later while idle, and
    // before the process exits.
    metrics_.commit_failed();
    log::warn("commit_failed", {{"error", result.error},
                                {"partitions", std::to_string(result.partitions)},
                                {"retry_ms", std::to_string(committer_.backoff().count())}});
  }
}

PartitionIntake::Listener Daemon::intake_listener() {
  PartitionIntake::Listener l;
  // Batches judged before a revoke are acknowledged and their offsets committed now, so the new
  // owner does not judge them again; one that fails is judged again once the rebalance is done
  // (its inputs of partitions still assigned).
  l.before_revoke = [this] { settle(/*drain=*/true, /*rewind=*/false); };
  l.revoked = [this](const PartitionIntake::Partition& p) {
    // Its new owner starts from the last committed offset (at least once).
    committer_.revoked(p);
    if (!waiting_) return std::size_t{0};
    // Extracted, not judged: its inputs of the partition go with it.
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
  };
  l.commit_answered = [this](int err_int, void* partitions_ptr) {
    const auto* partitions = static_cast<const rd_kafka_topic_partition_list_t*>(partitions_ptr);
    if (!partitions) return;
    auto err = static_cast<rd_kafka_resp_err_t>(err_int);
    OffsetCommitter::Offsets offsets;
    for (int i = 0; i < partitions->cnt; ++i) {
      const auto& tp = partitions->elems[i];
      offsets[{tp.topic, tp.partition}] = tp.offset;
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR) err = tp.err;
    }
    if (const auto result = committer_.answered(err, offsets, rd_kafka_err2str(err))) {
      note_commit(*result);
    }
  };
  l.busy = [this] { return !collector_.empty() || committer_.waiting(); };
  return l;
}

void Daemon::maybe_snapshot() {
  if (!store_.snapshot_due()) return;
  if (lease_.active() && !lease_.owner()) return;  // a standby follows the owner's changelog
  // Fault injection makes commits fail or records go missing: what is judged is not state.
  if (faults_.state_unreliable() || stop_.load()) return;
  judge_waiting();
  const bool settled = settle(/*drain=*/true);  // not delivered: judged again first
  if (!settled || !collector_.empty() || waiting_ || !committer_.idle()) {
    // Each try waits for every output and commits synchronously.
    store_.snapshot_later();
    return;
  }
  store_.write_snapshot(collector_, exactly_once_, drain_.flush_timeout_ms(),
                        [this] { status_.tick(ready(), intake_.assigned()); });
}

}  // namespace newsflow::daemon
