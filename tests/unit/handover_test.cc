#include <gtest/gtest.h>

#include "daemon/kafka/handover_ledger.h"

namespace newsflow::daemon {
namespace {

Position at(int partition, std::int64_t offset) { return {"newsflow.pages", partition, offset}; }

TEST(ParsePosition, ReadsTopicPartitionAndOffset) {
  const auto p = parse_position("newsflow.pages/3/120");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->topic, "newsflow.pages");
  EXPECT_EQ(p->partition, 3);
  EXPECT_EQ(p->offset, 120);
  for (const char* bad :
       {"", "pages", "/3/4", "pages/3", "pages/x/4", "pages/3/", "pages//4", "pages/3/4x"}) {
    EXPECT_FALSE(parse_position(bad)) << bad;
  }
}

TEST(HandoverLedger, AnInputExtractedAgainAfterItsFirstRecordIsARepeat) {
  HandoverLedger ledger;
  // Inputs 10..20 of pages/0 judged from extracted/0 offsets 100..110.
  for (int i = 0; i <= 10; ++i) ledger.judged(at(0, 10 + i), 0, 100 + i);
  // The next owner extracts from the last commit (input 12) again: offsets 111 on.
  EXPECT_TRUE(ledger.repeat(at(0, 12), 0, 111));
  EXPECT_TRUE(ledger.repeat(at(0, 19), 0, 118));
  // The last input judged is judged again (the window repeats its verdicts): a feed's items
  // share its offset, and each must be judged the first time.
  EXPECT_FALSE(ledger.repeat(at(0, 20), 0, 119));
  // Newer inputs, other input partitions, other extracted partitions: not repeats.
  EXPECT_FALSE(ledger.repeat(at(0, 21), 0, 120));
  EXPECT_FALSE(ledger.repeat(at(1, 12), 0, 121));
  EXPECT_FALSE(ledger.repeat(at(0, 12), 1, 121));
}

TEST(HandoverLedger, ABatchSentBackIsJudgedAgainFromWhereItWas) {
  HandoverLedger ledger;
  for (int i = 0; i <= 10; ++i) ledger.judged(at(0, 10 + i), 0, 100 + i);
  // A failed delivery sends inputs 15..20 back: their records lie where they were.
  EXPECT_FALSE(ledger.repeat(at(0, 15), 0, 105));
  // Judged again, they do not move the mark back.
  ledger.judged(at(0, 15), 0, 105);
  EXPECT_TRUE(ledger.repeat(at(0, 19), 0, 200));
}

TEST(HandoverLedger, AFeedsItemsAllCount) {
  HandoverLedger ledger;
  // One input, three items at consecutive offsets: none of them is a repeat of another.
  EXPECT_FALSE(ledger.repeat(at(2, 7), 4, 50));
  ledger.judged(at(2, 7), 4, 50);
  EXPECT_FALSE(ledger.repeat(at(2, 7), 4, 51));
  ledger.judged(at(2, 7), 4, 51);
  EXPECT_FALSE(ledger.repeat(at(2, 7), 4, 52));
  ledger.judged(at(2, 7), 4, 52);
  ledger.judged(at(2, 8), 4, 53);
  // Extracted again later: all three are repeats.
  EXPECT_TRUE(ledger.repeat(at(2, 7), 4, 60));
  EXPECT_EQ(ledger.size(), 1u);
}

TEST(HandoverLedger, ACopyOfAnArticleOfTheLastInputJudgedIsARepeat) {
  HandoverLedger ledger;
  // A feed's two items, the last input judged of its partition.
  ledger.judged(at(0, 7), 0, 50, "item-a");
  ledger.judged(at(0, 7), 0, 51, "item-b");
  // Handed over again later: each item it judged is a repeat...
  EXPECT_TRUE(ledger.repeat(at(0, 7), 0, 60, "item-a"));
  EXPECT_TRUE(ledger.repeat(at(0, 7), 0, 61, "item-b"));
  // ...an item it did not judge is not (the feed grew), nor is one whose article is unknown.
  EXPECT_FALSE(ledger.repeat(at(0, 7), 0, 62, "item-c"));
  EXPECT_FALSE(ledger.repeat(at(0, 7), 0, 62));
  // Its own records read again (a batch sent back) are not repeats.
  EXPECT_FALSE(ledger.repeat(at(0, 7), 0, 50, "item-a"));
  EXPECT_FALSE(ledger.repeat(at(0, 7), 0, 51, "item-b"));
}

}  // namespace
}  // namespace newsflow::daemon
