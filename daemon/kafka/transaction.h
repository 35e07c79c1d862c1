#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include "tl/expected.hpp"

typedef struct rd_kafka_s rd_kafka_t;

namespace newsflow::daemon {

/// One transaction of a transactional producer (`kafka.delivery: exactly_once`), begun by
/// `begin` and ended by `commit` or `abort` (or by its destructor, which aborts one still open).
/// Every transaction ends by one rule, as librdkafka's `examples/transactions.c` has it:
/// - a commit or abort that timed out or failed for a retriable reason is resumed (the same call
///   again, as librdkafka requires) for up to 60 s, the broker's default transaction timeout;
/// - a state no retry can leave (a commit or abort that never finishes, `__CONFLICT` or
///   `__STATE` from begin) marks the producer wedged: `usable` is false, later transactions fail
///   as fatal, and the caller ends the process so that a restart initializes the producer anew;
/// - a record of the transaction that was not delivered, or an error that requires it, aborts
///   the transaction, so no reader with `isolation.level=read_committed` sees its records (the
///   caller produces them again in a new one);
/// - a fatal error leaves the producer unusable: nothing more is done with it, and the error
///   says so (`Error::fatal`; the caller stops).
class Transaction {
 public:
  struct Error {
    std::string message;
    bool fatal = false;
  };
  /// Input offsets to commit with the transaction, per (topic, partition).
  using Offsets = std::map<std::pair<std::string, int>, std::int64_t>;
  /// The error of a record of the transaction that was not delivered ("" while none was).
  using DeliveryError = std::function<std::string()>;

  /// Makes `producer` (with its `transactional.id`) ready for transactions, fencing any other
  /// producer of that id and aborting its open transaction. The error is librdkafka's.
  static tl::expected<void, std::string> initialize(rd_kafka_t* producer, int timeout_ms = 60000);

  /// False once a transaction of `producer` reached a state no retry can leave.
  static bool usable(const rd_kafka_t* producer);

  /// Begins a transaction on `producer`; `timeout_ms` bounds each of its later requests.
  static tl::expected<Transaction, Error> begin(rd_kafka_t* producer, int timeout_ms);

  Transaction(Transaction&& other) noexcept
      : producer_(std::exchange(other.producer_, nullptr)), timeout_ms_(other.timeout_ms_) {}
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  ~Transaction() { abort(); }

  /// Commits the transaction with `offsets` of the consumer group of `consumer` (none: only
  /// the records). Aborts it instead when `delivery_error` names a record that failed, before
  /// or during the commit's flush.
  tl::expected<void, Error> commit(const Offsets& offsets = {}, rd_kafka_t* consumer = nullptr,
                                   const DeliveryError& delivery_error = {});

  /// Aborts the transaction if it is still open.
  void abort();

  bool open() const { return producer_ != nullptr; }

 private:
  Transaction(rd_kafka_t* producer, int timeout_ms)
      : producer_(producer), timeout_ms_(timeout_ms) {}
  /// Ends the transaction after `error`: aborted unless fatal.
  tl::unexpected<Error> fail(std::string message, bool fatal);

  rd_kafka_t* producer_;  // null once ended
  int timeout_ms_;
};

}  // namespace newsflow::daemon
