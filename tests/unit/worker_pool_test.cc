#include "daemon/kafka/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace newsflow::daemon {
namespace {

TEST(WorkerPool, RunsEveryIndexOnceJobAfterJob) {
  WorkerPool pool(3);
  for (std::size_t n : {0u, 1u, 7u, 500u}) {
    std::vector<std::atomic<int>> runs(n);
    pool.start(n, [&](std::size_t i) { runs[i].fetch_add(1); });
    pool.wait();
    for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(runs[i].load(), 1) << "job of " << n << ", " << i;
  }
}

TEST(WorkerPool, TheCallerGoesOnWhileTheJobRuns) {
  WorkerPool pool(2);
  std::atomic<bool> caller_went_on{false};
  std::atomic<int> seen_before_release{0};
  pool.start(4, [&](std::size_t) {
    // Blocks until the caller, back from `start`, says it went on.
    while (!caller_went_on.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    seen_before_release.fetch_add(1);
  });
  EXPECT_EQ(seen_before_release.load(), 0);
  caller_went_on = true;
  pool.wait();
  EXPECT_EQ(seen_before_release.load(), 4);
}

TEST(WorkerPool, UsesItsThreadsTogether) {
  WorkerPool pool(2);
  std::atomic<int> inside{0}, most{0};
  pool.start(2, [&](std::size_t) {
    const int now = ++inside;
    int seen = most.load();
    while (now > seen && !most.compare_exchange_weak(seen, now)) {
    }
    // Both wait for each other (for at most 5 s): possible only on two threads.
    for (int i = 0; i < 5000 && inside.load() < 2 && most.load() < 2; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    --inside;
  });
  pool.wait();
  EXPECT_EQ(most.load(), 2);
}

}  // namespace
}  // namespace newsflow::daemon
