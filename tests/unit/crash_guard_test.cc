// CrashGuard's notes across "restarts" (a new guard over the same directory): an input in flight
// when the process died gets one crash, an input in flight at two deaths gets two (dead-lettered),
// an input a fatal signal named gets two at once, and a batch that ended leaves nothing.
#include "daemon/kafka/crash_guard.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace newsflow::daemon {
namespace {

class CrashGuardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() /
            ("crash-guard-test-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(CrashGuardTest, AnInputInFlightAtTwoDeathsHasTwoCrashes) {
  const std::vector<CrashGuard::Input> batch{{"pages", 0, 7}, {"pages", 1, 3}};
  {
    CrashGuard first(dir_);
    EXPECT_EQ(first.load(), 0u);
    ASSERT_TRUE(first.begin(batch));
    // Killed here: no `end`.
  }
  {
    CrashGuard second(dir_);
    EXPECT_EQ(second.load(), 2u);
    EXPECT_EQ(second.crashes("pages", 0, 7), 1);
    EXPECT_EQ(second.crashes("pages", 1, 3), 1);
    EXPECT_EQ(second.crashes("pages", 0, 8), 0);
    // Processed alone, the first input kills it again.
    ASSERT_TRUE(second.begin({batch[0]}));
  }
  CrashGuard third(dir_);
  EXPECT_EQ(third.load(), 1u);
  EXPECT_EQ(third.crashes("pages", 0, 7), 2);
  EXPECT_EQ(third.crashes("pages", 1, 3), 0);  // not in flight at the second death
  EXPECT_EQ(third.crash_detail("pages", 0, 7),
            "the process died twice while processing this input");
}

TEST_F(CrashGuardTest, ABatchThatEndedLeavesNothing) {
  {
    CrashGuard first(dir_);
    first.load();
    ASSERT_TRUE(first.begin({{"pages", 0, 7}}));
    first.end();
  }
  CrashGuard second(dir_);
  EXPECT_EQ(second.load(), 0u);
  EXPECT_EQ(second.crashes("pages", 0, 7), 0);
}

TEST_F(CrashGuardTest, AnInputNamedByAFatalSignalIsDeadLetteredAtOnceAndStaysNamed) {
  std::filesystem::create_directories(dir_);
  {
    // What the fatal-signal handler writes: the input the crashing thread was processing.
    std::ofstream crashed(dir_ + "/crashed.jsonl");
    crashed << CrashGuard::scope_note("feeds", 2, 40) << "\n"
            << "not json\n";
  }
  {
    CrashGuard guard(dir_);
    EXPECT_EQ(guard.load(), 1u);
    EXPECT_EQ(guard.crashes("feeds", 2, 40), 2);
    EXPECT_EQ(guard.crash_detail("feeds", 2, 40),
              "the process died of a fatal signal while processing this input");
  }
  // Read again at the next start (a kill before its dead letter was out loses nothing).
  CrashGuard again(dir_);
  again.load();
  EXPECT_EQ(again.crashes("feeds", 2, 40), 2);
}

TEST_F(CrashGuardTest, WithoutCountingKillsOnlyFatalSignalsCount) {
  {
    CrashGuard guard(dir_, /*count_kills=*/false);
    guard.load();
    EXPECT_FALSE(guard.enabled());
    EXPECT_TRUE(guard.begin({{"pages", 0, 7}}));  // nothing written
  }
  CrashGuard next(dir_, /*count_kills=*/false);
  EXPECT_EQ(next.load(), 0u);
  EXPECT_EQ(next.crashes("pages", 0, 7), 0);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/inflight.jsonl"));
}

TEST(CrashGuard, WithoutADirectoryNothingIsKept) {
  CrashGuard guard("");
  EXPECT_EQ(guard.load(), 0u);
  EXPECT_FALSE(guard.enabled());
  EXPECT_TRUE(guard.begin({{"pages", 0, 7}}));
  guard.end();
  EXPECT_EQ(guard.crashes("pages", 0, 7), 0);
}

}  // namespace
}  // namespace newsflow::daemon
