#pragma once

#include <signal.h>

#include <atomic>
#include <thread>

#include "daemon/ops/log.h"

namespace newsflow::daemon {

/// Takes SIGINT/SIGTERM (blocked everywhere by `block_stop_signals`, service.h) on its own
/// thread and calls `on_stop` once; the destructor stops watching and joins the thread.
class StopSignalWatcher {
 public:
  template <typename F>
  explicit StopSignalWatcher(F on_stop)
      : thread_([this, on_stop] {
          sigset_t set;
          sigemptyset(&set);
          sigaddset(&set, SIGINT);
          sigaddset(&set, SIGTERM);
          const timespec tick{0, 200'000'000};
          while (!done_.load()) {
            const int sig = sigtimedwait(&set, nullptr, &tick);
            if (sig == SIGINT || sig == SIGTERM) {
              log::info("signal_received", {{"signal", sig == SIGINT ? "SIGINT" : "SIGTERM"}});
              on_stop();
              return;
            }
          }
        }) {}
  ~StopSignalWatcher() {
    done_ = true;
    thread_.join();
  }

 private:
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace newsflow::daemon
