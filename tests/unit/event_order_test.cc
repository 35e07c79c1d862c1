#include "daemon/event_order.h"

#include <gtest/gtest.h>

namespace newsflow::daemon {
namespace {

using Merger = EventTimeMerger<int>;
using namespace std::chrono_literals;

const Merger::Partition kA{"pages", 0};
const Merger::Partition kB{"pages", 1};

// A merger over kA and kB (in the order given), both assigned at `now`.
Merger two_partitions(Merger::Clock::time_point now, std::chrono::milliseconds max_idle = 1000ms,
                      bool b_first = false) {
  Merger m({max_idle});
  m.assign(b_first ? kB : kA, now);
  m.assign(b_first ? kA : kB, now);
  return m;
}

TEST(EventTimeMerger, TakesTheLowestEventTimeAcrossPartitions) {
  const auto now = Merger::Clock::now();
  Merger m = two_partitions(now);
  m.add(kA, 1, 100, 10);
  m.add(kA, 2, 300, 10);
  m.add(kB, 3, 200, 10);
  m.end_of_partition(kA);
  m.end_of_partition(kB);
  std::vector<int> order;
  std::int64_t low = 0;
  std::vector<std::int64_t> lows;
  while (auto r = m.next(now, &low)) {
    order.push_back(*r);
    lows.push_back(low);
  }
  EXPECT_EQ(order, (std::vector<int>{1, 3, 2}));
  EXPECT_EQ(lows, (std::vector<std::int64_t>{100, 200, 300}));
  EXPECT_EQ(m.buffered_records(), 0u);
}

TEST(EventTimeMerger, WaitsForAPartitionThatMayStillDeliverAnOlderRecord) {
  const auto now = Merger::Clock::now();
  Merger m = two_partitions(now);
  m.add(kA, 1, 500, 10);
  // B has neither delivered nor reported its end: A's record must wait.
  EXPECT_FALSE(m.next(now).has_value());
  EXPECT_TRUE(m.waiting(now));
  m.add(kB, 2, 100, 10);
  EXPECT_EQ(m.next(now), 2);
  // B is empty again and not at its end: wait again, until it reports its end.
  EXPECT_FALSE(m.next(now).has_value());
  m.end_of_partition(kB);
  EXPECT_EQ(m.next(now), 1);
}

TEST(EventTimeMerger, AnIdlePartitionStopsHoldingTheOthersBackButKeepsTheLowWatermark) {
  const auto t0 = Merger::Clock::now();
  Merger m = two_partitions(t0, 50ms);
  m.add(kB, 1, 100, 10);
  m.end_of_partition(kB);
  m.add(kA, 2, 50, 10);
  EXPECT_EQ(m.next(t0), 2);  // A's stream time is now 50
  m.add(kB, 3, 200, 10);
  EXPECT_FALSE(m.next(t0 + 10ms).has_value());  // A may still deliver something older
  std::int64_t low = 0;
  EXPECT_EQ(m.next(t0 + 100ms, &low), 1);
  EXPECT_EQ(low, 50);  // A went idle at 50: nothing expires beyond it
}

TEST(EventTimeMerger, GivenBackRecordsComeFirstAndRevokedPartitionsReturnTheirs) {
  const auto now = Merger::Clock::now();
  Merger m = two_partitions(now);
  m.add(kA, 1, 100, 10);
  m.add(kA, 2, 200, 10);
  m.add(kB, 3, 150, 10);
  m.end_of_partition(kA);
  m.end_of_partition(kB);
  ASSERT_EQ(m.next(now), 1);
  m.give_back(kA, 1, 100, 10);
  EXPECT_EQ(m.next(now), 1);
  EXPECT_EQ(m.buffered_bytes(), 20u);
  const std::vector<int> revoked = m.revoke(kB);
  EXPECT_EQ(revoked, (std::vector<int>{3}));
  EXPECT_FALSE(m.assigned(kB));
  EXPECT_EQ(m.next(now), 2);
  EXPECT_EQ(m.buffered_bytes(), 0u);
}

TEST(EventTimeMerger, TiesGoToTheFirstPartitionSoTheOrderIsDeterministic) {
  const auto now = Merger::Clock::now();
  Merger m = two_partitions(now, 1000ms, /*b_first=*/true);
  m.add(kB, 2, 100, 1);
  m.add(kA, 1, 100, 1);
  m.end_of_partition(kA);
  m.end_of_partition(kB);
  EXPECT_EQ(m.next(now), 1);
  EXPECT_EQ(m.next(now), 2);
}

}  // namespace
}  // namespace newsflow::daemon
