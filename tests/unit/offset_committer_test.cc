#include "daemon/kafka/offset_committer.h"

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <set>
#include <vector>

namespace newsflow::daemon {
namespace {

using namespace std::chrono_literals;
using Offsets = OffsetCommitter::Offsets;

// A coordinator that records every commit sent and answers as told.
struct FakeCoordinator {
  struct Sent {
    Offsets offsets;
    bool sync;
  };
  std::vector<Sent> sent;
  int next_error = RD_KAFKA_RESP_ERR_NO_ERROR;
  std::set<OffsetCommitter::Partition> owned{{"in", 0}, {"in", 1}};

  OffsetCommitter committer() {
    return OffsetCommitter(
        [this](const Offsets& offsets, bool sync, std::string& error) {
          sent.push_back({offsets, sync});
          if (next_error != RD_KAFKA_RESP_ERR_NO_ERROR) error = "refused";
          return next_error;
        },
        [this](const OffsetCommitter::Partition& p) { return owned.count(p) > 0; });
  }
};

const OffsetCommitter::Partition p0{"in", 0}, p1{"in", 1};
const auto t0 = OffsetCommitter::Clock::time_point() + 1h;

// A revoke (or a stop) commits synchronously: an asynchronous commit still on its way, with
// nothing new waiting, is sent again and its answer awaited (its answer could otherwise come
// after the partition went to another member, or fail, and the new owner read it all again).
TEST(OffsetCommitter, ASyncCommitAwaitsTheAsynchronousOneOnItsWay) {
  FakeCoordinator c;
  OffsetCommitter committer = c.committer();
  committer.acknowledged(p0, 7);
  EXPECT_TRUE(committer.commit(/*sync=*/false, t0).ok);
  EXPECT_TRUE(committer.in_flight());
  EXPECT_FALSE(committer.waiting());
  EXPECT_FALSE(committer.due(0ms, false, t0 + 1s));  // an interval's commit leaves it be
  EXPECT_TRUE(committer.due(0ms, /*now_please=*/true, t0 + 1s));
  const auto r = committer.commit(/*sync=*/true, t0 + 1s);
  EXPECT_TRUE(r.committed);
  EXPECT_EQ(r.messages, 1u);
  ASSERT_EQ(c.sent.size(), 2u);
  EXPECT_TRUE(c.sent[1].sync);
  EXPECT_EQ(c.sent[1].offsets, (Offsets{{p0, 7}}));
  EXPECT_EQ(committer.committed(p0), 7);
  EXPECT_TRUE(committer.idle());
  // The late answer of the asynchronous one changes nothing.
  EXPECT_FALSE(committer.answered(RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT, {{p0, 7}}, "late"));
  EXPECT_TRUE(committer.idle());
}

TEST(OffsetCommitter, CommitsTheHighestAcknowledgedOffsetOfEachPartitionAtItsInterval) {
  FakeCoordinator c;
  OffsetCommitter committer = c.committer();
  EXPECT_FALSE(committer.due(0ms, true, t0));  // nothing waits
  committer.acknowledged(p0, 11);
  committer.acknowledged(p0, 10);  // acknowledged out of order: the highest goes
  committer.acknowledged(p1, 5);
  EXPECT_TRUE(committer.due(1000ms, false, t0));
  const auto r = committer.commit(/*sync=*/true, t0);
  EXPECT_TRUE(r.ok);
  EXPECT_TRUE(r.committed);
  EXPECT_EQ(r.messages, 3u);
  ASSERT_EQ(c.sent.size(), 1u);
  EXPECT_EQ(c.sent[0].offsets, (Offsets{{p0, 11}, {p1, 5}}));
  EXPECT_EQ(committer.committed(p0), 11);
  EXPECT_TRUE(committer.idle());
  committer.acknowledged(p0, 12);
  EXPECT_FALSE(committer.due(1000ms, false, t0 + 500ms));  // not before the interval
  EXPECT_TRUE(committer.due(1000ms, false, t0 + 1000ms));
  EXPECT_TRUE(committer.due(1000ms, /*now_please=*/true, t0 + 500ms));
}

TEST(OffsetCommitter, OneAsynchronousCommitOnItsWayAndWhatWaitsGoesWithTheNext) {
  FakeCoordinator c;
  OffsetCommitter committer = c.committer();
  committer.acknowledged(p0, 10);
  auto r = committer.commit(false, t0);
  EXPECT_TRUE(r.ok);
  EXPECT_FALSE(r.committed);  // sent, not answered
  EXPECT_FALSE(committer.idle());
  committer.acknowledged(p0, 20);
  committer.commit(false, t0 + 1s);  // one on its way: nothing sent
  EXPECT_EQ(c.sent.size(), 1u);
  // An answer that names other offsets (a synchronous commit's) is not this one's.
  EXPECT_FALSE(committer.answered(RD_KAFKA_RESP_ERR_NO_ERROR, {{p0, 7}}, ""));
  const auto answer = committer.answered(RD_KAFKA_RESP_ERR_NO_ERROR, {{p0, 10}}, "");
  ASSERT_TRUE(answer);
  EXPECT_TRUE(answer->committed);
  EXPECT_EQ(answer->messages, 1u);
  EXPECT_EQ(committer.committed(p0), 10);
  committer.commit(false, t0 + 2s);
  ASSERT_EQ(c.sent.size(), 2u);
  EXPECT_EQ(c.sent[1].offsets, (Offsets{{p0, 20}}));
  // Unanswered for more than 10 s: the next goes, with the unanswered one's offsets along.
  committer.acknowledged(p1, 3);
  committer.commit(false, t0 + 13s);
  ASSERT_EQ(c.sent.size(), 3u);
  EXPECT_EQ(c.sent[2].offsets, (Offsets{{p0, 20}, {p1, 3}}));
}

TEST(OffsetCommitter, AFailedCommitWaitsAgainWithABackoffThatDoublesToASecond) {
  FakeCoordinator c;
  OffsetCommitter committer = c.committer();
  committer.acknowledged(p0, 10);
  c.next_error = RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS;
  auto r = committer.commit(true, t0);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "refused");
  EXPECT_EQ(committer.backoff(), 100ms);
  EXPECT_TRUE(committer.waiting());
  // The interval is shorter than the back-off: the back-off decides.
  EXPECT_FALSE(committer.due(10ms, false, t0 + 50ms));
  EXPECT_TRUE(committer.due(10ms, false, t0 + 100ms));
  for (int i = 0; i < 6; ++i) committer.commit(true, t0);
  EXPECT_EQ(committer.backoff(), 1000ms);
  c.next_error = RD_KAFKA_RESP_ERR_NO_ERROR;
  r = committer.commit(true, t0 + 2s);
  EXPECT_TRUE(r.committed);
  EXPECT_EQ(c.sent.back().offsets, (Offsets{{p0, 10}}));
  EXPECT_EQ(committer.backoff(), 0ms);

  // An asynchronous commit answered with an error: its offsets wait again.
  committer.acknowledged(p0, 30);
  committer.acknowledged(p1, 4);
  committer.commit(false, t0 + 3s);
  const auto answer =
      committer.answered(RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT, {{p0, 30}, {p1, 4}}, "timed out");
  ASSERT_TRUE(answer);
  EXPECT_FALSE(answer->ok);
  EXPECT_EQ(answer->error, "timed out");
  EXPECT_TRUE(committer.waiting());
  committer.commit(true, t0 + 4s);
  EXPECT_EQ(c.sent.back().offsets, (Offsets{{p0, 30}, {p1, 4}}));
}

TEST(OffsetCommitter, NeverCommitsForAPartitionItNoLongerOwns) {
  FakeCoordinator c;
  OffsetCommitter committer = c.committer();
  // Waiting when the partition is revoked: dropped.
  committer.acknowledged(p0, 10);
  committer.acknowledged(p1, 10);
  committer.revoked(p0);
  committer.commit(true, t0);
  EXPECT_EQ(c.sent.back().offsets, (Offsets{{p1, 10}}));
  // On its way when it is revoked, then the answer fails: not sent again.
  committer.acknowledged(p0, 20);
  committer.acknowledged(p1, 20);
  committer.commit(false, t0 + 1s);
  c.owned.erase(p0);
  committer.answered(RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT, {{p0, 20}, {p1, 20}}, "timed out");
  committer.commit(true, t0 + 3s);
  EXPECT_EQ(c.sent.back().offsets, (Offsets{{p1, 20}}));
  // A synchronous commit takes an unanswered asynchronous one's offsets along, of owned
  // partitions only.
  c.owned.insert(p0);
  committer.acknowledged(p0, 30);
  committer.commit(false, t0 + 4s);
  c.owned.erase(p0);
  committer.acknowledged(p1, 31);
  committer.commit(true, t0 + 5s);
  EXPECT_EQ(c.sent.back().offsets, (Offsets{{p1, 31}}));
}

TEST(OffsetCommitter, AFailedAnswerDoesNotGoBackBelowWhatALaterCommitCommitted) {
  FakeCoordinator c;
  OffsetCommitter committer = c.committer();
  committer.acknowledged(p0, 10);
  committer.commit(false, t0);
  committer.acknowledged(p0, 20);
  // On revoke: synchronous, with the asynchronous one's offsets along; it went further.
  committer.commit(true, t0 + 1s);
  EXPECT_EQ(c.sent.back().offsets, (Offsets{{p0, 20}}));
  EXPECT_TRUE(committer.idle());
  // The asynchronous one's late answer is no longer awaited.
  EXPECT_FALSE(committer.answered(RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT, {{p0, 10}}, "late"));
  EXPECT_FALSE(committer.waiting());
  EXPECT_EQ(committer.committed(p0), 20);
}

}  // namespace
}  // namespace newsflow::daemon
