#include "daemon/kafka/partition_intake.h"

// The intake: partitions assigned and revoked, their records put in event-time order, the
// batches collected from that order, the partitions' lag, and the consumer's close.

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>

#include "daemon/kafka/message.h"
#include "daemon/kafka/state_store.h"
#include "daemon/ops/log.h"
#include "daemon/ops/metrics.h"

namespace newsflow::daemon {

using namespace internal;

namespace {

// Each role is its own consumer group: extractors share the input partitions, the dedup role
// the extracted ones.
std::string consumer_group(const config::Config& config) {
  return config.role == config::Role::kAll
             ? config.kafka.group_id
             : config.kafka.group_id + "-" + std::string(config::role_name(config.role));
}

// The input consumer's properties before the user's.
std::map<std::string, std::string> consumer_properties(const std::string& bootstrap,
                                                       const std::string& group) {
  return {{"bootstrap.servers", bootstrap},
          {"group.id", group},
          {"enable.auto.commit", "false"},
          {"enable.auto.offset.store", "false"},
          {"auto.offset.reset", "earliest"},
          {"partition.assignment.strategy", "cooperative-sticky"},
          // A SIGKILLed member's partitions wait for its session to end: 6 s (the brokers' default
          // minimum), not librdkafka's 45 s, so a restarted daemon publishes again within about
          // 10 s. A C++ process has no GC pauses to ride out; heartbeats go from a thread of
          // librdkafka's own, every 1.5 s.
          {"session.timeout.ms", "6000"},
          {"heartbeat.interval.ms", "1500"},
          {"statistics.interval.ms", "5000"},
          // Per partition: each has its own queue (event-time order).
          {"queued.max.messages.kbytes", "4096"},
          // A fetch that finds nothing new waits at most this long. A real broker answers as soon
          // as a record arrives; the mock cluster (demo, dev-broker) holds an empty fetch for the
          // whole wait: librdkafka's 500 ms was most of a quiet stream's latency there. Idle, it
          // costs ten fetch requests a second per broker.
          {"fetch.wait.max.ms", "100"},
          {"client.id", "newsflow"}};
}

}  // namespace

namespace {

// When the record was written (its timestamp: the producer's clock, or the broker's for
// LogAppendTime), on the steady clock of `now`; `min()` when it has none. A timestamp ahead of
// this host's clock counts as now.
std::chrono::steady_clock::time_point written_at(const rd_kafka_message_t* msg,
                                                 std::chrono::steady_clock::time_point now) {
  rd_kafka_timestamp_type_t type;
  const std::int64_t ts = rd_kafka_message_timestamp(msg, &type);
  if (type == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE || ts < 0) return decltype(now)::min();
  const std::int64_t wall_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count();
  const std::int64_t age_ms = std::max<std::int64_t>(0, wall_ms - ts);
  // A record older than a minute (a backlog's, a backfill's) waits no more than one with none.
  if (age_ms > 60000) return decltype(now)::min();
  return now - std::chrono::milliseconds(age_ms);
}

}  // namespace

EventOrderOptions order_options(const config::KafkaConfig& kafka) {
  EventOrderOptions o;
  o.max_idle = std::chrono::milliseconds(kafka.max_idle_ms);
  o.writer_silence = std::chrono::milliseconds(kafka.extractor_silence_ms);
  // A partition no extractor has spoken for yet is waited for as long as one whose extractor
  // fell silent, and at least until an idle extractor says its end again: its input may be
  // held by an extractor still starting, or by one that joined the group while a rebalance
  // handed out the partitions. Going on without it reorders the backlog it then hands over
  // (30 s, shorter than the silence allowed, cost the roles test 24% of its verdicts on a
  // loaded machine, where an extractor's first assignment came 30 s after the dedup started).
  o.first_watermark = std::max<std::chrono::milliseconds>(o.writer_silence, kEndRepeat);
  // A partition known to lag holds the others back for up to 10 s: longer than a slow fetch
  // round, short enough that a partition whose leader is gone stalls little.
  o.behind = std::chrono::seconds(10);
  // An extractor's batch lands in several extracted partitions at once: a share that comes a
  // fetch response after another still goes in order. Only the dedup role's partitions have
  // writers that say their end.
  o.end_slack = kEndSlack;
  // A live stream's records wait a little for partitions at their end (one produce request's
  // partitions are appended one after another).
  o.live_slack = kLiveSlack;
  return o;
}

PartitionIntake::PartitionIntake(const config::Config& config, Metrics& metrics,
                                 const StateStore& store, const std::atomic<bool>& stop,
                                 Listener listener)
    : config_(config),
      metrics_(metrics),
      store_(store),
      stop_(stop),
      listener_(std::move(listener)),
      merger_(order_options(config.kafka)) {}

PartitionIntake::~PartitionIntake() { close(std::chrono::seconds(5)); }

tl::expected<void, std::vector<config::Problem>> PartitionIntake::open(const std::string& bootstrap,
                                                                       bool leased) {
  group_ = consumer_group(config_);
  std::map<std::string, std::string> defaults = consumer_properties(bootstrap, group_);
  // Static membership for the subscribing roles: a process restarted under its id (a crashed
  // container in the same pod, a systemd restart) takes its partitions back without a
  // rebalance. A leased dedup process assigns its partitions itself and is not a member.
  if (!leased && !config_.kafka.consumer.count("group.instance.id")) {
    instance_id_ = group_instance_id(config_.kafka.group_instance_id,
                                     std::string(config::role_name(config_.role)), host_name());
    if (!instance_id_.empty()) defaults["group.instance.id"] = instance_id_;
  } else if (auto it = config_.kafka.consumer.find("group.instance.id");
             it != config_.kafka.consumer.end()) {
    instance_id_ = it->second;
  }
  auto conf =
      make_kafka_conf(defaults, config_.kafka.client, config_.kafka.consumer, "kafka.consumer");
  if (!conf) return tl::unexpected(conf.error());
  cooperative_ = cooperative_strategy(conf->get());
  ClientCallbacks callbacks;
  callbacks.opaque = this;
  callbacks.rebalance = &PartitionIntake::on_rebalance;
  callbacks.offset_commit = &PartitionIntake::on_commit;
  callbacks.statistics = &PartitionIntake::on_statistics;
  // Event-time order needs to know when a partition has nothing older to deliver.
  auto consumer = create_client(ClientKind::kConsumer, std::move(*conf),
                                {{"enable.partition.eof", "true"}}, callbacks);
  if (!consumer) {
    return tl::unexpected(std::vector<config::Problem>{{"kafka.consumer", consumer.error()}});
  }
  consumer_ = std::move(*consumer);
  return {};
}

tl::expected<void, std::string> PartitionIntake::subscribe() {
  rd_kafka_topic_partition_list_t* topics = rd_kafka_topic_partition_list_new(2);
  for (const std::string& t : input_topics(config_)) {
    rd_kafka_topic_partition_list_add(topics, t.c_str(), RD_KAFKA_PARTITION_UA);
  }
  const rd_kafka_resp_err_t e = rd_kafka_subscribe(consumer_.get(), topics);
  rd_kafka_topic_partition_list_destroy(topics);
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) return tl::unexpected(std::string(rd_kafka_err2str(e)));
  subscribed_ = true;
  return {};
}

void PartitionIntake::adopt(rd_kafka_t* rk, const std::string& topic, int partition,
                            Clock::time_point now) {
  merger_.assign({topic, partition}, now);
  next_offset_.erase({topic, partition});
  // What extractors write is read while it is written: its end means nothing until the
  // extractor says how far it has come.
  if (config_.role == config::Role::kDedup) merger_.expect_watermarks({topic, partition});
  metrics_.partition_assigned(topic, partition);
  // Each partition's messages wait in its own queue (librdkafka then bounds prefetching per
  // partition, queued.max.messages.kbytes), so the loop can take them in event-time order. The
  // queue is detached before the assignment starts fetching: a message that went to the
  // consumer queue instead could overtake (or fall behind) its partition's others.
  if (rd_kafka_queue_t* q = rd_kafka_queue_get_partition(rk, topic.c_str(), partition)) {
    rd_kafka_queue_forward(q, nullptr);
    auto& slot = queues_[{topic, partition}];
    if (slot) rd_kafka_queue_destroy(slot);
    slot = q;
  }
}

tl::expected<int, std::string> PartitionIntake::assign_every_partition(const std::string& topic) {
  auto n = topic_partitions(consumer_.get(), topic);
  if (!n) return tl::unexpected(n.error());
  // From the offsets the group committed.
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(*n);
  const auto now = Clock::now();
  for (int p = 0; p < *n; ++p) {
    rd_kafka_topic_partition_list_add(list, topic.c_str(), p)->offset = RD_KAFKA_OFFSET_INVALID;
    adopt(consumer_.get(), topic, p, now);
  }
  const rd_kafka_resp_err_t e = rd_kafka_assign(consumer_.get(), list);
  rd_kafka_topic_partition_list_destroy(list);
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) return tl::unexpected(std::string(rd_kafka_err2str(e)));
  assigned_ = *n;
  return *n;
}

void PartitionIntake::on_rebalance(rd_kafka_t* rk, int err, void* partitions, void* opaque) {
  auto* self = static_cast<PartitionIntake*>(opaque);
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    self->take_assignment(rk, partitions);
  } else {
    self->let_go(rk, err, partitions);
  }
}

void PartitionIntake::take_assignment(rd_kafka_t* rk, void* partitions_ptr) {
  auto* partitions = static_cast<rd_kafka_topic_partition_list_t*>(partitions_ptr);
  const auto now = Clock::now();
  for (int i = 0; i < partitions->cnt; ++i) {
    adopt(rk, partitions->elems[i].topic, partitions->elems[i].partition, now);
  }
  follow_rebalance(rk, /*assign=*/true, partitions, cooperative_);
  assigned_ = cooperative_ ? assigned_ + partitions->cnt : partitions->cnt;
  assigned_once_ = true;
  log::info("partitions_assigned", {{"count", std::to_string(partitions->cnt)}});
}

void PartitionIntake::let_go(rd_kafka_t* rk, int err, void* partitions_ptr) {
  auto* partitions = static_cast<rd_kafka_topic_partition_list_t*>(partitions_ptr);
  // Rebalance callbacks run inside the consumer poll, while a batch is being collected and never
  // while one is judged: the collected messages of revoked partitions are dropped (uncommitted,
  // so their new owner reads them again), and so is what the listener holds of them. Batches
  // judged before are acknowledged and their offsets committed first, so the new owner does not
  // judge them again.
  if (listener_.before_revoke) listener_.before_revoke();
  std::size_t abandoned = 0;
  for (int i = 0; i < partitions->cnt; ++i) {
    const Partition p{partitions->elems[i].topic, partitions->elems[i].partition};
    metrics_.forget_lag(p.first, p.second);
    next_offset_.erase(p);
    if (listener_.revoked) abandoned += listener_.revoked(p);
    for (rd_kafka_message_t* m : merger_.revoke(p)) {
      rd_kafka_message_destroy(m);
      ++abandoned;
    }
    if (auto q = queues_.find(p); q != queues_.end()) {
      rd_kafka_queue_destroy(q->second);
      queues_.erase(q);
    }
    if (!collecting_) continue;
    abandoned += std::erase_if(*collecting_, [&](const Taken& t) {
      if (partition_of(t.msg) != p) return false;
      rd_kafka_message_destroy(t.msg);
      return true;
    });
  }
  follow_rebalance(rk, /*assign=*/false, partitions, cooperative_);
  assigned_ = cooperative_ ? assigned_ - partitions->cnt : 0;
  log::info("partitions_revoked",
            {{"count", std::to_string(partitions->cnt)},
             {"reason", rd_kafka_err2name(static_cast<rd_kafka_resp_err_t>(err))},
             {"abandoned_messages", std::to_string(abandoned)}});
}

void PartitionIntake::give_back(std::vector<Taken>::const_iterator first,
                                std::vector<Taken>::const_iterator last) {
  while (last != first) {
    --last;
    rd_kafka_message_t* m = last->msg;
    const auto p = partition_of(m);
    if (merger_.assigned(p)) {
      merger_.give_back(p, m, order_time(m, extracted_inputs()), m->len + m->key_len);
    } else {
      rd_kafka_message_destroy(m);
    }
  }
}

bool PartitionIntake::collect(std::vector<Taken>& batch, bool wait, int most) {
  const auto deadline =
      Clock::now() + std::chrono::milliseconds(wait ? config_.kafka.batch_max_ms : 0);
  std::int64_t batch_bytes = 0;
  collecting_ = &batch;  // the rebalance callback drops messages of revoked partitions
  auto full = [&] {
    return static_cast<int>(batch.size()) >= most || batch_bytes >= config_.kafka.batch_max_bytes;
  };
  bool ok = true;
  bool polled = false;
  while (!full() && !stop_.load()) {
    if (Clock::now() - last_consumer_poll_ >= std::chrono::milliseconds(100)) {
      // A backlog fills every batch from the partition queues: the consumer queue, which
      // serves rebalances, is looked at anyway (a member joining mid-backlog waited for the
      // backlog's end, while the commits of this one failed for a rebalance in progress).
      last_consumer_poll_ = Clock::now();
      rd_kafka_message_t* msg = rd_kafka_consumer_poll(consumer_.get(), 0);
      if (msg && !take(msg)) {
        ok = false;
        break;
      }
    }
    if (!take_fetched()) {
      ok = false;
      break;
    }
    // What the event-time order lets go now.
    auto now = Clock::now();
    const std::size_t released = release(batch, batch_bytes, most, now);
    if (full()) break;
    // The partitions' own queues may hold the next records already: refill before waiting.
    if (released > 0 && (!wait || now < deadline)) continue;
    if (!wait) {
      // Only what is here already (the loop judges the batch before meanwhile): one look at
      // the consumer queue for rebalances and ends of partitions, then go.
      if (polled) break;
      polled = true;
      rd_kafka_message_t* msg = rd_kafka_consumer_poll(consumer_.get(), 0);
      if (msg && !take(msg)) {
        ok = false;
        break;
      }
      continue;
    }
    // Held back by a partition still fetching: process what the order has let go (the fetch
    // goes on meanwhile) rather than wait for the batch to fill.
    const bool waiting = merger_.waiting(now);
    if (static_cast<int>(batch.size()) >= std::max(1, config_.kafka.batch_max_messages / 4) &&
        waiting) {
      break;
    }
    // A live stream: every partition is at its end and one more look found nothing new, so
    // nothing is on its way that a longer wait would add to this batch. Waiting out
    // batch_max_ms would only add latency (a backlog fills its batches long before).
    if (!batch.empty() && !waiting && released == 0 && polled) break;
    // Nothing to collect, and outputs on their way or offsets to commit: back to the loop,
    // which serves their acknowledgements and commits, rather than wait out batch_max_ms.
    if (batch.empty() && polled && listener_.busy && listener_.busy()) break;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    if (left.count() <= 0) break;
    // The consumer queue serves rebalances and errors (and messages forwarded before their
    // partition got its own queue); partition queues are looked at again soon.
    const int timeout = static_cast<int>(std::min<std::int64_t>(left.count(), 5));
    rd_kafka_message_t* msg = rd_kafka_consumer_poll(consumer_.get(), timeout);
    polled = true;
    last_consumer_poll_ = Clock::now();
    if (msg && !take(msg)) {
      ok = false;
      break;
    }
  }
  collecting_ = nullptr;
  return ok;
}

std::size_t PartitionIntake::release(std::vector<Taken>& batch, std::int64_t& batch_bytes, int most,
                                     Clock::time_point now) {
  std::int64_t low = 0;
  std::size_t released = 0;
  while (static_cast<int>(batch.size()) < most && batch_bytes < config_.kafka.batch_max_bytes) {
    std::optional<rd_kafka_message_t*> m = merger_.next(now, &low);
    if (!m) break;
    batch.push_back({*m, low});
    batch_bytes += static_cast<std::int64_t>((*m)->len + (*m)->key_len);
    ++released;
  }
  return released;
}

bool PartitionIntake::take(rd_kafka_message_t* msg) {
  if (msg->err) {
    if (msg->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      if (msg->rkt) merger_.end_of_partition(partition_of(msg));
    } else {
      log::warn("consumer_error", {{"error", rd_kafka_message_errstr(msg)}});
    }
    const bool fatal = msg->err == RD_KAFKA_RESP_ERR__FATAL;
    rd_kafka_message_destroy(msg);
    if (fatal) {
      char reason[512];
      const rd_kafka_resp_err_t cause =
          rd_kafka_fatal_error(consumer_.get(), reason, sizeof reason);
      if (cause == RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID) {
        // Another process joined under this one's static id: two processes of one role on
        // one host, or a copy of this one still alive.
        log::error("consumer_fenced",
                   {{"error", reason},
                    {"group_instance_id", instance_id_},
                    {"fix",
                     "give every process of a role its own kafka.group_instance_id "
                     "(NEWSFLOW_KAFKA__GROUP_INSTANCE_ID), or \"none\""}});
      } else {
        log::error("consumer_fatal", {{"error", reason}});
      }
      return false;
    }
    return true;
  }
  const auto p = partition_of(msg);
  if (!merger_.assigned(p)) {
    // A message of a partition the rebalance callback has not announced: take it as assigned.
    merger_.assign(p, Clock::now());
    if (config_.role == config::Role::kDedup) merger_.expect_watermarks(p);
  }
  if (config_.role == config::Role::kDedup) {
    // An extractor's watermark: nothing older will follow in this partition.
    if (const auto w = watermark_header(msg)) {
      merger_.advance(p, *w, Clock::now());
      rd_kafka_message_destroy(msg);
      return true;
    }
    // An input judged before, extracted again: its articles are out already.
    if (const auto source = parse_position(header_of(msg, kSourceHeader));
        source && store_.ledger().repeat(*source, msg->partition, msg->offset, key_of(msg))) {
      next_offset_[p] = msg->offset + 1;
      metrics_.handed_over_again();
      rd_kafka_message_destroy(msg);
      return true;
    }
  }
  next_offset_[p] = msg->offset + 1;
  const auto now = Clock::now();
  merger_.add(p, msg, order_time(msg, extracted_inputs()), msg->len + msg->key_len, now,
              written_at(msg, now));
  return true;
}

bool PartitionIntake::fetch_lags(const Partition& p) const {
  std::int64_t low = -1, high = -1;
  // librdkafka's view as of the partition's last fetch response (no request to a broker).
  if (rd_kafka_get_watermark_offsets(consumer_.get(), p.first.c_str(), p.second, &low, &high) !=
          RD_KAFKA_RESP_ERR_NO_ERROR ||
      high < 0) {
    return true;  // not fetched yet: it may hold anything
  }
  if (high == 0 || high == low) return false;  // it holds nothing
  // Nothing taken yet: a fetch round may have left it out (a response is bounded in bytes), so
  // its records may still come, unless its end is reported first.
  const auto next = next_offset_.find(p);
  return next == next_offset_.end() || next->second < high;
}

bool PartitionIntake::take_fetched() {
  // A few messages per partition are enough to order by; the rest wait in librdkafka, which
  // stops fetching a partition whose queue is full.
  constexpr std::size_t kLookahead = 2;
  for (auto& [p, q] : queues_) {
    while (merger_.buffered_records(p) < kLookahead) {
      rd_kafka_message_t* msg = rd_kafka_consume_queue(q, 0);
      if (!msg) break;
      // `take` destroys events. An end of partition may be followed by records fetched since:
      // stopping at it left the partition empty at its end for a turn while its next record
      // was already here, and a newer record of another partition went first (found by
      // tests/bench/kafka_broker_kills.sh: the same pairs out of order in every run).
      const bool error = msg->err != RD_KAFKA_RESP_ERR_NO_ERROR &&
                         msg->err != RD_KAFKA_RESP_ERR__PARTITION_EOF;
      if (!take(msg)) return false;
      if (error) break;
    }
    // An empty partition the broker holds more of is waited for longer than an idle one: on a
    // loaded machine a fetch can take longer than max_idle_ms (KIP-695's known lag). One that
    // delivered everything up to its end as last fetched still waits for librdkafka's own end
    // of partition, which comes with the next fetch response (within fetch.wait.max.ms): that
    // round is the slack within which a record another producer's batch appends late, older
    // than what other partitions hold, still goes first (taking such a partition as at its end
    // at once cut the latency of a quiet stream but reordered a stream produced during the
    // standby test under load: same_verdict 0.90).
    if (merger_.buffered_records(p) == 0) merger_.set_behind(p, fetch_lags(p));
  }
  return true;
}

void PartitionIntake::close(std::chrono::milliseconds limit) {
  if (!consumer_) return;
  // librdkafka 2.0 aborts when a cooperative-sticky consumer that never had an assignment is
  // destroyed (its issue 4312, fixed in 2.3): one stopped in its first seconds (a daemon
  // started and stopped at once, or one that joined while a rebalance handed everything to
  // the others) waits a little for its first assignment, and is left to the process's exit
  // when none comes. (A dedup owner assigns its partitions itself: no group hands them out.)
  const bool hazard = subscribed_ && cooperative_ && !assigned_once_;
  const auto until = Clock::now() + std::chrono::seconds(5);
  while (hazard && !assigned_once_ && Clock::now() < until) {
    if (rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer_.get(), 100)) {
      rd_kafka_message_destroy(m);  // uncommitted: read again by the partition's next owner
    }
  }
  // What a late first assignment adopted is let go with the consumer.
  for (rd_kafka_message_t* m : merger_.clear()) rd_kafka_message_destroy(m);
  for (auto& [p, q] : queues_) rd_kafka_queue_destroy(q);
  queues_.clear();
  const bool keep = hazard && !assigned_once_;
  if (keep) {
    log::warn("consumer_left_undestroyed",
              {{"reason", "no assignment yet (librdkafka 2.0 aborts destroying it)"}});
  }
  close_consumer(consumer_, limit, "input", &PartitionIntake::on_rebalance, this, keep);
}

int PartitionIntake::on_statistics(rd_kafka_t*, char* json, std::size_t len, void* opaque) {
  auto* self = static_cast<PartitionIntake*>(opaque);
  const auto stats = nlohmann::json::parse(std::string_view(json, len), nullptr, false);
  if (!stats.is_object() || !stats.contains("topics") || !stats["topics"].is_object()) return 0;
  for (const auto& [topic, t] : stats["topics"].items()) {
    if (!t.is_object() || !t.contains("partitions") || !t["partitions"].is_object()) continue;
    for (const auto& [partition, p] : t["partitions"].items()) {
      if (partition == "-1" || !p.is_object()) continue;  // -1: librdkafka's internal partition
      // Only partitions this consumer fetches; consumer_lag is -1 until both offsets are known.
      if (p.value("fetch_state", "") != "active") continue;
      // Before the first message of a group without committed offsets it is what lies between
      // the partition's ends (auto.offset.reset is earliest), so the gauge exists from the start.
      std::int64_t lag = p.value("consumer_lag", std::int64_t{-1});
      const std::int64_t hi = p.value("hi_offset", std::int64_t{-1});
      const std::int64_t lo = p.value("lo_offset", std::int64_t{-1});
      if (lag < 0 && p.value("committed_offset", std::int64_t{-1}) < 0 &&
          p.value("app_offset", std::int64_t{-1}) < 0 && hi >= 0 && lo >= 0) {
        lag = hi - lo;
      }
      if (lag < 0) continue;
      self->metrics_.consumer_lag(topic,
                                  static_cast<int>(std::strtol(partition.c_str(), nullptr, 10)),
                                  static_cast<double>(lag));
    }
  }
  return 0;  // librdkafka frees the JSON
}

void PartitionIntake::on_commit(rd_kafka_t*, int err, void* partitions, void* opaque) {
  auto* self = static_cast<PartitionIntake*>(opaque);
  if (self->listener_.commit_answered) self->listener_.commit_answered(err, partitions);
}

void PartitionIntake::count_order() {
  metrics_.order_buffer(static_cast<double>(merger_.buffered_records()),
                        static_cast<double>(merger_.buffered_bytes()));
  if (const std::uint64_t n = merger_.passed_over(); n > passed_over_reported_) {
    metrics_.order_passed_over(static_cast<double>(n - passed_over_reported_));
    passed_over_reported_ = n;
  }
}

}  // namespace newsflow::daemon
