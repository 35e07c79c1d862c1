#pragma once

#include <string>

#include "config/config.h"

namespace newsflow::daemon {

/// Blocks SIGINT and SIGTERM in the calling thread and every thread it starts afterwards, so a
/// watcher thread can take them with sigwait. Call first thing in main.
void block_stop_signals();

/// `newsflow run`: the daemon until SIGTERM/SIGINT. With no brokers configured it starts the
/// embedded mock cluster and logs its bootstrap address. Returns the exit code (2 for startup
/// errors).
int run_service(const config::Config& config);

/// Options of `newsflow demo`.
struct DemoOptions {
  std::string samples;        ///< replay JSONL (plain or gzip) to feed to the pages topic
  std::string feeds;          ///< replay JSONL of feeds for the feeds topic (may be empty)
  double linger_seconds = 0;  ///< keep serving /metrics this long after the run (0: exit)
};

/// `newsflow demo`: the daemon on the embedded cluster, fed with the sample pages and a few
/// poison messages; prints what happened and where the metrics are.
int run_demo(const config::Config& config, const DemoOptions& options);

/// Options of `newsflow produce`.
struct ProduceOptions {
  std::string input;    ///< replay JSONL or WARC, plain or gzip
  int repeat = 1;       ///< copies of each line (ids "-N", URLs "#N")
  bool poison = false;  ///< also the three poison messages of the demo
  bool quiet = false;   ///< no progress on stderr
  /// Messages per second (0: as fast as the brokers take them). Paced messages carry a
  /// `produced_at` header (Unix milliseconds) for latency measurements.
  double rate = 0;
  /// Each record's timestamp is its event time (published, else fetched), as an archive's
  /// crawler may stamp it; by default the time it is sent, so the topic's time retention does
  /// not delete a backfill of old pages before the daemon reads them.
  bool event_timestamps = false;
};

/// `newsflow produce`: replay lines to the configured brokers' pages and feeds topics, as a
/// crawler would send them; prints the number of messages produced.
int run_produce(const config::Config& config, const ProduceOptions& options);

/// Options of `newsflow dev-broker`.
struct DevBrokerOptions {
  int brokers = 3;
  int partitions = 64;
  std::vector<std::string> topics;  ///< empty: the configured topics
  std::string bootstrap_file;       ///< where to write the bootstrap address
  std::string control_file;         ///< fault-injection commands appended here are applied
};

/// `newsflow dev-broker`: a mock cluster in its own process until SIGTERM/SIGINT.
int run_dev_broker(const config::Config& config, const DevBrokerOptions& options);

}  // namespace newsflow::daemon
