#include "daemon/pipeline/seen_links.h"

#include <gtest/gtest.h>

#include <random>

namespace newsflow::daemon {
namespace {

// The case the defect was found with: undated items recorded at time 0, then seen again later
// (from the changelog) while the set is over its bound. The old set dropped their places and
// kept them, stayed over its bound, and evicted each new link as soon as it was added.
TEST(SeenLinks, ALinkSeenAgainKeepsItsPlaceWhenTheSetIsFull) {
  SeenLinks seen;
  const std::int64_t horizon = 1000;
  for (int i = 0; i < 3; ++i) seen.remember("undated" + std::to_string(i), 0, 0, 3);
  for (int i = 0; i < 3; ++i) seen.remember("undated" + std::to_string(i), 5000, 0, 3);
  seen.remember("new-a", 5001, horizon, 3);
  seen.remember("new-b", 5002, horizon, 3);
  EXPECT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen.places(), seen.size());
  // The newest links are kept: a new link is not evicted as soon as it is added.
  EXPECT_TRUE(seen.contains("new-a"));
  EXPECT_TRUE(seen.contains("new-b"));
}

// Property: whatever the order of keys and times, every entry has exactly one place, the set
// stays within its bound, and the link just added is always kept.
TEST(SeenLinks, EveryEntryHasOnePlaceAndTheBoundHolds) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    SeenLinks seen;
    const std::size_t bound = 1 + rng() % 20;
    std::int64_t clock = 0;
    for (int step = 0; step < 400; ++step) {
      const std::string key = "k" + std::to_string(rng() % 40);
      // Times jump back and forth: undated (0), late, early, repeated.
      std::int64_t t = 0;
      switch (rng() % 4) {
        case 0:
          t = 0;
          break;
        case 1:
          t = clock;
          break;
        case 2:
          t = clock - static_cast<std::int64_t>(rng() % 500);
          break;
        default:
          t = clock + static_cast<std::int64_t>(rng() % 50);
          break;
      }
      clock += static_cast<std::int64_t>(rng() % 10);
      const std::int64_t horizon = clock - 300;
      seen.remember(key, t, horizon, bound);
      ASSERT_EQ(seen.places(), seen.size()) << "round " << round << " step " << step;
      ASSERT_LE(seen.size(), bound);
      ASSERT_TRUE(seen.contains(key));
    }
  }
}

TEST(SeenLinks, ALoadedSetWithoutPlacesIsRepaired) {
  SeenLinks seen;
  std::deque<std::pair<std::int64_t, std::string>> order{{5, "a"}, {6, "gone"}, {5, "a"}};
  std::unordered_map<std::string, std::int64_t> last{{"a", 5}, {"orphan", 1}};
  seen.load(order, last);
  EXPECT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen.places(), 2u);
  seen.remember("b", 10, 3, 2);  // the orphan, older than the horizon, goes
  EXPECT_FALSE(seen.contains("orphan"));
  EXPECT_TRUE(seen.contains("b"));
  EXPECT_EQ(seen.places(), seen.size());
}

}  // namespace
}  // namespace newsflow::daemon
