#include "daemon/kafka/record_keys.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace newsflow::daemon
