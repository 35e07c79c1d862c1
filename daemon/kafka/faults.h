#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace newsflow::daemon {

/// Faults that the fault tests inject into the real daemon, read from the environment once
/// (`from_environment`; none of these variables is set in production, where every answer is
/// "no fault"):
/// - `NEWSFLOW_FAULT_CRASH_MARKER`: a worker that meets this text in an input aborts the
///   process, as a crashing parser would (the crash-loop test).
/// - `NEWSFLOW_FAULT_LOSE_STATE_MARKER`: the state record of the first input holding this text
///   is never written and no offsets are committed from then on (as when a batch's records
///   reached some brokers only and commits fail); the process is killed once the batch of the
///   next input holding it is acknowledged (the partial-batch test; at_least_once only).
/// - `NEWSFLOW_FAULT_NO_COMMIT=1`: no offset commit ever reaches the broker (as when a
///   rebalance keeps failing them), so the next owner of a partition reads it all again (the
///   re-extraction test).
class InjectedFaults {
 public:
  InjectedFaults() = default;
  InjectedFaults(std::string crash_marker, std::string lose_state_marker, bool no_commit)
      : crash_marker_(std::move(crash_marker)),
        lose_state_marker_(std::move(lose_state_marker)),
        no_commit_(no_commit) {}
  static InjectedFaults from_environment();

  /// Whether processing the input `payload` crashes the process.
  bool crashes_on(std::string_view payload) const {
    return !crash_marker_.empty() && payload.find(crash_marker_) != std::string_view::npos;
  }
  /// For each judged output of the input `payload`, in order: whether its state record is lost
  /// (the first marked input's). A marked input after it arms the kill.
  bool loses_state(std::string_view payload) {
    if (lose_state_marker_.empty() || payload.find(lose_state_marker_) == std::string_view::npos) {
      return false;
    }
    if (lost_state_) {
      kill_armed_ = true;
      return false;
    }
    lost_state_ = true;
    return true;
  }
  /// Whether the process is to be killed once the batch being judged is acknowledged.
  bool kill_armed() const { return kill_armed_; }
  /// No offsets may be committed: a state record was lost, or commits are blocked.
  bool commits_lost() const { return lost_state_; }
  bool commits_blocked() const { return no_commit_; }
  /// What is judged is not the committed state (no snapshot may be written).
  bool state_unreliable() const { return lost_state_ || no_commit_; }

 private:
  std::string crash_marker_;
  std::string lose_state_marker_;
  bool no_commit_ = false;
  bool lost_state_ = false;
  bool kill_armed_ = false;
};

}  // namespace newsflow::daemon
