#include <signal.h>

#include <cstdio>
#include <fstream>

#include "daemon/kafka.h"
#include "daemon/log.h"
#include "daemon/service.h"

namespace newsflow::daemon {

int run_dev_broker(const config::Config& config, const DevBrokerOptions& options) {
  std::vector<TopicSpec> topics;
  if (options.topics.empty()) {
    for (auto t : daemon_topics(config)) topics.push_back({t.name, options.partitions});
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
  int sig = 0;
  sigwait(&set, &sig);
  log::info("dev_broker_stopping", {{"signal", std::to_string(sig)}});
  if (!options.bootstrap_file.empty()) std::remove(options.bootstrap_file.c_str());
  return 0;
}

}  // namespace newsflow::daemon
