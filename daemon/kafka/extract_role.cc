#include "daemon/kafka/daemon.h"

// `--role extract`: what an extractor hands the dedup role (extracted records) and how far each
// of its partitions has come (watermarks).

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "daemon/kafka/message.h"
#include "daemon/ops/log.h"
#include "daemon/ops/metrics.h"
#include "daemon/pipeline/input.h"
#include "daemon/version.h"

namespace newsflow::daemon {

using namespace internal;

void Daemon::hand_over(rd_kafka_message_t* msg, Work& work) {
  try {
    if (dead_letters_of(msg, work)) return;
    // Each input partition to an extracted partition of its own, stamped with the time the
    // input is ordered by, so the dedup role merges them as `--role all` merges the inputs.
    const auto it = extracted_offset_.find(rd_kafka_topic_name(msg->rkt));
    const int base = it == extracted_offset_.end() ? 0 : it->second;
    const std::int32_t partition = (base + msg->partition) % std::max(1, extracted_partitions_);
    const std::int64_t ts = order_time(msg) * 1000;
    // The input it came from: the dedup role knows an input handed over again by the next
    // owner of its partition.
    const std::string source =
        input_header(rd_kafka_topic_name(msg->rkt), msg->partition, msg->offset);
    std::vector<std::pair<std::string, std::string>> records;  // id, extracted record
    for (const auto& e : pipeline_.hand_over(std::move(*work.prepared), work.parsed.input)) {
      records.emplace_back(Pipeline::article_id(e, work.parsed.input),
                           extracted_json(e, work.parsed.input));
    }
    // A record the producer may not send, or one the cluster refused for good when the batch
    // was judged before: the input ends as one dead letter, and its batch goes on.
    std::optional<Failure> refused = collector_.take_refused(msg);
    for (const auto& [id, record] : records) {
      if (!refused) refused = collector_.too_large("extracted", id, record.size());
    }
    if (refused) {
      dead_letters_.input(msg, *refused);
      return;
    }
    for (const auto& [id, record] : records) {
      collector_.produce(config_.topics.extracted, id, record,
                         {{"schema", "newsflow.extracted/1"}, {kSourceHeader, source}}, false,
                         partition, ts);
      wrote_since_watermark_.insert(partition);
      ++progress_.articles;
    }
  } catch (const std::exception& e) {
    dead_letters_.input(msg, {"internal_error", e.what()});
  }
}

void Daemon::emit_watermarks(bool own_transaction) {
  // Per extracted partition, the oldest record its input partitions (assigned here) may still
  // deliver; sent when it moves, and once a second as a sign of life.
  std::map<std::int32_t, std::int64_t> lowest;
  for (const auto& [p, q] : partition_queues_) {
    const auto w = merger_.watermark_of(p);
    const auto it = extracted_offset_.find(p.first);
    if (it == extracted_offset_.end()) continue;
    const std::int32_t part = (it->second + p.second) % std::max(1, extracted_partitions_);
    auto [slot, inserted] = lowest.try_emplace(part, w.value_or(kUnknownWatermark));
    if (!inserted) slot->second = std::min(slot->second, w.value_or(kUnknownWatermark));
  }
  // The order has let the batch being extracted go, but its records are not handed over yet:
  // nothing they precede may be promised.
  if (extracting_) {
    for (const Taken& t : extracting_->batch) {
      const auto it = extracted_offset_.find(rd_kafka_topic_name(t.msg->rkt));
      if (it == extracted_offset_.end()) continue;
      const std::int32_t part =
          (it->second + t.msg->partition) % std::max(1, extracted_partitions_);
      auto slot = lowest.find(part);
      if (slot != lowest.end()) slot->second = std::min(slot->second, order_time(t.msg));
    }
  }
  const auto now = Clock::now();
  std::optional<Transaction> transaction;
  for (const auto& [part, w] : lowest) {
    if (w == kUnknownWatermark) continue;  // it may still deliver anything: promise nothing
    auto& last = sent_watermarks_[part];
    // At most five a second per partition while it moves (an end is said at once, and again
    // after records, so a partition's last record is its end: a dedup process that takes over
    // reads it there). One that stands still is said again once a second, a sign of life the
    // dedup role waits for at most `kafka.extractor_silence_ms`; an end only every 30 s: it
    // holds nothing back, and an idle extractor would otherwise fill `topics.extracted` with a
    // record per partition and second.
    const bool end = w == EventTimeMerger<rd_kafka_message_t*>::kEnd;
    const bool wrote = wrote_since_watermark_.count(part) > 0;
    const auto since = now - last.second;
    if (last.first == w && !wrote ? since < (end ? kEndRepeat : std::chrono::seconds(1))
                                  : !end && since < std::chrono::milliseconds(200)) {
      continue;
    }
    const std::string value =
        w == EventTimeMerger<rd_kafka_message_t*>::kEnd ? "end" : std::to_string(w);
    if (own_transaction && !transaction) {
      auto begun = Transaction::begin(collector_.producer(), flush_timeout_ms());
      if (!begun) {
        log::warn("watermark_transaction_failed", {{"error", begun.error().message}});
        return;  // said again at the next turn
      }
      transaction.emplace(std::move(*begun));
    }
    collector_.produce(config_.topics.extracted, "", "",
                       {{"watermark", value}, {"schema", "newsflow.watermark/1"}}, false, part);
    last = {w, now};
    wrote_since_watermark_.erase(part);
  }
  if (transaction) {
    if (const auto committed = transaction->commit(); !committed) {
      log::warn("watermark_transaction_failed", {{"error", committed.error().message}});
      sent_watermarks_.clear();  // not said: said again at the next turn
    }
  }
}

tl::expected<void, std::string> Daemon::lay_out_extracted() {
  // An extractor hands each input partition's articles to a partition of its own, numbered
  // in (topic, partition) order: the dedup role's event-time merge then meets them as the
  // all-in-one daemon meets the inputs, ties included.
  auto n = topic_partitions(consumer_.get(), config_.topics.extracted);
  if (!n) return tl::unexpected(n.error());
  extracted_partitions_ = *n;
  std::vector<std::string> inputs = input_topics(config_);
  std::sort(inputs.begin(), inputs.end());
  int offset = 0;
  for (const auto& t : inputs) {
    extracted_offset_[t] = offset;
    offset += topic_partitions(consumer_.get(), t).value_or(0);
  }
  if (extracted_partitions_ < offset) {
    log::warn("extracted_partitions_shared",
              {{"topic", config_.topics.extracted},
               {"partitions", std::to_string(extracted_partitions_)},
               {"input_partitions", std::to_string(offset)},
               {"consequence",
                "input partitions share extracted partitions: a backlog is judged in an order "
                "close to, not exactly, the event-time order"}});
  }
  return {};
}

}  // namespace newsflow::daemon
