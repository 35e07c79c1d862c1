#include "daemon/kafka/topics.h"

#include <librdkafka/rdkafka.h>

#include <cstdlib>
#include <memory>
#include <string_view>

#include "daemon/kafka/roles.h"
#include "daemon/ops/log.h"

namespace newsflow::daemon {
namespace {

struct AdminDeleter {
  void operator()(rd_kafka_queue_t* q) const { rd_kafka_queue_destroy(q); }
  void operator()(rd_kafka_AdminOptions_t* o) const { rd_kafka_AdminOptions_destroy(o); }
  void operator()(rd_kafka_event_t* e) const { rd_kafka_event_destroy(e); }
};
using Queue = std::unique_ptr<rd_kafka_queue_t, AdminDeleter>;
using AdminOptions = std::unique_ptr<rd_kafka_AdminOptions_t, AdminDeleter>;
using Event = std::unique_ptr<rd_kafka_event_t, AdminDeleter>;

struct AdminError {
  rd_kafka_resp_err_t code;
  std::string message;
};

// Options for an admin request of kind `op`: `timeout` for the request and, where the brokers
// carry the operation out (creating topics), for that too.
AdminOptions admin_options(rd_kafka_t* rk, rd_kafka_admin_op_t op,
                           std::chrono::milliseconds timeout) {
  AdminOptions o(rd_kafka_AdminOptions_new(rk, op));
  char err[256];
  const int ms = static_cast<int>(timeout.count());
  rd_kafka_AdminOptions_set_request_timeout(o.get(), ms, err, sizeof err);
  if (op == RD_KAFKA_ADMIN_OP_CREATETOPICS) {
    rd_kafka_AdminOptions_set_operation_timeout(o.get(), ms, err, sizeof err);
  }
  return o;
}

// The answer to the admin request sent with result queue `q`, or the request's error.
tl::expected<Event, AdminError> admin_result(rd_kafka_queue_t* q,
                                             std::chrono::milliseconds timeout) {
  // librdkafka answers by the request timeout itself; the margin covers its bookkeeping.
  Event ev(rd_kafka_queue_poll(q, static_cast<int>(timeout.count()) + 5000));
  if (!ev) return tl::unexpected(AdminError{RD_KAFKA_RESP_ERR__TIMED_OUT, "no answer in time"});
  if (const rd_kafka_resp_err_t e = rd_kafka_event_error(ev.get()); e) {
    const char* why = rd_kafka_event_error_string(ev.get());
    return tl::unexpected(AdminError{e, why ? why : rd_kafka_err2str(e)});
  }
  return ev;
}

bool has_token(std::string_view list, std::string_view token) {
  while (!list.empty()) {
    const auto comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item == token) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

constexpr const char* kMockCluster =
    "librdkafka's mock cluster (the embedded cluster, dev-broker) keeps no topic configurations";

// Whether the metadata just received came from librdkafka's mock cluster (its cluster id says
// so). It has neither DescribeConfigs nor CreateTopics, and a request for them waits for a
// controller until it times out (10 s more to every start).
bool mock_cluster(rd_kafka_t* rk) {
  char* id = rd_kafka_clusterid(rk, 0);
  const bool mock = id && std::string_view(id).starts_with("mockCluster");
  if (id) rd_kafka_mem_free(rk, id);
  return mock;
}

}  // namespace

bool keeps_latest_per_key(const TopicDescription& d) {
  if (!has_token(d.cleanup_policy, "compact")) return false;
  if (!has_token(d.cleanup_policy, "delete")) return true;
  return d.retention_ms == "-1" && d.retention_bytes == "-1";
}

std::vector<TopicSpec> configured_topics(const config::Config& config, int partitions) {
  const auto& t = config.topics;
  std::vector<TopicSpec> out{
      {t.pages, partitions},         {t.feeds, partitions}, {t.articles, partitions},
      {t.stories, partitions, true}, {t.dlq, partitions},   {t.state, partitions, true},
      {t.extracted, 2 * partitions}, {t.dedup_lease, 1},    {t.fetch_retries, partitions}};
  std::erase_if(out, [](const TopicSpec& s) { return s.name.empty(); });
  return out;
}

tl::expected<std::map<std::string, TopicDescription>, std::string> describe_topics(
    rd_kafka_t* rk, const std::vector<std::string>& names, std::chrono::milliseconds timeout,
    bool* unsupported) {
  if (unsupported) *unsupported = false;
  std::map<std::string, TopicDescription> out;
  for (const auto& n : names) out[n];
  // Partitions: one metadata request for every topic (no topic is created by asking).
  const rd_kafka_metadata_t* md = nullptr;
  if (const rd_kafka_resp_err_t e =
          rd_kafka_metadata(rk, 1, nullptr, &md, static_cast<int>(timeout.count()));
      e != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return tl::unexpected(std::string("metadata: ") + rd_kafka_err2str(e));
  }
  for (int i = 0; i < md->topic_cnt; ++i) {
    const auto& topic = md->topics[i];
    auto it = out.find(topic.topic);
    if (it == out.end() || topic.err != RD_KAFKA_RESP_ERR_NO_ERROR) continue;
    it->second.exists = true;
    it->second.partitions = topic.partition_cnt;
  }
  rd_kafka_metadata_destroy(md);

  std::vector<rd_kafka_ConfigResource_t*> resources;
  if (mock_cluster(rk)) {
    if (unsupported) *unsupported = true;
    return tl::unexpected(std::string(kMockCluster));
  }
  for (const auto& [name, d] : out) {
    if (d.exists)
      resources.push_back(rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, name.c_str()));
  }
  if (resources.empty()) return out;
  Queue q(rd_kafka_queue_new(rk));
  const AdminOptions options = admin_options(rk, RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS, timeout);
  rd_kafka_DescribeConfigs(rk, resources.data(), resources.size(), options.get(), q.get());
  rd_kafka_ConfigResource_destroy_array(resources.data(), resources.size());
  auto ev = admin_result(q.get(), timeout);
  if (!ev) {
    if (unsupported) *unsupported = ev.error().code == RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE;
    return tl::unexpected("topic configurations: " + ev.error().message);
  }
  const auto* result = rd_kafka_event_DescribeConfigs_result(ev->get());
  size_t n = 0;
  const rd_kafka_ConfigResource_t** described =
      rd_kafka_DescribeConfigs_result_resources(result, &n);
  for (size_t i = 0; i < n; ++i) {
    const std::string name = rd_kafka_ConfigResource_name(described[i]);
    if (const rd_kafka_resp_err_t e = rd_kafka_ConfigResource_error(described[i]); e) {
      if (e == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
        out[name].exists = false;  // deleted since the metadata
        continue;
      }
      const char* why = rd_kafka_ConfigResource_error_string(described[i]);
      return tl::unexpected("configuration of " + name + ": " + (why ? why : rd_kafka_err2str(e)));
    }
    TopicDescription& d = out[name];
    size_t count = 0;
    const rd_kafka_ConfigEntry_t** entries = rd_kafka_ConfigResource_configs(described[i], &count);
    for (size_t j = 0; j < count; ++j) {
      const std::string_view key = rd_kafka_ConfigEntry_name(entries[j]);
      const char* value = rd_kafka_ConfigEntry_value(entries[j]);
      if (key == "cleanup.policy") d.cleanup_policy = value ? value : "";
      if (key == "retention.ms") d.retention_ms = value ? value : "";
      if (key == "retention.bytes") d.retention_bytes = value ? value : "";
      if (key == "max.message.bytes") d.max_message_bytes = value ? value : "";
    }
  }
  return out;
}

tl::expected<std::map<std::string, std::string>, std::string> create_topics(
    rd_kafka_t* rk, const std::vector<TopicSpec>& topics, int replication_factor,
    std::chrono::milliseconds timeout) {
  std::vector<rd_kafka_NewTopic_t*> news;
  char err[512];
  for (const auto& t : topics) {
    rd_kafka_NewTopic_t* nt =
        rd_kafka_NewTopic_new(t.name.c_str(), t.partitions, replication_factor, err, sizeof err);
    if (!nt) {
      rd_kafka_NewTopic_destroy_array(news.data(), news.size());
      return tl::unexpected(t.name + ": " + err);
    }
    if (t.compacted) rd_kafka_NewTopic_set_config(nt, "cleanup.policy", "compact");
    news.push_back(nt);
  }
  const rd_kafka_metadata_t* md = nullptr;
  if (rd_kafka_metadata(rk, 0, nullptr, &md, static_cast<int>(timeout.count())) ==
      RD_KAFKA_RESP_ERR_NO_ERROR) {
    rd_kafka_metadata_destroy(md);
  }
  if (mock_cluster(rk)) {
    rd_kafka_NewTopic_destroy_array(news.data(), news.size());
    return tl::unexpected(std::string(kMockCluster));
  }
  Queue q(rd_kafka_queue_new(rk));
  const AdminOptions options = admin_options(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS, timeout);
  rd_kafka_CreateTopics(rk, news.data(), news.size(), options.get(), q.get());
  rd_kafka_NewTopic_destroy_array(news.data(), news.size());
  auto ev = admin_result(q.get(), timeout);
  if (!ev) return tl::unexpected("create topics: " + ev.error().message);
  size_t n = 0;
  const rd_kafka_topic_result_t** results =
      rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev->get()), &n);
  std::map<std::string, std::string> out;
  for (size_t i = 0; i < n; ++i) {
    const rd_kafka_resp_err_t e = rd_kafka_topic_result_error(results[i]);
    const char* why = rd_kafka_topic_result_error_string(results[i]);
    out[rd_kafka_topic_result_name(results[i])] = e == RD_KAFKA_RESP_ERR_NO_ERROR ? ""
                                                  : e == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS
                                                      ? "exists"
                                                      : (why ? why : rd_kafka_err2str(e));
  }
  return out;
}

std::vector<config::Problem> check_compacted_topics(rd_kafka_t* rk, const config::Config& config) {
  // The changelog everywhere (an extractor learns fetched links from it); the stories topic
  // where stories are written. And what the role's producer writes: a topic that takes smaller
  // batches than it makes refuses ordinary records.
  TopicNeeds needs = role_of(config).topic_needs(config.topics);
  const std::vector<std::pair<std::string, std::string>>& musts = needs.compacted;  // key, topic
  std::vector<std::string>& outputs = needs.produced;
  std::erase_if(outputs, [](const std::string& t) { return t.empty(); });
  std::vector<std::string> names = outputs;
  for (const auto& m : musts) names.push_back(m.second);
  bool unsupported = false;
  auto described = describe_topics(rk, names, std::chrono::seconds(10), &unsupported);
  if (!described) {
    // librdkafka's mock cluster (the embedded one, dev-broker) has no DescribeConfigs.
    if (unsupported) {
      log::debug("topic_configs_unchecked", {{"reason", described.error()}});
    } else {
      log::warn("topic_configs_unchecked", {{"reason", described.error()}});
    }
    return {};
  }
  std::vector<config::Problem> problems;
  for (const auto& [key, topic] : musts) {
    const TopicDescription& d = (*described)[topic];
    const std::string what = key == "topics.state" ? "the judging state a restart restores"
                                                   : "the stories' latest states";
    if (!d.exists) {
      problems.push_back({key, "topic " + topic +
                                   " does not exist: create it with "
                                   "cleanup.policy=compact (newsflow create-topics), or an "
                                   "auto-created one would delete " +
                                   what + " by retention"});
    } else if (!keeps_latest_per_key(d)) {
      problems.push_back(
          {key, "topic " + topic + " is not compacted (cleanup.policy=" + d.cleanup_policy +
                    ", retention.ms=" + d.retention_ms + "): retention would delete " + what +
                    "; set cleanup.policy=compact on it (kafka-configs.sh --alter --entity-type "
                    "topics --entity-name " +
                    topic +
                    " --add-config cleanup.policy=compact; newsflow create-topics --check "
                    "checks every topic)"});
    }
  }
  char value[32];
  std::size_t size = sizeof value;
  if (rd_kafka_conf_get(rd_kafka_conf(rk), "batch.size", value, &size) != RD_KAFKA_CONF_OK) {
    return problems;
  }
  const long long batch = std::atoll(value);
  for (const std::string& topic : outputs) {
    const TopicDescription& d = (*described)[topic];
    const long long limit =
        d.max_message_bytes.empty() ? 0 : std::atoll(d.max_message_bytes.c_str());
    if (!d.exists || limit <= 0 || batch <= limit) continue;
    problems.push_back(
        {"kafka.producer", "topic " + topic + " takes batches of at most " + d.max_message_bytes +
                               " bytes (max.message.bytes) and the "
                               "producer makes batches of up to " +
                               value +
                               " (batch.size): the brokers would refuse batches of ordinary "
                               "records, which would end as output_too_large dead letters; set "
                               "kafka.producer batch.size (NEWSFLOW_KAFKA__PRODUCER__BATCH_SIZE) "
                               "at or below " +
                               d.max_message_bytes + ", or raise the topic's max.message.bytes"});
  }
  return problems;
}

}  // namespace newsflow::daemon
