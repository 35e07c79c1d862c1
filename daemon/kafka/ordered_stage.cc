#include "daemon/kafka/ordered_stage.h"

#include <utility>

namespace newsflow::daemon {

OrderedStage::OrderedStage() : thread_([this] { loop(); }) {}

OrderedStage::~OrderedStage() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  work_.notify_one();
  thread_.join();
}

void OrderedStage::start(std::function<void(std::size_t)> fn) {
  wait();
  std::lock_guard lock(mu_);
  fn_ = std::move(fn);
  released_ = 0;
  next_ = 0;
}

void OrderedStage::release(std::size_t n) {
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    if (n <= released_) return;
    released_ = n;
    wake = asleep_;
  }
  // A thread at work finds the new indices when it looks again: no wake-up (a system call
  // each) per index.
  if (wake) work_.notify_one();
}

void OrderedStage::wait() {
  std::unique_lock lock(mu_);
  done_.wait(lock, [this] { return next_ == released_; });
}

void OrderedStage::loop() {
  std::unique_lock lock(mu_);
  while (true) {
    if (next_ == released_) {
      if (stopping_) return;
      asleep_ = true;
      work_.wait(lock, [this] { return stopping_ || next_ < released_; });
      asleep_ = false;
      continue;
    }
    // Everything released so far, in order, without the lock.
    const std::size_t end = released_;
    while (next_ < end) {
      const std::size_t i = next_;
      lock.unlock();
      fn_(i);  // fn_ is not replaced before every released index is done
      lock.lock();
      ++next_;
    }
    if (next_ == released_) done_.notify_all();
  }
}

}  // namespace newsflow::daemon
