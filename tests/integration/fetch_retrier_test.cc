// The later tries of linked pages (`FetchRetrier`) against librdkafka's mock cluster and a real
// HTTP server on 127.0.0.1: a rebalance never leaves a partition paused, a long wait does not
// hold back the commits of the records after it, and the count of tries never goes back.
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>

#include "daemon/kafka/fetch_retries.h"
#include "daemon/kafka/kafka.h"
#include "daemon/kafka/message.h"
#include "daemon/ops/metrics.h"
#include "tests/integration/local_http_server.h"

namespace newsflow::daemon {
namespace {

using namespace std::chrono_literals;

KafkaHandle client(rd_kafka_type_t type, const std::map<std::string, std::string>& props) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  for (const auto& [k, v] : props) rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err);
  KafkaHandle h(rd_kafka_new(type, conf, err, sizeof err));
  EXPECT_TRUE(h) << err;
  return h;
}

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Waits up to `limit` for `done`.
bool eventually(const std::function<bool()>& done, std::chrono::milliseconds limit = 30s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(50ms);
  }
  return true;
}

// Every record of `topic` (all partitions), as (key, value).
std::vector<std::pair<std::string, std::string>> read_all(const std::string& bootstrap,
                                                          const std::string& topic,
                                                          int partitions) {
  KafkaHandle c = client(RD_KAFKA_CONSUMER, {{"bootstrap.servers", bootstrap},
                                             {"group.id", "reader"},
                                             {"enable.partition.eof", "true"},
                                             {"enable.auto.commit", "false"}});
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(partitions);
  for (int i = 0; i < partitions; ++i) {
    rd_kafka_topic_partition_list_add(list, topic.c_str(), i)->offset = RD_KAFKA_OFFSET_BEGINNING;
  }
  rd_kafka_assign(c.get(), list);
  rd_kafka_topic_partition_list_destroy(list);
  std::vector<std::pair<std::string, std::string>> out;
  std::set<int> at_end;
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (static_cast<int>(at_end.size()) < partitions &&
         std::chrono::steady_clock::now() < deadline) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(c.get(), 200);
    if (!m) continue;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      at_end.insert(m->partition);
    } else if (!m->err) {
      out.emplace_back(std::string(static_cast<const char*>(m->key), m->key_len),
                       std::string(static_cast<const char*>(m->payload), m->len));
    }
    rd_kafka_message_destroy(m);
  }
  rd_kafka_consumer_close(c.get());
  return out;
}

class FetchRetrierOnMockCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    config_.kafka.embedded_partitions = 2;
    config_.kafka.group_id = "retrier-test";
    config_.fetch.requeue_attempts = 3;
    config_.fetch.requeue_backoff_ms = 300;
    config_.fetch.requeue_max_backoff_ms = 3600000;
    config_.fetch.robots_txt = false;
    config_.fetch.allow_networks = {"127.0.0.0/8"};
    auto c = EmbeddedCluster::start(1, daemon_topics(config_));
    ASSERT_TRUE(c) << c.error();
    cluster_ = std::move(*c);
    // Idempotent: a produce retried on a loaded machine can neither double nor reorder the
    // records a test writes, and the tests count them (a CI run found three retry records where
    // two were expected: reordered, the older copy holds back the newer one's commit and is
    // written again).
    producer_ = client(RD_KAFKA_PRODUCER, {{"bootstrap.servers", cluster_->bootstrap()},
                                           {"enable.idempotence", "true"}});
  }

  void put(int partition, const FetchRetry& r) {
    const std::string value = fetch_retry_json(r);
    ASSERT_EQ(
        rd_kafka_producev(producer_.get(), RD_KAFKA_V_TOPIC(config_.topics.fetch_retries.c_str()),
                          RD_KAFKA_V_PARTITION(partition), RD_KAFKA_V_KEY(r.id.data(), r.id.size()),
                          RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
        RD_KAFKA_RESP_ERR_NO_ERROR);
    rd_kafka_poll(producer_.get(), 0);
  }

  static FetchRetry retry(const std::string& id, const std::string& link, std::int64_t due_ms,
                          int attempts = 2) {
    FetchRetry r;
    r.id = id;
    r.link = link;
    r.title = "Headline " + id;
    r.attempts = attempts;
    r.due_ms = due_ms;
    r.reason = "fetch_http_503";
    return r;
  }

  // The offset the retries group committed for `partition` (-1001: none).
  std::int64_t committed(int partition) {
    KafkaHandle c =
        client(RD_KAFKA_CONSUMER, {{"bootstrap.servers", cluster_->bootstrap()},
                                   {"group.id", config_.kafka.group_id + "-fetch-retries"}});
    rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(list, config_.topics.fetch_retries.c_str(), partition);
    std::int64_t offset = RD_KAFKA_OFFSET_INVALID;
    if (rd_kafka_committed(c.get(), list, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
      offset = list->elems[0].offset;
    }
    rd_kafka_topic_partition_list_destroy(list);
    rd_kafka_destroy(c.release());
    return offset;
  }

  config::Config config_;
  std::unique_ptr<EmbeddedCluster> cluster_;
  KafkaHandle producer_;
};

// librdkafka keeps a partition paused by the application across an unassign and an assign: a
// retrier that paused at its limit of waiting records and then lost them in a rebalance read
// nothing more from the partitions given back to it.
TEST_F(FetchRetrierOnMockCluster, APausedRetrierReadsAgainAfterARebalance) {
  const std::int64_t later = now_ms() + 3600 * 1000;
  constexpr int kPerPartition = 6000;  // together past kMaxWaiting: the first retrier pauses
  static_assert(2 * kPerPartition > FetchRetrier::kMaxWaiting);
  for (int p = 0; p < 2; ++p) {
    for (int i = 0; i < kPerPartition; ++i) {
      put(p,
          retry("p" + std::to_string(p) + "-" + std::to_string(i), "http://127.0.0.1:9/x", later));
    }
  }
  ASSERT_EQ(rd_kafka_flush(producer_.get(), 30000), RD_KAFKA_RESP_ERR_NO_ERROR);

  Metrics metrics_a, metrics_b;
  auto a = FetchRetrier::start(config_, cluster_->bootstrap(), metrics_a);
  ASSERT_TRUE(a) << a.error();
  ASSERT_TRUE(eventually([&] { return (*a)->waiting() >= FetchRetrier::kMaxWaiting; }))
      << (*a)->waiting();
  // A second process joins the group: each gets one partition, and reads all of it.
  auto b = FetchRetrier::start(config_, cluster_->bootstrap(), metrics_b);
  ASSERT_TRUE(b) << b.error();
  EXPECT_TRUE(eventually([&] {
    return (*a)->waiting() == kPerPartition && (*b)->waiting() == kPerPartition;
  })) << "waiting: "
      << (*a)->waiting() << " and " << (*b)->waiting();
}

// A second retrier joins: the first gives up one partition and keeps the other's waiting
// records (cooperative rebalancing). Eager, it gave up both and read the one given back again
// from its committed offset (nothing of it was finished), every waiting record once more.
TEST_F(FetchRetrierOnMockCluster, ARebalanceMovesOnlyThePartitionsThatChangeHands) {
  const std::int64_t later = now_ms() + 3600 * 1000;
  constexpr int kPerPartition = 50;
  for (int p = 0; p < 2; ++p) {
    for (int i = 0; i < kPerPartition; ++i) {
      put(p,
          retry("p" + std::to_string(p) + "-" + std::to_string(i), "http://127.0.0.1:9/x", later));
    }
  }
  ASSERT_EQ(rd_kafka_flush(producer_.get(), 30000), RD_KAFKA_RESP_ERR_NO_ERROR);
  Metrics metrics_a, metrics_b;
  auto a = FetchRetrier::start(config_, cluster_->bootstrap(), metrics_a);
  ASSERT_TRUE(a) << a.error();
  ASSERT_TRUE(eventually([&] { return (*a)->waiting() == 2 * kPerPartition; })) << (*a)->waiting();
  auto b = FetchRetrier::start(config_, cluster_->bootstrap(), metrics_b);
  ASSERT_TRUE(b) << b.error();
  ASSERT_TRUE(eventually([&] {
    return (*a)->waiting() == kPerPartition && (*b)->waiting() == kPerPartition;
  })) << "waiting: "
      << (*a)->waiting() << " and " << (*b)->waiting();
  std::this_thread::sleep_for(2s);  // a second read would have come by now
  EXPECT_EQ((*a)->read(), 2u * kPerPartition);
  EXPECT_EQ((*b)->read(), static_cast<std::uint64_t>(kPerPartition));
}

// A round whose outcome is refused: the retrier goes back to the committed offsets (a seek, the
// partitions kept) and reads, fetches and publishes the record again.
TEST_F(FetchRetrierOnMockCluster, ARoundThatFailsIsReadAgainFromTheCommittedOffsets) {
  std::atomic<int> fetched{0};
  testing::LocalHttpServer site({{"/", [&fetched](mg_connection* c, const mg_request_info*) {
                                    ++fetched;
                                    mg_printf(c,
                                              "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
                                              "Content-Length: 37\r\n\r\n"
                                              "<html><body><p>A page.</p></body></html>");
                                  }}});
  ASSERT_TRUE(site.ok());
  put(0, retry("item", site.url("/a"), 0));
  ASSERT_EQ(rd_kafka_flush(producer_.get(), 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
  // The page's first produce request is refused (an error no retry cures).
  rd_kafka_mock_push_request_errors(cluster_->mock(), /*ApiKey Produce=*/0, 1,
                                    RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED);
  Metrics metrics;
  auto r = FetchRetrier::start(config_, cluster_->bootstrap(), metrics);
  ASSERT_TRUE(r) << r.error();
  EXPECT_TRUE(eventually([&] { return committed(0) >= 1; }, 20s)) << committed(0);
  // Read again once a round (librdkafka may answer a second produce with the refusal too).
  EXPECT_GE((*r)->read(), 2u);
  EXPECT_EQ((*r)->read(), static_cast<std::uint64_t>(fetched.load()));
  r->reset();
  EXPECT_EQ(read_all(cluster_->bootstrap(), config_.topics.pages, 2).size(), 1u);
}

// A retrier stopped before its group handed it anything (a restart stopped at once, while the
// group still waits for a killed member): librdkafka 2.0 aborts destroying a cooperative-sticky
// consumer that never had an assignment, so it is left to the process's exit instead (the
// broker test `broker_sigkill_restart_at_least_once` saw the abort).
TEST_F(FetchRetrierOnMockCluster, ARetrierStoppedBeforeItsFirstAssignmentDoesNotAbort) {
  Metrics metrics_a, metrics_b;
  auto a = FetchRetrier::start(config_, cluster_->bootstrap(), metrics_a);
  ASSERT_TRUE(a) << a.error();
  for (int i = 0; i < 3; ++i) {
    auto b = FetchRetrier::start(config_, cluster_->bootstrap(), metrics_b);
    ASSERT_TRUE(b) << b.error();
    b->reset();  // at once: its join is still under way
  }
  SUCCEED();
}

// A record due in an hour, then records due now whose pages are fetched: the offsets of the
// finished ones are committed (the long wait written again at the end of its partition), so a
// rebalance or a restart would not fetch and publish them again.
TEST_F(FetchRetrierOnMockCluster, ALongWaitDoesNotHoldBackTheCommitsAfterIt) {
  testing::LocalHttpServer site({{"/", [](mg_connection* c, const mg_request_info*) {
                                    mg_printf(c,
                                              "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
                                              "Content-Length: 37\r\n\r\n"
                                              "<html><body><p>A page.</p></body></html>");
                                  }}});
  ASSERT_TRUE(site.ok());
  const std::int64_t later = now_ms() + 3600 * 1000;
  put(0, retry("long", site.url("/long"), later));
  for (int i = 0; i < 4; ++i)
    put(0, retry("now" + std::to_string(i), site.url("/p" + std::to_string(i)), 0));
  ASSERT_EQ(rd_kafka_flush(producer_.get(), 10000), RD_KAFKA_RESP_ERR_NO_ERROR);

  Metrics metrics;
  auto r = FetchRetrier::start(config_, cluster_->bootstrap(), metrics);
  ASSERT_TRUE(r) << r.error();
  // Past the five records: the four fetched, and the long wait's first copy.
  EXPECT_TRUE(eventually([&] { return committed(0) >= 5; }, 20s)) << committed(0);
  // The copy is read back, and waits.
  EXPECT_TRUE(eventually([&] { return (*r)->waiting() == 1; }, 10s)) << (*r)->waiting();
  r->reset();

  // Its copy is the same record (its tries and due time), at the end of the partition.
  int copies = 0;
  for (const auto& [key, value] :
       read_all(cluster_->bootstrap(), config_.topics.fetch_retries, 2)) {
    if (key != "long") continue;
    const auto back = parse_fetch_retry(value);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->attempts, 2);
    EXPECT_EQ(back->due_ms, later);
    ++copies;
  }
  EXPECT_EQ(copies, 2);
  EXPECT_EQ(read_all(cluster_->bootstrap(), config_.topics.pages, 2).size(), 4u);
}

// A record and the copy that rescheduled it (one more try), read in one burst after a rewind:
// the copy with more tries is kept, so the item is given up after `requeue_attempts` later
// tries and not tried once more.
TEST_F(FetchRetrierOnMockCluster, TheCopyWithMoreTriesWins) {
  testing::LocalHttpServer site({{"/", [](mg_connection* c, const mg_request_info*) {
                                    mg_printf(c,
                                              "HTTP/1.1 503 Service Unavailable\r\n"
                                              "Content-Length: 0\r\n\r\n");
                                  }}});
  ASSERT_TRUE(site.ok());
  config_.fetch.retries = 0;
  // Two tries done (the judging process's and a later one), then the third, which rescheduled
  // it: the next is the fourth and last (`requeue_attempts` 3 after the first). Both are due
  // well after the retrier starts, so both are read before either is tried, however slow the
  // start.
  const std::int64_t due = now_ms() + 4000;
  put(0, retry("item", site.url("/a"), due, /*attempts=*/2));
  put(0, retry("item", site.url("/a"), due, /*attempts=*/3));
  ASSERT_EQ(rd_kafka_flush(producer_.get(), 10000), RD_KAFKA_RESP_ERR_NO_ERROR);

  Metrics metrics;
  auto r = FetchRetrier::start(config_, cluster_->bootstrap(), metrics);
  ASSERT_TRUE(r) << r.error();
  EXPECT_TRUE(eventually([&] { return committed(0) >= 2; }, 20s)) << committed(0);
  r->reset();
  // The fourth try failed: a dead letter (twice if a round was produced again: at least once),
  // and no record for a fifth.
  const auto dlq = read_all(cluster_->bootstrap(), config_.topics.dlq, 2);
  ASSERT_GE(dlq.size(), 1u);
  for (const auto& [key, value] : dlq) {
    const auto last = parse_fetch_retry(value);
    ASSERT_TRUE(last);
    EXPECT_EQ(last->attempts, 4);
  }
  EXPECT_EQ(read_all(cluster_->bootstrap(), config_.topics.fetch_retries, 2).size(), 2u);
}

// A stop with 1 s left of the drain limit while a page is being fetched from a site that holds
// its answer for 12 s: the fetch is cut short and the retrier is gone well within the limit,
// not when the transfer times out (the daemon's stop would outlast systemd's and Kubernetes'
// grace).
TEST_F(FetchRetrierOnMockCluster, AStopEndsAFetchInProgressWithinTheDrainLimit) {
  std::atomic<bool> leave{false};
  testing::LocalHttpServer site({{"/", [&leave](mg_connection* c, const mg_request_info*) {
                                    for (int i = 0; i < 120 && !leave.load(); ++i) {
                                      std::this_thread::sleep_for(100ms);
                                    }
                                    mg_printf(c, "HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n");
                                  }}});
  ASSERT_TRUE(site.ok());
  config_.fetch.retries = 0;
  put(0, retry("slow", site.url("/slow"), 0));
  ASSERT_EQ(rd_kafka_flush(producer_.get(), 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
  Metrics metrics;
  auto r = FetchRetrier::start(config_, cluster_->bootstrap(), metrics);
  ASSERT_TRUE(r) << r.error();
  ASSERT_TRUE(eventually([&] { return site.requests() >= 1; }, 20s));
  std::this_thread::sleep_for(200ms);
  const auto t0 = std::chrono::steady_clock::now();
  (*r)->request_stop(internal::steady_ms() + 1000);
  r->reset();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  leave = true;
  EXPECT_LT(seconds, 3.0) << "the retrier outlasted the drain limit";
}

}  // namespace
}  // namespace newsflow::daemon
