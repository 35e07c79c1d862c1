#include "daemon/kafka/dead_letters.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "daemon/kafka/fetch_retries.h"
#include "daemon/kafka/message.h"
#include "daemon/kafka/record_collector.h"
#include "daemon/ops/log.h"
#include "daemon/ops/metrics.h"

namespace newsflow::daemon {

using namespace internal;

namespace {

constexpr std::size_t kMaxErrorDetailBytes = 4096;      // of a dead letter's error_detail header
constexpr std::size_t kDeadLetterOverheadBytes = 1024;  // record framing, the headers added last

}  // namespace

void DeadLetters::input(rd_kafka_message_t* msg, const Failure& failure) {
  Headers headers = message_headers(msg);
  add_dead_letter_headers(headers, failure.reason, failure.detail, rd_kafka_topic_name(msg->rkt),
                          msg->partition, msg->offset);
  std::string_view value = payload(msg);
  // At most kafka.dlq_max_payload_bytes of the input, and never more than the producer may send
  // with the headers and key: a dead letter refused for its size would lose the input's trace.
  auto cap =
      static_cast<std::size_t>(std::max<std::int64_t>(0, config_.kafka.dlq_max_payload_bytes));
  if (const std::size_t max = collector_.max_record_bytes(); max > 0) {
    std::size_t around = key_of(msg).size() + kDeadLetterOverheadBytes;
    for (const auto& [name, v] : headers) around += name.size() + v.size() + 8;
    cap = std::min(cap, max > around ? max - around : 0);
  }
  if (value.size() > cap) {
    headers.emplace_back("payload_truncated_from", std::to_string(value.size()));
    value = value.substr(0, cap);
  }
  note(msg, failure);
  collector_.produce(config_.topics.dlq, std::string(key_of(msg)), std::string(value), headers);
}

bool DeadLetters::retry_later(rd_kafka_message_t* msg, const Extracted& item, const Input& feed) {
  const Failure& failure = *item.fetch_failure;
  if (!fetch_retries_ || !fetch_retry_left(config_.fetch, 1, failure.reason)) return false;
  FetchRetry retry;
  retry.id = item.article.id;
  retry.link = item.fetch_url;
  retry.title = item.article.title;
  retry.published_at = item.article.published_at;
  retry.feed_url = feed.url;
  retry.feed_id = feed.id;
  retry.published = !item.skip;  // it goes out with its own short text now
  retry.attempts = 1;
  retry.due_ms = unix_now_ms() + fetch_retry_delay_ms(config_.fetch, 1, item.retry_after_seconds);
  retry.reason = failure.reason;
  retry.detail = failure.detail.substr(0, kMaxErrorDetailBytes);
  collector_.produce(config_.topics.fetch_retries, retry.id, fetch_retry_json(retry),
                     {{"schema", "newsflow.fetch-retry/1"},
                      {"source_topic", rd_kafka_topic_name(msg->rkt)},
                      {"source_partition", std::to_string(msg->partition)},
                      {"source_offset", std::to_string(msg->offset)}});
  metrics_.fetch_retry("scheduled");
  log::debug("fetch_retry_scheduled", {{"id", retry.id},
                                       {"link", retry.link},
                                       {"reason", failure.reason},
                                       {"due_ms", std::to_string(retry.due_ms)}});
  return true;
}

void DeadLetters::item(rd_kafka_message_t* msg, const Extracted& item, const Input& feed) {
  if (retry_later(msg, item, feed)) return;
  // The DLQ record names the item (a small JSON value, keyed by its link) rather than
  // repeating the whole feed, with the feed message's coordinates.
  const Failure& failure = *item.fetch_failure;
  Headers headers{{"url", item.fetch_url}};
  add_dead_letter_headers(headers, failure.reason, failure.detail, rd_kafka_topic_name(msg->rkt),
                          msg->partition, msg->offset);
  nlohmann::ordered_json value;
  value["id"] = item.article.id;
  value["link"] = item.fetch_url;
  value["title"] = item.article.title;
  value["feed_key"] = std::string(key_of(msg));
  value["kept_feed_text"] = !item.skip;
  note(msg, failure);
  collector_.produce(config_.topics.dlq, item.fetch_url,
                     value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), headers);
}

void DeadLetters::note(rd_kafka_message_t* msg, const Failure& failure) {
  metrics_.dead_letter(failure.reason);
  if (noted_) noted_(msg, failure);
  log::debug("dead_letter", {{"reason", failure.reason},
                             {"detail", failure.detail},
                             {"topic", rd_kafka_topic_name(msg->rkt)},
                             {"offset", std::to_string(msg->offset)}});
}

}  // namespace newsflow::daemon
