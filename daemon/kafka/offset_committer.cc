#include "daemon/kafka/offset_committer.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>

namespace newsflow::daemon {

namespace {

void raise_to(OffsetCommitter::Offsets& offsets, const OffsetCommitter::Partition& p,
              std::int64_t offset) {
  auto& o = offsets[p];
  o = std::max(o, offset);
}

}  // namespace

void OffsetCommitter::acknowledged(const Partition& p, std::int64_t next) {
  raise_to(pending_, p, next);
  ++pending_messages_;
}

bool OffsetCommitter::due(std::chrono::milliseconds interval, bool now_please,
                          Clock::time_point now) const {
  // An asynchronous commit on its way is awaited when asked to (a revoke, a stop): sent again
  // synchronously.
  if (pending_.empty()) return now_please && in_flight_;
  return now_please || now - last_attempt_ >= std::max(interval, backoff_);
}

OffsetCommitter::Result OffsetCommitter::commit(bool sync, Clock::time_point now) {
  if (pending_.empty() && !(sync && in_flight_)) return {};
  // What waits goes with the next commit once the one on its way is answered (or has gone
  // unanswered for 10 s: the coordinator request timed out).
  const bool unanswered = in_flight_ && now - last_attempt_ > std::chrono::seconds(10);
  if (!sync && in_flight_ && !unanswered) return {};
  last_attempt_ = now;
  Offsets commit = pending_;
  if (sync || unanswered) {
    // An asynchronous commit still unanswered may fail: its offsets go along.
    for (const auto& [p, offset] : committing_) {
      if (owned_(p)) raise_to(commit, p, offset);
    }
  }
  if (commit.empty()) return {};  // only partitions gone to other members
  Result result;
  result.partitions = commit.size();
  if (const int err = commit_(commit, sync, result.error); err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    // The offsets wait for the next try, a moment later, and before the process exits.
    result.ok = false;
    failed();
    return result;
  }
  if (!sync) {
    committing_ = std::move(commit);
    committing_messages_ = pending_messages_ + (unanswered ? committing_messages_ : 0);
    in_flight_ = true;
  } else {
    for (const auto& [p, offset] : commit) raise_to(committed_high_, p, offset);
    result.committed = true;
    result.messages = pending_messages_ + committing_messages_;
    // This one went further than the asynchronous one on its way, whatever its answer.
    committing_.clear();
    committing_messages_ = 0;
    in_flight_ = false;
    backoff_ = std::chrono::milliseconds(0);
  }
  pending_.clear();
  pending_messages_ = 0;
  return result;
}

std::optional<OffsetCommitter::Result> OffsetCommitter::answered(int err, const Offsets& offsets,
                                                                 const std::string& error) {
  if (!in_flight_ || offsets != committing_) return std::nullopt;
  in_flight_ = false;
  Result result;
  result.partitions = committing_.size();
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR || err == RD_KAFKA_RESP_ERR__NO_OFFSET) {
    for (const auto& [p, offset] : committing_) raise_to(committed_high_, p, offset);
    result.committed = true;
    result.messages = committing_messages_;
    backoff_ = std::chrono::milliseconds(0);
  } else {
    // Back to be committed again, unless a later commit went further or the partition went to
    // another member (whose commits are its own).
    for (const auto& [p, offset] : committing_) {
      if (!owned_(p) || committed(p) >= offset) continue;
      raise_to(pending_, p, offset);
    }
    if (!pending_.empty()) pending_messages_ += committing_messages_;
    result.ok = false;
    result.error = error;
    failed();
  }
  committing_.clear();
  committing_messages_ = 0;
  return result;
}

void OffsetCommitter::revoked(const Partition& p) {
  pending_.erase(p);
  if (pending_.empty()) pending_messages_ = 0;
}

std::int64_t OffsetCommitter::committed(const Partition& p) const {
  const auto it = committed_high_.find(p);
  return it == committed_high_.end() ? -1 : it->second;
}

void OffsetCommitter::failed() {
  backoff_ = std::min(std::max(backoff_ * 2, std::chrono::milliseconds(100)),
                      std::chrono::milliseconds(1000));
}

}  // namespace newsflow::daemon
