#pragma once

// The restore's apply from the state changelog (restore.cc's, private to it): the records of
// every partition merged by `seq`, decoded ahead on a thread of their own, and applied in the
// order the articles were judged.

#include <librdkafka/rdkafka.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "daemon/kafka/decode_ahead.h"
#include "daemon/kafka/ordered_work.h"
#include "daemon/kafka/seq_merge.h"
#include "daemon/kafka/state_store.h"
#include "daemon/pipeline/pipeline.h"
#include "dedup/state.h"

namespace newsflow::daemon {

/// A partition of a topic to read, with its offsets.
struct PartitionRange {
  int partition;
  std::int64_t low, high;
};

/// One restore from the changelog: the records of every partition merged by `seq`, decoded on a
/// thread of their own a few batches ahead (`DecodeAhead`), and applied in the order the
/// articles were judged, those of inputs not committed left out: the window's half of each on
/// this thread, the story book's half on a thread of its own, a few batches behind
/// (`Pipeline::restore_window`, `restore_stories`). The records come from the first
/// read (`StateStore::read_changelog`: held, or streamed when they outgrow its buffer) or from a
/// second read on the reader `c`.
class StateStore::ChangelogRestore {
 public:
  ChangelogRestore(StateStore& store, rd_kafka_t* c, std::vector<PartitionRange> ranges);

  // While the first read goes on:
  /// From now on the records are applied as they come (a window empty so far makes its bands
  /// at the end).
  void stream();
  /// Applies what the merge hands out now.
  void step(SeqMerge<Record>& records) { pump(records, false); }
  /// A snapshot whose last chunk the streaming read just read: loaded now, unless a record after
  /// it was applied already (its chunks come before every later record in each partition, so
  /// none is: one that was would be undone), or it does not load. True when loaded.
  bool load_now(std::uint64_t seq, std::uint64_t chunks, const std::string& bytes);

  // Once it is over:
  /// Its snapshot loaded (unless the records streamed, which loaded theirs as they went), and
  /// the records it held handed out, or read a second time.
  void begin(Read read);
  /// The second read: moves records from its queues into the merge, a few hundred a partition.
  void fill();
  /// Applies what the merge has in `seq` order (waiting for the decoder once every partition
  /// is read); false when it had nothing.
  bool apply_ready() { return pump(read_.records, read_.records.all_ended()); }
  /// Every partition read to its end and applied.
  bool done() const { return read_.records.done() && decoder_.in_flight() == 0; }
  bool reached_end() const { return read_.records.all_ended(); }
  /// The second read: serves the consumer (and anything fetched before a partition got its own
  /// queue).
  void serve();
  std::size_t restored() const { return restored_; }
  /// The story book's half done, the window's bands made, the queues released; a standby's
  /// tail goes on from the first record left to it. Logs the restore, begun at `t0`.
  void finish(Clock::time_point t0);

 private:
  // Records decoded ahead of the one applied: four batches of 256.
  static constexpr std::size_t kDecodeAhead = 1024;

  // Hands the records the merge gives now to the decoder and applies those decoded, in order;
  // `drain`: waits for the decoder rather than leave a record decoding. True when it applied any.
  bool pump(SeqMerge<Record>& records, bool drain);
  // The records did not fit in the first read's buffer: each partition read again from its
  // start, into a queue of its own.
  void read_again();
  // A message of the second read.
  void file(rd_kafka_message_t* m);
  // One record, in `seq` order, and its value decoded: applied, covered by the snapshot, or
  // left out.
  void apply(Record& r, std::optional<dedup::ArticleState>& state);

  StateStore& store_;
  rd_kafka_t* c_;
  const std::string& topic_;
  const std::vector<PartitionRange> ranges_;
  // Records are keyed by article, so they spread over the partitions; each partition holds them
  // in the order they were written. Merged by `seq` across the partitions, they are applied in
  // the order the articles were judged. They come from the first read, or from a second read
  // when they did not fit in its buffer (and were not streamed).
  Read read_;
  bool streamed_ = false;
  bool again_ = false;
  std::uint64_t covered_seq_ = 0;
  StatePool states_;  // decoded, applied, given back to be decoded into again
  DecodeAhead<Record> decoder_{256, &states_};
  // The story book's half of the records applied (nothing else touches the book meanwhile:
  // waited for before a snapshot is loaded and at the end).
  struct Placed {
    dedup::ArticleState state;
    Pipeline::WindowRestored window;
  };
  OrderedWork<Placed> stories_;
  std::map<int, rd_kafka_queue_t*> queues_;  // the second read's, by partition
  std::size_t restored_ = 0, skipped_ = 0, uncommitted_ = 0, covered_ = 0;
  std::optional<std::uint64_t> applied_seq_;
  std::uint64_t applied_through_ = 0;  // the highest `seq` applied
  std::set<std::string> applied_ids_;  // of the records applied under `applied_seq_`
  const bool standby_role_;
  bool deferred_ = false;
  std::map<int, std::int64_t> defer_from_;  // partition -> first record left to the tail
};

/// What the first read of a restore (`StateStore::read_changelog`) holds while it goes on: the
/// records, the snapshots' chunks, the partitions read to their end; records that outgrow the
/// buffer are streamed (`streaming`, when given) or dropped to be read again.
class StateStore::FirstRead {
 public:
  FirstRead(StateStore& store, const std::vector<std::pair<int, std::int64_t>>& partitions,
            ChangelogRestore* streaming);
  /// A message read (its end of partition, a chunk, a record, a tombstone).
  void file(const rd_kafka_message_t* m);
  /// While the records stream: applies what they give now.
  void step();
  /// Every partition read to the end it had at least when the read began (counted per
  /// partition: one written to meanwhile reports its end again and again).
  bool ended() const { return ended_.size() >= partitions_; }
  /// The read: the newest complete snapshot (unless the records streamed, which loaded theirs
  /// on the way), the chunks of any other to be deleted with the next snapshot.
  Read finish();

 private:
  // A snapshot complete: the records it covers are kept without their values (their keys and
  // headers are still needed: tombstoned by the next snapshot, judged inputs of their sources).
  void covered_by(std::uint64_t seq);
  void chunk(std::string_view value);
  void record(const rd_kafka_message_t* m, std::uint64_t seq);

  StateStore& store_;
  const std::size_t partitions_;
  ChangelogRestore* const streaming_;
  Read read_;
  std::size_t buffered_bytes_ = 0;
  bool stream_ = false;  // the records are applied as they come (`streaming_`)
  // seq -> (chunk count once its last chunk is read, chunks by index)
  std::map<std::uint64_t, std::pair<std::uint64_t, std::map<std::uint64_t, std::string>>> seen_;
  std::set<int> ended_;
};

}  // namespace newsflow::daemon
