#include "daemon/kafka/state_store.h"

// Restore at start: the window, the document frequencies, the boilerplate filter and the
// stories rebuilt from the state changelog (or, without one, from the articles topic), only
// from records of inputs whose offsets were committed.

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include "daemon/kafka/changelog_restore.h"
#include "daemon/kafka/message.h"
#include "daemon/ops/log.h"
#include "daemon/ops/metrics.h"
#include "daemon/ops/notify.h"
#include "daemon/pipeline/pipeline.h"
#include "dedup/state.h"

namespace newsflow::daemon {

using namespace internal;

namespace {

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
    const std::string& bootstrap, const std::vector<std::pair<int, std::int64_t>>& partitions,
    ChangelogRestore* streaming) {
  const std::string& topic = config_.topics.state;
  // A consumer of its own: when the records outgrow the buffer (and are not streamed), the
  // restore's consumer reads them again from the start afterwards.
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
  FirstRead read(*this, partitions, streaming);
  const auto deadline = Clock::now() + std::chrono::minutes(10);
  auto last_extend = Clock::now();
  while (!read.ended() && !stop_.load() && Clock::now() < deadline) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(c, 500);
    if (!m) continue;
    read.file(m);
    rd_kafka_message_destroy(m);
    read.step();
    still_restoring("reading " + topic, last_extend);
  }
  rd_kafka_consumer_close(c);
  if (!read.ended() && !stop_.load()) {
    return tl::unexpected("reading " + topic + " did not reach the end of every partition");
  }
  return read.finish();
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
  pipeline_.begin_restore();
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
  pipeline_.end_restore();
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
  const std::uint64_t covered_seq = load_snapshot(found->seq, found->chunks, found->bytes);
  // Not loaded: the records it covers were held without their values: read them again.
  if (covered_seq == 0 && read.stripped_seq > 0) read.buffered = false, read.records.clear();
  std::string().swap(found->bytes);
  return covered_seq;
}

std::uint64_t StateStore::load_snapshot(std::uint64_t seq, std::uint64_t chunks,
                                        std::string_view bytes) {
  const auto t1 = Clock::now();
  if (!pipeline_.load_state(bytes)) {
    // Written by another version or under another configuration (the document frequencies'
    // size, say): the records are all the state there is.
    log::error("state_snapshot_not_loaded",
               {{"seq", std::to_string(seq)},
                {"consequence",
                 "the window is rebuilt from the records the changelog still "
                 "holds; those the snapshot covered may be gone"}});
    for (std::uint64_t i = 0; i < chunks; ++i) {
      stale_snapshot_keys_.push_back(dedup::snapshot_key(seq, i));
    }
    return 0;
  }
  snapshot_seq_ = seq;
  snapshot_chunks_ = chunks;
  last_seq_ = std::max(last_seq_, seq);
  log::info("state_snapshot_loaded", {{"seq", std::to_string(seq)},
                                      {"bytes", std::to_string(bytes.size())},
                                      {"held", std::to_string(pipeline_.window().size())},
                                      {"seconds", std::to_string(seconds_since(t1))}});
  return seq;
}

tl::expected<std::optional<std::size_t>, std::string> StateStore::restore_changelog(
    rd_kafka_t* c, const std::string& bootstrap) {
  const auto t0 = Clock::now();
  const std::string& topic = config_.topics.state;
  auto ranges = partitions_with_data(c, topic);
  if (!ranges) return tl::unexpected(ranges.error());
  if (ranges->empty()) return std::optional<std::size_t>();
  // One read finds the newest complete snapshot and holds the records. The snapshot, loaded
  // whole, stands for every record up to its `seq` (deleted by compaction once the snapshot's
  // tombstones are compacted); the records after it are applied. Records that outgrow the
  // buffer are applied as the read goes instead (a snapshot loaded as soon as it is read whole).
  std::vector<std::pair<int, std::int64_t>> starts;
  for (const auto& r : *ranges) starts.emplace_back(r.partition, r.low);
  ChangelogRestore restore(*this, c, std::move(*ranges));
  auto read = read_changelog(bootstrap, starts, &restore);
  if (!read) return tl::unexpected(read.error());
  restore.begin(std::move(*read));
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
  restore.finish(t0);
  if (!restore.reached_end() && !stop_.load()) {
    return tl::unexpected("restore did not reach the end of every partition of " + topic);
  }
  return std::optional<std::size_t>(restore.restored());
}

}  // namespace newsflow::daemon
