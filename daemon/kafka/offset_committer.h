#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>

namespace newsflow::daemon {

/// The input offsets of acknowledged batches on their way to the group coordinator, in
/// at_least_once mode: those waiting to be sent (new, or sent and failed), the one asynchronous
/// commit on its way, and the highest offset known committed per partition. It never commits
/// for a partition this consumer no longer owns (its offsets would move the new owner's
/// position), never sends an offset lower than one it already committed, and after a failure
/// waits 100 ms, doubling up to a second, before the next try (a commit per loop turn would
/// spin while the group rebalances).
///
/// The commit itself is a function (the consumer's `rd_kafka_commit`; a fake in the tests), and
/// so is "owned"; the answer of an asynchronous commit comes back through `answered`. Not
/// thread-safe: the loop's thread (where librdkafka serves the commit callback) uses it.
class OffsetCommitter {
 public:
  using Partition = std::pair<std::string, int>;
  using Offsets = std::map<Partition, std::int64_t>;
  using Clock = std::chrono::steady_clock;
  /// Sends `offsets` (synchronously when `sync`: its answer is the result). The result is an
  /// `rd_kafka_resp_err_t` (0: no error) with its text in `error`.
  using CommitFn = std::function<int(const Offsets& offsets, bool sync, std::string& error)>;
  /// Whether this consumer owns the partition now.
  using OwnedFn = std::function<bool(const Partition&)>;

  OffsetCommitter(CommitFn commit, OwnedFn owned)
      : commit_(std::move(commit)), owned_(std::move(owned)) {}

  /// An acknowledged input: `next` (its offset + 1) of `p` may be committed.
  void acknowledged(const Partition& p, std::int64_t next);

  /// What happened to a commit (`commit`, or an asynchronous one's answer).
  struct Result {
    bool ok = true;
    bool committed = false;    ///< the offsets are known committed (not only sent)
    std::size_t messages = 0;  ///< the inputs it committed
    std::string error;         ///< why not (not ok)
    std::size_t partitions = 0;
  };

  /// Whether a commit should be sent now: something waits, and `interval` (or the back-off
  /// after a failure, when longer) has passed since the last try, or at once when `now_please`
  /// (then also for an asynchronous commit still on its way: a revoke or a stop awaits it).
  bool due(std::chrono::milliseconds interval, bool now_please, Clock::time_point now) const;

  /// Sends what waits. `sync` (on revoke and on stop) waits for the answer and takes along the
  /// offsets of an asynchronous commit still unanswered; otherwise at most one asynchronous
  /// commit is on its way (what waits meanwhile goes with the next, or once the one on its way
  /// has gone unanswered for 10 s). `sync` with only an asynchronous commit on its way sends
  /// its offsets again and waits for that answer. Nothing waiting, or (not `sync`) an
  /// asynchronous commit on its way: ok with no messages.
  Result commit(bool sync, Clock::time_point now);

  /// The answer of an asynchronous commit: `offsets` as the callback names them, `err` (0 or
  /// an `rd_kafka_resp_err_t`; `_NO_OFFSET` counts as success). Nothing when the answer is not
  /// for the commit on its way (a synchronous commit's answer names other offsets). A failed
  /// one's offsets wait again, unless a later commit went further or the partition is gone.
  std::optional<Result> answered(int err, const Offsets& offsets, const std::string& error);

  /// `p` was revoked: what waits for it is its new owner's to commit.
  void revoked(const Partition& p);

  /// Nothing waits and nothing is on its way.
  bool idle() const { return pending_.empty() && !in_flight_; }
  bool waiting() const { return !pending_.empty(); }
  /// An asynchronous commit is on its way, unanswered.
  bool in_flight() const { return in_flight_; }
  /// The wait before the next try after failures (0 after a success).
  std::chrono::milliseconds backoff() const { return backoff_; }
  /// The highest offset committed for `p` (-1: none known).
  std::int64_t committed(const Partition& p) const;

 private:
  void failed();

  CommitFn commit_;
  OwnedFn owned_;
  Offsets pending_;
  std::size_t pending_messages_ = 0;
  // The asynchronous commit on its way: its offsets (back to `pending_` if it fails) and the
  // inputs they stand for.
  Offsets committing_;
  std::size_t committing_messages_ = 0;
  bool in_flight_ = false;
  Offsets committed_high_;
  Clock::time_point last_attempt_{};
  std::chrono::milliseconds backoff_{0};
};

}  // namespace newsflow::daemon
