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
  const std::uint64_t seq = pipeline_.last_seq();
  std::uint64_t chunks = 0, bytes = 0;
  const std::string& topic = config_.topics.state;
  // The snapshot is as large as the state (a gigabyte at 750,000 articles): the acknowledgements
  // may take longer than a batch's.
  const int timeout = std::max(120000, timeout_ms);
  auto failed = [&](const std::string& error) {
    // Nothing is lost: the records stay. Chunks of this snapshot that made it are deleted with
    // the next one; it is tried again after as many articles more.
    log::error("snapshot_failed", {{"seq", std::to_string(seq)}, {"error", error}});
    for (std::uint64_t i = 0; i < chunks; ++i) {
      stale_snapshot_keys_.push_back(dedup::snapshot_key(seq, i));
    }
    collector.reset_errors();
    snapshot_retry_seq_ = seq + static_cast<std::uint64_t>(config_.kafka.state_snapshot_articles);
    return false;
  };
  std::optional<Transaction> transaction;
  if (transactional) {
    auto begun = Transaction::begin(collector.producer(), timeout);
    if (!begun) return failed(begun.error().message);
    transaction.emplace(std::move(*begun));
  }
  collector.reset_errors();
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
         collector.produce(topic, dedup::snapshot_key(seq, chunks),
                           dedup::encode_snapshot_chunk(seq, chunks, last, part),
                           {{"schema", "newsflow.state-snapshot/1"}});
    ++chunks;
    bytes += part.size();
  });
  // Without a transaction the chunks are acknowledged before anything they replace is deleted.
  if (ok && !transactional) {
    ok = rd_kafka_flush(collector.producer(), timeout) == RD_KAFKA_RESP_ERR_NO_ERROR &&
         collector.errors() == 0;
  }
  if (!ok) {
    if (transaction) transaction->abort();
    return failed(collector.last_error().empty() ? "chunks not acknowledged"
                                                 : collector.last_error());
  }
  // What the snapshot covers: the records since the last one, that one's chunks, and chunks of
  // any older snapshot.
  std::vector<std::string> gone;
  gone.reserve(keys_.size() + stale_snapshot_keys_.size() + snapshot_chunks_);
  keys_.for_each([&gone](std::string key) { gone.push_back(std::move(key)); });
  for (std::uint64_t i = 0; snapshot_seq_ > 0 && i < snapshot_chunks_; ++i) {
    gone.push_back(dedup::snapshot_key(snapshot_seq_, i));
  }
  gone.insert(gone.end(), stale_snapshot_keys_.begin(), stale_snapshot_keys_.end());
  bool deleted = true;
  for (const std::string& key : gone)
    deleted = deleted && collector.produce(topic, key, {}, {}, true);
  if (transaction) {
    if (!deleted) {
      transaction->abort();
      return failed(collector.last_error().empty() ? "tombstones not queued"
                                                   : collector.last_error());
    }
    const auto committed =
        transaction->commit({}, nullptr, [&collector] { return collector.failure(); });
    if (!committed) {
      return failed(committed.error().message.empty() ? "transaction not committed"
                                                      : committed.error().message);
    }
  } else {
    deleted = deleted &&
              rd_kafka_flush(collector.producer(), timeout) == RD_KAFKA_RESP_ERR_NO_ERROR &&
              collector.errors() == 0;
  }
  const std::uint64_t previous = snapshot_seq_, previous_chunks = snapshot_chunks_;
  snapshot_seq_ = seq;
  snapshot_chunks_ = chunks;
  if (deleted) {
    keys_.clear();
    stale_snapshot_keys_.clear();
  } else {
    // The snapshot stands; what was not deleted is deleted with the next one.
    log::warn("snapshot_tombstones_failed",
              {{"seq", std::to_string(seq)}, {"error", collector.last_error()}});
    for (std::uint64_t i = 0; previous > 0 && i < previous_chunks; ++i) {
      stale_snapshot_keys_.push_back(dedup::snapshot_key(previous, i));
    }
    collector.reset_errors();
  }
  const double seconds = seconds_from(t0);
  metrics_.snapshot_written(static_cast<double>(bytes), seconds);
  log::info("state_snapshot_written", {{"seq", std::to_string(seq)},
                                       {"bytes", std::to_string(bytes)},
                                       {"chunks", std::to_string(chunks)},
                                       {"tombstones", std::to_string(gone.size())},
                                       {"articles_held", std::to_string(pipeline_.window().size())},
                                       {"seconds", std::to_string(seconds)}});
  return true;
}

}  // namespace newsflow::daemon
