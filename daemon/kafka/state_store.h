#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config.h"
#include "daemon/kafka/changelog_tail.h"
#include "daemon/kafka/handover_ledger.h"
#include "daemon/kafka/kafka.h"
#include "daemon/kafka/record_keys.h"
#include "daemon/kafka/seq_merge.h"
#include "tl/expected.hpp"

typedef struct rd_kafka_message_s rd_kafka_message_t;
typedef struct rd_kafka_s rd_kafka_t;

namespace newsflow::daemon {

class Metrics;
class Pipeline;
class RecordCollector;
class SystemdNotifier;

/// The judging state as the state changelog (`topics.state`) holds it, and what this process
/// knows of that changelog: the restore at start (the changelog's newest snapshot and the records
/// after it, or the articles topic when there is no changelog yet), the keys of the records
/// written since the last snapshot (tombstoned by the next one), the snapshots, where each
/// changelog partition was left (a tail goes on from there), the input offsets the group
/// committed (a record of an input not committed is not state yet) and what the dedup role
/// judged of each input partition (`HandoverLedger`).
///
/// Restore (restore.cc), snapshots (snapshot.cc), the rest (state_store.cc). It changes the
/// pipeline's state only by restoring it; the run loop owns it (not thread-safe).
class StateStore {
 public:
  using Clock = std::chrono::steady_clock;

  /// `stop` ends a restore early; `notifier` hears of a long restore (systemd's start timeout).
  StateStore(const config::Config& config, Metrics& metrics, Pipeline& pipeline,
             SystemdNotifier& notifier, const std::atomic<bool>& stop);

  /// Rebuilds the window, the document frequencies, the boilerplate filter and the stories:
  /// from the changelog when it holds anything (only records of inputs `group` committed), else
  /// from the articles topic (every partition from its start to its current end; the window
  /// keeps what is recent enough). Returns the number of articles put back.
  tl::expected<std::size_t, std::string> restore(const std::string& bootstrap, rd_kafka_t* group);

  /// Reads again the input offsets the consumer group of `group` (this role's consumer) has
  /// committed.
  tl::expected<void, std::string> refresh_committed(rd_kafka_t* group);
  /// How long ago they were read.
  Clock::duration committed_age() const { return Clock::now() - committed_at_; }
  /// Whether a state record (its `input` header) is state yet (`admit_state_record`).
  Admission admit(std::string_view input_header, bool final) const;
  Admission admit(const rd_kafka_message_t* state_record, bool final) const;

  /// The dedup role judged the input `source_header` names from the extracted record
  /// `input_header` names (both "topic/partition/offset"), article `id`; other roles keep no
  /// ledger.
  void note_judged(std::string_view source_header, std::string_view input_header,
                   std::string_view id);
  void note_judged(const rd_kafka_message_t* state_record);
  /// The dedup role judged input `source` from the extracted record at `partition`/`offset`,
  /// article `id`.
  void note_judged(const Position& source, int partition, std::int64_t offset,
                   std::string_view id) {
    ledger_.judged(source, partition, offset, id);
  }
  const HandoverLedger& ledger() const { return ledger_; }

  /// The changelog now holds the record `key` of article `seq` (written or read): the next
  /// snapshot tombstones it.
  void note_record(std::uint64_t seq, std::string_view key) { keys_.add(seq, key); }
  /// A record another process wrote, applied to the pipeline (a standby).
  void apply(const dedup::ArticleState& state);
  /// A record with this `seq` was read, applied or not: the pipeline's next comes after it.
  void reserve_seq(std::uint64_t seq);

  /// A tail of the changelog from where the restore left it (`ChangelogTail`), on a consumer of
  /// its own. The dedup role's applies only records of committed inputs and notes them in the
  /// ledger; an extractor's reads every record (it learns the links published).
  tl::expected<std::unique_ptr<ChangelogTail>, std::string> open_tail(
      const std::string& bootstrap, std::chrono::milliseconds hold);
  /// A standby: the owner's newest snapshot, read whole by `tail`, covers the records up to it.
  void note_snapshot_read(const ChangelogTail& tail);

  /// The last record applied by the restore.
  std::uint64_t last_seq() const { return last_seq_; }

  /// Whether `kafka.state_snapshot_articles` articles were judged since the last snapshot (or
  /// since a try that had to wait, a few batches ago).
  bool snapshot_due() const;
  /// A snapshot could not be written now (outputs or commits still on their way): it is tried
  /// again a few batches later, not at every turn of the loop.
  void snapshot_later();
  /// Writes the whole state in chunks with `collector`'s producer (in a transaction when
  /// `transactional`), then tombstones what the snapshot covers. Each acknowledgement may take
  /// `timeout_ms`; `tick` is called while chunks wait for room in the producer. False when it
  /// failed (nothing is lost: the records stay, and it is tried again later).
  bool write_snapshot(RecordCollector& collector, bool transactional, int timeout_ms,
                      const std::function<void()>& tick);

  /// The newest complete snapshot: its `seq`, chunk count and bytes. (No default member
  /// initializers: clang then takes a nested struct as not default constructible inside the
  /// class, and `std::optional::emplace()` fails; value-initialized instead.)
  struct FoundSnapshot {
    std::uint64_t seq;
    std::uint64_t chunks;
    std::string bytes;
  };
  /// A state record as the restore holds it between reading and applying it.
  struct Record {
    std::uint64_t seq = 0;
    std::int32_t partition = 0;
    std::int64_t offset = 0;
    std::string key;
    std::string value;  // "" once a complete snapshot read before it covers its `seq`
    std::string input;  // its `input` and `source` headers
    std::string source;
  };
  /// What one read of the whole changelog found: the newest complete snapshot (the keys of the
  /// chunks of any other go to `stale_snapshot_keys_`) and, unless they outgrew the restore's
  /// buffer, every state record in the order of its partition, so the changelog is read once.
  struct Read {
    std::optional<FoundSnapshot> snapshot;
    bool buffered = true;              // false: the records must be read again
    std::uint64_t stripped_seq = 0;    // records up to this `seq` are held without their values
    SeqMerge<Record> records;          // by partition, handed out in `seq` order
    std::map<int, std::int64_t> ends;  // partition -> its end offset
    std::size_t skipped = 0;           // tombstones and records of another version
    std::uint64_t loaded_seq = 0;      // a snapshot loaded while the records streamed (0: none)
  };

  /// One restore from the changelog: its reads, the merge by `seq`, the records decoded ahead
  /// and applied (changelog_restore.h).
  class ChangelogRestore;

  /// The first read of a restore: every (partition, first offset) of the changelog to the end
  /// each partition had at least when the read began, counted per partition (one written to
  /// meanwhile reports its end again and again). With `streaming`, records that outgrow the
  /// buffer are not dropped to be read again: from then on `streaming` applies them as the read
  /// goes (a changelog without a snapshot for them, read once), loading a snapshot as soon as its
  /// last chunk is read. Public for its tests.
  tl::expected<Read, std::string> read_changelog(
      const std::string& bootstrap, const std::vector<std::pair<int, std::int64_t>>& partitions,
      ChangelogRestore* streaming = nullptr);

 private:
  /// What the first read holds while it goes on (changelog_restore.h).
  class FirstRead;

  /// `write_snapshot`'s steps. The snapshot being written: the `seq` it covers, its chunks and
  /// bytes sent so far.
  struct SnapshotWrite {
    std::uint64_t seq = 0;
    std::uint64_t chunks = 0;
    std::uint64_t bytes = 0;
  };
  /// Logs the failure, leaves the chunks sent to the next snapshot to delete and puts the next
  /// try an interval later: false.
  bool snapshot_failed(RecordCollector& collector, const SnapshotWrite& w,
                       const std::string& error);
  /// The state saved in chunks, sent as they are made: false when one was not queued.
  bool send_chunks(RecordCollector& collector, SnapshotWrite& w, const std::function<void()>& tick);
  /// Everything the producer holds acknowledged within `timeout_ms`, without an error.
  static bool flushed(RecordCollector& collector, int timeout_ms);
  /// What a snapshot covers: the keys of the records since the last one, that one's chunks and
  /// those of older snapshots.
  std::vector<std::string> snapshot_covered_keys() const;
  /// Tombstones `keys`: false when one was not queued.
  bool send_tombstones(RecordCollector& collector, const std::vector<std::string>& keys);
  /// The snapshot `w` stands: it is the last one; what it covers is forgotten when `deleted`,
  /// else left to the next one to delete.
  void snapshot_written(RecordCollector& collector, const SnapshotWrite& w, bool deleted);

  /// A consumer for reading a topic from its start (no group membership, no commits).
  tl::expected<KafkaHandle, std::string> reader(const std::string& bootstrap) const;
  /// Loads the snapshot `read` found, if any: the `seq` it covers (0: none loaded; one that does
  /// not load leaves the records it covered to be read again).
  std::uint64_t load_snapshot(Read& read);
  /// Loads the snapshot `seq` of `chunks` chunks: `seq`, or 0 when it does not load (its chunks
  /// are stale then).
  std::uint64_t load_snapshot(std::uint64_t seq, std::uint64_t chunks, std::string_view bytes);
  /// The restore from the changelog with the reader `c`: the number of articles put back, or
  /// nothing when the changelog holds no records.
  tl::expected<std::optional<std::size_t>, std::string> restore_changelog(
      rd_kafka_t* c, const std::string& bootstrap);
  tl::expected<std::size_t, std::string> restore_articles(rd_kafka_t* c);
  /// Says the restore is progress, not a hung start (at most every 10 s).
  void still_restoring(const std::string& what, Clock::time_point& last);
  void count_window();

  const config::Config& config_;
  Metrics& metrics_;
  Pipeline& pipeline_;
  SystemdNotifier& notifier_;
  const std::atomic<bool>& stop_;
  const std::vector<std::string> inputs_;

  std::map<int, std::int64_t> positions_;  // changelog partition -> where the restore left it
  std::uint64_t last_seq_ = 0;
  CommittedOffsets committed_;
  Clock::time_point committed_at_{};
  HandoverLedger ledger_;

  // The last snapshot's `seq` and chunk count, the keys of the records written or read since it
  // (tombstoned by the next one), and chunks of older snapshots found by the restore or left by
  // a failed one.
  std::uint64_t snapshot_seq_ = 0;
  std::uint64_t snapshot_chunks_ = 0;
  std::uint64_t snapshot_retry_seq_ = 0;  // after a failed or postponed try: the next one's seq
  RecordKeys keys_;
  std::vector<std::string> stale_snapshot_keys_;
};

}  // namespace newsflow::daemon
