#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "tl/expected.hpp"

typedef struct rd_kafka_s rd_kafka_t;
typedef struct rd_kafka_conf_s rd_kafka_conf_t;
typedef struct rd_kafka_mock_cluster_s rd_kafka_mock_cluster_t;
typedef struct rd_kafka_message_s rd_kafka_message_t;

namespace newsflow::daemon {

/// Owning handles for librdkafka objects.
struct KafkaDeleter {
  void operator()(rd_kafka_t* rk) const;
  void operator()(rd_kafka_conf_t* conf) const;
};
using KafkaHandle = std::unique_ptr<rd_kafka_t, KafkaDeleter>;
using KafkaConf = std::unique_ptr<rd_kafka_conf_t, KafkaDeleter>;

/// Builds a librdkafka configuration from our defaults overlaid with the properties for every
/// client (`kafka.client`, `shared`) and then the user's pass-through properties of this
/// client's section. Every property librdkafka rejects becomes a problem at `path.<property>`
/// (`kafka.client.<property>` for a shared one).
tl::expected<KafkaConf, std::vector<config::Problem>> make_kafka_conf(
    const std::map<std::string, std::string>& defaults,
    const std::map<std::string, std::string>& shared,
    const std::map<std::string, std::string>& user, const std::string& path);

/// The properties of each of the daemon's producers before the user's: idempotent, acknowledged
/// by every replica, `client_id`, records up to `max_record_bytes`, and a record given up
/// (`message.timeout.ms`) no later than the wait after which its batch counts as failed and is
/// judged again (`kafka.flush_timeout_ms`; within `transaction.timeout.ms` exactly_once), so a
/// batch judged again never leaves its first records queued to be delivered later.
std::map<std::string, std::string> producer_defaults(const config::Config& config,
                                                     const std::string& bootstrap,
                                                     const std::string& client_id,
                                                     std::int64_t max_record_bytes);

/// What a client calls back, each with `opaque` (its owner). Plain ints and void pointers stand
/// for librdkafka's error codes and partition lists, so headers need not include librdkafka.
struct ClientCallbacks {
  void* opaque = nullptr;
  /// A consumer's rebalance (`partitions`: an `rd_kafka_topic_partition_list_t*`).
  void (*rebalance)(rd_kafka_t* rk, int err, void* partitions, void* opaque) = nullptr;
  /// The answer of a consumer's asynchronous commit.
  void (*offset_commit)(rd_kafka_t* rk, int err, void* partitions, void* opaque) = nullptr;
  /// A producer's delivery report.
  void (*delivery)(rd_kafka_t* rk, const rd_kafka_message_t* msg, void* opaque) = nullptr;
  int (*statistics)(rd_kafka_t* rk, char* json, std::size_t len, void* opaque) = nullptr;
};

enum class ClientKind { kConsumer, kProducer };

/// Creates a client from `conf` (`make_kafka_conf`, consumed) with `forced` properties set over
/// the user's (those the code relies on, such as `enable.partition.eof`) and `callbacks`. A
/// consumer's events come with its consumer poll (`rd_kafka_poll_set_consumer`). The error is
/// librdkafka's.
tl::expected<KafkaHandle, std::string> create_client(
    ClientKind kind, KafkaConf conf, const std::map<std::string, std::string>& forced = {},
    const ClientCallbacks& callbacks = {});

/// Closes consumer `c` (its last commits, leaving its group) and destroys it, waiting at most
/// `limit`: `rd_kafka_consumer_close` waits without bound for a group coordinator that does not
/// answer (librdkafka issues 3740 and 4527: the brokers gone during a rebalance), and a daemon
/// told to stop must stop. Rebalances during the close go to `rebalance` (with `opaque`), as
/// its callback would have. A consumer that did not close in time is logged
/// (`consumer_close_timeout`, with `what`) and left to the process's exit, as is one closed in
/// time but with `keep` true (see `Daemon::close_consumer`). True when it closed in time.
bool close_consumer(KafkaHandle& c, std::chrono::milliseconds limit, const char* what,
                    void (*rebalance)(rd_kafka_t*, int, void*, void*) = nullptr,
                    void* opaque = nullptr, bool keep = false);

/// Carries out a rebalance in a consumer's rebalance callback: `partitions` (an
/// `rd_kafka_topic_partition_list_t*`) assigned (`assign`) or revoked, incrementally when the
/// consumer's strategy is `cooperative`, else the whole assignment replaced.
void follow_rebalance(rd_kafka_t* rk, bool assign, void* partitions, bool cooperative);

/// The consumer's `group.instance.id` for `kafka.group_instance_id` (`setting`): "auto" gives
/// `<host>-<role>` (characters Kafka does not accept in an id become '-'), "none" or "" gives
/// "" (dynamic membership), anything else is used as it is. A `group.instance.id` among the
/// consumer's pass-through properties wins over all of these (the caller checks).
std::string group_instance_id(const std::string& setting, const std::string& role,
                              const std::string& host);

/// This machine's name for `group_instance_id`: $HOSTNAME when set (the pod name under
/// Kubernetes), else gethostname().
std::string host_name();

/// Checks the Kafka sections of a configuration the way startup will (check-config).
std::vector<config::Problem> check_kafka_config(const config::Config& config);

/// A topic to create with its partition count and cleanup policy.
struct TopicSpec {
  std::string name;
  int partitions = 1;
  bool compacted = false;  ///< cleanup.policy=compact (the changelog, the stories)
};

/// An in-process Kafka cluster: librdkafka's mock cluster, speaking the real protocol on
/// loopback TCP. It keeps about 5 MiB per partition and drops older messages. Thread-safe.
class EmbeddedCluster {
 public:
  ~EmbeddedCluster();

  /// Starts `brokers` brokers and creates `topics`.
  static tl::expected<std::unique_ptr<EmbeddedCluster>, std::string> start(
      int brokers, const std::vector<TopicSpec>& topics);

  /// Comma-separated bootstrap addresses, e.g. "127.0.0.1:40123,127.0.0.1:40125".
  const std::string& bootstrap() const { return bootstrap_; }

  /// The mock cluster, for tests that inject faults.
  rd_kafka_mock_cluster_t* mock() const { return mock_; }

 private:
  EmbeddedCluster() = default;
  KafkaHandle host_;
  rd_kafka_mock_cluster_t* mock_ = nullptr;
  std::string bootstrap_;
};

/// The topics the daemon uses, with the embedded cluster's partition count.
std::vector<TopicSpec> daemon_topics(const config::Config& config);

}  // namespace newsflow::daemon
