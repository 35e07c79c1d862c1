#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "config/config.h"
#include "daemon/kafka/changelog_tail.h"
#include "daemon/kafka/kafka.h"
#include "tl/expected.hpp"

typedef struct rd_kafka_s rd_kafka_t;

namespace newsflow::daemon {

class Metrics;
class Pipeline;
class StateStore;

/// `--role dedup` with `topics.dedup_lease`: which of the dedup processes judges. The lease is
/// partition 0 of that topic, in a consumer group of its own; the member it is assigned to owns
/// the window. The others are standbys: they follow the state changelog with a tail of it, so
/// their window and stories stay the owner's, and take over when the lease comes to them
/// (catch up with the changelog, then take every extracted partition). An owner whose lease
/// went (revoked, or lost with its session) is fenced: it publishes and commits nothing more,
/// and exits to start again as a standby.
///
/// The run loop owns it (not thread-safe), except `standby()`.
class DedupLease {
 public:
  /// Takes every extracted partition for this process (on the input consumer `group`): the
  /// number of partitions, or why not.
  using TakePartitions = std::function<tl::expected<int, std::string>()>;

  DedupLease(const config::Config& config, Metrics& metrics, const Pipeline& pipeline,
             StateStore& store);
  ~DedupLease();
  DedupLease(const DedupLease&) = delete;
  DedupLease& operator=(const DedupLease&) = delete;

  /// After the restore: opens the changelog tail and joins the lease's group, as a standby.
  /// `input` is the input consumer (its group's commits say which records are state);
  /// `producer`, when transactional, is initialized at the takeover (fencing the old owner's);
  /// `take` runs at the takeover.
  tl::expected<void, std::string> start(const std::string& bootstrap, rd_kafka_t* input,
                                        rd_kafka_t* transactional_producer, TakePartitions take);

  /// Whether this process takes part (it was started).
  bool active() const { return lease_ != nullptr; }
  /// A standby following the changelog. Thread-safe.
  bool standby() const { return standby_.load(); }
  /// The owner: it judges.
  bool owner() const { return owner_; }

  /// Once a turn of the loop: serves the lease's group; a standby applies the changelog, and
  /// takes over when the lease comes to it. False when the process must stop: the lease was
  /// lost, or a takeover failed.
  bool serve();
  /// An owner whose lease is gone (revoked or lost; the group polled now): it must publish and
  /// commit nothing more, even in at_least_once, where no transaction fences it.
  bool lost();
  /// As `lost`, without polling (safe inside a delivery report).
  bool fenced() const { return lease_ && owner_ && revoked_; }

  /// Stops following and leaves the lease's group within `limit`: a standby takes over at once.
  void close(std::chrono::milliseconds limit);

 private:
  static void on_rebalance(rd_kafka_t* rk, int err, void* partitions, void* opaque);
  bool take_over();

  const config::Config& config_;
  Metrics& metrics_;
  const Pipeline& pipeline_;
  StateStore& store_;
  rd_kafka_t* input_ = nullptr;  // the input consumer
  rd_kafka_t* transactional_producer_ = nullptr;
  TakePartitions take_;

  KafkaHandle lease_;
  bool cooperative_ = false;
  std::unique_ptr<ChangelogTail> tail_;  // a standby's
  bool owner_ = false;
  bool granted_ = false;  // set by the rebalance callback
  bool revoked_ = false;
  std::atomic<bool> standby_{false};
  std::chrono::steady_clock::time_point last_log_{};
};

}  // namespace newsflow::daemon
