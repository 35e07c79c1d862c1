#include "daemon/kafka/transaction.h"

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <mutex>
#include <set>

#include "daemon/ops/log.h"

namespace newsflow::daemon {

namespace {

// A commit or abort that timed out is resumed (librdkafka keeps it as a call to resume: any
// other transactional call meanwhile fails with __CONFLICT) for as long as the broker may still
// finish it: its transaction timeout, 60 s by default.
constexpr auto kResumeFor = std::chrono::seconds(60);

// Producers whose transactional state no retry can leave: only a new process (a fresh
// init_transactions, which fences and aborts what was left) gets them going again.
// Known by their names, which librdkafka numbers anew for every client of the process (an
// address may be taken again by a later client).
std::mutex wedged_mu;
std::set<std::string> wedged;

void mark_wedged(const rd_kafka_t* producer, const std::string& why) {
  log::error("transactional_producer_wedged",
             {{"error", why}, {"action", "the process exits; a restart initializes it again"}});
  const std::lock_guard lock(wedged_mu);
  wedged.insert(rd_kafka_name(producer));
}

// Calls `call` until it finishes or fails for a reason a retry does not cure, resuming it
// after a timeout. Returns its last error (null: done).
template <typename Call>
rd_kafka_error_t* resumed(const Call& call) {
  const auto until = std::chrono::steady_clock::now() + kResumeFor;
  rd_kafka_error_t* e = call();
  while (e && rd_kafka_error_is_retriable(e) && !rd_kafka_error_txn_requires_abort(e) &&
         std::chrono::steady_clock::now() < until) {
    rd_kafka_error_destroy(e);
    e = call();
  }
  return e;
}

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

bool Transaction::usable(const rd_kafka_t* producer) {
  const std::lock_guard lock(wedged_mu);
  return wedged.empty() || !wedged.contains(rd_kafka_name(producer));
}

tl::expected<Transaction, Transaction::Error> Transaction::begin(rd_kafka_t* producer,
                                                                 int timeout_ms) {
  if (!usable(producer)) {
    return tl::unexpected(Error{"the transactional producer is wedged (see the log)", true});
  }
  if (rd_kafka_error_t* e = rd_kafka_begin_transaction(producer)) {
    const rd_kafka_resp_err_t code = rd_kafka_error_code(e);
    auto [message, fatal] = take(e);
    // Another call still in progress, or a state begin cannot be called in: nothing this
    // process does gets the producer out of it.
    if (code == RD_KAFKA_RESP_ERR__CONFLICT || code == RD_KAFKA_RESP_ERR__STATE) {
      mark_wedged(producer, message);
      fatal = true;
    }
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
  // A commit that timed out is resumed, not abandoned (an abort meanwhile would conflict).
  rd_kafka_error_t* e =
      resumed([this] { return rd_kafka_commit_transaction(producer_, timeout_ms_); });
  if (e) {
    const bool retriable = rd_kafka_error_is_retriable(e) && !rd_kafka_error_txn_requires_abort(e);
    auto [message, fatal] = take(e);
    if (retriable) {
      // Still not finished after the broker's own transaction timeout.
      mark_wedged(producer_, "commit_transaction did not finish: " + message);
      producer_ = nullptr;
      return tl::unexpected(Error{std::move(message), true});
    }
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
  // An abort that timed out is resumed too; one that cannot finish leaves the producer unusable.
  if (rd_kafka_error_t* a =
          resumed([this, producer] { return rd_kafka_abort_transaction(producer, timeout_ms_); })) {
    const std::string message = rd_kafka_error_string(a);
    const bool fatal = rd_kafka_error_is_fatal(a);
    rd_kafka_error_destroy(a);
    log::error("transaction_abort_failed", {{"error", message}});
    if (!fatal) mark_wedged(producer, "abort_transaction did not finish: " + message);
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
