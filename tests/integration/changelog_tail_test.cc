// A standby's tail of the state changelog against librdkafka's mock cluster: records spread
// over partitions are applied in the order the owner judged them, a missing one holds the
// next back for a while only, a record read late still goes (once), and a takeover's catch-up
// reads every partition to its end.
#include "daemon/kafka/changelog_tail.h"

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "daemon/kafka/kafka.h"
#include "dedup/state.h"

namespace newsflow::daemon {
namespace {

using namespace std::chrono_literals;

constexpr const char* kTopic = "newsflow.state";

KafkaHandle client(rd_kafka_type_t type, const std::string& bootstrap) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), err, sizeof err);
  if (type == RD_KAFKA_CONSUMER) {
    rd_kafka_conf_set(conf, "group.id", "tail-test", err, sizeof err);
    rd_kafka_conf_set(conf, "enable.partition.eof", "true", err, sizeof err);
    rd_kafka_conf_set(conf, "enable.auto.commit", "false", err, sizeof err);
  }
  KafkaHandle h(rd_kafka_new(type, conf, err, sizeof err));
  EXPECT_TRUE(h) << err;
  return h;
}

class ChangelogTailTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = EmbeddedCluster::start(1, {{kTopic, 3}});
    ASSERT_TRUE(c) << c.error();
    cluster_ = std::move(*c);
    producer_ = client(RD_KAFKA_PRODUCER, cluster_->bootstrap());
  }

  // One state record of sequence number `seq` to `partition`, acknowledged before it returns.
  void write(std::uint64_t seq, int partition, std::string id = "") {
    dedup::ArticleState s;
    s.seq = seq;
    s.id = id.empty() ? "a" + std::to_string(seq) : std::move(id);
    s.event_time = 1700000000 + static_cast<std::int64_t>(seq);
    const std::string value = dedup::encode_state(s);
    ASSERT_EQ(
        rd_kafka_producev(producer_.get(), RD_KAFKA_V_TOPIC(kTopic),
                          RD_KAFKA_V_PARTITION(partition), RD_KAFKA_V_KEY(s.id.data(), s.id.size()),
                          RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
        RD_KAFKA_RESP_ERR_NO_ERROR);
    ASSERT_EQ(rd_kafka_flush(producer_.get(), 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
  }

  std::unique_ptr<ChangelogTail> open(std::chrono::milliseconds hold,
                                      const std::map<int, std::int64_t>& positions = {},
                                      std::uint64_t last_seq = 0) {
    auto tail = ChangelogTail::open(client(RD_KAFKA_CONSUMER, cluster_->bootstrap()), kTopic,
                                    positions, last_seq, hold);
    EXPECT_TRUE(tail) << tail.error();
    return tail ? std::move(*tail) : nullptr;
  }

  // Polls until `n` records have been applied (or 10 s).
  void poll_until(ChangelogTail& tail, std::size_t n) {
    for (int i = 0; i < 200 && applied_.size() < n; ++i) {
      tail.poll(apply_);
      std::this_thread::sleep_for(50ms);
    }
  }

  std::unique_ptr<EmbeddedCluster> cluster_;
  KafkaHandle producer_;
  std::vector<std::uint64_t> applied_;
  ChangelogTail::Apply apply_ = [this](const dedup::ArticleState& s) { applied_.push_back(s.seq); };
};

TEST_F(ChangelogTailTest, AppliesRecordsInTheOrderTheOwnerJudgedThem) {
  // Written out of order over the partitions, as an owner's producer may land them: 2 and 3
  // are read before 1 is written.
  write(2, 1);
  write(3, 2);
  auto tail = open(10s);  // a long hold: only the order, not the timeout, may release them
  for (int i = 0; i < 200 && tail->pending() < 2; ++i) {  // up to 10 s on a loaded machine
    tail->poll(apply_);
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(tail->pending(), 2u);
  EXPECT_TRUE(applied_.empty());
  write(1, 0);
  write(4, 0);
  poll_until(*tail, 4);
  EXPECT_EQ(applied_, (std::vector<std::uint64_t>{1, 2, 3, 4}));
  EXPECT_EQ(tail->last_seq(), 4u);
  EXPECT_EQ(tail->late(), 0u);
}

TEST_F(ChangelogTailTest, AMissingRecordHoldsTheNextBackForTheHoldOnly) {
  // 1 and 3 in one partition, so 1 is always read first (over two partitions, a fetch of 1's
  // partition that comes later than the hold let 3 go first on a loaded machine).
  write(1, 0);
  write(3, 0);  // 2 never comes (compacted away, or never acknowledged)
  auto tail = open(300ms);
  poll_until(*tail, 1);
  tail->poll(apply_);
  EXPECT_EQ(applied_, (std::vector<std::uint64_t>{1}));  // 3 waits for 2
  EXPECT_EQ(tail->pending(), 1u);
  poll_until(*tail, 2);
  EXPECT_EQ(applied_, (std::vector<std::uint64_t>{1, 3}));
}

TEST_F(ChangelogTailTest, ARecordReadLateStillGoesOnce) {
  // A restore applied up to 5 reading partition 1 to its end; partition 0 is read from here.
  write(5, 1);
  write(4, 0);  // written while the restore read past it elsewhere
  write(6, 2);
  auto tail = open(10s, {{1, 1}}, 5);
  poll_until(*tail, 2);
  // 4 goes when read, 6 in order after 5: which comes first is which partition's fetch does
  // (6 first on a loaded machine, in CI).
  std::sort(applied_.begin(), applied_.end());
  EXPECT_EQ(applied_, (std::vector<std::uint64_t>{4, 6}));
  EXPECT_EQ(tail->late(), 1u);
}

TEST_F(ChangelogTailTest, TwoArticlesUnderOneNumberAreBothAppliedAndTheSameRecordOnce) {
  // Written before numbers were reserved at a restore: a re-judge that differed gave 2 to
  // another article. Both count; the same record written twice (a batch sent again) once.
  write(1, 0);
  write(2, 0, "first");
  write(2, 1, "second");
  write(2, 2, "second");
  write(3, 0);
  auto tail = open(10s);
  poll_until(*tail, 4);
  tail->poll(apply_);
  EXPECT_EQ(applied_, (std::vector<std::uint64_t>{1, 2, 2, 3}));
  EXPECT_EQ(tail->seen_seq(), 3u);
}

TEST_F(ChangelogTailTest, NumbersReadButNotAppliedAreSeen) {
  // Records waiting for their input's commit, or dropped at a catch-up: a new owner numbers its
  // records after them all the same.
  write(1, 0);
  write(7, 1);
  auto tail = ChangelogTail::open(client(RD_KAFKA_CONSUMER, cluster_->bootstrap()), kTopic, {}, 0,
                                  10s, [](const rd_kafka_message_t*, bool final) {
                                    return final ? Admission::kDrop : Admission::kWait;
                                  });
  ASSERT_TRUE(tail) << tail.error();
  for (int i = 0; i < 200 && (*tail)->pending() < 2; ++i) {
    (*tail)->poll(apply_);
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(applied_.empty());
  EXPECT_EQ((*tail)->seen_seq(), 7u);
}

TEST_F(ChangelogTailTest, RecordsWaitingForTheirCommitsAreBoundedAndReadOnLater) {
  // The owner's commits do not come: the records wait. At most 10 are held (the broker keeps
  // the rest); once the commits come, every record is applied.
  for (std::uint64_t seq = 1; seq <= 40; ++seq) write(seq, static_cast<int>(seq % 3));
  bool committed = false;
  auto tail = ChangelogTail::open(
      client(RD_KAFKA_CONSUMER, cluster_->bootstrap()), kTopic, {}, 0, 500ms,
      [&committed](const rd_kafka_message_t*, bool) {
        return committed ? Admission::kApply : Admission::kWait;
      },
      /*max_pending=*/10);
  ASSERT_TRUE(tail) << tail.error();
  std::size_t most = 0;
  for (int i = 0; i < 40; ++i) {
    (*tail)->poll(apply_);
    most = std::max(most, (*tail)->pending());
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(applied_.empty());
  EXPECT_EQ(most, 10u);
  committed = true;
  poll_until(**tail, 40);
  EXPECT_EQ(applied_.size(), 40u);
}

TEST_F(ChangelogTailTest, CatchUpReadsEveryPartitionToItsEnd) {
  auto tail = open(10s);
  write(1, 0);
  write(3, 2);  // 2 is lost with its owner: the catch-up does not wait for it
  const auto t0 = std::chrono::steady_clock::now();
  auto caught = tail->catch_up(apply_, 10s);
  ASSERT_TRUE(caught) << caught.error();
  EXPECT_EQ(*caught, 2u);
  EXPECT_EQ(applied_, (std::vector<std::uint64_t>{1, 3}));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  EXPECT_EQ(tail->pending(), 0u);
}

}  // namespace
}  // namespace newsflow::daemon
