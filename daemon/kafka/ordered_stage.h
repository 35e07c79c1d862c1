#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>

namespace newsflow::daemon {

/// A second ordered stage beside the calling thread: a thread of its own runs `fn(i)` for the
/// indices of a job in order, each once the caller has released it, while the caller goes on
/// with the first stage of the next index. The daemon judges an article against the window
/// while the one before it joins its story. `start`, `release` and `wait` are for one thread
/// (the daemon's loop).
class OrderedStage {
 public:
  OrderedStage();
  ~OrderedStage();
  OrderedStage(const OrderedStage&) = delete;
  OrderedStage& operator=(const OrderedStage&) = delete;

  /// A new job: `fn(i)` for each index as it is released, one at a time, in order. Waits for
  /// the previous job first. `fn` must not throw.
  void start(std::function<void(std::size_t)> fn);
  /// Indices [0, n) may run (n never goes down within a job).
  void release(std::size_t n);
  /// Returns when `fn` has run for every index released.
  void wait();

 private:
  void loop();
  std::mutex mu_;
  std::condition_variable work_;  // an index released, or stopping
  std::condition_variable done_;  // every released index done
  std::function<void(std::size_t)> fn_;
  std::size_t released_ = 0, next_ = 0;
  bool asleep_ = false;  // the thread waits on `work_`: `release` wakes it
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace newsflow::daemon
