#include "daemon/kafka/transaction.h"

#include <librdkafka/rdkafka.h>

#include "daemon/ops/log.h"

namespace newsflow::daemon {

namespace {

// Takes `e` (not null): its message, whether it is fatal; destroys it.
std::pair<std::string, bool> take(rd_kafka_error_t* e) {
  std::pair<std::string, bool> out{rd_kafka_error_string(e), rd_kafka_error_is_fatal(e) != 0};
  rd_kafka_error_destroy(e);
  return out;
}

}  // namespace

tl::expected<void, std::string> Transaction::initialize(rd_kafka_t* producer, int timeout_ms) {
  rd_kafka_error_t* e = rd_kafka_init_transactions(producer, timeout_ms);
  if (!e) return {};
  std::string message = rd_kafka_error_string(e);
  rd_kafka_error_destroy(e);
  return tl::unexpected(std::move(message));
}

tl::expected<Transaction, Transaction::Error> Transaction::begin(rd_kafka_t* producer,
                                                                 int timeout_ms) {
  if (rd_kafka_error_t* e = rd_kafka_begin_transaction(producer)) {
    auto [message, fatal] = take(e);
    return tl::unexpected(Error{std::move(message), fatal});
  }
  return Transaction(producer, timeout_ms);
}

tl::expected<void, Transaction::Error> Transaction::commit(const Offsets& offsets,
                                                           rd_kafka_t* consumer,
                                                           const DeliveryError& delivery_error) {
  if (!producer_) return tl::unexpected(Error{"the transaction has ended", false});
  if (delivery_error) {
    if (std::string failed = delivery_error(); !failed.empty()) return fail(failed, false);
  }
  if (!offsets.empty() && consumer) {
    rd_kafka_topic_partition_list_t* list =
        rd_kafka_topic_partition_list_new(static_cast<int>(offsets.size()));
    for (const auto& [tp, offset] : offsets) {
      rd_kafka_topic_partition_list_add(list, tp.first.c_str(), tp.second)->offset = offset;
    }
    rd_kafka_consumer_group_metadata_t* group = rd_kafka_consumer_group_metadata(consumer);
    rd_kafka_error_t* e = rd_kafka_send_offsets_to_transaction(producer_, list, group, timeout_ms_);
    rd_kafka_consumer_group_metadata_destroy(group);
    rd_kafka_topic_partition_list_destroy(list);
    if (e) {
      auto [message, fatal] = take(e);
      return fail(message, fatal);
    }
  }
  rd_kafka_error_t* e = rd_kafka_commit_transaction(producer_, timeout_ms_);
  for (int attempt = 0; e && rd_kafka_error_is_retriable(e) && attempt < 3; ++attempt) {
    rd_kafka_error_destroy(e);
    e = rd_kafka_commit_transaction(producer_, timeout_ms_);
  }
  if (e) {
    auto [message, fatal] = take(e);
    return fail(message, fatal);
  }
  producer_ = nullptr;  // committed
  // A delivery failure the commit did not see (it would have failed): said, though committed.
  if (delivery_error) {
    if (std::string failed = delivery_error(); !failed.empty()) {
      return tl::unexpected(Error{failed, false});
    }
  }
  return {};
}

void Transaction::abort() {
  if (!producer_) return;
  rd_kafka_t* producer = std::exchange(producer_, nullptr);
  if (rd_kafka_error_t* a = rd_kafka_abort_transaction(producer, timeout_ms_)) {
    log::error("transaction_abort_failed", {{"error", rd_kafka_error_string(a)}});
    rd_kafka_error_destroy(a);
  }
}

tl::unexpected<Transaction::Error> Transaction::fail(std::string message, bool fatal) {
  if (fatal) {
    producer_ = nullptr;  // the producer is unusable: not even an abort
  } else {
    abort();
  }
  return tl::unexpected(Error{std::move(message), fatal});
}

}  // namespace newsflow::daemon
