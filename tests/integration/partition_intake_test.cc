// The input consumer's event-time order against librdkafka's mock cluster.
#include "daemon/kafka/partition_intake.h"

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "daemon/kafka/kafka.h"
#include "daemon/kafka/state_store.h"
#include "daemon/ops/metrics.h"
#include "daemon/ops/notify.h"
#include "daemon/pipeline/pipeline.h"

namespace newsflow::daemon {
namespace {

using namespace std::chrono_literals;

// A page of partition `partition` of the pages topic, of event time `fetched_at`, stamped
// `timestamp_ms` (0: now).
void put(rd_kafka_t* p, const std::string& topic, int partition, const std::string& fetched_at,
         std::int64_t timestamp_ms = 0) {
  const std::string value = "{}";
  ASSERT_EQ(rd_kafka_producev(p, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
                              RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                              RD_KAFKA_V_HEADER("fetched_at", fetched_at.data(),
                                                static_cast<ssize_t>(fetched_at.size())),
                              RD_KAFKA_V_TIMESTAMP(timestamp_ms),
                              RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  ASSERT_EQ(rd_kafka_flush(p, 5000), RD_KAFKA_RESP_ERR_NO_ERROR);
}

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// An intake of `config`'s group on an embedded cluster, with a producer beside it: the parts
// the tests below share.
struct IntakeRig {
  static config::Config make_config(const std::string& group) {
    config::Config c;
    c.kafka.embedded_partitions = 2;
    c.kafka.group_id = group;
    c.kafka.group_instance_id = "none";
    return c;
  }
  explicit IntakeRig(const std::string& group) : config(make_config(group)) {
    auto started = EmbeddedCluster::start(1, daemon_topics(config));
    if (!started) {
      ADD_FAILURE() << started.error();
      return;
    }
    cluster = std::move(*started);
    bootstrap = cluster->bootstrap();
    char err[512];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), err, sizeof err);
    rd_kafka_conf_set(conf, "linger.ms", "0", err, sizeof err);
    producer.reset(rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err));
  }
  // A consumer of the group, subscribed.
  std::unique_ptr<PartitionIntake> join(PartitionIntake::Listener listener = {}) {
    if (!listener.revoked) {
      listener.revoked = [](const PartitionIntake::Partition&) { return std::size_t{0}; };
    }
    auto intake = std::make_unique<PartitionIntake>(config, metrics, store, stop, listener);
    EXPECT_TRUE(intake->open(bootstrap));
    EXPECT_TRUE(intake->subscribe());
    return intake;
  }

  config::Config config;
  std::unique_ptr<EmbeddedCluster> cluster;
  std::string bootstrap;
  KafkaHandle producer;
  Metrics metrics;
  Pipeline pipeline{config, nullptr};
  SystemdNotifier notifier;
  std::atomic<bool> stop{false};
  StateStore store{config, metrics, pipeline, notifier, stop};
};

// "partition:offset" of each message of a batch.
std::vector<std::string> positions(const std::vector<Taken>& batch) {
  std::vector<std::string> out;
  for (const Taken& t : batch) {
    out.push_back(std::to_string(t.msg->partition) + ":" + std::to_string(t.msg->offset));
  }
  return out;
}

// Collects from `intake` until it has been assigned `partitions` and read each to its end.
void settle(PartitionIntake& intake, int partitions) {
  for (int i = 0; i < 200 && intake.assigned() < partitions; ++i) {
    std::vector<Taken> batch;
    ASSERT_TRUE(intake.collect(batch, /*wait=*/false, 10));
    ASSERT_TRUE(batch.empty());
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_EQ(intake.assigned(), partitions);
}

// Partition 0 of the pages reaches its end, then gets its next page, while the intake is busy
// elsewhere: its queue holds the end of partition and the page after it. Partition 1 then gets
// a newer page. The older page must go first: the intake stopped taking at the end of partition
// and left partition 0 empty at its end for a turn, and the newer page went first (on Kafka
// 4.1.1 the same pairs of a stream produced at 150/s were out of order in every run).
TEST(PartitionIntakeOnMockCluster, ARecordFetchedAfterItsPartitionsEndKeepsItsTurn) {
  config::Config config;
  config.kafka.embedded_partitions = 2;
  config.kafka.group_id = "intake-test";
  config.kafka.group_instance_id = "none";
  auto cluster = EmbeddedCluster::start(1, daemon_topics(config));
  ASSERT_TRUE(cluster) << cluster.error();
  const std::string bootstrap = (*cluster)->bootstrap();
  const std::string& pages = config.topics.pages;

  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), err, sizeof err);
  rd_kafka_conf_set(conf, "linger.ms", "0", err, sizeof err);
  KafkaHandle producer(rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err));
  ASSERT_TRUE(producer) << err;

  Metrics metrics;
  Pipeline pipeline{config, nullptr};
  SystemdNotifier notifier;
  std::atomic<bool> stop{false};
  StateStore store{config, metrics, pipeline, notifier, stop};
  PartitionIntake::Listener listener;
  listener.revoked = [](const PartitionIntake::Partition&) { return std::size_t{0}; };
  PartitionIntake intake{config, metrics, store, stop, listener};
  ASSERT_TRUE(intake.open(bootstrap));
  ASSERT_TRUE(intake.subscribe());

  std::vector<std::pair<int, std::int64_t>> order;  // partition, offset
  auto collect = [&] {
    std::vector<Taken> batch;
    ASSERT_TRUE(intake.collect(batch, /*wait=*/false, 10));
    for (const Taken& t : batch) {
      order.emplace_back(t.msg->partition, t.msg->offset);
      rd_kafka_message_destroy(t.msg);
    }
  };
  // Every partition assigned and read to its (empty) end.
  for (int i = 0; i < 100 && intake.assigned() < 4; ++i) {
    collect();
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_EQ(intake.assigned(), 4);
  for (int i = 0; i < 10; ++i) {
    collect();
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(order.empty());

  put(producer.get(), pages, 0, "2023-01-01T00:00:10Z");
  std::this_thread::sleep_for(300ms);  // fetched, with its end of partition after it
  put(producer.get(), pages, 0, "2023-01-01T00:00:20Z");
  put(producer.get(), pages, 1, "2023-01-01T00:00:30Z");
  // Fetched, and older than the live slack: only the order of the queues decides.
  std::this_thread::sleep_for(600ms);
  for (int i = 0; i < 40 && order.size() < 3; ++i) {
    collect();
    std::this_thread::sleep_for(20ms);
  }
  const std::vector<std::pair<int, std::int64_t>> expected{{0, 0}, {0, 1}, {1, 0}};
  EXPECT_EQ(order, expected);
  intake.close(5s);
}

// A batch that cannot be processed now goes back to the front of its partitions and comes out
// again in the same order, before anything newer; what follows keeps event-time order.
TEST(PartitionIntakeOnMockCluster, ABatchGivenBackIsCollectedAgainInTheSameOrder) {
  IntakeRig rig("intake-give-back");
  ASSERT_TRUE(rig.cluster && rig.producer);
  auto intake = rig.join();
  settle(*intake, 4);
  const std::string& pages = rig.config.topics.pages;
  const std::int64_t old = now_ms() - 5000;  // a backlog: no live slack
  put(rig.producer.get(), pages, 0, "2023-01-01T00:00:10Z", old);
  put(rig.producer.get(), pages, 1, "2023-01-01T00:00:20Z", old);
  put(rig.producer.get(), pages, 0, "2023-01-01T00:00:30Z", old);
  put(rig.producer.get(), pages, 1, "2023-01-01T00:00:40Z", old);
  put(rig.producer.get(), pages, 0, "2023-01-01T00:00:50Z", old);
  std::this_thread::sleep_for(500ms);

  std::vector<Taken> first;
  for (int i = 0; i < 40 && first.size() < 3; ++i) {
    ASSERT_TRUE(intake->collect(first, /*wait=*/false, 3 - static_cast<int>(first.size())));
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_EQ(positions(first), (std::vector<std::string>{"0:0", "1:0", "0:1"}));
  intake->give_back(first.begin(), first.end());

  std::vector<Taken> again;
  for (int i = 0; i < 40 && again.size() < 5; ++i) {
    ASSERT_TRUE(intake->collect(again, /*wait=*/false, 5 - static_cast<int>(again.size())));
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(positions(again), (std::vector<std::string>{"0:0", "1:0", "0:1", "1:1", "0:2"}));
  for (const Taken& t : again) rd_kafka_message_destroy(t.msg);
  intake->close(5s);
}

// A record its producer held back past the live slack arrives older than one already taken:
// it is taken late, and counted (newsflow_order_late_total), since its verdict may differ from
// replay's.
TEST(PartitionIntakeOnMockCluster, ARecordArrivingOlderThanOneTakenIsCountedLate) {
  IntakeRig rig("intake-late");
  ASSERT_TRUE(rig.cluster && rig.producer);
  auto intake = rig.join();
  settle(*intake, 4);
  const std::string& pages = rig.config.topics.pages;
  std::vector<Taken> taken;
  auto collect_until = [&](std::size_t n) {
    for (int i = 0; i < 40 && taken.size() < n; ++i) {
      ASSERT_TRUE(intake->collect(taken, /*wait=*/false, 10));
      std::this_thread::sleep_for(20ms);
    }
  };
  put(rig.producer.get(), pages, 1, "2023-01-01T00:00:30Z", now_ms() - 2000);
  collect_until(1);
  // Stamped before the first, written after it was taken.
  put(rig.producer.get(), pages, 0, "2023-01-01T00:00:10Z", now_ms() - 3000);
  collect_until(2);
  EXPECT_EQ(positions(taken), (std::vector<std::string>{"1:0", "0:0"}));
  intake->count_order();
  const std::string text =
      prometheus::TextSerializer().Serialize(rig.metrics.registry()->Collect());
  EXPECT_NE(text.find("newsflow_order_late_total 1"), std::string::npos) << text;
  for (const Taken& t : taken) rd_kafka_message_destroy(t.msg);
  intake->close(5s);
}

// A second consumer joins the group after the first took one record (judged, not committed):
// the partitions that move are revoked from the first (its listener told, what it held of them
// dropped), and the second reads them from the last commit, the start; the partitions that
// stay go on where they were. Nothing is lost, and each consumer takes its records in
// event-time order.
TEST(PartitionIntakeOnMockCluster, APartitionThatMovesIsReadAgainByItsNewOwnerInOrder) {
  IntakeRig rig("intake-rebalance");
  ASSERT_TRUE(rig.cluster && rig.producer);
  std::vector<PartitionIntake::Partition> revoked;
  std::vector<std::string> by_first, by_second;
  std::map<std::string, std::size_t> revoked_at;  // partition -> records the first took before
  PartitionIntake::Listener listener;
  listener.revoked = [&](const PartitionIntake::Partition& p) {
    revoked.push_back(p);
    revoked_at[p.first + ":" + std::to_string(p.second)] = by_first.size();
    return std::size_t{0};
  };
  auto first = rig.join(listener);
  settle(*first, 4);
  // Two records in each of the four input partitions; record k of partition i at time
  // 10 * (k + 1) + i.
  const std::vector<PartitionIntake::Partition> partitions{{rig.config.topics.feeds, 0},
                                                           {rig.config.topics.feeds, 1},
                                                           {rig.config.topics.pages, 0},
                                                           {rig.config.topics.pages, 1}};
  std::map<std::string, int> time_of;  // "topic:partition:offset" -> event time
  const std::int64_t old = now_ms() - 5000;
  for (int k = 0; k < 2; ++k) {
    for (int i = 0; i < 4; ++i) {
      const auto& [topic, partition] = partitions[i];
      const int t = 10 * (k + 1) + i;
      put(rig.producer.get(), topic, partition, "2023-01-01T00:00:" + std::to_string(t) + "Z", old);
      time_of[topic + ":" + std::to_string(partition) + ":" + std::to_string(k)] = t;
    }
  }
  auto name = [](const Taken& t) {
    return std::string(rd_kafka_topic_name(t.msg->rkt)) + ":" + std::to_string(t.msg->partition) +
           ":" + std::to_string(t.msg->offset);
  };
  std::this_thread::sleep_for(500ms);
  std::vector<Taken> one;
  for (int i = 0; i < 40 && one.empty(); ++i) {
    ASSERT_TRUE(first->collect(one, /*wait=*/false, 1));
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_EQ(one.size(), 1u);
  const std::string taken_first = name(one[0]);
  EXPECT_EQ(time_of[taken_first], 10);
  rd_kafka_message_destroy(one[0].msg);

  auto second = rig.join();
  // Cooperative: one rebalance takes partitions from the first, the next gives them to the
  // second; then a second more to read them.
  int settled_rounds = 0;
  for (int i = 0; i < 1500 && settled_rounds < 50; ++i) {
    if (second->assigned() > 0 && first->assigned() + second->assigned() == 4) ++settled_rounds;
    for (auto [intake, out] :
         {std::pair{first.get(), &by_first}, std::pair{second.get(), &by_second}}) {
      std::vector<Taken> batch;
      ASSERT_TRUE(intake->collect(batch, /*wait=*/false, 10));
      for (const Taken& t : batch) {
        out->push_back(name(t));
        rd_kafka_message_destroy(t.msg);
      }
    }
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_EQ(first->assigned() + second->assigned(), 4);
  ASSERT_GT(second->assigned(), 0);
  EXPECT_EQ(revoked.size(), static_cast<std::size_t>(second->assigned()));
  // A partition that stayed: each record once by the first (the one taken before not again). A
  // partition that moved: all its records by the second, from the start (nothing committed;
  // what the first took of it before the revoke was not committed either).
  auto partition_of_position = [](const std::string& position) {
    return position.substr(0, position.rfind(':'));
  };
  std::set<std::string> moved;
  for (const auto& [topic, partition] : revoked)
    moved.insert(topic + ":" + std::to_string(partition));
  std::vector<std::string> second_want, first_stayed;
  for (const auto& [position, t] : time_of) {
    if (moved.count(partition_of_position(position))) {
      second_want.push_back(position);
    } else if (position != taken_first) {
      first_stayed.push_back(position);
    }
  }
  std::vector<std::string> second_got = by_second, first_got;
  for (const auto& position : by_first) {
    if (!moved.count(partition_of_position(position))) first_got.push_back(position);
  }
  // Nothing of a partition once it is revoked (what the first held of it was dropped).
  for (std::size_t i = 0; i < by_first.size(); ++i) {
    const auto at = revoked_at.find(partition_of_position(by_first[i]));
    EXPECT_TRUE(at == revoked_at.end() || i < at->second) << by_first[i] << " after its revoke";
  }
  std::sort(second_got.begin(), second_got.end());
  std::sort(first_got.begin(), first_got.end());
  EXPECT_EQ(second_got, second_want);
  EXPECT_EQ(first_got, first_stayed);
  for (const auto* run : {&by_first, &by_second}) {
    EXPECT_TRUE(std::is_sorted(run->begin(), run->end(), [&](const auto& a, const auto& b) {
      return time_of[a] < time_of[b];
    })) << ::testing::PrintToString(*run);
  }
  first->close(5s);
  second->close(5s);
}

}  // namespace
}  // namespace newsflow::daemon
