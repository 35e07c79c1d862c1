#pragma once

// newsflow's topics as the brokers hold them: created with their partitions and cleanup
// policies (`newsflow create-topics`), and the check the daemon makes at start that the state
// changelog and the stories topic are compacted.

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "config/config.h"
#include "daemon/kafka/kafka.h"
#include "tl/expected.hpp"

namespace newsflow::daemon {

/// What the brokers hold of one topic.
struct TopicDescription {
  bool exists = false;
  int partitions = 0;
  /// `cleanup.policy`, `retention.ms`, `retention.bytes` and `max.message.bytes` as the brokers
  /// report them ("" when the topic does not exist or the brokers did not say).
  std::string cleanup_policy, retention_ms, retention_bytes, max_message_bytes;
};

/// True when records of a topic described as `d` stay until a newer one of their key replaces
/// them: `cleanup.policy` compact, or compact,delete with neither time nor size retention.
bool keeps_latest_per_key(const TopicDescription& d);

/// The topics `config` names (those turned off with "" left out), each with its partition
/// count for `partitions` per input topic (`extracted` twice as many, the lease one) and
/// whether it is compacted (the changelog `topics.state` and `topics.stories`).
std::vector<TopicSpec> configured_topics(const config::Config& config, int partitions);

/// Asks the brokers `rk` speaks to about `names`: whether each exists, its partitions and its
/// retention settings. The error is the request's (the brokers unreachable within `timeout`,
/// or, `unsupported` set, a broker without the DescribeConfigs API such as librdkafka's mock).
tl::expected<std::map<std::string, TopicDescription>, std::string> describe_topics(
    rd_kafka_t* rk, const std::vector<std::string>& names, std::chrono::milliseconds timeout,
    bool* unsupported = nullptr);

/// Creates `topics` with `replication_factor` replicas (-1: the brokers' default) and
/// `cleanup.policy=compact` where `compacted`. Returns, per topic, "" when it was created,
/// "exists" when it was there already, or the brokers' error.
tl::expected<std::map<std::string, std::string>, std::string> create_topics(
    rd_kafka_t* rk, const std::vector<TopicSpec>& topics, int replication_factor,
    std::chrono::milliseconds timeout);

/// At start: the problems with the topics that must be compacted (the changelog, and the
/// stories topic for the roles that write it): one for each the brokers describe as deleting
/// old records, which would throw judging state or stories away. And one for each output topic
/// of the role whose `max.message.bytes` is below the producer `rk`'s `batch.size`: the brokers
/// would refuse batches of ordinary records, which would end as output_too_large dead letters.
/// Nothing is refused when the brokers cannot say (librdkafka's mock cluster has no
/// DescribeConfigs; a broker away is met later as everywhere else): that is logged.
std::vector<config::Problem> check_compacted_topics(rd_kafka_t* rk, const config::Config& config);

}  // namespace newsflow::daemon
