#include "daemon/kafka/message.h"

#include <librdkafka/rdkafka.h>

#include <charconv>
#include <thread>

#include "daemon/kafka/event_order.h"
#include "extractors/timestamp.h"

namespace newsflow::daemon::internal {

std::int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch())
      .count();
}

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::int64_t unix_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void add_dead_letter_headers(Headers& headers, const std::string& reason, const std::string& detail,
                             const std::string& topic, int partition, std::int64_t offset) {
  constexpr std::size_t kMaxErrorDetailBytes = 4096;
  headers.emplace_back("error_reason", reason);
  headers.emplace_back("error_detail", detail.substr(0, kMaxErrorDetailBytes));
  headers.emplace_back("source_topic", topic);
  headers.emplace_back("source_partition", std::to_string(partition));
  headers.emplace_back("source_offset", std::to_string(offset));
  headers.emplace_back("schema", "newsflow.dead-letter/1");
}

Headers message_headers(const rd_kafka_message_t* msg) {
  Headers out;
  rd_kafka_headers_t* hdrs = nullptr;
  if (rd_kafka_message_headers(msg, &hdrs) != RD_KAFKA_RESP_ERR_NO_ERROR || !hdrs) return out;
  const char* name;
  const void* value;
  size_t size;
  for (size_t i = 0;
       rd_kafka_header_get_all(hdrs, i, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR; ++i) {
    out.emplace_back(name, value ? std::string(static_cast<const char*>(value), size) : "");
  }
  return out;
}

std::string_view payload(const rd_kafka_message_t* msg) {
  return msg->payload ? std::string_view(static_cast<const char*>(msg->payload), msg->len)
                      : std::string_view();
}

std::string_view key_of(const rd_kafka_message_t* msg) {
  return msg->key ? std::string_view(static_cast<const char*>(msg->key), msg->key_len)
                  : std::string_view();
}

std::int64_t order_time(const rd_kafka_message_t* msg, bool extracted) {
  rd_kafka_headers_t* hdrs = nullptr;
  std::optional<std::int64_t> published, fetched;
  if (rd_kafka_message_headers(msg, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR && hdrs) {
    const void* value;
    size_t size;
    // An extracted record: its input's order time (records written before the header have it
    // as their timestamp, below). Read on `topics.extracted` only: on an input topic anyone
    // upstream could write the header and reorder what `replay` orders by its dates.
    if (extracted &&
        rd_kafka_header_get_last(hdrs, kOrderHeader, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR &&
        value) {
      const std::string_view text(static_cast<const char*>(value), size);
      std::int64_t ms = 0;
      if (std::from_chars(text.data(), text.data() + text.size(), ms).ec == std::errc() && ms > 0) {
        return ms / 1000;
      }
    }
    for (const char* name : {"published_at", "fetched_at"}) {
      if (rd_kafka_header_get_last(hdrs, name, &value, &size) != RD_KAFKA_RESP_ERR_NO_ERROR ||
          !value) {
        continue;
      }
      auto t = extractors::parse_iso8601(std::string_view(static_cast<const char*>(value), size));
      if (t) (name[0] == 'p' ? published : fetched) = *t;
    }
  }
  if (published) return *published;
  if (fetched) return *fetched;
  rd_kafka_timestamp_type_t type;
  const std::int64_t ms = rd_kafka_message_timestamp(msg, &type);
  return ms > 0 ? ms / 1000 : 0;
}

std::pair<std::string, int> partition_of(const rd_kafka_message_t* msg) {
  return {rd_kafka_topic_name(msg->rkt), msg->partition};
}

namespace {

// One metadata request for `topic`: its partition count (0: no such topic), or the error.
tl::expected<int, rd_kafka_resp_err_t> ask_partitions(rd_kafka_t* c, const std::string& topic) {
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_topic_t* t = rd_kafka_topic_new(c, topic.c_str(), nullptr);
  const rd_kafka_resp_err_t e = rd_kafka_metadata(c, 0, t, &md, 5000);
  rd_kafka_topic_destroy(t);
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) return tl::unexpected(e);
  const int n = md->topic_cnt == 1 && md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR
                    ? md->topics[0].partition_cnt
                    : 0;
  rd_kafka_metadata_destroy(md);
  return n;
}

}  // namespace

tl::expected<int, std::string> partition_count(rd_kafka_t* c, const std::string& topic) {
  rd_kafka_resp_err_t e = RD_KAFKA_RESP_ERR_NO_ERROR;
  for (int attempt = 0; attempt < 10; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const auto n = ask_partitions(c, topic);
    if (n) return *n;
    e = n.error();
  }
  return tl::unexpected("metadata of " + topic + ": " + rd_kafka_err2str(e));
}

tl::expected<int, std::string> topic_partitions(rd_kafka_t* c, const std::string& topic) {
  // Also while the brokers do not show the topic yet: created (or auto-created) a moment ago.
  for (int attempt = 0; attempt < 10; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(500));
    if (const auto n = ask_partitions(c, topic); n && *n > 0) return *n;
  }
  return tl::unexpected("topic " + topic + " does not exist or has no partitions");
}

std::optional<std::int64_t> watermark_header(const rd_kafka_message_t* msg) {
  rd_kafka_headers_t* hdrs = nullptr;
  const void* value = nullptr;
  size_t size = 0;
  if (rd_kafka_message_headers(msg, &hdrs) != RD_KAFKA_RESP_ERR_NO_ERROR || !hdrs ||
      rd_kafka_header_get_last(hdrs, "watermark", &value, &size) != RD_KAFKA_RESP_ERR_NO_ERROR ||
      !value) {
    return std::nullopt;
  }
  const std::string_view v(static_cast<const char*>(value), size);
  if (v == "end") return EventTimeMerger<rd_kafka_message_t*>::kEnd;
  std::int64_t t = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), t);
  if (ec != std::errc() || end != v.data() + v.size()) return std::nullopt;
  return t;
}

bool cooperative_strategy(const rd_kafka_conf_t* conf) {
  char value[512];
  std::size_t size = sizeof value;
  if (rd_kafka_conf_get(conf, "partition.assignment.strategy", value, &size) != RD_KAFKA_CONF_OK) {
    return false;
  }
  // librdkafka refuses a list that mixes the eager and the cooperative protocols.
  return std::string_view(value).find("cooperative-sticky") != std::string_view::npos;
}

std::string_view header_of(const rd_kafka_message_t* msg, const char* name) {
  rd_kafka_headers_t* hdrs = nullptr;
  const void* value = nullptr;
  size_t size = 0;
  if (rd_kafka_message_headers(msg, &hdrs) != RD_KAFKA_RESP_ERR_NO_ERROR || !hdrs ||
      rd_kafka_header_get_last(hdrs, name, &value, &size) != RD_KAFKA_RESP_ERR_NO_ERROR || !value) {
    return {};
  }
  return {static_cast<const char*>(value), size};
}

}  // namespace newsflow::daemon::internal
