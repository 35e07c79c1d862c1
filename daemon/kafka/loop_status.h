#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>

#include "daemon/ops/notify.h"
#include "daemon/ops/status_page.h"

namespace newsflow::daemon {

class Metrics;
class Pipeline;

/// Totals since start, readable from any thread.
struct Progress {
  std::atomic<std::uint64_t> consumed{0};
  std::atomic<std::uint64_t> articles{0};
  std::atomic<std::uint64_t> duplicates{0};
  std::atomic<std::uint64_t> dead_letters{0};
  std::atomic<std::uint64_t> stories{0};
  std::atomic<std::uint64_t> committed{0};  ///< inputs whose offsets were committed
};

/// What the run loop shows of itself: the status page's snapshot (the window, the stories, the
/// totals and their samples, the last dead letters), systemd's notifications (ready, the status
/// line, the watchdog) and whether the loop still turns. The loop calls `tick` and `refresh`;
/// `snapshot`, `live` and `dead_letter` are thread-safe.
class LoopStatus {
 public:
  LoopStatus(Metrics& metrics, const Pipeline& pipeline, const Progress& progress);

  /// Once per turn of the loop: the watchdog ping comes from here, so a pipeline that stops
  /// turning (a hung flush, a stuck extraction) stops the pings. `ready`: the daemon is ready
  /// (systemd hears it once), with `partitions` assigned.
  void tick(bool ready, int partitions);
  /// The status page's snapshot, about once a second (`force`: now).
  void refresh(bool ready, bool force);
  /// The status page's list of the last dead letters.
  void dead_letter(StatusSnapshot::DeadLetter entry);

  /// False when the loop has started but not gone round for `stall_limit`.
  bool live(std::chrono::milliseconds stall_limit) const;
  StatusSnapshot snapshot() const;
  SystemdNotifier& notifier() { return notifier_; }

 private:
  Metrics& metrics_;
  const Pipeline& pipeline_;
  const Progress& progress_;
  SystemdNotifier notifier_;
  std::atomic<std::int64_t> last_tick_ms_{0};  // steady clock; 0 before the loop
  bool notified_ready_ = false;
  std::chrono::steady_clock::time_point last_status_{};
  std::chrono::steady_clock::time_point last_sample_{};
  std::chrono::steady_clock::time_point last_notify_status_{};
  mutable std::mutex mu_;
  StatusSnapshot status_;  // guarded by mu_
};

}  // namespace newsflow::daemon
