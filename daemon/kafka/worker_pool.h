#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace newsflow::daemon {

/// Threads that live as long as the pool and run one job at a time: `start` hands the indices
/// [0, n) out to them in order, each to one thread, and returns at once; `wait` returns when
/// every index is done. The caller goes on meanwhile: the daemon judges one batch while the
/// next is extracted. `start` and `wait` are for one thread (the daemon's loop).
class WorkerPool {
 public:
  explicit WorkerPool(std::size_t threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  /// Runs `fn(i)` for every i in [0, n) on the pool's threads. The previous job must be done
  /// (`wait`). `fn` must not throw.
  void start(std::size_t n, std::function<void(std::size_t)> fn);
  /// Returns when the job `start` began is done (at once when there is none); the calling
  /// thread runs indices no thread has taken yet meanwhile.
  void wait();
  std::size_t threads() const { return threads_.size(); }

 private:
  void loop();
  std::mutex mu_;
  std::condition_variable work_;  // an index to take, or stopping
  std::condition_variable done_;  // the job is done
  std::function<void(std::size_t)> fn_;
  std::size_t n_ = 0, next_ = 0, finished_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace newsflow::daemon
