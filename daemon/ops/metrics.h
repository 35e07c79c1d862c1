#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <memory>
#include <string>
#include <vector>

namespace newsflow::daemon {

/// The process's Prometheus metrics. Names are a contract with deploy/monitoring (a test fails
/// when the dashboard or the alert rules name a metric that is not here); every counter ends in
/// `_total`, durations in `_seconds`, sizes in `_bytes`. Thread-safe (prometheus-cpp).
class Metrics {
 public:
  Metrics();

  /// Creates at zero every series whose label values are known in advance (duplicate kinds,
  /// dead-letter reasons, stages, fetch outcomes, the topics), so dashboards and ratio alerts
  /// have data from the first scrape (Prometheus' instrumentation guidelines).
  void initialize(const std::vector<std::string>& input_topics,
                  const std::vector<std::string>& output_topics);

  /// The dead-letter reasons the pipeline can give (the `reason` label's values).
  static const std::vector<std::string>& dead_letter_reasons();

  /// The registry to serve on /metrics.
  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

  /// A partition this consumer now reads: its series exist from now on.
  void partition_assigned(const std::string& topic, int partition) {
    flow_.consumed.Add({{"topic", topic}, {"partition", std::to_string(partition)}});
    // Zero until librdkafka's first statistics (statistics.interval.ms) say how far behind.
    intake_.lag.Add({{"topic", topic}, {"partition", std::to_string(partition)}});
  }
  void consumed(const std::string& topic, int partition) {
    flow_.consumed.Add({{"topic", topic}, {"partition", std::to_string(partition)}}).Increment();
  }
  void produced(const std::string& topic) { flow_.produced.Add({{"topic", topic}}).Increment(); }
  /// An article published; `language` is its BCP-47 tag or "" (the label keeps the primary
  /// subtag, "und" when unknown: at most the ~80 languages CLD2 names).
  void article(const std::string& dup_kind, const std::string& language) {
    const std::string primary = language.empty() ? "und" : language.substr(0, language.find('-'));
    flow_.articles.Add({{"dup_kind", dup_kind}, {"language", primary}}).Increment();
  }
  void story_created() { flow_.stories_created.Increment(); }
  void story_updated() { flow_.stories_updated.Increment(); }
  void dead_letter(const std::string& reason) { flow_.dlq.Add({{"reason", reason}}).Increment(); }
  /// A page read only after a repair (`Article::warnings`).
  void extract_warning(const std::string& warning) {
    flow_.extract_warnings.Add({{"warning", warning}}).Increment();
  }
  void fetch(const std::string& outcome) {
    fetching_.fetches.Add({{"outcome", outcome}}).Increment();
  }
  void robots_fetch(const std::string& result) {
    fetching_.robots.Add({{"result", result}}).Increment();
  }
  /// A later try of a linked page: scheduled, fetched, rescheduled, given_up, invalid, requeued.
  void fetch_retry(const std::string& event) {
    fetching_.fetch_retries.Add({{"event", event}}).Increment();
  }
  void fetch_retries_waiting(double n) { fetching_.fetch_retries_waiting.Set(n); }
  void delivery_failed() { delivery_.delivery_failures.Increment(); }
  /// A message acknowledged without an offset: librdkafka inferred its delivery from a later
  /// request's success (idempotence), which a real broker's sequence checks make sound.
  void delivery_unconfirmed() { delivery_.delivery_unconfirmed.Increment(); }
  void dead_letter_refused() { delivery_.dead_letters_refused.Increment(); }
  void feed_warning() { flow_.feed_warnings.Increment(); }
  void committed() { delivery_.commits.Increment(); }
  void commit_failed() { delivery_.commit_failures.Increment(); }
  void order_passed_over(double records) { intake_.order_passed_over.Increment(records); }
  void order_late(double records) { intake_.order_late.Increment(records); }
  void handed_over_again() { intake_.handed_over_again.Increment(); }
  void stage_seconds(const std::string& stage, double seconds);
  void consumer_lag(const std::string& topic, int partition, double messages) {
    intake_.lag.Add({{"topic", topic}, {"partition", std::to_string(partition)}}).Set(messages);
  }
  /// Drops the lag series of a partition this consumer no longer owns.
  void forget_lag(const std::string& topic, int partition) {
    intake_.lag.Remove(
        &intake_.lag.Add({{"topic", topic}, {"partition", std::to_string(partition)}}));
  }
  void window_size(double articles, double bytes) {
    state_.window_articles.Set(articles);
    state_.window_bytes.Set(bytes);
  }
  void stories_active(double n) { state_.stories_active.Set(n); }
  /// Articles that left the window before their time because it was full.
  void window_evicted(double n) { state_.window_evictions.Increment(n); }
  void window_limit(double articles) { state_.window_max_articles.Set(articles); }
  /// Fetched input records waiting for their turn in event-time order.
  void order_buffer(double messages, double bytes) {
    intake_.order_buffer_messages.Set(messages);
    intake_.order_buffer_bytes.Set(bytes);
  }
  /// State records written to the changelog, and the last restore.
  void state_written() { state_.state_records.Increment(); }
  /// A snapshot of the judging state written to the changelog (its bytes, how long it took).
  void snapshot_written(double bytes, double seconds) {
    state_.snapshots.Increment();
    state_.snapshot_bytes.Set(bytes);
    state_.snapshot_seconds.Set(seconds);
  }
  void restored(double articles, double seconds) {
    state_.restore_articles.Set(articles);
    state_.restore_seconds.Set(seconds);
  }
  void producer_queue(double messages) { delivery_.producer_queue.Set(messages); }
  /// The process's role (`newsflow_role_info{role}`).
  void role(const std::string& name) { process_.role.Add({{"role", name}}).Set(1); }
  /// `--role dedup`: whether this process holds the lease (judges) or is a standby.
  void dedup_owner(bool owner) { process_.dedup_owner.Set(owner ? 1 : 0); }
  /// A standby's changelog records not applied yet.
  void standby_lag(double records) { process_.standby_lag.Set(records); }
  /// A standby became the owner; `seconds` to catch up and assign.
  void took_over(double seconds) {
    process_.takeovers.Increment();
    process_.takeover_seconds.Set(seconds);
  }
  void ready(bool is_ready) { process_.ready.Set(is_ready ? 1 : 0); }
  /// Marks that the processing loop went round (the "no progress" alert watches this).
  void loop_alive(double unix_seconds) { process_.last_loop.Set(unix_seconds); }

 private:
  /// What goes through the pipeline: inputs, outputs, articles, dead letters, stories, the stages'
  /// times, and the pages and feeds read only in part.
  struct Flow {
    prometheus::Family<prometheus::Counter>& consumed;
    prometheus::Family<prometheus::Counter>& produced;
    prometheus::Family<prometheus::Counter>& articles;
    prometheus::Family<prometheus::Counter>& dlq;
    prometheus::Family<prometheus::Counter>& extract_warnings;
    prometheus::Counter& feed_warnings;
    prometheus::Family<prometheus::Histogram>& stages;
    prometheus::Counter& stories_created;
    prometheus::Counter& stories_updated;
  };
  /// The pages feed items link to, their later tries and robots.txt.
  struct Fetching {
    prometheus::Family<prometheus::Counter>& fetches;
    prometheus::Family<prometheus::Counter>& fetch_retries;
    prometheus::Gauge& fetch_retries_waiting;
    prometheus::Family<prometheus::Counter>& robots;
  };
  /// The input partitions: their lag and the event-time order across them.
  struct Intake {
    prometheus::Family<prometheus::Gauge>& lag;
    prometheus::Counter& order_passed_over;
    prometheus::Counter& order_late;
    prometheus::Counter& handed_over_again;
    prometheus::Gauge& order_buffer_messages;
    prometheus::Gauge& order_buffer_bytes;
  };
  /// The outputs on their way to the brokers and the input offsets committed after them.
  struct Delivery {
    prometheus::Counter& delivery_failures;
    prometheus::Counter& dead_letters_refused;
    prometheus::Counter& delivery_unconfirmed;
    prometheus::Gauge& producer_queue;
    prometheus::Counter& commits;
    prometheus::Counter& commit_failures;
  };
  /// The window and the judging state: its size, evictions, the changelog, snapshots and the
  /// restore.
  struct State {
    prometheus::Gauge& window_articles;
    prometheus::Gauge& window_bytes;
    prometheus::Gauge& stories_active;
    prometheus::Counter& window_evictions;
    prometheus::Gauge& window_max_articles;
    prometheus::Counter& state_records;
    prometheus::Counter& snapshots;
    prometheus::Gauge& snapshot_bytes;
    prometheus::Gauge& snapshot_seconds;
    prometheus::Gauge& restore_articles;
    prometheus::Gauge& restore_seconds;
  };
  /// The process: its role, the dedup lease, readiness and the loop's liveness.
  struct Process {
    prometheus::Family<prometheus::Gauge>& role;
    prometheus::Gauge& dedup_owner;
    prometheus::Gauge& standby_lag;
    prometheus::Counter& takeovers;
    prometheus::Gauge& takeover_seconds;
    prometheus::Gauge& ready;
    prometheus::Gauge& last_loop;
  };

  static Flow register_flow(prometheus::Registry& r);
  static Fetching register_fetching(prometheus::Registry& r);
  static Intake register_intake(prometheus::Registry& r);
  static Delivery register_delivery(prometheus::Registry& r);
  static State register_state(prometheus::Registry& r);
  static Process register_process(prometheus::Registry& r);
  /// The build's labels and the start time, set once.
  static void register_build(prometheus::Registry& r);
  static const prometheus::Histogram::BucketBoundaries& stage_buckets();

  std::shared_ptr<prometheus::Registry> registry_;
  Flow flow_;
  Fetching fetching_;
  Intake intake_;
  Delivery delivery_;
  State state_;
  Process process_;
};

}  // namespace newsflow::daemon
