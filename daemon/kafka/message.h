#pragma once

// What the daemon's files share about Kafka messages and time: reading a message's payload,
// key, headers and event time, and the clocks. Internal to daemon/kafka/.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "daemon/pipeline/input.h"
#include "tl/expected.hpp"

typedef struct rd_kafka_message_s rd_kafka_message_t;
typedef struct rd_kafka_s rd_kafka_t;
typedef struct rd_kafka_conf_s rd_kafka_conf_t;

namespace newsflow::daemon::internal {

using Clock = std::chrono::steady_clock;

/// How often an extractor says again that an idle partition is at its end; the dedup role's
/// patience for a partition it has not heard of yet (`EventTimeMerger::Options`) is as long.
inline constexpr std::chrono::seconds kEndRepeat{30};

/// How long the dedup role holds a record for extracted partitions whose extractor said their
/// end, so the rest of the extractor's batch, in other partitions, can arrive
/// (`EventOrderOptions::end_slack`): one fetch wait of the consumer (`fetch.wait.max.ms`).
inline constexpr std::chrono::milliseconds kEndSlack{100};

/// How long after it was written a record of a live stream waits for input partitions at their
/// end that may still deliver an older one (`EventOrderOptions::live_slack`): a produce request's
/// partitions are appended one after another, and delivered a fetch apart.
inline constexpr std::chrono::milliseconds kLiveSlack{250};

/// The steady clock in milliseconds, the wall clock in Unix seconds (and milliseconds),
/// seconds since `t0`.
std::int64_t steady_ms();
std::int64_t unix_now();
std::int64_t unix_now_ms();
double seconds_since(Clock::time_point t0);

/// The header of an extracted record with its input's order time (Unix milliseconds).
inline constexpr const char* kOrderHeader = "order_ms";

/// Every header of `msg`, in order (a header without a value reads as "").
Headers message_headers(const rd_kafka_message_t* msg);

/// The headers every dead letter carries (docs/contracts.md): why (`error_reason`, and
/// `error_detail` cut to 4 KiB) and where from (`source_topic`, `_partition`, `_offset`), with
/// its schema; appended to `headers`.
void add_dead_letter_headers(Headers& headers, const std::string& reason, const std::string& detail,
                             const std::string& topic, int partition, std::int64_t offset);

/// The value and the key of `msg` ("" when absent).
std::string_view payload(const rd_kafka_message_t* msg);
std::string_view key_of(const rd_kafka_message_t* msg);

/// True when a consumer made from `conf` rebalances cooperatively (incremental assignments):
/// its `partition.assignment.strategy` is cooperative-sticky. Read from the configuration, not
/// asked of the consumer: `rd_kafka_rebalance_protocol` called from the rebalance callback that
/// `rd_kafka_consumer_close` runs waits forever for the group thread.
bool cooperative_strategy(const rd_kafka_conf_t* conf);

/// The value of header `name` of `msg` ("" when it has none).
std::string_view header_of(const rd_kafka_message_t* msg, const char* name);

/// The event time the pipeline will file a page under, as far as the message shows it: the
/// `published_at` header, else `fetched_at`, else the message timestamp (a crawler's
/// CreateTime). `extracted`: a record of `topics.extracted`, whose `order_ms` header (its
/// input's order time) comes first.
std::int64_t order_time(const rd_kafka_message_t* msg, bool extracted = false);

/// The message's (topic, partition).
std::pair<std::string, int> partition_of(const rd_kafka_message_t* msg);

/// The number of partitions of `topic` (metadata, retried while the cluster comes up).
tl::expected<int, std::string> topic_partitions(rd_kafka_t* c, const std::string& topic);
/// The partition count of `topic` as the brokers know it now (0: no such topic), asking up to
/// ten times, half a second apart, while they do not answer.
tl::expected<int, std::string> partition_count(rd_kafka_t* c, const std::string& topic);

/// The watermark an extractor sent (header `watermark`: Unix seconds or "end", read as
/// `EventTimeMerger::kEnd`), if `msg` is one.
std::optional<std::int64_t> watermark_header(const rd_kafka_message_t* msg);

}  // namespace newsflow::daemon::internal
