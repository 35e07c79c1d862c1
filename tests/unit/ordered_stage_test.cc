#include "daemon/kafka/ordered_stage.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace newsflow::daemon {
namespace {

TEST(OrderedStage, RunsEveryReleasedIndexOnceInOrderJobAfterJob) {
  OrderedStage stage;
  for (std::size_t n : {0u, 1u, 7u, 500u}) {
    std::vector<std::size_t> ran;  // written by the stage's thread only, one index at a time
    std::atomic<int> inside{0}, overlapped{0};
    stage.start([&](std::size_t i) {
      if (++inside > 1) ++overlapped;
      ran.push_back(i);
      --inside;
    });
    // Released one at a time and in steps, as the daemon's loop judges.
    for (std::size_t i = 0; i < n; i += 3) stage.release(std::min(n, i + 3));
    stage.release(n / 2);  // going back releases nothing again
    stage.wait();
    ASSERT_EQ(ran.size(), n);
    for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(ran[i], i);
    EXPECT_EQ(overlapped.load(), 0);
  }
}

TEST(OrderedStage, NothingRunsBeforeItIsReleasedAndTheCallerGoesOn) {
  OrderedStage stage;
  std::atomic<std::size_t> done{0};
  std::atomic<bool> go{false};
  stage.start([&](std::size_t i) {
    // The first index waits until the caller, back from `release`, says it went on.
    while (i == 0 && !go.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    done = i + 1;
  });
  stage.release(2);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(done.load(), 0u);  // still at index 0, and the caller is here
  go = true;
  stage.wait();
  EXPECT_EQ(done.load(), 2u);
  // Index 2 is not released: wait() returned without it, and it never runs.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(done.load(), 2u);
}

TEST(OrderedStage, RunsOnAThreadOfItsOwn) {
  OrderedStage stage;
  std::thread::id ran_on;
  stage.start([&](std::size_t) { ran_on = std::this_thread::get_id(); });
  stage.release(1);
  stage.wait();
  EXPECT_NE(ran_on, std::thread::id());
  EXPECT_NE(ran_on, std::this_thread::get_id());
}

}  // namespace
}  // namespace newsflow::daemon
