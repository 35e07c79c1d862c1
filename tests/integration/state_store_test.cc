// The restore's reads of the state changelog against librdkafka's mock cluster, with the
// changelog written to while it is read (a standby restoring while the owner judges).
#include "daemon/kafka/state_store.h"

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <thread>

#include "daemon/kafka/changelog_tail.h"
#include "daemon/kafka/kafka.h"
#include "daemon/ops/metrics.h"
#include "daemon/ops/notify.h"
#include "daemon/pipeline/pipeline.h"

namespace newsflow::daemon {
namespace {

using namespace std::chrono_literals;

KafkaHandle producer(const std::string& bootstrap,
                     const std::map<std::string, std::string>& props) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), err, sizeof err);
  for (const auto& [k, v] : props) rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err);
  KafkaHandle h(rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err));
  EXPECT_TRUE(h) << err;
  return h;
}

void put(rd_kafka_t* p, const std::string& topic, int partition, const std::string& value) {
  ASSERT_EQ(rd_kafka_producev(p, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
                              RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                              RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_poll(p, 0);
}

// Defect 3 of issue 50: partition 0 of the changelog is written to all along the read (each new
// record brings another end-of-partition report), partition 1 holds 1,500 records fetched a
// batch at a time. The read ends only when partition 1 is read to its end: counting the reports
// instead ended it with partition 1 half read (its end then read as where the read stopped).
TEST(StateStoreOnMockCluster, AReadGoesToTheEndOfEveryPartitionWhileOneIsWrittenTo) {
  config::Config config;
  config.kafka.embedded_partitions = 2;
  config.kafka.group_id = "restore-test";
  // One small batch per fetch: partition 1 takes many fetches to read.
  config.kafka.consumer["max.partition.fetch.bytes"] = "256";
  auto cluster = EmbeddedCluster::start(1, daemon_topics(config));
  ASSERT_TRUE(cluster) << cluster.error();
  const std::string bootstrap = (*cluster)->bootstrap();
  const std::string& topic = config.topics.state;

  // One record a batch, so that a fetch brings one record (a batch is never split).
  constexpr int kRecords = 1500;
  {
    KafkaHandle fill = producer(bootstrap, {{"batch.num.messages", "1"}, {"linger.ms", "0"}});
    for (int i = 0; i < kRecords; ++i) {
      put(fill.get(), topic, 1, "not a state record " + std::string(100, 'x'));
    }
    ASSERT_EQ(rd_kafka_flush(fill.get(), 30000), RD_KAFKA_RESP_ERR_NO_ERROR);
  }

  std::atomic<bool> done{false};
  std::thread writer([&] {
    KafkaHandle w = producer(bootstrap, {{"linger.ms", "0"}});
    put(w.get(), topic, 0, "the first record of partition 0");
    rd_kafka_flush(w.get(), 5000);
    while (!done.load()) {
      put(w.get(), topic, 0, "a record written while the changelog is read");
      rd_kafka_flush(w.get(), 5000);
      std::this_thread::sleep_for(2ms);
    }
  });
  std::this_thread::sleep_for(100ms);  // partition 0 holds records when the read begins

  Metrics metrics;
  Pipeline pipeline{config, nullptr};
  SystemdNotifier notifier;
  std::atomic<bool> stop{false};
  StateStore store{config, metrics, pipeline, notifier, stop};
  const auto read = store.read_changelog(bootstrap, {{0, 0}, {1, 0}});
  done.store(true);
  writer.join();
  ASSERT_TRUE(read) << read.error();
  ASSERT_EQ(read->ends.count(1), 1u);
  EXPECT_EQ(read->ends.at(1), kRecords);
  EXPECT_GE(read->skipped, static_cast<std::size_t>(kRecords));
}

// A coordinator that is still loading its offsets (a broker just started) or moving answers
// NOT_COORDINATOR for a while: the restore asks again rather than failing the daemon's start.
// Found on Kafka 4.1.1 (tests/bench/kafka_broker_kills.sh): a daemon started with its broker
// exited with "committed offsets: Broker: Not coordinator".
TEST(StateStoreOnMockCluster, TheCommittedOffsetsAreAskedForAgainWhileTheCoordinatorMoves) {
  config::Config config;
  config.kafka.embedded_partitions = 1;
  config.kafka.group_id = "committed-test";
  auto cluster = EmbeddedCluster::start(1, daemon_topics(config));
  ASSERT_TRUE(cluster) << cluster.error();
  const std::string bootstrap = (*cluster)->bootstrap();

  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), err, sizeof err);
  rd_kafka_conf_set(conf, "group.id", config.kafka.group_id.c_str(), err, sizeof err);
  KafkaHandle group(rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err));
  ASSERT_TRUE(group) << err;
  rd_kafka_topic_partition_list_t* offsets = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(offsets, config.topics.pages.c_str(), 0)->offset = 5;
  const rd_kafka_resp_err_t committed = rd_kafka_commit(group.get(), offsets, /*async=*/0);
  rd_kafka_topic_partition_list_destroy(offsets);
  ASSERT_EQ(committed, RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_err2str(committed);

  rd_kafka_mock_push_request_errors(
      (*cluster)->mock(), /*ApiKey OffsetFetch=*/9, 3, RD_KAFKA_RESP_ERR_NOT_COORDINATOR,
      RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS, RD_KAFKA_RESP_ERR_NOT_COORDINATOR);
  Metrics metrics;
  Pipeline pipeline{config, nullptr};
  SystemdNotifier notifier;
  std::atomic<bool> stop{false};
  StateStore store{config, metrics, pipeline, notifier, stop};
  const auto refreshed = store.refresh_committed(group.get());
  ASSERT_TRUE(refreshed) << refreshed.error();
  EXPECT_EQ(store.admit(input_header(config.topics.pages, 0, 4), true), Admission::kApply);
  EXPECT_EQ(store.admit(input_header(config.topics.pages, 0, 5), true), Admission::kDrop);
  rd_kafka_consumer_close(group.get());
}

}  // namespace
}  // namespace newsflow::daemon
