#pragma once

#include <functional>

#include "config/config.h"
#include "daemon/pipeline/document.h"
#include "daemon/pipeline/input.h"

typedef struct rd_kafka_message_s rd_kafka_message_t;

namespace newsflow::daemon {

class Metrics;
class RecordCollector;

/// Where an input that yields no article goes, through the record collector with the batch it
/// belongs to: `topics.dlq`, its record carrying the input (bounded so the record is never
/// refused for its size) and why in headers; or, for a feed item's page that time may cure (a
/// site down, a 429), `topics.fetch_retries`, to be fetched again later. Each dead letter is
/// counted (`newsflow_dead_letters_total`) and told to `noted` (the status page's list).
class DeadLetters {
 public:
  using Noted = std::function<void(const rd_kafka_message_t* msg, const Failure& failure)>;

  DeadLetters(const config::Config& config, RecordCollector& collector, Metrics& metrics,
              Noted noted)
      : config_(config), collector_(collector), metrics_(metrics), noted_(std::move(noted)) {}

  /// Whether pages that failed for a reason time may cure are tried again (the role fetches,
  /// `topics.fetch_retries` is set and `fetch.requeue_attempts` is above 0).
  void allow_fetch_retries(bool allowed) { fetch_retries_ = allowed; }
  bool fetch_retries() const { return fetch_retries_; }

  /// The input `msg` failed as a whole.
  void input(rd_kafka_message_t* msg, const Failure& failure);

  /// A feed item of `msg` whose page could not be had: its retry when time may cure the
  /// failure, else a dead letter naming the item (not the whole feed).
  void item(rd_kafka_message_t* msg, const Extracted& item, const Input& feed);

 private:
  bool retry_later(rd_kafka_message_t* msg, const Extracted& item, const Input& feed);
  void note(rd_kafka_message_t* msg, const Failure& failure);

  const config::Config& config_;
  RecordCollector& collector_;
  Metrics& metrics_;
  Noted noted_;
  bool fetch_retries_ = false;
};

}  // namespace newsflow::daemon
