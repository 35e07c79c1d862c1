#include "daemon/kafka/record_keys.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace newsflow::daemon {
namespace {

std::vector<std::string> keys_of(const RecordKeys& k) {
  std::vector<std::string> out;
  k.for_each([&out](std::string key) { out.push_back(std::move(key)); });
  return out;
}

TEST(RecordKeys, GivesBackEveryKeyAsItCameInOrder) {
  RecordKeys k;
  k.add(1, "0123456789abcdef");        // 16 hex digits: packed
  k.add(2, "0123456789ABCDEF");        // upper case: kept as it is
  k.add(3, "item-key/with:anything");  // any other key
  k.add(4, "");                        // even none
  k.add(5, "00000000000000ff");
  k.add(6, std::string(70000, 'x'));  // long
  EXPECT_EQ(k.size(), 6u);
  EXPECT_EQ(keys_of(k), (std::vector<std::string>{"0123456789abcdef", "0123456789ABCDEF",
                                                  "item-key/with:anything", "", "00000000000000ff",
                                                  std::string(70000, 'x')}));
}

TEST(RecordKeys, ForgetsTheKeysASnapshotCovers) {
  RecordKeys k;
  k.add(5, "a-key-of-five");
  k.add(3, "0000000000000003");
  k.add(9, "a-key-of-nine");
  k.add(7, "0000000000000007");
  k.erase_through(5);
  EXPECT_EQ(keys_of(k), (std::vector<std::string>{"a-key-of-nine", "0000000000000007"}));
  k.add(10, "ten");
  EXPECT_EQ(keys_of(k), (std::vector<std::string>{"a-key-of-nine", "0000000000000007", "ten"}));
  k.clear();
  EXPECT_TRUE(k.empty());
  EXPECT_TRUE(keys_of(k).empty());
}

// A restore's keys come in `seq` order, one number after the other but for gaps (records of
// inputs not committed) and repeats (one number written twice): kept as runs, a snapshot in the
// middle of one forgets exactly the keys up to it.
TEST(RecordKeys, KeepsTheNumbersOfLongRunsWithTheirGapsAndRepeats) {
  RecordKeys k;
  std::vector<std::pair<std::uint64_t, std::string>> added;
  char id[17];
  for (std::uint64_t seq = 1; seq <= 3000; ++seq) {
    if (seq % 700 == 0) continue;  // a gap
    std::snprintf(id, sizeof id, "%016llx", static_cast<unsigned long long>(seq * 7919));
    added.emplace_back(seq, id);
    if (seq % 1000 == 0) added.emplace_back(seq, "again-" + std::to_string(seq));  // a repeat
  }
  for (const auto& [seq, key] : added) k.add(seq, key);
  EXPECT_EQ(k.size(), added.size());
  for (const std::uint64_t through : {0ull, 5ull, 1000ull, 1400ull, 2999ull, 5000ull}) {
    RecordKeys c = k;
    c.erase_through(through);
    std::vector<std::string> expected;
    for (const auto& [seq, key] : added) {
      if (seq > through) expected.push_back(key);
    }
    EXPECT_EQ(keys_of(c), expected) << through;
  }
}

}  // namespace
}  // namespace newsflow::daemon
