#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace newsflow::daemon {

/// Work on a thread of its own, in the order it was handed over: the pushing thread goes on
/// while `work(item)` runs there for each item it pushed, one after the other, as a loop on
/// either thread would have run it. Items travel in batches (a handover an item cost more than
/// the work on it). With `keep`, worked items come back in the order pushed (`pop`); without,
/// they are destroyed there. At most `most` batches wait (a push waits for room; 0: no bound).
/// One thread pushes and pops; the working thread is started by the first batch and joined by
/// the destructor, once it has worked every batch handed over.
template <typename Item>
class OrderedWork {
 public:
  OrderedWork(std::function<void(Item&)> work, bool keep, std::size_t batch = 256,
              std::size_t most = 0)
      : work_(std::move(work)), keep_(keep), batch_(batch), most_(most) {}
  OrderedWork(const OrderedWork&) = delete;
  OrderedWork& operator=(const OrderedWork&) = delete;
  ~OrderedWork() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    if (worker_.joinable()) worker_.join();
  }

  /// The next item; a full batch goes to the working thread.
  void push(Item item) {
    if (!open_) open_ = std::make_unique<Batch>();
    open_->items.push_back(std::move(item));
    ++in_flight_;
    if (open_->items.size() >= batch_) flush();
  }

  /// The items pushed since the last batch went are handed over too.
  void flush() {
    if (!open_ || open_->items.empty()) return;
    if (!worker_.joinable()) worker_ = std::thread([this] { run(); });
    {
      std::unique_lock lock(mu_);
      if (most_ > 0) done_.wait(lock, [this] { return unworked() < most_; });
      batches_.push_back(std::move(open_));
    }
    wake_.notify_all();
  }

  /// With `keep`: the next item in the order pushed, worked, when its batch is (`wait`: waits
  /// for it; the items pushed since the last batch went are handed over first). Nothing when
  /// no item handed over is left, or (without `wait`) its batch is not worked yet.
  std::optional<Item> pop(bool wait) {
    if (!current_ || next_ == current_->items.size()) {
      if (wait && !pending()) flush();
      std::unique_lock lock(mu_);
      if (wait) {
        done_.wait(lock, [this] { return batches_.empty() || batches_.front()->worked; });
      }
      if (batches_.empty() || !batches_.front()->worked) return std::nullopt;
      current_ = std::move(batches_.front());
      batches_.pop_front();
      next_ = 0;
    }
    --in_flight_;
    return std::move(current_->items[next_++]);
  }

  /// Hands the open batch over and returns once every item pushed is worked (without `keep`:
  /// gone too).
  void wait() {
    flush();
    std::unique_lock lock(mu_);
    done_.wait(lock, [this] { return unworked() == 0; });
    if (!keep_) in_flight_ = 0;
  }

  /// With `keep`: items pushed and not popped yet; without: pushed and not known to be worked.
  std::size_t in_flight() const { return in_flight_; }
  /// No batch handed over is left to pop or to work (nothing will be worked until the next
  /// `flush`).
  bool idle() { return !pending(); }

 private:
  struct Batch {
    std::vector<Item> items;
    bool worked = false;  // guarded by mu_ once handed over
  };

  // Whether a batch handed over is still to be popped (or, without `keep`, worked).
  bool pending() {
    std::lock_guard lock(mu_);
    return !batches_.empty();
  }
  // Batches handed over that are not worked yet (mu_ held).
  std::size_t unworked() const {
    std::size_t n = 0;
    for (const auto& b : batches_) n += !b->worked;
    return n;
  }

  void run() {
    for (;;) {
      Batch* batch = nullptr;
      {
        std::unique_lock lock(mu_);
        // The next is the first not worked (those worked are popped from the front meanwhile,
        // so it is looked for again at every wake).
        std::size_t at = 0;
        wake_.wait(lock, [&] {
          at = 0;
          while (at < batches_.size() && batches_[at]->worked) ++at;
          return stop_ || at < batches_.size();
        });
        if (at >= batches_.size()) return;  // stopped with nothing left
        // Stays where it is until worked: only worked batches are popped.
        batch = batches_[at].get();
      }
      for (Item& item : batch->items) work_(item);
      std::unique_ptr<Batch> gone;
      {
        std::lock_guard lock(mu_);
        batch->worked = true;
        // Without `keep`, the front batch is this one (they are worked in order and none is
        // popped): destroyed here, outside the lock.
        if (!keep_) {
          gone = std::move(batches_.front());
          batches_.pop_front();
        }
      }
      done_.notify_all();
    }
  }

  const std::function<void(Item&)> work_;
  const bool keep_;
  const std::size_t batch_;
  const std::size_t most_;
  std::unique_ptr<Batch> open_;     // being filled by the pushing thread
  std::unique_ptr<Batch> current_;  // being popped
  std::size_t next_ = 0;            // in current_
  std::size_t in_flight_ = 0;

  std::mutex mu_;
  std::condition_variable wake_;  // a batch to work, or stop
  std::condition_variable done_;  // a batch worked
  std::deque<std::unique_ptr<Batch>> batches_;
  bool stop_ = false;
  std::thread worker_;
};

}  // namespace newsflow::daemon
