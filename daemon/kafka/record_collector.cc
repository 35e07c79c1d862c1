#include "daemon/kafka/record_collector.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <cstdlib>

#include "daemon/ops/log.h"
#include "daemon/ops/metrics.h"

namespace newsflow::daemon {

namespace {

// Errors that no retry of the same record cures: the record is too large for the producer, the
// broker or the topic, or the broker will not take it as it is. Anything else (a leader moving,
// a timeout, a broker down, authorization being fixed) is transient: the batch is judged again.
bool refused_for_good(rd_kafka_resp_err_t e) {
  switch (e) {
    case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE:
    case RD_KAFKA_RESP_ERR_INVALID_MSG_SIZE:
    case RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE:
    case RD_KAFKA_RESP_ERR_INVALID_RECORD:
      return true;
    default:
      return false;
  }
}

// The dead-letter reason of a record refused for good.
Failure refusal(rd_kafka_resp_err_t e, std::string_view topic, std::size_t bytes) {
  const bool size = e != RD_KAFKA_RESP_ERR_INVALID_RECORD;
  return {size ? Reason::kOutputTooLarge : Reason::kOutputRefused,
          "an output record to " + std::string(topic) + " (" + std::to_string(bytes) +
              " bytes) was refused for good: " + rd_kafka_err2str(e)};
}

}  // namespace

RecordCollector::RecordCollector(Metrics& metrics, std::string dead_letter_topic, Hooks hooks)
    : metrics_(metrics),
      dead_letter_topic_(std::move(dead_letter_topic)),
      hooks_(std::move(hooks)) {}

RecordCollector::~RecordCollector() = default;

tl::expected<void, std::string> RecordCollector::open(KafkaConf conf) {
  char value[32];
  std::size_t size = sizeof value;
  if (rd_kafka_conf_get(conf.get(), "message.max.bytes", value, &size) == RD_KAFKA_CONF_OK) {
    max_record_bytes_ = static_cast<std::size_t>(std::strtoull(value, nullptr, 10));
  }
  ClientCallbacks callbacks;
  callbacks.opaque = this;
  callbacks.delivery = &RecordCollector::on_delivery;
  auto producer = create_client(ClientKind::kProducer, std::move(conf), {}, callbacks);
  if (!producer) return tl::unexpected(producer.error());
  producer_ = std::move(*producer);
  return {};
}

RecordCollector::Batch& RecordCollector::begin_batch() {
  retire(std::move(open_));  // one never ended: its reports may still come
  open_ = std::make_unique<Batch>();
  producing_ = open_.get();
  sending_ = nullptr;
  return *open_;
}

std::unique_ptr<RecordCollector::Batch> RecordCollector::end_batch() {
  producing_ = nullptr;
  sending_ = nullptr;
  return std::move(open_);
}

void RecordCollector::begin_input(const rd_kafka_message_t* msg) {
  sending_ = producing_
                 ? &producing_->sent.emplace_back(
                       Sent{producing_, rd_kafka_topic_name(msg->rkt), msg->partition, msg->offset})
                 : nullptr;
}

void RecordCollector::fail(const std::string& error) {
  if (producing_) producing_->failed = true;
  ++errors_;
  last_error_ = error;
}

bool RecordCollector::produce(const std::string& topic, const std::string& key,
                              const std::string& value,
                              const std::vector<std::pair<std::string, std::string>>& headers,
                              bool tombstone, std::int32_t partition, std::int64_t timestamp_ms) {
  const auto give_up = [this, &topic](const std::string& why) {
    fail(why);
    metrics_.delivery_failed();
    log::error("produce_failed", {{"topic", topic}, {"error", why}});
    return false;
  };
  while (true) {
    if (hooks_.fenced && hooks_.fenced()) return give_up("the dedup lease is gone");
    rd_kafka_headers_t* hdrs = rd_kafka_headers_new(headers.size());
    for (const auto& [name, v] : headers) {
      rd_kafka_header_add(hdrs, name.data(), static_cast<ssize_t>(name.size()), v.data(),
                          static_cast<ssize_t>(v.size()));
    }
    const rd_kafka_resp_err_t e = rd_kafka_producev(
        producer_.get(), RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_KEY(key.data(), key.size()),
        RD_KAFKA_V_VALUE(tombstone ? nullptr : const_cast<char*>(value.data()), value.size()),
        RD_KAFKA_V_PARTITION(partition < 0 ? RD_KAFKA_PARTITION_UA : partition),
        RD_KAFKA_V_TIMESTAMP(timestamp_ms), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_HEADERS(hdrs),
        RD_KAFKA_V_OPAQUE(sending_     ? sending_
                          : producing_ ? &producing_->whole
                                       : nullptr),
        RD_KAFKA_V_END);
    if (e == RD_KAFKA_RESP_ERR_NO_ERROR) {
      if (producing_) ++producing_->outstanding;
      return true;
    }
    rd_kafka_headers_destroy(hdrs);
    if (e == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      // During an outage the queue frees up as messages time out (message.timeout.ms); the
      // owner says when waiting must end (the drain deadline, a lease lost meanwhile).
      if (hooks_.stop_waiting) {
        if (std::optional<std::string> why = hooks_.stop_waiting()) return give_up(*why);
      }
      rd_kafka_poll(producer_.get(), 50);  // serve delivery reports to make room
      continue;
    }
    metrics_.delivery_failed();
    log::error("produce_failed", {{"topic", topic}, {"error", rd_kafka_err2str(e)}});
    if (refused_for_good(e) && topic == dead_letter_topic_) {
      metrics_.dead_letter_refused();
      return false;  // as in on_delivery: said, and the batch goes on
    }
    fail(rd_kafka_err2str(e));
    if (refused_for_good(e) && sending_ && sending_->offset >= 0) {
      blame(*sending_, e, topic, value.size());
    }
    return false;
  }
}

void RecordCollector::on_delivery(rd_kafka_t*, const rd_kafka_message_t* msg, void* opaque) {
  auto* self = static_cast<RecordCollector*>(opaque);
  auto* sent = static_cast<Sent*>(msg->_private);
  Batch* batch = sent ? sent->batch : nullptr;
  if (batch && batch->outstanding > 0) --batch->outstanding;
  if (!msg->err) {
    self->metrics_.produced(rd_kafka_topic_name(msg->rkt));
    if (msg->offset < 0) self->metrics_.delivery_unconfirmed();
    return;
  }
  self->metrics_.delivery_failed();
  const std::string topic = rd_kafka_topic_name(msg->rkt);
  if (refused_for_good(msg->err) && topic == self->dead_letter_topic_) {
    // A dead letter that cannot be written however often it is tried: said loudly, and the
    // batch goes on (judging it again would refuse the same record forever).
    log::error("dead_letter_refused",
               {{"error", rd_kafka_err2str(msg->err)}, {"bytes", std::to_string(msg->len)}});
    self->metrics_.dead_letter_refused();
    return;
  }
  if (batch) batch->failed = true;
  ++self->errors_;
  self->last_error_ = rd_kafka_err2str(msg->err);
  if (refused_for_good(msg->err) && sent && sent->offset >= 0) {
    self->blame(*sent, msg->err, topic, msg->len);
  }
}

void RecordCollector::blame(Sent& sent, int error, std::string_view topic, std::size_t bytes) {
  const auto err = static_cast<rd_kafka_resp_err_t>(error);
  // The batch is judged again (its other records are not lost); the input to blame then ends
  // as a dead letter instead of being refused again.
  const auto key = [](const Sent& s) { return std::tuple{s.topic, s.partition, s.offset}; };
  if (err == RD_KAFKA_RESP_ERR_INVALID_RECORD || !sent.batch) {
    refuse(key(sent), refusal(err, topic, bytes));
    return;
  }
  // Refused for its size: the record, or a small one that shared a request with it.
  auto& sizes = sent.batch->refused_sizes;
  sizes.emplace_back(&sent, bytes);
  std::size_t largest = 0;
  for (const auto& [s, b] : sizes) largest = std::max(largest, b);
  for (const auto& [s, b] : sizes) {
    if (b * 2 >= largest) {
      if (s == &sent) refuse(key(*s), refusal(err, topic, bytes));
    } else {
      refused_.erase(key(*s));  // rode along with a larger one: judged again as it is
    }
  }
}

void RecordCollector::refuse(const Position& at, Failure failure) {
  if (refused_.insert_or_assign(at, std::move(failure)).second) refused_order_.push_back(at);
  while (refused_order_.size() > kRefusedKept) {
    refused_.erase(refused_order_.front());
    refused_order_.pop_front();
  }
}

std::optional<Failure> RecordCollector::take_refused(const rd_kafka_message_t* msg) {
  if (refused_.empty()) return std::nullopt;
  // Not erased: when the batch that carries this dead letter fails for another record (a size
  // refusal elsewhere in it), the input is judged again and must not send the refused record
  // again (that alternated between two refusals forever on Kafka 4.1.1).
  const auto it = refused_.find({rd_kafka_topic_name(msg->rkt), msg->partition, msg->offset});
  if (it == refused_.end()) return std::nullopt;
  return it->second;
}

std::optional<Failure> RecordCollector::too_large(std::string_view what, std::string_view id,
                                                  std::size_t bytes) const {
  // Room left for the record's key, headers and framing.
  constexpr std::size_t kRecordOverheadBytes = 16 * 1024;
  if (max_record_bytes_ == 0 || bytes + kRecordOverheadBytes <= max_record_bytes_) {
    return std::nullopt;
  }
  return Failure{Reason::kOutputTooLarge,
                 "the " + std::string(what) + " record of " + std::string(id) + " has " +
                     std::to_string(bytes) + " bytes; the producer sends at most " +
                     std::to_string(max_record_bytes_) + " (message.max.bytes)"};
}

void RecordCollector::queue(std::unique_ptr<Batch> batch) {
  in_flight_.push_back(std::move(batch));
}

std::unique_ptr<RecordCollector::Batch> RecordCollector::pop_front() {
  std::unique_ptr<Batch> batch = std::move(in_flight_.front());
  in_flight_.pop_front();
  return batch;
}

void RecordCollector::retire(std::unique_ptr<Batch> batch) {
  if (batch && batch->outstanding > 0) retired_.push_back(std::move(batch));
}

void RecordCollector::retire_all(const std::function<void(Batch&)>& f) {
  for (auto it = in_flight_.rbegin(); it != in_flight_.rend(); ++it) {
    f(**it);
    retire(std::move(*it));
  }
  in_flight_.clear();
}

void RecordCollector::wait_for_room(std::size_t max, std::chrono::milliseconds limit,
                                    const std::function<bool()>& stop) {
  while (in_flight_.size() > max && in_flight_.front()->outstanding > 0 &&
         !in_flight_.front()->failed &&
         std::chrono::steady_clock::now() - in_flight_.front()->queued < limit && !stop()) {
    rd_kafka_poll(producer_.get(), 10);
  }
}

void RecordCollector::prune() {
  std::erase_if(retired_, [](const auto& f) { return f->outstanding == 0; });
}

}  // namespace newsflow::daemon
