#include "daemon/ops/notify.h"

#include <systemd/sd-daemon.h>

namespace newsflow::daemon {

SystemdNotifier::SystemdNotifier() {
  std::uint64_t usec = 0;
  if (sd_watchdog_enabled(/*unset_environment=*/0, &usec) > 0) {
    watchdog_ = std::chrono::microseconds(usec);
  }
}

void SystemdNotifier::ready() { sd_notify(0, "READY=1"); }

void SystemdNotifier::stopping() { sd_notify(0, "STOPPING=1"); }

void SystemdNotifier::status(const std::string& text) { sd_notify(0, ("STATUS=" + text).c_str()); }

void SystemdNotifier::alive() {
  if (watchdog_.count() == 0) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_ping_ < watchdog_ / 4) return;
  last_ping_ = now;
  sd_notify(0, "WATCHDOG=1");
}

void SystemdNotifier::extend_timeout(std::uint64_t usec) {
  sd_notify(0, ("EXTEND_TIMEOUT_USEC=" + std::to_string(usec)).c_str());
}

}  // namespace newsflow::daemon
