#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config.h"
#include "daemon/kafka/partition_intake.h"
#include "daemon/kafka/record_collector.h"
#include "tl/expected.hpp"

typedef struct rd_kafka_s rd_kafka_t;

namespace newsflow::daemon {

/// `--role extract`: the extractor's side of `topics.extracted`. Each input partition's articles
/// go to an extracted partition of its own, numbered in (topic, partition) order, so the dedup
/// role's event-time merge meets them as the all-in-one daemon meets the inputs, ties included.
/// Watermark records (header `watermark`, no value) tell the dedup role, per extracted
/// partition, how far its inputs have come. The run loop owns it (not thread-safe).
class ExtractedTopic {
 public:
  ExtractedTopic(const config::Config& config, RecordCollector& collector);

  /// Reads the partition counts of `topics.extracted` and of the input topics (`consumer`).
  tl::expected<void, std::string> lay_out(rd_kafka_t* consumer);

  /// The extracted partition of input partition `partition` of `topic`.
  std::int32_t partition_of(std::string_view topic, int partition) const;
  /// Queues an extracted record of an input ordered by `order_ms`; `source` names the input.
  void produce(std::int32_t partition, const std::string& id, const std::string& record,
               const std::string& source, std::int64_t order_ms);

  /// Says, per extracted partition, the oldest record its assigned input partitions may still
  /// deliver (`inputs`), held back by the inputs of `extracting` (let go by the
  /// order, not handed over yet): when it moves, and now and then as a sign of life.
  /// `own_transaction`: in a transaction of its own, begun within `timeout_ms` (exactly_once
  /// outside a batch).
  void emit_watermarks(const PartitionIntake& inputs, const std::vector<Taken>* extracting,
                       bool own_transaction = false, int timeout_ms = 0);

 private:
  static constexpr std::int64_t kUnknown = std::numeric_limits<std::int64_t>::min();

  const config::Config& config_;
  RecordCollector& collector_;
  int partitions_ = 0;
  std::map<std::string, int, std::less<>> offset_;  // input topic -> its first partition's
  std::map<std::int32_t, std::pair<std::int64_t, std::chrono::steady_clock::time_point>> sent_;
  std::set<std::int32_t> wrote_since_watermark_;  // extracted partitions with records since
};

}  // namespace newsflow::daemon
