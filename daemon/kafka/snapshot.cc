#include "daemon/kafka/state_store.h"

// Snapshots of the judging state in the state changelog: every `kafka.state_snapshot_articles`
// articles, at a moment when every judged input is committed, the owner writes its whole state
// in chunks, then tombstones the records the snapshot covers and the previous snapshot's chunks.
// Compaction then leaves one snapshot and the records since; a restore loads the one and
// applies the others (restore.cc).

#include <librdkafka/rdkafka.h>

#include <chrono>

#include "daemon/kafka/record_collector.h"
#include "daemon/kafka/roles.h"
#include "daemon/kafka/transaction.h"
#include "daemon/ops/log.h"
#include "daemon/ops/metrics.h"
#include "daemon/pipeline/pipeline.h"
#include "dedup/state.h"

namespace newsflow::daemon {

namespace {

// Below the brokers' default limit on a record (1 MB) with room for the headers.
constexpr std::size_t kChunkBytes = 512 * 1024;

double seconds_from(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

bool StateStore::snapshot_due() const {
  const auto every = static_cast<std::uint64_t>(config_.kafka.state_snapshot_articles);
  if (every == 0 || config_.topics.state.empty() || !role_of(config_).judges()) {
    return false;
  }
  return pipeline_.last_seq() >= std::max(snapshot_seq_ + every, snapshot_retry_seq_);
}

void StateStore::snapshot_later() {
  const auto every = static_cast<std::uint64_t>(config_.kafka.state_snapshot_articles);
  snapshot_retry_seq_ = pipeline_.last_seq() + std::max<std::uint64_t>(1, every / 100);
}

bool StateStore::write_snapshot(RecordCollector& collector, bool transactional, int timeout_ms,
                                const std::function<void()>& tick) {
  const auto t0 = std::chrono::steady_clock::now();
  SnapshotWrite w{pipeline_.last_seq()};
  // The snapshot is as large as the state (a gigabyte at 750,000 articles): the acknowledgements
  // may take longer than a batch's.
  const int timeout = std::max(120000, timeout_ms);
  std::optional<Transaction> transaction;
  if (transactional) {
    auto begun = Transaction::begin(collector.producer(), timeout);
    if (!begun) return snapshot_failed(collector, w, begun.error().message);
    transaction.emplace(std::move(*begun));
  }
  collector.reset_errors();
  bool ok = send_chunks(collector, w, tick);
  // Without a transaction the chunks are acknowledged before anything they replace is deleted.
  if (ok && !transactional) ok = flushed(collector, timeout);
  if (!ok) {
    if (transaction) transaction->abort();
    return snapshot_failed(
        collector, w,
        collector.last_error().empty() ? "chunks not acknowledged" : collector.last_error());
  }
  const std::vector<std::string> gone = snapshot_covered_keys();
  bool deleted = send_tombstones(collector, gone);
  if (transaction) {
    if (!deleted) {
      transaction->abort();
      return snapshot_failed(
          collector, w,
          collector.last_error().empty() ? "tombstones not queued" : collector.last_error());
    }
    const auto committed =
        transaction->commit({}, nullptr, [&collector] { return collector.failure(); });
    if (!committed) {
      return snapshot_failed(collector, w,
                             committed.error().message.empty() ? "transaction not committed"
                                                               : committed.error().message);
    }
  } else {
    deleted = deleted && flushed(collector, timeout);
  }
  snapshot_written(collector, w, deleted);
  const double seconds = seconds_from(t0);
  metrics_.snapshot_written(static_cast<double>(w.bytes), seconds);
  log::info("state_snapshot_written", {{"seq", std::to_string(w.seq)},
                                       {"bytes", std::to_string(w.bytes)},
                                       {"chunks", std::to_string(w.chunks)},
                                       {"tombstones", std::to_string(gone.size())},
                                       {"articles_held", std::to_string(pipeline_.window().size())},
                                       {"seconds", std::to_string(seconds)}});
  return true;
}

bool StateStore::snapshot_failed(RecordCollector& collector, const SnapshotWrite& w,
                                 const std::string& error) {
  // Nothing is lost: the records stay. Chunks of this snapshot that made it are deleted with
  // the next one; it is tried again after as many articles more.
  log::error("snapshot_failed", {{"seq", std::to_string(w.seq)}, {"error", error}});
  for (std::uint64_t i = 0; i < w.chunks; ++i) {
    stale_snapshot_keys_.push_back(dedup::snapshot_key(w.seq, i));
  }
  collector.reset_errors();
  snapshot_retry_seq_ = w.seq + static_cast<std::uint64_t>(config_.kafka.state_snapshot_articles);
  return false;
}

bool StateStore::send_chunks(RecordCollector& collector, SnapshotWrite& w,
                             const std::function<void()>& tick) {
  bool ok = true;
  // Chunks go out as they are made, at most kQueued waiting in the producer: the snapshot is
  // never held whole beside the state.
  constexpr int kQueued = 64;
  pipeline_.save_state(kChunkBytes, [&](std::string_view part, bool last) {
    if (!ok) return;
    while (rd_kafka_outq_len(collector.producer()) > kQueued && collector.errors() == 0) {
      rd_kafka_poll(collector.producer(), 10);
      tick();  // a long snapshot is progress, not a hung loop
    }
    ok = collector.errors() == 0 &&
         collector.produce(config_.topics.state, dedup::snapshot_key(w.seq, w.chunks),
                           dedup::encode_snapshot_chunk(w.seq, w.chunks, last, part),
                           {{"schema", "newsflow.state-snapshot/1"}});
    ++w.chunks;
    w.bytes += part.size();
  });
  return ok;
}

bool StateStore::flushed(RecordCollector& collector, int timeout_ms) {
  return rd_kafka_flush(collector.producer(), timeout_ms) == RD_KAFKA_RESP_ERR_NO_ERROR &&
         collector.errors() == 0;
}

std::vector<std::string> StateStore::snapshot_covered_keys() const {
  // The records since the last snapshot, that one's chunks, and chunks of any older snapshot.
  std::vector<std::string> gone;
  gone.reserve(keys_.size() + stale_snapshot_keys_.size() + snapshot_chunks_);
  keys_.for_each([&gone](std::string key) { gone.push_back(std::move(key)); });
  for (std::uint64_t i = 0; snapshot_seq_ > 0 && i < snapshot_chunks_; ++i) {
    gone.push_back(dedup::snapshot_key(snapshot_seq_, i));
  }
  gone.insert(gone.end(), stale_snapshot_keys_.begin(), stale_snapshot_keys_.end());
  return gone;
}

bool StateStore::send_tombstones(RecordCollector& collector, const std::vector<std::string>& keys) {
  bool deleted = true;
  for (const std::string& key : keys) {
    deleted = deleted && collector.produce(config_.topics.state, key, {}, {}, true);
  }
  return deleted;
}

void StateStore::snapshot_written(RecordCollector& collector, const SnapshotWrite& w,
                                  bool deleted) {
  const std::uint64_t previous = snapshot_seq_, previous_chunks = snapshot_chunks_;
  snapshot_seq_ = w.seq;
  snapshot_chunks_ = w.chunks;
  if (deleted) {
    keys_.clear();
    stale_snapshot_keys_.clear();
    return;
  }
  // The snapshot stands; what was not deleted is deleted with the next one.
  log::warn("snapshot_tombstones_failed",
            {{"seq", std::to_string(w.seq)}, {"error", collector.last_error()}});
  for (std::uint64_t i = 0; previous > 0 && i < previous_chunks; ++i) {
    stale_snapshot_keys_.push_back(dedup::snapshot_key(previous, i));
  }
  collector.reset_errors();
}

}  // namespace newsflow::daemon
