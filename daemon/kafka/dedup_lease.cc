#include "daemon/kafka/dedup_lease.h"

// `--role dedup` with a lease: a standby follows the changelog and takes over (catches up, then
// assigns every extracted partition) when the lease comes to it.

#include <librdkafka/rdkafka.h>

#include <chrono>

#include "daemon/kafka/message.h"
#include "daemon/kafka/state_store.h"
#include "daemon/kafka/transaction.h"
#include "daemon/ops/log.h"
#include "daemon/ops/metrics.h"
#include "daemon/pipeline/pipeline.h"

namespace newsflow::daemon {

using namespace internal;

DedupLease::DedupLease(const config::Config& config, Metrics& metrics, const Pipeline& pipeline,
                       StateStore& store)
    : config_(config), metrics_(metrics), pipeline_(pipeline), store_(store) {}

DedupLease::~DedupLease() { close(std::chrono::seconds(5)); }

void DedupLease::close(std::chrono::milliseconds limit) {
  tail_.reset();
  close_consumer(lease_, limit, "lease", &DedupLease::on_rebalance, this);
}

tl::expected<void, std::string> DedupLease::start(const std::string& bootstrap, rd_kafka_t* input,
                                                  rd_kafka_t* transactional_producer,
                                                  TakePartitions take) {
  input_ = input;
  transactional_producer_ = transactional_producer;
  take_ = std::move(take);
  auto tail = store_.open_tail(bootstrap, std::chrono::milliseconds(1000));
  if (!tail) return tl::unexpected(tail.error());
  tail_ = std::move(*tail);

  if (auto n = topic_partitions(input_, config_.topics.dedup_lease); !n) {
    return tl::unexpected(n.error() + " (create it with one partition)");
  } else if (*n != 1) {
    log::warn("dedup_lease_partitions",
              {{"topic", config_.topics.dedup_lease},
               {"partitions", std::to_string(*n)},
               {"consequence", "partition 0 is the lease; the others are never used"}});
  }
  // The lease: one partition in a group of its own; the member it is assigned to owns the
  // window. Cooperative-sticky keeps it where it is when standbys come and go; a killed owner
  // loses it after session.timeout.ms, a stopped one at once (it leaves the group).
  const std::string group = config_.kafka.group_id + "-dedup-lease";
  auto lconf = make_kafka_conf({{"bootstrap.servers", bootstrap},
                                {"group.id", group},
                                {"enable.auto.commit", "false"},
                                {"partition.assignment.strategy", "cooperative-sticky"},
                                {"session.timeout.ms", "6000"},
                                {"heartbeat.interval.ms", "1000"},
                                {"client.id", "newsflow-lease"}},
                               config_.kafka.client, config_.kafka.lease, "kafka.lease");
  if (!lconf)
    return tl::unexpected(lconf.error().front().path + ": " + lconf.error().front().message);
  cooperative_ = cooperative_strategy(lconf->get());
  ClientCallbacks lease_callbacks;
  lease_callbacks.opaque = this;
  lease_callbacks.rebalance = &DedupLease::on_rebalance;
  auto lease = create_client(ClientKind::kConsumer, std::move(*lconf), {}, lease_callbacks);
  if (!lease) return tl::unexpected(lease.error());
  lease_ = std::move(*lease);
  rd_kafka_topic_partition_list_t* topics = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(topics, config_.topics.dedup_lease.c_str(),
                                    RD_KAFKA_PARTITION_UA);
  const rd_kafka_resp_err_t e = rd_kafka_subscribe(lease_.get(), topics);
  rd_kafka_topic_partition_list_destroy(topics);
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) return tl::unexpected(rd_kafka_err2str(e));
  standby_ = true;
  metrics_.dedup_owner(false);
  log::info("dedup_standby", {{"lease_topic", config_.topics.dedup_lease},
                              {"lease_group", group},
                              {"changelog", config_.topics.state},
                              {"last_seq", std::to_string(store_.last_seq())}});
  return {};
}

void DedupLease::on_rebalance(rd_kafka_t* rk, int err_int, void* partitions_ptr, void* opaque) {
  auto* self = static_cast<DedupLease*>(opaque);
  auto* partitions = static_cast<rd_kafka_topic_partition_list_t*>(partitions_ptr);
  const auto err = static_cast<rd_kafka_resp_err_t>(err_int);
  const bool cooperative = self->cooperative_;
  const bool assign = err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS;
  // The lease is partition 0 (a topic created with more would otherwise make several owners).
  bool lease = false;
  for (int i = 0; i < partitions->cnt; ++i) lease = lease || partitions->elems[i].partition == 0;
  if (lease) {
    self->granted_ = assign;
    // An owner that lost the lease stays fenced even when the group gives it back at once: a
    // standby may have judged in between (`serve` makes it exit and start again).
    if (!assign) {
      self->revoked_ = true;
    } else if (!self->owner_) {
      self->revoked_ = false;
    }
  }
  follow_rebalance(rk, assign, partitions, cooperative);
  log::info(assign ? "dedup_lease_assigned" : "dedup_lease_revoked",
            {{"partitions", std::to_string(partitions->cnt)}, {"reason", rd_kafka_err2name(err)}});
}

bool DedupLease::lost() {
  if (!lease_ || !owner_) return false;
  if (!revoked_) {
    // Served here too (not only once a loop turn): an owner stuck waiting on a full producer
    // queue must see its lease go before it publishes or commits anything more.
    while (rd_kafka_message_t* m = rd_kafka_consumer_poll(lease_.get(), 0)) {
      rd_kafka_message_destroy(m);
    }
    if (rd_kafka_assignment_lost(lease_.get())) revoked_ = true;
  }
  return revoked_;
}

bool DedupLease::serve() {
  // Serves the lease group (heartbeats run in the background; rebalances need this poll).
  while (rd_kafka_message_t* m = rd_kafka_consumer_poll(lease_.get(), 0)) {
    rd_kafka_message_destroy(m);
  }
  if (owner_) {
    if (revoked_) {
      // Another process judges now; this one's window went on past the changelog it shares
      // with the new owner. It stops (its supervisor starts it again: a fresh standby).
      log::error("dedup_lease_lost", {{"consequence", "exiting; restart to rejoin as standby"}});
      return false;
    }
    return true;
  }
  revoked_ = false;  // a lease granted and taken back before this standby used it
  auto apply = [this](const dedup::ArticleState& s) { store_.apply(s); };
  if (granted_) return take_over();
  if (store_.committed_age() > std::chrono::milliseconds(500)) {
    if (auto c = store_.refresh_committed(input_); !c)
      log::warn("committed_offsets_failed", {{"error", c.error()}});
  }
  const std::size_t applied = tail_->poll(apply);
  store_.note_snapshot_read(*tail_);
  metrics_.standby_lag(static_cast<double>(tail_->pending() + tail_->behind()));
  if (applied > 0) {
    metrics_.window_size(static_cast<double>(pipeline_.window().size()),
                         static_cast<double>(pipeline_.window().memory_bytes()));
    metrics_.stories_active(static_cast<double>(pipeline_.stories().size()));
  }
  if (Clock::now() - last_log_ > std::chrono::seconds(30)) {
    last_log_ = Clock::now();
    log::info("dedup_standby_following", {{"last_seq", std::to_string(tail_->last_seq())},
                                          {"late_records", std::to_string(tail_->late())},
                                          {"held", std::to_string(pipeline_.window().size())}});
  }
  return true;
}

bool DedupLease::take_over() {
  const auto t0 = Clock::now();
  if (transactional_producer_) {
    // Fences the old owner's producer, should it still be alive somewhere, and aborts its open
    // transaction, so the changelog's stable end is its end.
    if (auto ready = Transaction::initialize(transactional_producer_); !ready) {
      log::error("takeover_failed",
                 {{"error", "cannot initialize transactions: " + ready.error()}});
      return false;
    }
  }
  auto apply = [this](const dedup::ArticleState& s) { store_.apply(s); };
  // The old owner is gone (the group gave its lease away): nothing older can arrive, and its
  // commits are final; the records of inputs it did not commit are judged again here.
  if (auto c = store_.refresh_committed(input_); !c) {
    log::error("takeover_failed", {{"error", c.error()}});
    return false;
  }
  auto applied = tail_->catch_up(apply, std::chrono::seconds(120));
  if (!applied) {
    log::error("takeover_failed", {{"error", applied.error()}});
    return false;
  }
  store_.note_snapshot_read(*tail_);
  // Records of inputs the old owner never committed were dropped, and are judged again here:
  // under numbers of their own, not theirs.
  store_.reserve_seq(tail_->seen_seq());
  const std::uint64_t last_seq = tail_->last_seq();
  const std::uint64_t tail_dropped = tail_->dropped();
  const double catch_up_seconds = seconds_since(t0);
  tail_.reset();
  standby_ = false;
  // Every extracted partition, from the offsets the dedup group committed.
  auto n = take_();
  if (!n) {
    log::error("takeover_failed", {{"error", n.error()}});
    return false;
  }
  owner_ = true;
  const double seconds = seconds_since(t0);
  metrics_.dedup_owner(true);
  metrics_.standby_lag(0);
  metrics_.took_over(seconds);
  metrics_.window_size(static_cast<double>(pipeline_.window().size()),
                       static_cast<double>(pipeline_.window().memory_bytes()));
  log::info("dedup_lease_acquired", {{"caught_up_records", std::to_string(*applied)},
                                     {"uncommitted_dropped", std::to_string(tail_dropped)},
                                     {"catch_up_seconds", std::to_string(catch_up_seconds)},
                                     {"last_seq", std::to_string(last_seq)},
                                     {"held", std::to_string(pipeline_.window().size())},
                                     {"partitions", std::to_string(*n)},
                                     {"seconds", std::to_string(seconds)}});
  return true;
}

}  // namespace newsflow::daemon
