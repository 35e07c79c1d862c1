#include "daemon/kafka/changelog_restore.h"

#include <algorithm>
#include <utility>

#include "daemon/kafka/message.h"
#include "daemon/kafka/roles.h"
#include "daemon/ops/log.h"
#include "daemon/pipeline/pipeline.h"

namespace newsflow::daemon {

using namespace internal;

namespace {

// The chunks of a snapshot, in order, as one (taken out of `parts`).
std::string join_chunks(std::map<std::uint64_t, std::string>& parts) {
  std::size_t size = 0;
  for (const auto& [i, bytes] : parts) size += bytes.size();
  std::string out;
  out.reserve(size);
  for (auto& [i, bytes] : parts) out += std::exchange(bytes, {});
  return out;
}

}  // namespace

StateStore::FirstRead::FirstRead(StateStore& store,
                                 const std::vector<std::pair<int, std::int64_t>>& partitions,
                                 ChangelogRestore* streaming)
    : store_(store), partitions_(partitions.size()), streaming_(streaming) {
  read_.buffered = store.config_.kafka.restore_buffer_bytes > 0;
  for (const auto& [p, low] : partitions) read_.records.add_lane(p);
}

void StateStore::FirstRead::file(const rd_kafka_message_t* m) {
  const std::string_view key = m->err ? std::string_view() : key_of(m);
  if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
    ended_.insert(m->partition);
    read_.ends[m->partition] = m->offset;
    read_.records.end(m->partition);
  } else if (m->err) {
    log::warn("window_restore_error", {{"error", rd_kafka_message_errstr(m)}});
  } else if (m->payload && key.size() > 9 && key.substr(0, 9) == "snapshot/") {
    chunk(payload(m));
  } else if (const auto seq = m->payload ? dedup::state_seq(payload(m)) : std::nullopt; !seq) {
    ++read_.skipped;  // a tombstone or a record of another version
  } else if (read_.buffered) {
    record(m, *seq);
  }
}

void StateStore::FirstRead::step() {
  if (stream_) streaming_->step(read_.records);
}

void StateStore::FirstRead::covered_by(std::uint64_t seq) {
  if (seq <= read_.stripped_seq) return;
  read_.stripped_seq = seq;
  read_.records.for_each([&](std::uint64_t s, Record& r) {
    if (s > seq || r.value.empty()) return;
    buffered_bytes_ -= r.value.size();
    std::string().swap(r.value);
  });
}

void StateStore::FirstRead::chunk(std::string_view value) {
  const auto chunk = dedup::decode_snapshot_chunk(value);
  if (!chunk) return;
  auto& [count, parts] = seen_[chunk->seq];
  if (chunk->last) count = chunk->index + 1;
  parts[chunk->index] = std::string(chunk->bytes);
  if (count == 0 || parts.size() != count) return;
  if (!stream_) {
    covered_by(chunk->seq);
  } else if (chunk->seq > read_.loaded_seq &&
             streaming_->load_now(chunk->seq, count, join_chunks(parts))) {
    read_.loaded_seq = chunk->seq;
    covered_by(chunk->seq);
  }
}

void StateStore::FirstRead::record(const rd_kafka_message_t* m, std::uint64_t seq) {
  Record r{seq,
           m->partition,
           m->offset,
           std::string(key_of(m)),
           seq <= read_.stripped_seq ? std::string() : std::string(payload(m)),
           std::string(header_of(m, kInputHeader)),
           std::string(header_of(m, kSourceHeader))};
  buffered_bytes_ += r.value.size() + r.key.size() + r.input.size() + r.source.size();
  read_.records.add(m->partition, std::move(r), seq);
  if (stream_ ||
      buffered_bytes_ <= static_cast<std::size_t>(store_.config_.kafka.restore_buffer_bytes)) {
    return;
  }
  // More than a snapshot interval's records (compaction behind, or no snapshots). Streamed:
  // applied from now on as the read goes (read once). Else read again after the snapshot is
  // loaded rather than held.
  if (streaming_) {
    stream_ = true;
    streaming_->stream();
  } else {
    read_.buffered = false;
    read_.records.clear();
  }
}

StateStore::Read StateStore::FirstRead::finish() {
  for (auto it = seen_.rbegin(); it != seen_.rend(); ++it) {
    auto& [count, parts] = it->second;
    const bool complete = count > 0 && parts.size() == count;
    // Loaded as the records streamed: its chunks stay (the next snapshot deletes them).
    if (complete && it->first == read_.loaded_seq) continue;
    if (complete && !stream_ && !read_.snapshot) {
      auto& found = read_.snapshot.emplace();
      found.seq = it->first;
      found.chunks = count;
      found.bytes = join_chunks(parts);
      continue;
    }
    // Older snapshots (and one never finished, or one streaming could not load): deleted with
    // the next one.
    for (const auto& [i, bytes] : parts) {
      store_.stale_snapshot_keys_.push_back(dedup::snapshot_key(it->first, i));
    }
  }
  return std::move(read_);
}

StateStore::ChangelogRestore::ChangelogRestore(StateStore& store, rd_kafka_t* c,
                                               std::vector<PartitionRange> ranges)
    : store_(store),
      c_(c),
      topic_(store.config_.topics.state),
      ranges_(std::move(ranges)),
      stories_(
          [&pipeline = store.pipeline_, &states = states_](Placed& p) {
            pipeline.restore_stories(p.state, p.window);
            states.give(std::move(p.state));
          },
          /*keep=*/false, 256, /*most=*/8),
      standby_role_(role_of(store.config_).leased()) {}

void StateStore::ChangelogRestore::stream() {
  streamed_ = true;
  store_.pipeline_.begin_restore();
  log::info("state_records_streamed",
            {{"reason",
              "the records outgrew kafka.restore_buffer_bytes: applied as they are "
              "read, a snapshot loaded when its last chunk is read"}});
}

bool StateStore::ChangelogRestore::load_now(std::uint64_t seq, std::uint64_t chunks,
                                            const std::string& bytes) {
  if (seq < applied_through_) {
    log::warn("state_snapshot_passed", {{"seq", std::to_string(seq)},
                                        {"applied_through", std::to_string(applied_through_)}});
    return false;
  }
  stories_.wait();  // the book is the snapshot's from here
  if (store_.load_snapshot(seq, chunks, bytes) == 0) return false;
  covered_seq_ = seq;
  restored_ = 0;                     // what it covers is the snapshot's
  store_.pipeline_.begin_restore();  // (the window holds the snapshot's now: one at a time)
  return true;
}

void StateStore::ChangelogRestore::begin(Read read) {
  read_ = std::move(read);
  skipped_ += read_.skipped;
  if (!streamed_) {
    covered_seq_ = store_.load_snapshot(read_);
    // A window that holds nothing yet makes its bands once, at the end.
    store_.pipeline_.begin_restore();
  }
  again_ = !read_.buffered;
  if (again_) {
    skipped_ = 0;  // the second read counts them again
    read_.records = SeqMerge<Record>();
    for (const auto& r : ranges_) read_.records.add_lane(r.partition);
    read_again();
  }
}

void StateStore::ChangelogRestore::fill() {
  if (!again_) return;
  for (const auto& r : ranges_) {
    const int p = r.partition;
    while (read_.records.size(p) < 256 && !read_.records.ended(p)) {
      rd_kafka_message_t* m = rd_kafka_consume_queue(queues_[p], 0);
      if (!m) break;
      file(m);
    }
  }
}

void StateStore::ChangelogRestore::serve() {
  if (!again_) return;
  if (rd_kafka_message_t* m = rd_kafka_consumer_poll(c_, 5)) file(m);
}

void StateStore::ChangelogRestore::finish(Clock::time_point t0) {
  stories_.wait();
  store_.pipeline_.end_restore();
  for (const auto& r : ranges_) {
    // Where a standby's tail goes on: what the restore did not read.
    if (const auto end = read_.ends.find(r.partition); end != read_.ends.end() && !again_) {
      store_.positions_[r.partition] = std::max(store_.positions_[r.partition], end->second);
    }
  }
  for (auto& [p, q] : queues_) rd_kafka_queue_destroy(q);
  queues_.clear();
  for (const auto& [p, from] : defer_from_) {
    store_.positions_[p] = std::min(store_.positions_[p], from);
  }
  store_.count_window();
  log::info("window_restored", {{"from", topic_},
                                {"articles", std::to_string(restored_)},
                                {"skipped", std::to_string(skipped_)},
                                {"uncommitted", std::to_string(uncommitted_)},
                                {"in_snapshot", std::to_string(covered_)},
                                {"read_twice", again_ ? "true" : "false"},
                                {"streamed", streamed_ ? "true" : "false"},
                                {"held", std::to_string(store_.pipeline_.window().size())},
                                {"seconds", std::to_string(seconds_since(t0))}});
}

bool StateStore::ChangelogRestore::pump(SeqMerge<Record>& records, bool drain) {
  bool progressed = false;
  for (;;) {
    bool dry = false;
    while (decoder_.in_flight() < kDecodeAhead) {
      auto r = records.next();
      if (!r) {
        dry = true;
        break;
      }
      decoder_.push(std::move(*r));
    }
    // The merge gives nothing more now: the batch begun goes once the decoder has nothing
    // else (a batch a record would cost more than decoding it).
    if (dry && (drain || decoder_.idle())) decoder_.flush();
    bool applied = false;
    while (auto item = decoder_.pop(false)) {
      apply(item->record, item->state);
      if (item->state) states_.give(std::move(*item->state));
      applied = true;
    }
    if (!applied && drain && decoder_.in_flight() > 0) {
      if (auto item = decoder_.pop(true)) {
        apply(item->record, item->state);
        if (item->state) states_.give(std::move(*item->state));
        applied = true;
      }
    }
    if (!applied) return progressed;
    progressed = true;
  }
}

void StateStore::ChangelogRestore::read_again() {
  rd_kafka_topic_partition_list_t* list =
      rd_kafka_topic_partition_list_new(static_cast<int>(ranges_.size()));
  for (const auto& r : ranges_) {
    rd_kafka_topic_partition_list_add(list, topic_.c_str(), r.partition)->offset = r.low;
    rd_kafka_queue_t* q = rd_kafka_queue_get_partition(c_, topic_.c_str(), r.partition);
    rd_kafka_queue_forward(q, nullptr);  // before the assignment starts fetching
    queues_[r.partition] = q;
  }
  rd_kafka_assign(c_, list);
  rd_kafka_topic_partition_list_destroy(list);
}

void StateStore::ChangelogRestore::file(rd_kafka_message_t* m) {
  if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
    // Once per partition: one written to meanwhile reports its end again.
    if (!read_.records.ended(m->partition)) {
      read_.records.end(m->partition);
      // Where a standby's tail goes on: what the restore did not read.
      store_.positions_[m->partition] = std::max(store_.positions_[m->partition], m->offset);
    }
  } else if (m->err) {
    log::warn("window_restore_error", {{"error", rd_kafka_message_errstr(m)}});
  } else if (const auto seq = m->payload ? dedup::state_seq(payload(m)) : std::nullopt; !seq) {
    store_.positions_[m->partition] = m->offset + 1;
    // A tombstone or a record of another version (a snapshot's chunk was read before).
    if (!key_of(m).starts_with("snapshot/")) ++skipped_;
  } else {
    store_.positions_[m->partition] = m->offset + 1;
    read_.records.add(
        m->partition,
        Record{*seq, m->partition, m->offset, std::string(key_of(m)), std::string(payload(m)),
               std::string(header_of(m, kInputHeader)), std::string(header_of(m, kSourceHeader))},
        *seq);
  }
  rd_kafka_message_destroy(m);
}

void StateStore::ChangelogRestore::apply(Record& r, std::optional<dedup::ArticleState>& state) {
  // Read, applied or not: a record of an input not committed is judged again under a new
  // number, not its own (its article may differ now, and two would share the number).
  store_.pipeline_.reserve_seq(r.seq);
  if (deferred_ || store_.admit(r.input, true) != Admission::kApply) {
    ++uncommitted_;
    // This process judges them again; a standby leaves them, and every later record (they
    // belong to later batches), to its changelog tail, which waits for their commits: the
    // owner is likely alive and about to commit them.
    if (standby_role_) {
      deferred_ = true;
      auto [from, first] = defer_from_.try_emplace(r.partition, r.offset);
      if (!first) from->second = std::min(from->second, r.offset);
    }
  } else if (r.seq <= covered_seq_) {
    ++covered_;  // in the snapshot
    store_.note_judged(r.source, r.input, r.key);
    store_.keys_.add(r.seq, r.key);
  } else if (state) {
    store_.keys_.add(state->seq, r.key);
    // The same record again (`seq` and article): a batch written once more after a crash,
    // the same judgment. Two articles under one `seq` (written before numbers were reserved
    // at a restore) are both applied.
    if (applied_seq_ != state->seq) applied_ids_.clear();
    if (applied_ids_.insert(state->id).second) {
      Pipeline::WindowRestored window = store_.pipeline_.restore_window(*state);
      store_.note_judged(r.source, r.input, state->id);
      store_.last_seq_ = std::max(store_.last_seq_, state->seq);
      applied_seq_ = state->seq;
      applied_through_ = std::max(applied_through_, state->seq);
      ++restored_;
      stories_.push({std::move(*state), std::move(window)});
      state.reset();
    } else {
      ++skipped_;
    }
  } else {
    ++skipped_;
  }
}

}  // namespace newsflow::daemon
