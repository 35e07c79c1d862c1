// Transaction's one rule for how a transaction ends, against librdkafka's mock cluster.
#include "daemon/kafka/transaction.h"

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <chrono>
#include <string>
#include <thread>

#include "daemon/kafka/kafka.h"

namespace newsflow::daemon {
namespace {

class TransactionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = EmbeddedCluster::start(1, {{"out", 1}});
    ASSERT_TRUE(c) << c.error();
    cluster_ = std::move(*c);
    char err[512];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "bootstrap.servers", cluster_->bootstrap().c_str(), err, sizeof err);
    rd_kafka_conf_set(conf, "transactional.id", "transaction-test", err, sizeof err);
    producer_.reset(rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err));
    ASSERT_TRUE(producer_) << err;
    rd_kafka_error_t* e = rd_kafka_init_transactions(producer_.get(), 30000);
    ASSERT_EQ(e, nullptr) << rd_kafka_error_string(e);
  }

  void send(const std::string& value) {
    ASSERT_EQ(rd_kafka_producev(producer_.get(), RD_KAFKA_V_TOPIC("out"),
                                RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                                RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
              RD_KAFKA_RESP_ERR_NO_ERROR);
  }

  // The values a read_committed reader sees.
  std::vector<std::string> committed_values() {
    char err[512];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "bootstrap.servers", cluster_->bootstrap().c_str(), err, sizeof err);
    rd_kafka_conf_set(conf, "group.id", "transaction-test-reader", err, sizeof err);
    rd_kafka_conf_set(conf, "isolation.level", "read_committed", err, sizeof err);
    rd_kafka_conf_set(conf, "enable.partition.eof", "true", err, sizeof err);
    KafkaHandle c(rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err));
    rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(list, "out", 0)->offset = RD_KAFKA_OFFSET_BEGINNING;
    rd_kafka_assign(c.get(), list);
    rd_kafka_topic_partition_list_destroy(list);
    std::vector<std::string> values;
    for (int i = 0; i < 100; ++i) {
      rd_kafka_message_t* m = rd_kafka_consumer_poll(c.get(), 100);
      if (!m) continue;
      const bool eof = m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF;
      if (!m->err) values.emplace_back(static_cast<const char*>(m->payload), m->len);
      rd_kafka_message_destroy(m);
      if (eof) break;
    }
    rd_kafka_consumer_close(c.get());
    return values;
  }

  std::unique_ptr<EmbeddedCluster> cluster_;
  KafkaHandle producer_;
};

TEST_F(TransactionTest, CommitsAbortsOnADeliveryFailureAndWhenDroppedOpen) {
  {
    auto t = Transaction::begin(producer_.get(), 10000);
    ASSERT_TRUE(t) << t.error().message;
    send("one");
    EXPECT_TRUE(t->commit());
    EXPECT_FALSE(t->open());
  }
  {
    // A record that failed (as the daemon's delivery reports say): aborted, not committed.
    auto t = Transaction::begin(producer_.get(), 10000);
    ASSERT_TRUE(t);
    send("failed");
    const auto r = t->commit({}, nullptr, [] { return std::string("Broker: Message too large"); });
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message, "Broker: Message too large");
    EXPECT_FALSE(r.error().fatal);
    EXPECT_FALSE(t->open());
  }
  {
    // Left open (an early return): the destructor aborts it.
    auto t = Transaction::begin(producer_.get(), 10000);
    ASSERT_TRUE(t);
    send("dropped");
  }
  {
    // The producer is usable again: the earlier ones ended.
    auto t = Transaction::begin(producer_.get(), 10000);
    ASSERT_TRUE(t) << t.error().message;
    send("two");
    EXPECT_TRUE(t->commit());
  }
  EXPECT_EQ(committed_values(), (std::vector<std::string>{"one", "two"}));
}

TEST_F(TransactionTest, ACoordinatorBusyForAMomentDoesNotFailTheCommit) {
  auto t = Transaction::begin(producer_.get(), 10000);
  ASSERT_TRUE(t);
  send("retried");
  ASSERT_EQ(rd_kafka_flush(producer_.get(), 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
  // The coordinator is busy twice, then answers.
  rd_kafka_mock_push_request_errors(cluster_->mock(), /*ApiKey EndTxn=*/26, 2,
                                    RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS,
                                    RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS);
  const auto r = t->commit();
  EXPECT_TRUE(r) << r.error().message;
  EXPECT_EQ(committed_values(), (std::vector<std::string>{"retried"}));
}

// A commit that times out is resumed, as librdkafka requires (issue 50): it used to be given up
// after four calls and aborted, the abort failed with __CONFLICT (the commit was still in
// progress), and every later begin_transaction failed the same way, for good.
TEST_F(TransactionTest, ACommitThatTimesOutIsResumedUntilItFinishes) {
  auto t = Transaction::begin(producer_.get(), 300);
  ASSERT_TRUE(t);
  send("slow");
  ASSERT_EQ(rd_kafka_flush(producer_.get(), 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
  // Every request takes 2.5 s for the next 2.5 s: each commit call of 300 ms times out.
  rd_kafka_mock_broker_set_rtt(cluster_->mock(), 1, 2500);
  std::thread heal([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    rd_kafka_mock_broker_set_rtt(cluster_->mock(), 1, 0);
  });
  const auto r = t->commit();
  heal.join();
  EXPECT_TRUE(r) << r.error().message;
  EXPECT_TRUE(Transaction::usable(producer_.get()));
  auto next = Transaction::begin(producer_.get(), 10000);
  ASSERT_TRUE(next) << next.error().message;
  send("after");
  EXPECT_TRUE(next->commit());
  EXPECT_EQ(committed_values(), (std::vector<std::string>{"slow", "after"}));
}

// An abort that times out is resumed too: the next transaction begins.
TEST_F(TransactionTest, AnAbortThatTimesOutIsResumedUntilItFinishes) {
  {
    auto t = Transaction::begin(producer_.get(), 300);
    ASSERT_TRUE(t);
    send("aborted");
    ASSERT_EQ(rd_kafka_flush(producer_.get(), 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
    rd_kafka_mock_broker_set_rtt(cluster_->mock(), 1, 2500);
    std::thread heal([this] {
      std::this_thread::sleep_for(std::chrono::milliseconds(2500));
      rd_kafka_mock_broker_set_rtt(cluster_->mock(), 1, 0);
    });
    t->abort();
    heal.join();
  }
  EXPECT_TRUE(Transaction::usable(producer_.get()));
  auto next = Transaction::begin(producer_.get(), 10000);
  ASSERT_TRUE(next) << next.error().message;
  send("kept");
  EXPECT_TRUE(next->commit());
  // (The mock cluster writes no abort markers: a reader sees "aborted" too.)
  const auto values = committed_values();
  ASSERT_FALSE(values.empty());
  EXPECT_EQ(values.back(), "kept");
}

// A begin in a state no retry can leave (here a transaction left open outside this class):
// the producer is wedged, and the daemon's loop ends the process for a restart.
TEST_F(TransactionTest, ABeginNoRetryCanHelpMarksTheProducerWedged) {
  ASSERT_EQ(rd_kafka_begin_transaction(producer_.get()), nullptr);
  send("open");
  auto t = Transaction::begin(producer_.get(), 1000);
  ASSERT_FALSE(t);
  EXPECT_TRUE(t.error().fatal) << t.error().message;
  EXPECT_FALSE(Transaction::usable(producer_.get()));
  EXPECT_FALSE(Transaction::begin(producer_.get(), 1000));
}

}  // namespace
}  // namespace newsflow::daemon
