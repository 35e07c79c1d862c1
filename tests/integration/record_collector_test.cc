// RecordCollector against librdkafka's mock cluster: a batch's records counted until their
// delivery reports come, the input a record refused for good came from, dead letters that
// cannot be written, and a fenced producer.
#include "daemon/kafka/record_collector.h"

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <chrono>
#include <string>

#include "daemon/kafka/kafka.h"
#include "daemon/ops/metrics.h"

namespace newsflow::daemon {
namespace {

class RecordCollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = EmbeddedCluster::start(1, {{"out", 1}, {"dlq", 1}});
    ASSERT_TRUE(c) << c.error();
    cluster_ = std::move(*c);
  }

  KafkaConf conf() const {
    char err[512];
    KafkaConf conf(rd_kafka_conf_new());
    rd_kafka_conf_set(conf.get(), "bootstrap.servers", cluster_->bootstrap().c_str(), err,
                      sizeof err);
    rd_kafka_conf_set(conf.get(), "message.max.bytes", "100000", err, sizeof err);
    rd_kafka_conf_set(conf.get(), "linger.ms", "5", err, sizeof err);
    return conf;
  }

  // An input message as a consumer would have handed it out: topic "in", partition 0.
  rd_kafka_message_t input(rd_kafka_t* rk, std::int64_t offset) {
    if (!in_topic_) in_topic_ = rd_kafka_topic_new(rk, "in", nullptr);
    rd_kafka_message_t m{};
    m.rkt = in_topic_;
    m.partition = 0;
    m.offset = offset;
    return m;
  }

  // Serves delivery reports until the oldest batch in flight has none outstanding.
  static void acknowledged(RecordCollector& c) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (c.front().outstanding > 0 && std::chrono::steady_clock::now() < until) {
      rd_kafka_poll(c.producer(), 50);
    }
  }

  void TearDown() override {
    if (in_topic_) rd_kafka_topic_destroy(in_topic_);
  }

  std::unique_ptr<EmbeddedCluster> cluster_;
  rd_kafka_topic_t* in_topic_ = nullptr;
  Metrics metrics_;
};

TEST_F(RecordCollectorTest, CountsABatchUntilAcknowledgedAndNamesTheInputARecordWasRefusedFor) {
  RecordCollector c(metrics_, "dlq", {});
  ASSERT_TRUE(c.open(conf()));
  EXPECT_EQ(c.max_record_bytes(), 100000u);
  EXPECT_FALSE(c.too_large("article", "a", 50000));
  const auto large = c.too_large("article", "a", 90000);  // with the room for headers
  ASSERT_TRUE(large);
  EXPECT_EQ(large->reason, "output_too_large");

  rd_kafka_message_t one = input(c.producer(), 7), two = input(c.producer(), 8);
  c.begin_batch();
  c.begin_input(&one);
  EXPECT_TRUE(c.produce("out", "k1", "first", {{"schema", "test"}}));
  c.end_input();
  // A dead letter the producer will never send: said, and the batch goes on.
  EXPECT_FALSE(c.produce("dlq", "k", std::string(200000, 'x'), {}));
  c.begin_input(&two);
  EXPECT_TRUE(c.produce("out", "k2", "second", {}));
  EXPECT_FALSE(c.produce("out", "k3", std::string(200000, 'y'), {}));  // refused for good
  c.end_input();
  EXPECT_TRUE(c.produce("out", "", "", {{"watermark", "1"}}));  // the batch's own record
  auto batch = c.end_batch();
  ASSERT_TRUE(batch);
  EXPECT_EQ(batch->outstanding, 3u);
  EXPECT_TRUE(batch->failed);
  EXPECT_EQ(c.errors(), 1u);
  EXPECT_NE(c.failure(), "");
  c.queue(std::move(batch));
  ASSERT_EQ(c.size(), 1u);
  acknowledged(c);
  EXPECT_EQ(c.front().outstanding, 0u);
  // The input whose record was refused ends as a dead letter when judged again, and again when
  // the batch carrying that dead letter fails for another record and is judged once more.
  EXPECT_FALSE(c.take_refused(&one));
  const auto refused = c.take_refused(&two);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->reason, "output_too_large");
  EXPECT_TRUE(c.take_refused(&two));
  EXPECT_TRUE(c.pop_front());
  EXPECT_TRUE(c.empty());
  c.reset_errors();
  EXPECT_EQ(c.failure(), "");
}

TEST_F(RecordCollectorTest, AFencedProducerQueuesNothingAndABatchGivenBackWaitsForItsReports) {
  bool fenced = false;
  RecordCollector c(metrics_, "dlq", {.fenced = [&] { return fenced; }, .stop_waiting = {}});
  ASSERT_TRUE(c.open(conf()));
  c.begin_batch();
  EXPECT_TRUE(c.produce("out", "k", "v", {}));
  fenced = true;
  EXPECT_FALSE(c.produce("out", "k", "w", {}));
  auto batch = c.end_batch();
  EXPECT_TRUE(batch->failed);
  EXPECT_EQ(batch->outstanding, 1u);
  EXPECT_EQ(c.failure(), "the dedup lease is gone");
  // Given back while a report is due: each batch is seen once, the latest first, and kept
  // (retired) until its report comes.
  c.queue(std::move(batch));
  c.begin_batch();
  c.queue(c.end_batch());
  std::vector<std::size_t> seen;
  c.retire_all([&](RecordCollector::Batch& b) { seen.push_back(b.outstanding); });
  EXPECT_EQ(seen, (std::vector<std::size_t>{0, 1}));
  EXPECT_TRUE(c.empty());
  rd_kafka_flush(c.producer(), 10000);
  c.prune();
}

}  // namespace
}  // namespace newsflow::daemon
