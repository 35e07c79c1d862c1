#include "daemon/cli/create_topics.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "daemon/kafka/kafka.h"
#include "daemon/kafka/topics.h"

namespace newsflow::daemon {

namespace {

// What became of a topic (created, exists, failed, missing) and what is wrong with it, if
// anything: `input_partitions` is the pages' and feeds' topics' partitions together.
std::pair<std::string, std::string> check_topic(const config::Config& config,
                                                const CreateTopicsOptions& options,
                                                const TopicSpec& t, const TopicDescription& d,
                                                const std::map<std::string, std::string>& created,
                                                int input_partitions) {
  std::string state = "exists", problem;
  if (auto it = created.find(t.name); it != created.end() && it->second.empty()) {
    state = "created";
  } else if (it != created.end() && it->second != "exists") {
    state = "failed";
    problem = it->second;
  }
  if (problem.empty() && !d.exists) {
    state = "missing";
    problem =
        options.check ? "does not exist (newsflow create-topics creates it)" : "does not exist";
  } else if (problem.empty() && t.compacted && !keeps_latest_per_key(d)) {
    problem =
        "not compacted: retention would delete what restarts and readers need; set "
        "cleanup.policy=compact";
  } else if (problem.empty() && t.name == config.topics.dedup_lease && d.partitions != 1) {
    problem = "needs exactly one partition (its owner is the one dedup process that judges)";
  } else if (problem.empty() && t.name == config.topics.extracted &&
             d.partitions < input_partitions) {
    problem = "fewer partitions than the pages and feeds topics together";
  }
  return {state, problem};
}

}  // namespace

int run_create_topics(const config::Config& config, const CreateTopicsOptions& options) {
  if (config.kafka.brokers.empty()) {
    std::fprintf(stderr, "create-topics: set kafka.brokers (NEWSFLOW_KAFKA__BROKERS)\n");
    return 2;
  }
  if (options.partitions < 1) {
    std::fprintf(stderr, "create-topics: --partitions must be at least 1\n");
    return 2;
  }
  auto conf = make_kafka_conf(
      {{"bootstrap.servers", config.kafka.brokers}, {"client.id", "newsflow-create-topics"}},
      config.kafka.client, {}, "kafka.client");
  if (!conf) {
    for (const auto& p : conf.error()) {
      std::fprintf(stderr, "create-topics: %s: %s\n", p.path.c_str(), p.message.c_str());
    }
    return 2;
  }
  auto client = create_client(ClientKind::kProducer, std::move(*conf));
  if (!client) {
    std::fprintf(stderr, "create-topics: %s\n", client.error().c_str());
    return 2;
  }
  const auto timeout = std::chrono::seconds(30);
  const std::vector<TopicSpec> topics = configured_topics(config, options.partitions);
  std::map<std::string, std::string> created;
  if (!options.check) {
    auto answer = create_topics(client->get(), topics, options.replication_factor, timeout);
    if (!answer) {
      std::fprintf(stderr, "create-topics: %s\n", answer.error().c_str());
      return 2;
    }
    created = std::move(*answer);
  }
  std::vector<std::string> names;
  for (const auto& t : topics) names.push_back(t.name);
  auto described = describe_topics(client->get(), names, timeout);
  // A topic just created may take a moment to show in the brokers' metadata.
  auto unseen = [&] {
    for (const auto& [name, error] : created) {
      if (error.empty() && !(*described)[name].exists) return true;
    }
    return false;
  };
  for (int attempt = 0; described && attempt < 20 && unseen(); ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    described = describe_topics(client->get(), names, timeout);
  }
  if (!described) {
    std::fprintf(stderr, "create-topics: %s\n", described.error().c_str());
    return 2;
  }
  auto partitions_of = [&](const std::string& name) {
    auto it = described->find(name);
    return it == described->end() ? 0 : it->second.partitions;
  };
  const int input_partitions =
      partitions_of(config.topics.pages) + partitions_of(config.topics.feeds);
  int problems = 0, made = 0, width = 0;
  for (const auto& t : topics) width = std::max(width, static_cast<int>(t.name.size()));
  for (const auto& t : topics) {
    const TopicDescription& d = (*described)[t.name];
    const auto [state, problem] = check_topic(config, options, t, d, created, input_partitions);
    if (state == "created") ++made;
    std::printf("%-*s  %-8s %3d partitions  cleanup.policy=%s%s%s\n", width, t.name.c_str(),
                state.c_str(), d.partitions,
                d.cleanup_policy.empty() ? "-" : d.cleanup_policy.c_str(),
                problem.empty() ? "  ok" : "  PROBLEM: ", problem.c_str());
    if (!problem.empty()) ++problems;
  }
  std::printf("create-topics: %zu topics, %d created, %d with problems\n", topics.size(), made,
              problems);
  return problems == 0 ? 0 : 1;
}

}  // namespace newsflow::daemon
