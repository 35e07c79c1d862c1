#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <signal.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "daemon/cli/service.h"
#include "daemon/kafka/kafka.h"
#include "daemon/ops/log.h"

namespace newsflow::daemon {
namespace {

// Kafka API keys by the names the protocol guide uses, for `errors`.
constexpr std::pair<std::string_view, int> kApiKeys[] = {{"Produce", 0},
                                                         {"Fetch", 1},
                                                         {"ListOffsets", 2},
                                                         {"Metadata", 3},
                                                         {"OffsetCommit", 8},
                                                         {"OffsetFetch", 9},
                                                         {"FindCoordinator", 10},
                                                         {"JoinGroup", 11},
                                                         {"Heartbeat", 12},
                                                         {"LeaveGroup", 13},
                                                         {"SyncGroup", 14},
                                                         {"InitProducerId", 22},
                                                         {"AddPartitionsToTxn", 24},
                                                         {"AddOffsetsToTxn", 25},
                                                         {"EndTxn", 26},
                                                         {"TxnOffsetCommit", 28}};

std::optional<int> api_key(const std::string& name) {
  for (const auto& [n, key] : kApiKeys) {
    if (n == name) return key;
  }
  try {
    return std::stoi(name);
  } catch (...) {
    return std::nullopt;
  }
}

std::optional<rd_kafka_resp_err_t> error_code(const std::string& name) {
  const struct rd_kafka_err_desc* descs = nullptr;
  std::size_t n = 0;
  rd_kafka_get_err_descs(&descs, &n);
  for (std::size_t i = 0; i < n; ++i) {
    if (descs[i].name && name == descs[i].name) return descs[i].code;
  }
  try {
    return static_cast<rd_kafka_resp_err_t>(std::stoi(name));
  } catch (...) {
    return std::nullopt;
  }
}

// One control command; returns what went wrong, or "" when it was applied.
std::string apply_command(rd_kafka_mock_cluster_t* mock, const std::string& line) {
  std::istringstream in(line);
  std::string verb;
  in >> verb;
  auto status = [](rd_kafka_resp_err_t err) {
    return err ? std::string(rd_kafka_err2str(err)) : std::string();
  };
  if (verb == "down" || verb == "up") {
    int broker = -2;
    if (!(in >> broker) || broker < -1) return "usage: " + verb + " BROKER_ID|-1";
    return status(verb == "down" ? rd_kafka_mock_broker_set_down(mock, broker)
                                 : rd_kafka_mock_broker_set_up(mock, broker));
  }
  if (verb == "rtt") {
    int broker = -2, ms = -1;
    if (!(in >> broker >> ms) || broker < -1 || ms < 0) return "usage: rtt BROKER_ID|-1 MS";
    return status(rd_kafka_mock_broker_set_rtt(mock, broker, ms));
  }
  if (verb == "leader") {
    std::string topic;
    int partition = -1, broker = -2;
    if (!(in >> topic >> partition >> broker)) return "usage: leader TOPIC PARTITION BROKER_ID";
    return status(rd_kafka_mock_partition_set_leader(mock, topic.c_str(), partition, broker));
  }
  if (verb == "errors") {
    std::string api, err;
    int count = 0;
    if (!(in >> api >> err >> count) || count <= 0 || count > 100000) {
      return "usage: errors API_KEY ERROR_NAME COUNT";
    }
    const auto key = api_key(api);
    const auto code = error_code(err);
    if (!key) return "unknown API key " + api;
    if (!code) return "unknown error " + err;
    std::vector<rd_kafka_resp_err_t> errs(static_cast<std::size_t>(count), *code);
    rd_kafka_mock_push_request_errors_array(mock, static_cast<std::int16_t>(*key), errs.size(),
                                            errs.data());
    return "";
  }
  return "unknown command '" + verb + "' (down, up, rtt, leader, errors)";
}

// Applies the lines appended to `path` since the last call.
void poll_control_file(rd_kafka_mock_cluster_t* mock, const std::string& path,
                       std::streamoff& offset) {
  std::ifstream f(path);
  if (!f) return;
  f.seekg(offset);
  std::string line;
  while (std::getline(f, line)) {
    if (f.eof()) break;  // a line still being written: read it whole next time
    offset = f.tellg();
    if (line.empty() || line[0] == '#') continue;
    const std::string problem = apply_command(mock, line);
    if (problem.empty()) {
      log::info("dev_broker_fault", {{"command", line}});
    } else {
      log::warn("dev_broker_bad_command", {{"command", line}, {"error", problem}});
    }
  }
}

}  // namespace

int run_dev_broker(const config::Config& config, const DevBrokerOptions& options) {
  std::vector<TopicSpec> topics;
  if (options.topics.empty()) {
    for (auto t : daemon_topics(config)) {
      // The extracted topic has a partition for each pages and feeds partition; the lease one.
      int n = options.partitions;
      if (t.name == config.topics.extracted) n = 2 * options.partitions;
      if (t.name == config.topics.dedup_lease) n = 1;
      topics.push_back({t.name, n});
    }
  } else {
    for (const auto& name : options.topics) topics.push_back({name, options.partitions});
  }
  auto cluster = EmbeddedCluster::start(options.brokers, topics);
  if (!cluster) {
    log::error("dev_broker_failed", {{"error", cluster.error()}});
    return 2;
  }
  const std::string& bootstrap = (*cluster)->bootstrap();
  if (!options.bootstrap_file.empty()) {
    const std::string tmp = options.bootstrap_file + ".tmp";
    std::ofstream(tmp) << bootstrap << "\n";
    if (std::rename(tmp.c_str(), options.bootstrap_file.c_str()) != 0) {
      log::error("dev_broker_failed", {{"error", "cannot write " + options.bootstrap_file}});
      return 2;
    }
  }
  std::string names;
  for (const auto& t : topics) names += (names.empty() ? "" : ",") + t.name;
  log::info("dev_broker_ready", {{"bootstrap", bootstrap},
                                 {"brokers", std::to_string(options.brokers)},
                                 {"partitions", std::to_string(options.partitions)},
                                 {"topics", names}});
  std::printf("%s\n", bootstrap.c_str());
  std::fflush(stdout);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  std::streamoff control_offset = 0;
  int sig = -1;
  while (sig < 0) {
    if (!options.control_file.empty()) {
      poll_control_file((*cluster)->mock(), options.control_file, control_offset);
    }
    const timespec tick{0, 100'000'000};
    sig = sigtimedwait(&set, nullptr, &tick);
  }
  log::info("dev_broker_stopping", {{"signal", std::to_string(sig)}});
  if (!options.bootstrap_file.empty()) std::remove(options.bootstrap_file.c_str());
  return 0;
}

}  // namespace newsflow::daemon
