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
    consumed_.Add({{"topic", topic}, {"partition", std::to_string(partition)}});
    // Zero until librdkafka's first statistics (statistics.interval.ms) say how far behind.
    lag_.Add({{"topic", topic}, {"partition", std::to_string(partition)}});
  }
  void consumed(const std::string& topic, int partition) {
    consumed_.Add({{"topic", topic}, {"partition", std::to_string(partition)}}).Increment();
  }
  void produced(const std::string& topic) { produced_.Add({{"topic", topic}}).Increment(); }
  /// An article published; `language` is its BCP-47 tag or "" (the label keeps the primary
  /// subtag, "und" when unknown: at most the ~80 languages CLD2 names).
  void article(const std::string& dup_kind, const std::string& language) {
    const std::string primary = language.empty() ? "und" : language.substr(0, language.find('-'));
    articles_.Add({{"dup_kind", dup_kind}, {"language", primary}}).Increment();
  }
  void story_created() { stories_created_.Increment(); }
  void story_updated() { stories_updated_.Increment(); }
  void dead_letter(const std::string& reason) { dlq_.Add({{"reason", reason}}).Increment(); }
  /// A page read only after a repair (`Article::warnings`).
  void extract_warning(const std::string& warning) {
    extract_warnings_.Add({{"warning", warning}}).Increment();
  }
  void fetch(const std::string& outcome) { fetches_.Add({{"outcome", outcome}}).Increment(); }
  void robots_fetch(const std::string& result) { robots_.Add({{"result", result}}).Increment(); }
  /// A later try of a linked page: scheduled, fetched, rescheduled, given_up, invalid, requeued.
  void fetch_retry(const std::string& event) { fetch_retries_.Add({{"event", event}}).Increment(); }
  void fetch_retries_waiting(double n) { fetch_retries_waiting_.Set(n); }
  void delivery_failed() { delivery_failures_.Increment(); }
  /// A message acknowledged without an offset: librdkafka inferred its delivery from a later
  /// request's success (idempotence), which a real broker's sequence checks make sound.
  void delivery_unconfirmed() { delivery_unconfirmed_.Increment(); }
  void dead_letter_refused() { dead_letters_refused_.Increment(); }
  void feed_warning() { feed_warnings_.Increment(); }
  void committed() { commits_.Increment(); }
  void commit_failed() { commit_failures_.Increment(); }
  void order_passed_over(double records) { order_passed_over_.Increment(records); }
  void handed_over_again() { handed_over_again_.Increment(); }
  void stage_seconds(const std::string& stage, double seconds);
  void consumer_lag(const std::string& topic, int partition, double messages) {
    lag_.Add({{"topic", topic}, {"partition", std::to_string(partition)}}).Set(messages);
  }
  /// Drops the lag series of a partition this consumer no longer owns.
  void forget_lag(const std::string& topic, int partition) {
    lag_.Remove(&lag_.Add({{"topic", topic}, {"partition", std::to_string(partition)}}));
  }
  void window_size(double articles, double bytes) {
    window_articles_.Set(articles);
    window_bytes_.Set(bytes);
  }
  void stories_active(double n) { stories_active_.Set(n); }
  /// Articles that left the window before their time because it was full.
  void window_evicted(double n) { window_evictions_.Increment(n); }
  void window_limit(double articles) { window_max_articles_.Set(articles); }
  /// Fetched input records waiting for their turn in event-time order.
  void order_buffer(double messages, double bytes) {
    order_buffer_messages_.Set(messages);
    order_buffer_bytes_.Set(bytes);
  }
  /// State records written to the changelog, and the last restore.
  void state_written() { state_records_.Increment(); }
  /// A snapshot of the judging state written to the changelog (its bytes, how long it took).
  void snapshot_written(double bytes, double seconds) {
    snapshots_.Increment();
    snapshot_bytes_.Set(bytes);
    snapshot_seconds_.Set(seconds);
  }
  void restored(double articles, double seconds) {
    restore_articles_.Set(articles);
    restore_seconds_.Set(seconds);
  }
  void producer_queue(double messages) { producer_queue_.Set(messages); }
  /// The process's role (`newsflow_role_info{role}`).
  void role(const std::string& name) { role_.Add({{"role", name}}).Set(1); }
  /// `--role dedup`: whether this process holds the lease (judges) or is a standby.
  void dedup_owner(bool owner) { dedup_owner_.Set(owner ? 1 : 0); }
  /// A standby's changelog records not applied yet.
  void standby_lag(double records) { standby_lag_.Set(records); }
  /// A standby became the owner; `seconds` to catch up and assign.
  void took_over(double seconds) {
    takeovers_.Increment();
    takeover_seconds_.Set(seconds);
  }
  void ready(bool is_ready) { ready_.Set(is_ready ? 1 : 0); }
  /// Marks that the processing loop went round (the "no progress" alert watches this).
  void loop_alive(double unix_seconds) { last_loop_.Set(unix_seconds); }

 private:
  static const prometheus::Histogram::BucketBoundaries& stage_buckets();
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& consumed_;
  prometheus::Family<prometheus::Counter>& produced_;
  prometheus::Family<prometheus::Counter>& articles_;
  prometheus::Family<prometheus::Counter>& dlq_;
  prometheus::Family<prometheus::Counter>& fetches_;
  prometheus::Family<prometheus::Counter>& fetch_retries_;
  prometheus::Gauge& fetch_retries_waiting_;
  prometheus::Family<prometheus::Counter>& robots_;
  prometheus::Family<prometheus::Counter>& extract_warnings_;
  prometheus::Family<prometheus::Histogram>& stages_;
  prometheus::Family<prometheus::Gauge>& lag_;
  prometheus::Counter& stories_created_;
  prometheus::Counter& stories_updated_;
  prometheus::Counter& delivery_failures_;
  prometheus::Counter& dead_letters_refused_;
  prometheus::Counter& delivery_unconfirmed_;
  prometheus::Counter& commit_failures_;
  prometheus::Counter& order_passed_over_;
  prometheus::Counter& handed_over_again_;
  prometheus::Counter& commits_;
  prometheus::Counter& feed_warnings_;
  prometheus::Gauge& window_articles_;
  prometheus::Gauge& window_bytes_;
  prometheus::Gauge& stories_active_;
  prometheus::Counter& window_evictions_;
  prometheus::Gauge& window_max_articles_;
  prometheus::Gauge& order_buffer_messages_;
  prometheus::Gauge& order_buffer_bytes_;
  prometheus::Counter& state_records_;
  prometheus::Counter& snapshots_;
  prometheus::Gauge& snapshot_bytes_;
  prometheus::Gauge& snapshot_seconds_;
  prometheus::Gauge& restore_articles_;
  prometheus::Gauge& restore_seconds_;
  prometheus::Gauge& producer_queue_;
  prometheus::Family<prometheus::Gauge>& role_;
  prometheus::Gauge& dedup_owner_;
  prometheus::Gauge& standby_lag_;
  prometheus::Counter& takeovers_;
  prometheus::Gauge& takeover_seconds_;
  prometheus::Gauge& ready_;
  prometheus::Gauge& last_loop_;
};

}  // namespace newsflow::daemon
