#include "daemon/kafka/state_store.h"

// The state store's bookkeeping: the committed offsets that say which records are state, the
// handover ledger, the tail, and the records applied by a standby. The restore is in
// restore.cc, the snapshots in snapshot.cc.

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "daemon/kafka/message.h"
#include "daemon/ops/log.h"
#include "daemon/pipeline/pipeline.h"

namespace newsflow::daemon {

using namespace internal;

std::vector<std::string> input_topics(const config::Config& config) {
  if (config.role == config::Role::kDedup) return {config.topics.extracted};
  return {config.topics.pages, config.topics.feeds};
}

StateStore::StateStore(const config::Config& config, Metrics& metrics, Pipeline& pipeline,
                       SystemdNotifier& notifier, const std::atomic<bool>& stop)
    : config_(config),
      metrics_(metrics),
      pipeline_(pipeline),
      notifier_(notifier),
      stop_(stop),
      inputs_(input_topics(config)) {}

namespace {

// How long a restore or a takeover waits for the group's coordinator to answer.
constexpr std::chrono::seconds kCommittedPatience{30};

// An answer that a later try can change: the group's coordinator is moving or still loading its
// offsets (a broker just started, a coordinator failed over), or the request timed out.
bool retriable(rd_kafka_resp_err_t e) {
  switch (e) {
    case RD_KAFKA_RESP_ERR_NOT_COORDINATOR:
    case RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS:
    case RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
    case RD_KAFKA_RESP_ERR__TIMED_OUT:
    case RD_KAFKA_RESP_ERR__TRANSPORT:
    case RD_KAFKA_RESP_ERR__WAIT_COORD:
      return true;
    default:
      return false;
  }
}

// The first error of the answer: the request's, else a partition's (a partition whose offset
// could not be read is not taken as uncommitted: its records would be judged again).
rd_kafka_resp_err_t first_error(rd_kafka_resp_err_t e, const rd_kafka_topic_partition_list_t* l) {
  for (int i = 0; e == RD_KAFKA_RESP_ERR_NO_ERROR && i < l->cnt; ++i) e = l->elems[i].err;
  return e;
}

}  // namespace

tl::expected<void, std::string> StateStore::refresh_committed(rd_kafka_t* group) {
  committed_at_ = Clock::now();
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(64);
  for (const std::string& topic : inputs_) {
    const auto n = topic_partitions(group, topic);
    if (!n) continue;  // no such topic yet: nothing of it was judged
    for (int p = 0; p < *n; ++p) rd_kafka_topic_partition_list_add(list, topic.c_str(), p);
  }
  // A coordinator that is loading or moving answers again within seconds: a daemon started
  // beside a broker that just started met NOT_COORDINATOR here and exited (found by
  // tests/bench/kafka_broker_kills.sh on Kafka 4.1.1).
  const auto deadline = Clock::now() + kCommittedPatience;
  rd_kafka_resp_err_t e = first_error(rd_kafka_committed(group, list, 10000), list);
  for (auto pause = std::chrono::milliseconds(100);
       retriable(e) && Clock::now() + pause < deadline && !stop_.load();
       pause = std::min(2 * pause, std::chrono::milliseconds(2000))) {
    log::warn("committed_offsets_retry", {{"error", rd_kafka_err2str(e)}});
    std::this_thread::sleep_for(pause);
    for (int i = 0; i < list->cnt; ++i) {
      list->elems[i].err = RD_KAFKA_RESP_ERR_NO_ERROR;
      list->elems[i].offset = RD_KAFKA_OFFSET_INVALID;
    }
    e = first_error(rd_kafka_committed(group, list, 10000), list);
  }
  if (e == RD_KAFKA_RESP_ERR_NO_ERROR) {
    committed_.clear();
    for (int i = 0; i < list->cnt; ++i) {
      const auto& tp = list->elems[i];
      if (tp.offset >= 0) committed_[{tp.topic, tp.partition}] = tp.offset;
    }
  }
  rd_kafka_topic_partition_list_destroy(list);
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return tl::unexpected(std::string("committed offsets: ") + rd_kafka_err2str(e));
  }
  return {};
}

void StateStore::note_judged(const rd_kafka_message_t* state_record) {
  if (config_.role != config::Role::kDedup) return;
  note_judged(header_of(state_record, kSourceHeader), header_of(state_record, kInputHeader),
              key_of(state_record));
}

void StateStore::note_judged(std::string_view source_header, std::string_view input_header,
                             std::string_view id) {
  if (config_.role != config::Role::kDedup) return;
  const auto source = parse_position(source_header);
  const auto at = parse_position(input_header);
  if (source && at && at->topic == config_.topics.extracted) {
    ledger_.judged(*source, at->partition, at->offset, id);
  }
}

Admission StateStore::admit(const rd_kafka_message_t* state_record, bool final) const {
  return admit(header_of(state_record, kInputHeader), final);
}

Admission StateStore::admit(std::string_view input_header, bool final) const {
  return admit_state_record(input_header, inputs_, committed_, final);
}

void StateStore::reserve_seq(std::uint64_t seq) { pipeline_.reserve_seq(seq); }

void StateStore::apply(const dedup::ArticleState& state) {
  pipeline_.restore(state);
  note_record(state.seq, state.id);
}

tl::expected<std::unique_ptr<ChangelogTail>, std::string> StateStore::open_tail(
    const std::string& bootstrap, std::chrono::milliseconds hold) {
  // A consumer of its own, assigned every changelog partition where the restore ended.
  auto conf = make_kafka_conf({{"bootstrap.servers", bootstrap},
                               {"group.id", config_.kafka.group_id + ".tail"},
                               {"enable.auto.commit", "false"},
                               {"isolation.level", "read_committed"},
                               {"client.id", "newsflow-tail"}},
                              config_.kafka.client, config_.kafka.consumer, "kafka.consumer");
  if (!conf) return tl::unexpected(conf.error().front().message);
  auto consumer =
      create_client(ClientKind::kConsumer, std::move(*conf),
                    {{"enable.partition.eof", "true"}, {"enable.auto.commit", "false"}});
  if (!consumer) return tl::unexpected(consumer.error());
  // A standby applies the owner's records once their inputs are committed (`admit`); an
  // extractor learns links from every record.
  ChangelogTail::Admit gate;
  if (config_.role == config::Role::kDedup) {
    gate = [this](const rd_kafka_message_t* m, bool final) {
      const Admission a = admit(m, final);
      if (a == Admission::kApply) note_judged(m);  // applied next
      return a;
    };
  }
  return ChangelogTail::open(std::move(*consumer), config_.topics.state, positions_, last_seq_,
                             hold, std::move(gate));
}

void StateStore::note_snapshot_read(const ChangelogTail& tail) {
  const auto [seq, chunks] = tail.snapshot();
  if (seq <= snapshot_seq_) return;
  snapshot_seq_ = seq;
  snapshot_chunks_ = chunks;
  keys_.erase_through(seq);
}

}  // namespace newsflow::daemon
