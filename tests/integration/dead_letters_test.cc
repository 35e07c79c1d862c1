// DeadLetters against librdkafka's mock cluster: an input that failed as a whole goes to the DLQ
// with its key, headers and why, cut to what the producer may send; a feed item's page that time
// may cure goes to the fetch retries, one that it may not becomes a small dead letter naming
// the item.
#include "daemon/kafka/dead_letters.h"

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "daemon/kafka/fetch_retries.h"
#include "daemon/kafka/kafka.h"
#include "daemon/kafka/message.h"
#include "daemon/kafka/record_collector.h"
#include "daemon/ops/metrics.h"

namespace newsflow::daemon {
namespace {

using namespace std::chrono_literals;
using namespace internal;

struct Read {
  std::string key, value;
  std::map<std::string, std::string> headers;
};

class DeadLettersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_.kafka.embedded_partitions = 1;
    config_.kafka.dlq_max_payload_bytes = 1'000'000;
    auto c = EmbeddedCluster::start(1, daemon_topics(config_));
    ASSERT_TRUE(c) << c.error();
    cluster_ = std::move(*c);
  }

  KafkaHandle client(rd_kafka_type_t type, const std::map<std::string, std::string>& props) {
    char err[512];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "bootstrap.servers", cluster_->bootstrap().c_str(), err, sizeof err);
    for (const auto& [k, v] : props) {
      rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err);
    }
    KafkaHandle h(rd_kafka_new(type, conf, err, sizeof err));
    EXPECT_TRUE(h) << err;
    return h;
  }

  // Writes one record to `topic` and reads it back as the daemon's consumer hands it out.
  rd_kafka_message_t* consumed(const std::string& topic, const std::string& key,
                               const std::string& value, const Headers& headers) {
    KafkaHandle p = client(RD_KAFKA_PRODUCER, {});
    rd_kafka_headers_t* hdrs = rd_kafka_headers_new(headers.size());
    for (const auto& [n, v] : headers) rd_kafka_header_add(hdrs, n.data(), -1, v.data(), -1);
    EXPECT_EQ(rd_kafka_producev(p.get(), RD_KAFKA_V_TOPIC(topic.c_str()),
                                RD_KAFKA_V_KEY(key.data(), key.size()),
                                RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                                RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_HEADERS(hdrs),
                                RD_KAFKA_V_END),
              RD_KAFKA_RESP_ERR_NO_ERROR);
    EXPECT_EQ(rd_kafka_flush(p.get(), 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
    const std::vector<rd_kafka_message_t*> read = read_raw(topic, 1);
    return read.empty() ? nullptr : read.front();
  }

  // The first `n` records of partition 0 of `topic` (the caller destroys them).
  std::vector<rd_kafka_message_t*> read_raw(const std::string& topic, std::size_t n) {
    if (!consumer_) {
      consumer_ = client(RD_KAFKA_CONSUMER,
                         {{"group.id", "dead-letters-test"}, {"enable.auto.commit", "false"}});
    }
    rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(list, topic.c_str(), 0)->offset = RD_KAFKA_OFFSET_BEGINNING;
    rd_kafka_assign(consumer_.get(), list);
    rd_kafka_topic_partition_list_destroy(list);
    std::vector<rd_kafka_message_t*> out;
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (out.size() < n && std::chrono::steady_clock::now() < deadline) {
      rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer_.get(), 100);
      if (!m) continue;
      if (m->err) {
        rd_kafka_message_destroy(m);
        continue;
      }
      out.push_back(m);
    }
    return out;
  }

  std::vector<Read> read_all(const std::string& topic, std::size_t n) {
    std::vector<Read> out;
    for (rd_kafka_message_t* m : read_raw(topic, n)) {
      Read r{std::string(key_of(m)), std::string(payload(m)), {}};
      for (const auto& [name, value] : message_headers(m)) r.headers[name] = value;
      out.push_back(std::move(r));
      rd_kafka_message_destroy(m);
    }
    return out;
  }

  KafkaConf producer_conf(const std::string& max_bytes) const {
    char err[512];
    KafkaConf conf(rd_kafka_conf_new());
    rd_kafka_conf_set(conf.get(), "bootstrap.servers", cluster_->bootstrap().c_str(), err,
                      sizeof err);
    rd_kafka_conf_set(conf.get(), "message.max.bytes", max_bytes.c_str(), err, sizeof err);
    return conf;
  }

  void TearDown() override {
    if (consumer_) rd_kafka_consumer_close(consumer_.get());
  }

  config::Config config_;
  std::unique_ptr<EmbeddedCluster> cluster_;
  KafkaHandle consumer_;
  Metrics metrics_;
};

TEST_F(DeadLettersTest, AnInputGoesToTheDlqWithWhyCutToWhatTheProducerSends) {
  const std::string body(50'000, 'x');
  rd_kafka_message_t* msg =
      consumed(config_.topics.pages, "page-key", body, {{"url", "https://example.com/a"}});
  ASSERT_NE(msg, nullptr);
  RecordCollector collector(metrics_, config_.topics.dlq, {});
  ASSERT_TRUE(collector.open(producer_conf("20000")));
  int noted = 0;
  DeadLetters dead_letters(config_, collector, metrics_,
                           [&noted](const rd_kafka_message_t*, const Failure& f) {
                             EXPECT_EQ(f.reason, "invalid_json");
                             ++noted;
                           });
  collector.begin_batch();
  collector.begin_input(msg);
  dead_letters.input(msg, Failure{Reason::kInvalidJson, "expected a value at byte 0"});
  collector.end_input();
  auto batch = collector.end_batch();
  ASSERT_EQ(rd_kafka_flush(collector.producer(), 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_EQ(noted, 1);
  const auto dlq = read_all(config_.topics.dlq, 1);
  ASSERT_EQ(dlq.size(), 1u);
  const Read& r = dlq[0];
  EXPECT_EQ(r.key, "page-key");
  // The input's own headers, and why.
  EXPECT_EQ(r.headers.at("url"), "https://example.com/a");
  EXPECT_EQ(r.headers.at("error_reason"), "invalid_json");
  EXPECT_EQ(r.headers.at("error_detail"), "expected a value at byte 0");
  EXPECT_EQ(r.headers.at("source_topic"), config_.topics.pages);
  EXPECT_EQ(r.headers.at("source_partition"), "0");
  EXPECT_EQ(r.headers.at("source_offset"), "0");
  EXPECT_EQ(r.headers.at("schema"), "newsflow.dead-letter/1");
  // Cut to what the producer sends with the headers and key, and said so.
  EXPECT_EQ(r.headers.at("payload_truncated_from"), "50000");
  EXPECT_LT(r.value.size(), 20'000u);
  EXPECT_GT(r.value.size(), 15'000u);
  EXPECT_EQ(r.value, body.substr(0, r.value.size()));
  rd_kafka_message_destroy(msg);
}

TEST_F(DeadLettersTest, AFeedItemsPageIsTriedAgainWhenTimeMayCureItElseNamedInADeadLetter) {
  config_.fetch.requeue_attempts = 2;
  rd_kafka_message_t* feed = consumed(config_.topics.feeds, "feed-key", "<rss/>", {});
  ASSERT_NE(feed, nullptr);
  RecordCollector collector(metrics_, config_.topics.dlq, {});
  ASSERT_TRUE(collector.open(producer_conf("1000000")));
  DeadLetters dead_letters(config_, collector, metrics_, {});
  dead_letters.allow_fetch_retries(true);
  Input in;
  in.url = "https://example.com/feed.xml";
  in.id = "feed-1";
  Extracted down, gone;
  down.article.id = "item-down";
  down.article.title = "A site down";
  down.fetch_url = "https://example.com/down";
  down.fetch_failure = Failure{Reason::kFetchHttp5xx, "HTTP 503"};
  gone.article.id = "item-gone";
  gone.article.title = "A page gone";
  gone.fetch_url = "https://example.com/gone";
  gone.fetch_failure = Failure{Reason::kFetchHttp4xx, "HTTP 404"};
  gone.skip = true;
  collector.begin_batch();
  collector.begin_input(feed);
  dead_letters.item(feed, down, in);
  dead_letters.item(feed, gone, in);
  collector.end_input();
  auto batch = collector.end_batch();
  ASSERT_EQ(rd_kafka_flush(collector.producer(), 10000), RD_KAFKA_RESP_ERR_NO_ERROR);

  const auto retries = read_all(config_.topics.fetch_retries, 1);
  ASSERT_EQ(retries.size(), 1u);
  EXPECT_EQ(retries[0].key, "item-down");
  const auto retry = parse_fetch_retry(retries[0].value);
  ASSERT_TRUE(retry);
  EXPECT_EQ(retry->link, "https://example.com/down");
  EXPECT_EQ(retry->attempts, 1);
  EXPECT_EQ(retry->feed_id, "feed-1");
  EXPECT_EQ(retries[0].headers.at("source_topic"), config_.topics.feeds);

  const auto dlq = read_all(config_.topics.dlq, 1);
  ASSERT_EQ(dlq.size(), 1u);
  EXPECT_EQ(dlq[0].key, "https://example.com/gone");
  EXPECT_EQ(dlq[0].headers.at("error_reason"), "fetch_http_4xx");
  EXPECT_EQ(dlq[0].headers.at("url"), "https://example.com/gone");
  const auto value = nlohmann::json::parse(dlq[0].value);
  EXPECT_EQ(value["id"], "item-gone");
  EXPECT_EQ(value["feed_key"], "feed-key");
  EXPECT_EQ(value["kept_feed_text"], false);
  rd_kafka_message_destroy(feed);
}

}  // namespace
}  // namespace newsflow::daemon
