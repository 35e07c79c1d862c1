#include "daemon/kafka/kafka.h"

#include <librdkafka/rdkafka.h>
// rdkafka.h must come first.
#include <librdkafka/rdkafka_mock.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "daemon/ops/log.h"

namespace newsflow::daemon {

void KafkaDeleter::operator()(rd_kafka_t* rk) const {
  if (rk) rd_kafka_destroy(rk);
}
void KafkaDeleter::operator()(rd_kafka_conf_t* conf) const {
  if (conf) rd_kafka_conf_destroy(conf);
}

std::string group_instance_id(const std::string& setting, const std::string& role,
                              const std::string& host) {
  if (setting.empty() || setting == "none") return "";
  if (setting != "auto") return setting;
  // Kafka's ids take [a-zA-Z0-9._-]; host names rarely hold anything else.
  std::string id = (host.empty() ? std::string("newsflow") : host) + "-" + role;
  for (char& ch : id) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-';
    if (!ok) ch = '-';
  }
  return id;
}

std::string host_name() {
  if (const char* h = std::getenv("HOSTNAME"); h && *h) return h;
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) == 0) return buf;
  return "";
}

void follow_rebalance(rd_kafka_t* rk, bool assign, void* partitions_ptr, bool cooperative) {
  auto* partitions = static_cast<rd_kafka_topic_partition_list_t*>(partitions_ptr);
  if (!cooperative) {
    rd_kafka_assign(rk, assign ? partitions : nullptr);
    return;
  }
  rd_kafka_error_t* e = assign ? rd_kafka_incremental_assign(rk, partitions)
                               : rd_kafka_incremental_unassign(rk, partitions);
  if (e) {
    log::warn("rebalance_failed", {{"error", rd_kafka_error_string(e)}});
    rd_kafka_error_destroy(e);
  }
}

bool close_consumer(KafkaHandle& c, std::chrono::milliseconds limit, const char* what,
                    void (*rebalance)(rd_kafka_t*, int, void*, void*), void* opaque, bool keep) {
  if (!c) return true;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  rd_kafka_queue_t* q = rd_kafka_queue_new(c.get());
  bool closed = false;
  if (rd_kafka_error_t* e = rd_kafka_consumer_close_queue(c.get(), q)) {
    log::warn("consumer_close_failed", {{"consumer", what}, {"error", rd_kafka_error_string(e)}});
    rd_kafka_error_destroy(e);
  } else {
    while (!(closed = rd_kafka_consumer_closed(c.get())) &&
           std::chrono::steady_clock::now() < deadline) {
      rd_kafka_event_t* ev = rd_kafka_queue_poll(q, 100);
      if (!ev) continue;
      // Only a consumer with a rebalance callback gets these (librdkafka assigns for the others).
      if (rebalance && rd_kafka_event_type(ev) == RD_KAFKA_EVENT_REBALANCE) {
        rebalance(c.get(), rd_kafka_event_error(ev), rd_kafka_event_topic_partition_list(ev),
                  opaque);
      }
      rd_kafka_event_destroy(ev);
    }
  }
  rd_kafka_queue_destroy(q);
  if (!closed) {
    log::warn("consumer_close_timeout",
              {{"consumer", what},
               {"limit_ms", std::to_string(limit.count())},
               {"consequence",
                "left open until the process exits; the group drops it after its session "
                "timeout, and what it did not commit is read again by the partitions' next "
                "owner"}});
  }
  if (!closed || keep) {
    // Kept reachable, so a leak checker does not count it.
    static std::vector<rd_kafka_t*> left_open;
    left_open.push_back(c.release());
    return closed;
  }
  c.reset();
  return true;
}

namespace {

// librdkafka's own log lines (broker disconnects, retries, ...) in the daemon's log format, so
// a JSON log stays parseable; syslog levels 0-3 are errors, 4 warnings, 5-6 info, 7 debug.
void kafka_log(const rd_kafka_t* rk, int level, const char* facility, const char* message) {
  const log::Level l = level <= 3   ? log::Level::kError
                       : level == 4 ? log::Level::kWarn
                       : level <= 6 ? log::Level::kInfo
                                    : log::Level::kDebug;
  log::write(l, "librdkafka",
             {{"client", rd_kafka_name(rk)}, {"facility", facility}, {"message", message}});
}

}  // namespace

std::map<std::string, std::string> producer_defaults(const config::Config& config,
                                                     const std::string& bootstrap,
                                                     const std::string& client_id,
                                                     std::int64_t max_record_bytes) {
  std::int64_t timeout_ms = std::max(1, config.kafka.flush_timeout_ms);
  if (config.kafka.delivery == config::Delivery::kExactlyOnce) {
    // librdkafka refuses a message timeout longer than the transaction's (60 s by default).
    std::int64_t transaction_ms = 60000;
    for (const auto* props : {&config.kafka.client, &config.kafka.producer}) {
      if (const auto it = props->find("transaction.timeout.ms"); it != props->end()) {
        transaction_ms = std::strtoll(it->second.c_str(), nullptr, 10);
      }
    }
    if (transaction_ms > 0) timeout_ms = std::min(timeout_ms, transaction_ms);
  }
  return {{"bootstrap.servers", bootstrap},
          {"enable.idempotence", "true"},
          {"acks", "all"},
          {"linger.ms", "5"},
          {"message.max.bytes", std::to_string(max_record_bytes)},
          {"message.timeout.ms", std::to_string(timeout_ms)},
          {"client.id", client_id}};
}

tl::expected<KafkaConf, std::vector<config::Problem>> make_kafka_conf(
    const std::map<std::string, std::string>& defaults,
    const std::map<std::string, std::string>& shared,
    const std::map<std::string, std::string>& user, const std::string& path) {
  KafkaConf conf(rd_kafka_conf_new());
  rd_kafka_conf_set_log_cb(conf.get(), kafka_log);
  std::vector<config::Problem> problems;
  char err[512];
  for (const auto& [props, where] :
       {std::pair{&defaults, path}, std::pair{&shared, std::string("kafka.client")},
        std::pair{&user, path}}) {
    for (const auto& [name, value] : *props) {
      if (rd_kafka_conf_set(conf.get(), name.c_str(), value.c_str(), err, sizeof err) !=
          RD_KAFKA_CONF_OK) {
        problems.push_back({where + "." + name, std::string(err)});
      }
    }
  }
  if (!problems.empty()) return tl::unexpected(std::move(problems));
  return conf;
}

tl::expected<KafkaHandle, std::string> create_client(
    ClientKind kind, KafkaConf conf, const std::map<std::string, std::string>& forced,
    const ClientCallbacks& callbacks) {
  char err[512];
  for (const auto& [name, value] : forced) {
    if (rd_kafka_conf_set(conf.get(), name.c_str(), value.c_str(), err, sizeof err) !=
        RD_KAFKA_CONF_OK) {
      return tl::unexpected(name + ": " + err);
    }
  }
  using PartitionsCallback =
      void (*)(rd_kafka_t*, rd_kafka_resp_err_t, rd_kafka_topic_partition_list_t*, void*);
  if (callbacks.rebalance) {
    rd_kafka_conf_set_rebalance_cb(conf.get(),
                                   reinterpret_cast<PartitionsCallback>(callbacks.rebalance));
  }
  if (callbacks.offset_commit) {
    rd_kafka_conf_set_offset_commit_cb(
        conf.get(), reinterpret_cast<PartitionsCallback>(callbacks.offset_commit));
  }
  if (callbacks.delivery) rd_kafka_conf_set_dr_msg_cb(conf.get(), callbacks.delivery);
  if (callbacks.statistics) rd_kafka_conf_set_stats_cb(conf.get(), callbacks.statistics);
  if (callbacks.opaque) rd_kafka_conf_set_opaque(conf.get(), callbacks.opaque);
  const bool consumer = kind == ClientKind::kConsumer;
  KafkaHandle client(
      rd_kafka_new(consumer ? RD_KAFKA_CONSUMER : RD_KAFKA_PRODUCER, conf.get(), err, sizeof err));
  if (!client) return tl::unexpected(std::string(err));
  static_cast<void>(conf.release());  // the client's now
  if (consumer) rd_kafka_poll_set_consumer(client.get());
  return client;
}

std::vector<config::Problem> check_kafka_config(const config::Config& config) {
  std::vector<config::Problem> problems;
  // The shared properties once, then each section's alone.
  if (auto conf = make_kafka_conf({}, config.kafka.client, {}, "kafka.client"); !conf) {
    problems.insert(problems.end(), conf.error().begin(), conf.error().end());
  }
  for (const auto& [section, props] : {std::pair{"kafka.consumer", &config.kafka.consumer},
                                       std::pair{"kafka.producer", &config.kafka.producer},
                                       std::pair{"kafka.lease", &config.kafka.lease}}) {
    auto conf = make_kafka_conf({}, {}, *props, section);
    if (!conf) problems.insert(problems.end(), conf.error().begin(), conf.error().end());
  }
  return problems;
}

EmbeddedCluster::~EmbeddedCluster() {
  if (mock_) rd_kafka_mock_cluster_destroy(mock_);
}

tl::expected<std::unique_ptr<EmbeddedCluster>, std::string> EmbeddedCluster::start(
    int brokers, const std::vector<TopicSpec>& topics) {
  std::unique_ptr<EmbeddedCluster> cluster(new EmbeddedCluster());
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "log_level", "3", err, sizeof err);
  cluster->host_.reset(rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err));
  if (!cluster->host_) {
    rd_kafka_conf_destroy(conf);
    return tl::unexpected(std::string("cannot create the mock cluster's host: ") + err);
  }
  cluster->mock_ = rd_kafka_mock_cluster_new(cluster->host_.get(), brokers);
  if (!cluster->mock_) return tl::unexpected(std::string("cannot start the mock cluster"));
  cluster->bootstrap_ = rd_kafka_mock_cluster_bootstraps(cluster->mock_);
  for (const auto& t : topics) {
    const rd_kafka_resp_err_t e =
        rd_kafka_mock_topic_create(cluster->mock_, t.name.c_str(), t.partitions, 1);
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return tl::unexpected("cannot create topic " + t.name + ": " + rd_kafka_err2str(e));
    }
  }
  return cluster;
}

std::vector<TopicSpec> daemon_topics(const config::Config& config) {
  const int n = config.kafka.embedded_partitions;
  return {{config.topics.pages, n},
          {config.topics.feeds, n},
          {config.topics.articles, n},
          {config.topics.stories, n},
          {config.topics.dlq, n},
          {config.topics.state.empty() ? std::string("newsflow.state") : config.topics.state, n},
          {config.topics.extracted, 2 * n},
          {config.topics.dedup_lease.empty() ? std::string("newsflow.dedup-lease")
                                             : config.topics.dedup_lease,
           1},
          {config.topics.fetch_retries.empty() ? std::string("newsflow.fetch-retries")
                                               : config.topics.fetch_retries,
           n}};
}

}  // namespace newsflow::daemon
