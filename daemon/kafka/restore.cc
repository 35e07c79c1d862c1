#include "daemon/kafka/state_store.h"

// Restore at start: the window, the document frequencies, the boilerplate filter and the
// stories rebuilt from the state changelog (or, without one, from the articles topic), only
// from records of inputs whose offsets were committed.

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include "daemon/kafka/event_order.h"
#include "daemon/kafka/message.h"
#include "daemon/kafka/roles.h"
#include "daemon/ops/log.h"
#include "daemon/ops/metrics.h"
#include "daemon/ops/notify.h"
#include "daemon/pipeline/pipeline.h"
#include "dedup/state.h"

namespace newsflow::daemon {

using namespace internal;

namespace {

struct PartitionRange {
  int partition;
  std::int64_t low, high;
};

// The partitions of `topic` that hold records, with their offsets; empty when the topic does not
// exist.
tl::expected<std::vector<PartitionRange>, std::string> partitions_with_data(
    rd_kafka_t* c, const std::string& topic) {
  const auto count = partition_count(c, topic);
  if (!count) return tl::unexpected(count.error());
  std::vector<PartitionRange> out;
  for (int p = 0; p < *count; ++p) {
    std::int64_t low = 0, high = 0;
    if (rd_kafka_query_watermark_offsets(c, topic.c_str(), p, &low, &high, 5000) ==
            RD_KAFKA_RESP_ERR_NO_ERROR &&
        high > low) {
      out.push_back({p, low, high});
    }
  }
  return out;
}

}  // namespace

tl::expected<StateStore::Read, std::string> StateStore::read_changelog(
    const std::string& bootstrap, const std::vector<std::pair<int, std::int64_t>>& partitions) {
  const std::string& topic = config_.topics.state;
  // A consumer of its own: when the records outgrow the buffer, the restore's consumer reads
  // them again from the start afterwards.
  auto consumer = reader(bootstrap);
  if (!consumer) return tl::unexpected(consumer.error());
  rd_kafka_t* c = consumer->get();
  rd_kafka_topic_partition_list_t* list =
      rd_kafka_topic_partition_list_new(static_cast<int>(partitions.size()));
  for (const auto& [p, low] : partitions) {
    rd_kafka_topic_partition_list_add(list, topic.c_str(), p)->offset = low;
  }
  rd_kafka_assign(c, list);
  rd_kafka_topic_partition_list_destroy(list);
  Read read;
  read.buffered = config_.kafka.restore_buffer_bytes > 0;
  std::size_t buffered_bytes = 0;
  // seq -> (chunk count once its last chunk is read, chunks by index)
  std::map<std::uint64_t, std::pair<std::uint64_t, std::map<std::uint64_t, std::string>>> seen;
  // A snapshot complete: the records it covers are kept without their values (their keys and
  // headers are still needed: tombstoned by the next snapshot, judged inputs of their sources).
  auto covered_by = [&](std::uint64_t seq) {
    if (seq <= read.stripped_seq) return;
    read.stripped_seq = seq;
    for (auto& [p, records] : read.records) {
      for (auto& r : records) {
        if (r.seq > seq || r.value.empty()) continue;
        buffered_bytes -= r.value.size();
        std::string().swap(r.value);
      }
    }
  };
  // Partitions read to the end they had at least when the read began. Counted per partition: a
  // partition written to meanwhile reports its end again and again, and counting the reports
  // ended the read with another partition half read.
  std::set<int> ended;
  const auto deadline = Clock::now() + std::chrono::minutes(10);
  auto last_extend = Clock::now();
  while (ended.size() < partitions.size() && !stop_.load() && Clock::now() < deadline) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(c, 500);
    if (!m) continue;
    const std::string_view key = m->err ? std::string_view() : key_of(m);
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      ended.insert(m->partition);
      read.ends[m->partition] = m->offset;
    } else if (m->err) {
      log::warn("window_restore_error", {{"error", rd_kafka_message_errstr(m)}});
    } else if (m->payload && key.size() > 9 && key.substr(0, 9) == "snapshot/") {
      if (const auto chunk = dedup::decode_snapshot_chunk(payload(m))) {
        auto& [count, parts] = seen[chunk->seq];
        if (chunk->last) count = chunk->index + 1;
        parts[chunk->index] = std::string(chunk->bytes);
        if (count > 0 && parts.size() == count) covered_by(chunk->seq);
      }
    } else if (const auto seq = m->payload ? dedup::state_seq(payload(m)) : std::nullopt; !seq) {
      ++read.skipped;  // a tombstone or a record of another version
    } else if (read.buffered) {
      Record r{*seq,
               m->partition,
               m->offset,
               std::string(key),
               *seq <= read.stripped_seq ? std::string() : std::string(payload(m)),
               std::string(header_of(m, kInputHeader)),
               std::string(header_of(m, kSourceHeader))};
      buffered_bytes += r.value.size() + r.key.size() + r.input.size() + r.source.size();
      read.records[m->partition].push_back(std::move(r));
      if (buffered_bytes > static_cast<std::size_t>(config_.kafka.restore_buffer_bytes)) {
        // More than a snapshot interval's records (compaction behind, or no snapshots): read
        // again after the snapshot is loaded rather than held.
        read.buffered = false;
        read.records.clear();
      }
    }
    rd_kafka_message_destroy(m);
    still_restoring("reading " + topic, last_extend);
  }
  rd_kafka_consumer_close(c);
  if (ended.size() < partitions.size() && !stop_.load()) {
    return tl::unexpected("reading " + topic + " did not reach the end of every partition");
  }
  for (auto it = seen.rbegin(); it != seen.rend(); ++it) {
    auto& [count, parts] = it->second;
    if (!read.snapshot && count > 0 && parts.size() == count) {
      auto& found = read.snapshot.emplace();
      found.seq = it->first;
      found.chunks = count;
      std::size_t size = 0;
      for (const auto& [i, bytes] : parts) size += bytes.size();
      found.bytes.reserve(size);
      for (auto& [i, bytes] : parts) found.bytes += std::exchange(bytes, {});
      continue;
    }
    // Older snapshots (and one never finished): deleted with the next one.
    for (const auto& [i, bytes] : parts)
      stale_snapshot_keys_.push_back(dedup::snapshot_key(it->first, i));
  }
  return read;
}

tl::expected<KafkaHandle, std::string> StateStore::reader(const std::string& bootstrap) const {
  auto conf = make_kafka_conf({{"bootstrap.servers", bootstrap},
                               {"group.id", config_.kafka.group_id + ".restore"},
                               {"enable.auto.commit", "false"},
                               {"enable.partition.eof", "true"},
                               // Outputs of aborted transactions are not state.
                               {"isolation.level", "read_committed"},
                               {"client.id", "newsflow-restore"}},
                              config_.kafka.client, config_.kafka.consumer, "kafka.consumer");
  if (!conf) return tl::unexpected(conf.error().front().path + ": " + conf.error().front().message);
  // The daemon's own consumer settings may say otherwise; restore needs these.
  return create_client(ClientKind::kConsumer, std::move(*conf),
                       {{"enable.partition.eof", "true"}, {"enable.auto.commit", "false"}});
}

void StateStore::still_restoring(const std::string& what, Clock::time_point& last) {
  if (Clock::now() - last <= std::chrono::seconds(10)) return;
  // A long restore is progress, not a hung start: asks systemd for more start-up time.
  last = Clock::now();
  notifier_.extend_timeout(30'000'000);
  notifier_.status(what);
}

void StateStore::count_window() {
  metrics_.window_size(static_cast<double>(pipeline_.window().size()),
                       static_cast<double>(pipeline_.window().memory_bytes()));
  metrics_.stories_active(static_cast<double>(pipeline_.stories().size()));
}

tl::expected<std::size_t, std::string> StateStore::restore(const std::string& bootstrap,
                                                           rd_kafka_t* group) {
  const auto t0 = Clock::now();
  auto consumer = reader(bootstrap);
  if (!consumer) return tl::unexpected(consumer.error());
  KafkaHandle c = std::move(*consumer);
  if (!config_.topics.state.empty()) {
    // What the group committed says which records are state (`admit_state_record`).
    if (auto committed = refresh_committed(group); !committed) {
      return tl::unexpected(committed.error());
    }
    // The changelog when it holds anything; the articles topic otherwise (a first start after
    // an upgrade from a version without it).
    auto from_changelog = restore_changelog(c.get(), bootstrap);
    if (!from_changelog) return tl::unexpected(from_changelog.error());
    if (*from_changelog) {
      metrics_.restored(static_cast<double>(**from_changelog), seconds_since(t0));
      rd_kafka_consumer_close(c.get());
      return **from_changelog;
    }
  }
  auto restored = restore_articles(c.get());
  rd_kafka_consumer_close(c.get());
  return restored;
}

tl::expected<std::size_t, std::string> StateStore::restore_articles(rd_kafka_t* c) {
  const auto t0 = Clock::now();
  auto ranges = partitions_with_data(c, config_.topics.articles);
  if (!ranges) return tl::unexpected(ranges.error());
  if (ranges->empty()) {
    log::info("window_restored", {{"articles", "0"}, {"reason", "no articles yet"}});
    return std::size_t{0};
  }
  rd_kafka_topic_partition_list_t* list =
      rd_kafka_topic_partition_list_new(static_cast<int>(ranges->size()));
  for (const auto& r : *ranges) {
    rd_kafka_topic_partition_list_add(list, config_.topics.articles.c_str(), r.partition)->offset =
        r.low;
  }
  std::set<int> pending;  // per partition: one written to meanwhile reports its end repeatedly
  for (const auto& r : *ranges) pending.insert(r.partition);
  rd_kafka_assign(c, list);
  rd_kafka_topic_partition_list_destroy(list);
  std::size_t restored = 0, skipped = 0;
  const auto deadline = Clock::now() + std::chrono::minutes(10);
  auto last_extend = Clock::time_point{};
  while (!pending.empty() && !stop_.load() && Clock::now() < deadline) {
    still_restoring("restoring the dedup window: " + std::to_string(restored) + " articles",
                    last_extend);
    rd_kafka_message_t* m = rd_kafka_consumer_poll(c, 500);
    if (!m) continue;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      pending.erase(m->partition);
    } else if (m->err) {
      log::warn("window_restore_error", {{"error", rd_kafka_message_errstr(m)}});
    } else if (pipeline_.restore(payload(m))) {
      ++restored;
    } else {
      ++skipped;
    }
    rd_kafka_message_destroy(m);
  }
  count_window();
  metrics_.restored(static_cast<double>(restored), seconds_since(t0));
  log::info("window_restored", {{"articles", std::to_string(restored)},
                                {"skipped", std::to_string(skipped)},
                                {"held", std::to_string(pipeline_.window().size())},
                                {"seconds", std::to_string(seconds_since(t0))}});
  if (!pending.empty() && !stop_.load())
    return tl::unexpected(std::string("restore did not reach the end of every partition"));
  return restored;
}

std::uint64_t StateStore::load_snapshot(Read& read) {
  auto& found = read.snapshot;
  if (!found) return 0;
  std::uint64_t covered_seq = 0;
  const auto t1 = Clock::now();
  if (pipeline_.load_state(found->bytes)) {
    covered_seq = found->seq;
    snapshot_seq_ = found->seq;
    snapshot_chunks_ = found->chunks;
    last_seq_ = std::max(last_seq_, covered_seq);
    log::info("state_snapshot_loaded", {{"seq", std::to_string(covered_seq)},
                                        {"bytes", std::to_string(found->bytes.size())},
                                        {"held", std::to_string(pipeline_.window().size())},
                                        {"seconds", std::to_string(seconds_since(t1))}});
  } else {
    // Written by another version or under another configuration (the document frequencies'
    // size, say): the records are all the state there is.
    log::error("state_snapshot_not_loaded",
               {{"seq", std::to_string(found->seq)},
                {"consequence",
                 "the window is rebuilt from the records the changelog still "
                 "holds; those the snapshot covered may be gone"}});
    for (std::uint64_t i = 0; i < found->chunks; ++i) {
      stale_snapshot_keys_.push_back(dedup::snapshot_key(found->seq, i));
    }
    // The records it covers were held without their values: read them again.
    if (read.stripped_seq > 0) read.buffered = false, read.records.clear();
  }
  std::string().swap(found->bytes);
  return covered_seq;
}

// One restore from the changelog: the records of every partition merged by `seq` and applied
// in the order the articles were judged, those of inputs not committed left out.
class StateStore::ChangelogRestore {
 public:
  ChangelogRestore(StateStore& store, rd_kafka_t* c, std::vector<PartitionRange> ranges, Read read,
                   std::uint64_t covered_seq)
      : store_(store),
        c_(c),
        topic_(store.config_.topics.state),
        ranges_(std::move(ranges)),
        read_(std::move(read)),
        covered_seq_(covered_seq),
        again_(!read_.buffered),
        skipped_(again_ ? 0 : read_.skipped),
        standby_role_(role_of(store.config_).leased()) {
    const auto now = Clock::now();
    for (const auto& r : ranges_) merger_.assign({topic_, r.partition}, now);
    if (again_) read_again();
  }

  // Moves records from the read (or the second read's queues) into the merger, a few hundred a
  // partition at a time.
  void fill() {
    for (const auto& r : ranges_) {
      const int p = r.partition;
      if (again_) {
        while (merger_.buffered_records({topic_, p}) < 256) {
          rd_kafka_message_t* m = rd_kafka_consume_queue(queues_[p], 0);
          if (!m) break;
          file(m);
        }
        continue;
      }
      auto& held = read_.records[p];
      while (merger_.buffered_records({topic_, p}) < 256 && !held.empty()) {
        const auto seq = static_cast<std::int64_t>(held.front().seq);
        merger_.add({topic_, p}, std::move(held.front()), seq, 0);
        held.pop_front();
      }
      if (held.empty() && !at_end_.count(p)) end_partition(p, read_.ends[p]);
    }
  }

  // Applies what the merger has in `seq` order; false when it had nothing.
  bool apply_ready() {
    bool progressed = false;
    while (auto r = merger_.next(Clock::now())) {
      progressed = true;
      apply(*r);
    }
    return progressed;
  }

  // Every partition read to its end and applied.
  bool done() const { return ended_ >= ranges_.size() && merger_.buffered_records() == 0; }
  bool reached_end() const { return ended_ >= ranges_.size(); }

  // The second read: serves the consumer (and anything fetched before a partition got its own
  // queue).
  void serve() {
    if (!again_) return;
    if (rd_kafka_message_t* m = rd_kafka_consumer_poll(c_, 5)) file(m);
  }

  std::size_t restored() const { return restored_; }

  // Releases the queues; a standby's tail goes on from the first record left to it.
  void finish(double seconds) {
    merger_.clear();
    for (auto& [p, q] : queues_) rd_kafka_queue_destroy(q);
    queues_.clear();
    for (const auto& [p, from] : defer_from_) {
      store_.positions_[p] = std::min(store_.positions_[p], from);
    }
    store_.count_window();
    log::info("window_restored", {{"from", topic_},
                                  {"articles", std::to_string(restored_)},
                                  {"skipped", std::to_string(skipped_)},
                                  {"uncommitted", std::to_string(uncommitted_)},
                                  {"in_snapshot", std::to_string(covered_)},
                                  {"read_twice", again_ ? "true" : "false"},
                                  {"held", std::to_string(store_.pipeline_.window().size())},
                                  {"seconds", std::to_string(seconds)}});
  }

 private:
  // The records did not fit in the first read's buffer: each partition read again from its
  // start, into a queue of its own.
  void read_again() {
    rd_kafka_topic_partition_list_t* list =
        rd_kafka_topic_partition_list_new(static_cast<int>(ranges_.size()));
    for (const auto& r : ranges_) {
      rd_kafka_topic_partition_list_add(list, topic_.c_str(), r.partition)->offset = r.low;
      rd_kafka_queue_t* q = rd_kafka_queue_get_partition(c_, topic_.c_str(), r.partition);
      rd_kafka_queue_forward(q, nullptr);  // before the assignment starts fetching
      queues_[r.partition] = q;
    }
    rd_kafka_assign(c_, list);
    rd_kafka_topic_partition_list_destroy(list);
  }

  void end_partition(int p, std::int64_t end) {
    // Once per partition: one written to meanwhile reports its end again.
    if (at_end_.count(p)) return;
    merger_.end_of_partition({topic_, p});
    // Where a standby's tail goes on: what the restore did not read.
    store_.positions_[p] = std::max(store_.positions_[p], end);
    at_end_.insert(p);
    ++ended_;
  }

  // A message of the second read.
  void file(rd_kafka_message_t* m) {
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      end_partition(m->partition, m->offset);
    } else if (m->err) {
      log::warn("window_restore_error", {{"error", rd_kafka_message_errstr(m)}});
    } else if (const auto seq = m->payload ? dedup::state_seq(payload(m)) : std::nullopt; !seq) {
      store_.positions_[m->partition] = m->offset + 1;
      // A tombstone or a record of another version (a snapshot's chunk was read before).
      if (!key_of(m).starts_with("snapshot/")) ++skipped_;
    } else {
      store_.positions_[m->partition] = m->offset + 1;
      merger_.add(
          {topic_, m->partition},
          Record{*seq, m->partition, m->offset, std::string(key_of(m)), std::string(payload(m)),
                 std::string(header_of(m, kInputHeader)), std::string(header_of(m, kSourceHeader))},
          static_cast<std::int64_t>(*seq), 0);
    }
    rd_kafka_message_destroy(m);
  }

  // One record, in `seq` order: applied, covered by the snapshot, or left out.
  void apply(Record& r) {
    // Read, applied or not: a record of an input not committed is judged again under a new
    // number, not its own (its article may differ now, and two would share the number).
    store_.pipeline_.reserve_seq(r.seq);
    if (deferred_ || store_.admit(r.input, true) != Admission::kApply) {
      ++uncommitted_;
      // This process judges them again; a standby leaves them, and every later record (they
      // belong to later batches), to its changelog tail, which waits for their commits: the
      // owner is likely alive and about to commit them.
      if (standby_role_) {
        deferred_ = true;
        auto [from, first] = defer_from_.try_emplace(r.partition, r.offset);
        if (!first) from->second = std::min(from->second, r.offset);
      }
    } else if (r.seq <= covered_seq_) {
      ++covered_;  // in the snapshot
      store_.note_judged(r.source, r.input, r.key);
      store_.keys_.add(r.seq, r.key);
    } else if (auto state = dedup::decode_state(r.value)) {
      store_.keys_.add(state->seq, r.key);
      // The same record again (`seq` and article): a batch written once more after a crash,
      // the same judgment. Two articles under one `seq` (written before numbers were reserved
      // at a restore) are both applied.
      if (applied_seq_ != state->seq) applied_ids_.clear();
      if (applied_ids_.insert(state->id).second) {
        store_.pipeline_.restore(*state);
        store_.note_judged(r.source, r.input, state->id);
        store_.last_seq_ = std::max(store_.last_seq_, state->seq);
        applied_seq_ = state->seq;
        ++restored_;
      } else {
        ++skipped_;
      }
    } else {
      ++skipped_;
    }
  }

  StateStore& store_;
  rd_kafka_t* c_;
  const std::string& topic_;
  const std::vector<PartitionRange> ranges_;
  Read read_;
  const std::uint64_t covered_seq_;
  // Records are keyed by article, so they spread over the partitions; each partition holds them
  // in the order they were written. Merged by `seq` across the partitions (the merger that
  // orders input by event time), they are applied in the order the articles were judged. They
  // come from the first read, or from a second read when they did not fit in its buffer.
  const bool again_;
  EventTimeMerger<Record> merger_{{std::chrono::hours(1), std::chrono::hours(1)}};
  std::map<int, rd_kafka_queue_t*> queues_;  // the second read's, by partition
  std::size_t restored_ = 0, skipped_, ended_ = 0, uncommitted_ = 0, covered_ = 0;
  std::optional<std::uint64_t> applied_seq_;
  std::set<std::string> applied_ids_;  // of the records applied under `applied_seq_`
  const bool standby_role_;
  bool deferred_ = false;
  std::map<int, std::int64_t> defer_from_;  // partition -> first record left to the tail
  std::set<int> at_end_;
};

tl::expected<std::optional<std::size_t>, std::string> StateStore::restore_changelog(
    rd_kafka_t* c, const std::string& bootstrap) {
  const auto t0 = Clock::now();
  const std::string& topic = config_.topics.state;
  auto ranges = partitions_with_data(c, topic);
  if (!ranges) return tl::unexpected(ranges.error());
  if (ranges->empty()) return std::optional<std::size_t>();
  // One read finds the newest complete snapshot and holds the records. The snapshot, loaded
  // whole, stands for every record up to its `seq` (deleted by compaction once the snapshot's
  // tombstones are compacted); the records after it are applied.
  std::vector<std::pair<int, std::int64_t>> starts;
  for (const auto& r : *ranges) starts.emplace_back(r.partition, r.low);
  auto read = read_changelog(bootstrap, starts);
  if (!read) return tl::unexpected(read.error());
  const std::uint64_t covered_seq = load_snapshot(*read);
  ChangelogRestore restore(*this, c, std::move(*ranges), std::move(*read), covered_seq);
  const auto deadline = Clock::now() + std::chrono::minutes(10);
  auto last_extend = Clock::now();
  while (!stop_.load() && Clock::now() < deadline) {
    restore.fill();
    const bool progressed = restore.apply_ready();
    if (restore.done()) break;
    if (!progressed) restore.serve();
    still_restoring(
        "restoring from " + topic + ": " + std::to_string(restore.restored()) + " articles",
        last_extend);
  }
  restore.finish(seconds_since(t0));
  if (!restore.reached_end() && !stop_.load()) {
    return tl::unexpected("restore did not reach the end of every partition of " + topic);
  }
  return std::optional<std::size_t>(restore.restored());
}

}  // namespace newsflow::daemon
