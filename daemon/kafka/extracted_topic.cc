#include "daemon/kafka/extracted_topic.h"

// `--role extract`: the layout of `topics.extracted` and the watermarks an extractor writes.

#include <librdkafka/rdkafka.h>

#include <algorithm>

#include "daemon/kafka/changelog_tail.h"
#include "daemon/kafka/message.h"
#include "daemon/kafka/roles.h"
#include "daemon/kafka/transaction.h"
#include "daemon/ops/log.h"

namespace newsflow::daemon {

using namespace internal;

ExtractedTopic::ExtractedTopic(const config::Config& config, RecordCollector& collector)
    : config_(config), collector_(collector) {}

std::int32_t ExtractedTopic::partition_of(std::string_view topic, int partition) const {
  const auto it = offset_.find(topic);
  const int base = it == offset_.end() ? 0 : it->second;
  return (base + partition) % std::max(1, partitions_);
}

void ExtractedTopic::produce(std::int32_t partition, const std::string& id,
                             const std::string& record, const std::string& source,
                             std::int64_t order_ms) {
  // The order time in a header, not as the record's timestamp: a backfill's old event times
  // would have the topic's time retention delete the records before the dedup role reads them.
  collector_.produce(config_.topics.extracted, id, record,
                     {{"schema", "newsflow.extracted/1"},
                      {kSourceHeader, source},
                      {kOrderHeader, std::to_string(order_ms)}},
                     false, partition);
  wrote_since_watermark_.insert(partition);
}

void ExtractedTopic::emit_watermarks(const PartitionIntake& inputs,
                                     const std::vector<Taken>* extracting, bool own_transaction,
                                     int timeout_ms) {
  // Per extracted partition, the oldest record its input partitions (assigned here) may still
  // deliver; sent when it moves, and once a second as a sign of life.
  std::map<std::int32_t, std::int64_t> lowest;
  inputs.for_each_watermark(
      [&](const PartitionIntake::Partition& p, std::optional<std::int64_t> w) {
        if (!offset_.count(p.first)) return;
        const std::int32_t part = partition_of(p.first, p.second);
        auto [slot, inserted] = lowest.try_emplace(part, w.value_or(kUnknown));
        if (!inserted) slot->second = std::min(slot->second, w.value_or(kUnknown));
      });
  // The order has let the batch being extracted go, but its records are not handed over yet:
  // nothing they precede may be promised.
  if (extracting) {
    for (const Taken& t : *extracting) {
      const std::string_view topic = rd_kafka_topic_name(t.msg->rkt);
      if (offset_.find(topic) == offset_.end()) continue;
      const std::int32_t part = partition_of(topic, t.msg->partition);
      auto slot = lowest.find(part);
      if (slot != lowest.end()) slot->second = std::min(slot->second, order_time(t.msg));
    }
  }
  const auto now = Clock::now();
  std::optional<Transaction> transaction;
  for (const auto& [part, w] : lowest) {
    if (w == kUnknown) continue;  // it may still deliver anything: promise nothing
    auto& last = sent_[part];
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
      auto begun = Transaction::begin(collector_.producer(), timeout_ms);
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
      sent_.clear();  // not said: said again at the next turn
    }
  }
}

tl::expected<void, std::string> ExtractedTopic::lay_out(rd_kafka_t* consumer) {
  auto n = topic_partitions(consumer, config_.topics.extracted);
  if (!n) return tl::unexpected(n.error());
  partitions_ = *n;
  std::vector<std::string> inputs = role_of(config_).input_topics(config_.topics);
  std::sort(inputs.begin(), inputs.end());
  int offset = 0;
  for (const auto& t : inputs) {
    offset_[t] = offset;
    offset += topic_partitions(consumer, t).value_or(0);
  }
  if (partitions_ < offset) {
    log::warn("partitions_shared",
              {{"topic", config_.topics.extracted},
               {"partitions", std::to_string(partitions_)},
               {"input_partitions", std::to_string(offset)},
               {"consequence",
                "input partitions share extracted partitions: a backlog is judged in an order "
                "close to, not exactly, the event-time order"}});
  }
  return {};
}

}  // namespace newsflow::daemon
