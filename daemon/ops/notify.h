#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace newsflow::daemon {

/// The systemd service-manager protocol (sd_notify): READY=1, STOPPING=1, STATUS= lines and
/// WATCHDOG=1. Every call is a no-op when the process was not started by systemd with
/// `Type=notify` (no NOTIFY_SOCKET). `alive` is meant to be called from the processing loop
/// itself, so a stuck pipeline stops the pings and systemd's watchdog restarts the unit.
class SystemdNotifier {
 public:
  SystemdNotifier();

  void ready();
  void stopping();
  void status(const std::string& text);
  /// Sends WATCHDOG=1 at most every quarter of WatchdogSec (nothing if no watchdog is set).
  void alive();
  /// Asks systemd for `usec` more of start-up time (a long window restore).
  void extend_timeout(std::uint64_t usec);

  /// The watchdog interval systemd asked for, or zero.
  std::chrono::microseconds watchdog_interval() const { return watchdog_; }

 private:
  std::chrono::microseconds watchdog_{0};
  std::chrono::steady_clock::time_point last_ping_{};
};

}  // namespace newsflow::daemon
