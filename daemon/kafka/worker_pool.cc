#include "daemon/kafka/worker_pool.h"

#include <algorithm>
#include <utility>

namespace newsflow::daemon {

WorkerPool::WorkerPool(std::size_t threads) {
  for (std::size_t i = 0; i < std::max<std::size_t>(1, threads); ++i) {
    threads_.emplace_back([this] { loop(); });
  }
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  work_.notify_all();
  for (auto& t : threads_) t.join();
}

void WorkerPool::start(std::size_t n, std::function<void(std::size_t)> fn) {
  wait();
  {
    std::lock_guard lock(mu_);
    fn_ = std::move(fn);
    n_ = n;
    next_ = 0;
    finished_ = 0;
  }
  work_.notify_all();
}

void WorkerPool::wait() {
  std::unique_lock lock(mu_);
  while (next_ < n_) {  // the caller lends a hand with what is left
    const std::size_t i = next_++;
    lock.unlock();
    fn_(i);
    lock.lock();
    if (++finished_ == n_) done_.notify_all();
  }
  done_.wait(lock, [this] { return finished_ == n_; });
}

void WorkerPool::loop() {
  std::unique_lock lock(mu_);
  while (true) {
    work_.wait(lock, [this] { return stopping_ || next_ < n_; });
    if (next_ >= n_) return;  // stopping, and nothing left to take
    const std::size_t i = next_++;
    lock.unlock();
    fn_(i);  // fn_ is not replaced before every index of its job is finished
    lock.lock();
    if (++finished_ == n_) done_.notify_all();
  }
}

}  // namespace newsflow::daemon
