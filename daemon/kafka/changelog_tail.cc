#include "daemon/kafka/changelog_tail.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <charconv>
#include <thread>

#include "daemon/kafka/message.h"

namespace newsflow::daemon {

std::string input_header(std::string_view topic, int partition, std::int64_t offset) {
  std::string out(topic);
  out += '/';
  out += std::to_string(partition);
  out += '/';
  out += std::to_string(offset);
  return out;
}

std::optional<Position> parse_position(std::string_view text) {
  const auto last = text.rfind('/');
  const auto mid = last == std::string_view::npos || last == 0 ? std::string_view::npos
                                                               : text.rfind('/', last - 1);
  if (mid == std::string_view::npos || mid == 0) return std::nullopt;
  Position out;
  out.topic = std::string(text.substr(0, mid));
  const char* p = text.data();
  if (std::from_chars(p + mid + 1, p + last, out.partition).ptr != p + last ||
      std::from_chars(p + last + 1, p + text.size(), out.offset).ptr != p + text.size() ||
      last == mid + 1 || last + 1 == text.size()) {
    return std::nullopt;
  }
  return out;
}

Admission admit_state_record(std::string_view input, const std::vector<std::string>& inputs,
                             const CommittedOffsets& committed, bool final) {
  if (input.empty()) return Admission::kApply;
  const auto at = parse_position(input);
  if (!at) return Admission::kApply;  // not ours to read
  if (std::find(inputs.begin(), inputs.end(), at->topic) == inputs.end()) return Admission::kApply;
  // No commit for the partition: the group has not finished a batch of it yet, so every input
  // of it is read again.
  const auto c = committed.find({at->topic, at->partition});
  if (c != committed.end() && c->second >= 0 && at->offset < c->second) return Admission::kApply;
  return final ? Admission::kDrop : Admission::kWait;
}

tl::expected<std::unique_ptr<ChangelogTail>, std::string> ChangelogTail::open(
    KafkaHandle consumer, const std::string& topic, const std::map<int, std::int64_t>& positions,
    std::uint64_t last_seq, std::chrono::milliseconds hold, Admit admit, std::size_t max_pending) {
  const auto count = internal::partition_count(consumer.get(), topic);
  if (!count) return tl::unexpected(count.error());
  const int partitions = *count;
  if (partitions <= 0) return tl::unexpected("topic " + topic + " does not exist");
  std::unique_ptr<ChangelogTail> tail(
      new ChangelogTail(std::move(consumer), topic, last_seq, hold, std::move(admit)));
  tail->max_pending_ = std::max<std::size_t>(1, max_pending);
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(partitions);
  for (int p = 0; p < partitions; ++p) {
    const auto at = positions.find(p);
    const std::int64_t offset = at == positions.end() ? RD_KAFKA_OFFSET_BEGINNING : at->second;
    rd_kafka_topic_partition_list_add(list, topic.c_str(), p)->offset = offset;
    tail->position_[p] = at == positions.end() ? 0 : at->second;
  }
  rd_kafka_poll_set_consumer(tail->consumer_.get());
  const rd_kafka_resp_err_t e = rd_kafka_assign(tail->consumer_.get(), list);
  rd_kafka_topic_partition_list_destroy(list);
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return tl::unexpected("cannot assign " + topic + ": " + rd_kafka_err2str(e));
  }
  return tail;
}

ChangelogTail::~ChangelogTail() {
  for (auto& [seq, held] : buffer_) rd_kafka_message_destroy(held.msg);
  // Assigned, not subscribed: closing asks no coordinator, but is bounded all the same.
  close_consumer(consumer_, std::chrono::seconds(5), "changelog_tail");
}

void ChangelogTail::file(rd_kafka_message_t* m) {
  std::unique_ptr<rd_kafka_message_t, void (*)(rd_kafka_message_t*)> guard(
      m, rd_kafka_message_destroy);
  if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
    position_[m->partition] = std::max(position_[m->partition], m->offset);
    return;
  }
  if (m->err) return;  // transient: librdkafka retries the fetch
  position_[m->partition] = std::max(position_[m->partition], m->offset + 1);
  if (!m->payload) return;  // a tombstone
  const std::string_view value(static_cast<const char*>(m->payload), m->len);
  const auto seq = dedup::state_seq(value);
  if (!seq) {
    // A snapshot's chunk, or a record of another version.
    if (const auto chunk = dedup::decode_snapshot_chunk(value);
        chunk && chunk->seq > snapshot_seq_) {
      auto& [count, parts] = snapshot_parts_[chunk->seq];
      parts.insert(chunk->index);
      if (chunk->last) count = chunk->index + 1;
      if (count > 0 && parts.size() == count) {
        snapshot_seq_ = chunk->seq;
        snapshot_chunks_ = count;
        snapshot_parts_.erase(snapshot_parts_.begin(), snapshot_parts_.upper_bound(chunk->seq));
      }
    }
    return;
  }
  // A record older than the last one applied comes late (it was written while a restore read
  // past it on another partition): it goes now. Its place in the order matters little (the
  // record carries the owner's verdict and story), and it is read once (the restore's positions
  // say what it read).
  if (*seq <= last_seq_) ++late_;
  seen_seq_ = std::max(seen_seq_, *seq);
  // The same record twice (`seq` and article): a batch written again after a crash, the same
  // judgment.
  std::string id(static_cast<const char*>(m->key), m->key ? m->key_len : 0);
  if (buffer_.emplace(std::make_pair(*seq, std::move(id)), Held{m, Clock::now()}).second) {
    guard.release();
  }
}

std::size_t ChangelogTail::apply_ready(const Apply& apply, bool everything) {
  std::size_t applied = 0;
  const auto now = Clock::now();
  while (!buffer_.empty()) {
    auto front = buffer_.begin();
    if (!everything && front->first.first > last_seq_ + 1 && now - front->second.arrived < hold_) {
      break;
    }
    rd_kafka_message_t* m = front->second.msg;
    const Admission admission = admit_ ? admit_(m, everything) : Admission::kApply;
    if (admission == Admission::kWait) break;  // its input's commit has not come yet
    if (admission == Admission::kDrop) {
      ++dropped_;
    } else if (auto state = dedup::decode_state(
                   std::string_view(static_cast<const char*>(m->payload), m->len))) {
      apply(*state);
      ++applied;
    }
    last_seq_ = std::max(last_seq_, front->first.first);
    rd_kafka_message_destroy(m);
    buffer_.erase(front);
  }
  return applied;
}

void ChangelogTail::pause(bool paused) {
  if (paused == paused_) return;
  rd_kafka_topic_partition_list_t* list =
      rd_kafka_topic_partition_list_new(static_cast<int>(position_.size()));
  for (const auto& [p, next] : position_)
    rd_kafka_topic_partition_list_add(list, topic_.c_str(), p);
  if (paused) {
    rd_kafka_pause_partitions(consumer_.get(), list);
  } else {
    rd_kafka_resume_partitions(consumer_.get(), list);
  }
  rd_kafka_topic_partition_list_destroy(list);
  paused_ = paused;
}

std::size_t ChangelogTail::poll(const Apply& apply) {
  // Records waiting for their input's commit (an owner whose commits fail) could fill memory:
  // beyond the bound the broker keeps them, and the standby reads on as they are applied.
  if (buffer_.size() >= max_pending_) {
    pause(true);
  } else if (buffer_.size() <= max_pending_ / 2) {
    pause(false);
  }
  for (int i = 0; i < 4096 && buffer_.size() < max_pending_; ++i) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer_.get(), 0);
    if (!m) break;
    file(m);
  }
  if (Clock::now() - last_lag_check_ > std::chrono::seconds(1)) {
    last_lag_check_ = Clock::now();
    std::int64_t behind = 0;
    for (const auto& [p, next] : position_) {
      std::int64_t low = 0, high = 0;
      if (rd_kafka_get_watermark_offsets(consumer_.get(), topic_.c_str(), p, &low, &high) ==
              RD_KAFKA_RESP_ERR_NO_ERROR &&
          high > next) {
        behind += high - std::max(next, low);
      }
    }
    behind_ = behind;
  }
  return apply_ready(apply, false);
}

tl::expected<std::size_t, std::string> ChangelogTail::catch_up(const Apply& apply,
                                                               std::chrono::milliseconds timeout) {
  // Every partition's end in one request per broker (ListOffsets "latest"; with read_committed
  // the last stable offset); a few tries while a broker is slow or a leader moves.
  std::map<int, std::int64_t> end;
  std::string problem;
  for (int attempt = 0; attempt < 3; ++attempt) {
    rd_kafka_topic_partition_list_t* list =
        rd_kafka_topic_partition_list_new(static_cast<int>(position_.size()));
    for (const auto& [p, next] : position_) {
      rd_kafka_topic_partition_list_add(list, topic_.c_str(), p)->offset = RD_KAFKA_OFFSET_END;
    }
    const rd_kafka_resp_err_t e = rd_kafka_offsets_for_times(consumer_.get(), list, 10000);
    problem = e == RD_KAFKA_RESP_ERR_NO_ERROR ? "" : rd_kafka_err2str(e);
    for (int i = 0; i < list->cnt && problem.empty(); ++i) {
      if (list->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        problem = rd_kafka_err2str(list->elems[i].err);
      }
      end[list->elems[i].partition] = list->elems[i].offset;
    }
    rd_kafka_topic_partition_list_destroy(list);
    if (problem.empty()) break;
  }
  if (!problem.empty()) return tl::unexpected("end of " + topic_ + ": " + problem);
  // The owner is gone: everything to its end is read and applied now.
  pause(false);
  const auto deadline = Clock::now() + timeout;
  auto reached = [&] {
    for (const auto& [p, high] : end) {
      if (position_[p] < high) return false;
    }
    return true;
  };
  while (!reached()) {
    if (Clock::now() > deadline) {
      return tl::unexpected("did not reach the end of " + topic_ + " within " +
                            std::to_string(timeout.count()) + " ms");
    }
    rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer_.get(), 100);
    if (!m) continue;
    file(m);
  }
  behind_ = 0;
  return apply_ready(apply, true);
}

}  // namespace newsflow::daemon
