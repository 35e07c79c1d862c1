#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/kafka/handover_ledger.h"
#include "daemon/kafka/kafka.h"
#include "dedup/state.h"
#include "tl/expected.hpp"

typedef struct rd_kafka_message_s rd_kafka_message_t;

namespace newsflow::daemon {

/// The offsets a consumer group committed (the next offset to read), per input partition.
using CommittedOffsets = std::map<std::pair<std::string, int>, std::int64_t>;

/// A state record's header naming the input it was judged from: "topic/partition/offset" (a
/// topic name holds no '/').
inline constexpr const char* kInputHeader = "input";
/// An extracted record's header naming the input it was extracted from (and, copied, the state
/// record's of the article judged from it): "topic/partition/offset".
inline constexpr const char* kSourceHeader = "source";
std::string input_header(std::string_view topic, int partition, std::int64_t offset);

/// What to do with a state record: apply it, wait (its input is not committed yet: the owner
/// may still be publishing its batch), or drop it (its input will be judged again).
enum class Admission { kApply, kWait, kDrop };

/// A state record is part of the state only once its input's offset is committed: the records of
/// a batch go to several partitions, so a later article's record may be durable while an earlier
/// one's is not, and the batch is judged again after a crash. `input` is the record's `input`
/// header (empty: a record from before the header, applied), `inputs` the topics whose commits
/// `committed` holds (a record of another topic is applied); `final`: the commits cannot move any
/// more (a restore, a takeover), so an uncommitted record is dropped rather than waited for.
Admission admit_state_record(std::string_view input, const std::vector<std::string>& inputs,
                             const CommittedOffsets& committed, bool final);

/// A hot standby's view of the state changelog: reads every partition of `topic` on from where
/// the restore ended and applies the records in the order the owner judged the articles
/// (`seq`), so the standby's window and stories stay those of the owner, a few milliseconds
/// behind. Records come from several partitions: one whose predecessor has not arrived waits up
/// to `hold` for it (a predecessor may also be gone for good: compacted away, or never
/// acknowledged), then goes. Not thread-safe: the run loop owns it.
class ChangelogTail {
 public:
  using Clock = std::chrono::steady_clock;
  using Apply = std::function<void(const dedup::ArticleState&)>;
  /// Whether a record may be applied (`final`: in a catch-up); by default every record is.
  using Admit = std::function<Admission(const rd_kafka_message_t*, bool final)>;

  /// `consumer`: a consumer of its own (it is assigned, never subscribed); `positions`: the
  /// next offset of each partition (partitions missing start at their beginning); `last_seq`:
  /// the last record the restore applied.
  /// At most `max_pending` records wait to be applied (`kMaxPending` by default): beyond, the
  /// partitions pause (the broker keeps the rest) until half of them are applied.
  static tl::expected<std::unique_ptr<ChangelogTail>, std::string> open(
      KafkaHandle consumer, const std::string& topic, const std::map<int, std::int64_t>& positions,
      std::uint64_t last_seq, std::chrono::milliseconds hold, Admit admit = {},
      std::size_t max_pending = kMaxPending);
  static constexpr std::size_t kMaxPending = 50000;
  ~ChangelogTail();
  ChangelogTail(const ChangelogTail&) = delete;
  ChangelogTail& operator=(const ChangelogTail&) = delete;

  /// Applies what has arrived, in `seq` order; returns the number of records applied. A record
  /// that belongs before one already applied goes at once (`late`).
  std::size_t poll(const Apply& apply);

  /// Reads every partition up to its end as of now and applies all of it in `seq` order (the
  /// owner is gone: nothing older can arrive any more). Returns the records applied.
  tl::expected<std::size_t, std::string> catch_up(const Apply& apply,
                                                  std::chrono::milliseconds timeout);

  std::uint64_t last_seq() const { return last_seq_; }
  /// The highest `seq` read, applied or not (records wait for their input's commit, and those
  /// of inputs never committed are dropped): a new owner numbers its records after it.
  std::uint64_t seen_seq() const { return std::max(seen_seq_, last_seq_); }
  /// Records read and not yet applied.
  std::size_t pending() const { return buffer_.size(); }
  /// Records the partitions hold beyond what was read (from the consumer's statistics of the
  /// fetch positions; refreshed by `poll`).
  std::int64_t behind() const { return behind_; }
  /// Records applied after one with a higher `seq`.
  std::uint64_t late() const { return late_; }
  /// Records dropped because their input was never committed (judged again by the new owner).
  std::uint64_t dropped() const { return dropped_; }
  /// The newest snapshot of the judging state read whole (every chunk): its `seq` and chunk
  /// count (0, 0 before one). A standby needs no snapshot (it applies every record), only to
  /// know which records one covers.
  std::pair<std::uint64_t, std::uint64_t> snapshot() const {
    return {snapshot_seq_, snapshot_chunks_};
  }

 private:
  ChangelogTail(KafkaHandle consumer, std::string topic, std::uint64_t last_seq,
                std::chrono::milliseconds hold, Admit admit)
      : consumer_(std::move(consumer)),
        topic_(std::move(topic)),
        last_seq_(last_seq),
        hold_(hold),
        admit_(std::move(admit)) {}
  // Files one polled message (and takes it over).
  void file(rd_kafka_message_t* m);
  std::size_t apply_ready(const Apply& apply, bool everything);
  // Pauses or resumes every partition (backpressure on the buffer).
  void pause(bool paused);

  struct Held {
    rd_kafka_message_t* msg;
    Clock::time_point arrived;
  };
  KafkaHandle consumer_;
  std::string topic_;
  std::uint64_t last_seq_;
  std::chrono::milliseconds hold_;
  Admit admit_;
  // By seq, then article id: two articles never share a seq now, but records written before
  // that was so can (a crash's re-judge that differed), and both count.
  std::map<std::pair<std::uint64_t, std::string>, Held> buffer_;
  std::uint64_t seen_seq_ = 0;
  std::size_t max_pending_ = kMaxPending;
  bool paused_ = false;
  // seq -> (chunk count once its last chunk is read, chunks read)
  std::map<std::uint64_t, std::pair<std::uint64_t, std::set<std::uint64_t>>> snapshot_parts_;
  std::uint64_t snapshot_seq_ = 0, snapshot_chunks_ = 0;
  std::map<int, std::int64_t> position_;  // partition -> next offset to read
  std::int64_t behind_ = 0;
  std::uint64_t late_ = 0;
  std::uint64_t dropped_ = 0;
  Clock::time_point last_lag_check_{};
};

}  // namespace newsflow::daemon
