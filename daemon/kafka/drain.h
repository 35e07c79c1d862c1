#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>

#include "config/config.h"
#include "daemon/kafka/message.h"

namespace newsflow::daemon {

/// After SIGTERM the daemon finishes its batch, commits and exits within
/// `kafka.drain_timeout_ms`: what each wait on the way out may take. Before the stop every wait
/// has its configured limit. Thread-safe (the stop comes from a signal-handling thread).
class Drain {
 public:
  explicit Drain(const config::KafkaConfig& kafka) : kafka_(kafka) {}

  /// The stop: the drain limit starts now.
  void start() {
    deadline_ms_.store(internal::steady_ms() + kafka_.drain_timeout_ms);
    started_.store(true);
  }
  bool started() const { return started_.load(); }
  /// When the drain limit ends (steady clock, `internal::steady_ms`); before the stop, a drain
  /// limit from now.
  std::int64_t deadline_ms() const {
    return started() ? deadline_ms_.load() : internal::steady_ms() + kafka_.drain_timeout_ms;
  }
  /// The drain limit has passed.
  bool over() const { return started() && internal::steady_ms() >= deadline_ms_.load(); }

  /// A producer flush: `kafka.flush_timeout_ms`, after the stop no longer than what is left.
  int flush_timeout_ms() const {
    if (!started()) return kafka_.flush_timeout_ms;
    return static_cast<int>(std::clamp<std::int64_t>(left_ms(), 0, kafka_.flush_timeout_ms));
  }

  /// A consumer's close (`close_consumer`): after the stop, what is left of the drain limit, and
  /// at least 5 s. A consumer closes in a few milliseconds while its coordinator answers; with
  /// the brokers gone the process's consumers together add 15 s at most to the drain limit
  /// (20 s), within systemd's and Kubernetes' 45 s.
  std::chrono::milliseconds close_timeout() const {
    constexpr std::int64_t kLeast = 5000;
    return std::chrono::milliseconds(
        std::max<std::int64_t>(kLeast, started() ? left_ms() : kafka_.drain_timeout_ms));
  }

 private:
  std::int64_t left_ms() const { return deadline_ms_.load() - internal::steady_ms(); }

  const config::KafkaConfig& kafka_;
  std::atomic<std::int64_t> deadline_ms_{0};  // steady clock
  std::atomic<bool> started_{false};
};

}  // namespace newsflow::daemon
