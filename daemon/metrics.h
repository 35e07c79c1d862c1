#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <memory>
#include <string>

namespace newsflow::daemon {

/// The process's Prometheus metrics. Names are a contract with deploy/monitoring (a test fails
/// when the dashboard or the alert rules name a metric that is not here); every counter ends in
/// `_total`, durations in `_seconds`, sizes in `_bytes`. Thread-safe (prometheus-cpp).
class Metrics {
 public:
  Metrics();

  /// The registry to serve on /metrics.
  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

  void consumed(const std::string& topic, int partition) {
    consumed_.Add({{"topic", topic}, {"partition", std::to_string(partition)}}).Increment();
  }
  void produced(const std::string& topic) { produced_.Add({{"topic", topic}}).Increment(); }
  void article(const std::string& dup_kind) { articles_.Add({{"dup_kind", dup_kind}}).Increment(); }
  void story_created() { stories_created_.Increment(); }
  void story_updated() { stories_updated_.Increment(); }
  void dead_letter(const std::string& reason) { dlq_.Add({{"reason", reason}}).Increment(); }
  void fetch(const std::string& outcome) { fetches_.Add({{"outcome", outcome}}).Increment(); }
  void delivery_failed() { delivery_failures_.Increment(); }
  void feed_warning() { feed_warnings_.Increment(); }
  void committed() { commits_.Increment(); }
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
  void producer_queue(double messages) { producer_queue_.Set(messages); }
  void ready(bool is_ready) { ready_.Set(is_ready ? 1 : 0); }
  /// Marks that the processing loop went round (the "no progress" alert watches this).
  void loop_alive(double unix_seconds) { last_loop_.Set(unix_seconds); }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& consumed_;
  prometheus::Family<prometheus::Counter>& produced_;
  prometheus::Family<prometheus::Counter>& articles_;
  prometheus::Family<prometheus::Counter>& dlq_;
  prometheus::Family<prometheus::Counter>& fetches_;
  prometheus::Family<prometheus::Histogram>& stages_;
  prometheus::Family<prometheus::Gauge>& lag_;
  prometheus::Counter& stories_created_;
  prometheus::Counter& stories_updated_;
  prometheus::Counter& delivery_failures_;
  prometheus::Counter& commits_;
  prometheus::Counter& feed_warnings_;
  prometheus::Gauge& window_articles_;
  prometheus::Gauge& window_bytes_;
  prometheus::Gauge& stories_active_;
  prometheus::Gauge& producer_queue_;
  prometheus::Gauge& ready_;
  prometheus::Gauge& last_loop_;
};

}  // namespace newsflow::daemon
