#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <memory>
#include <string>

namespace newsflow::daemon {

/// The process's Prometheus metrics. Names are a contract with deploy/monitoring; every
/// counter ends in `_total` and every histogram in `_seconds`. Thread-safe (prometheus-cpp).
class Metrics {
 public:
  Metrics();

  /// The registry to serve on /metrics.
  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

  void consumed(const std::string& topic) { consumed_.Add({{"topic", topic}}).Increment(); }
  void produced(const std::string& topic) { produced_.Add({{"topic", topic}}).Increment(); }
  void article(const std::string& dup_kind) { articles_.Add({{"dup_kind", dup_kind}}).Increment(); }
  void dead_letter(const std::string& reason) { dlq_.Add({{"reason", reason}}).Increment(); }
  void delivery_failed() { delivery_failures_.Increment(); }
  void feed_warning() { feed_warnings_.Increment(); }
  void committed() { commits_.Increment(); }
  void stage_seconds(const std::string& stage, double seconds);
  void window_size(double n) { window_articles_.Set(n); }
  void stories_active(double n) { stories_active_.Set(n); }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& consumed_;
  prometheus::Family<prometheus::Counter>& produced_;
  prometheus::Family<prometheus::Counter>& articles_;
  prometheus::Family<prometheus::Counter>& dlq_;
  prometheus::Family<prometheus::Histogram>& stages_;
  prometheus::Counter& delivery_failures_;
  prometheus::Counter& commits_;
  prometheus::Counter& feed_warnings_;
  prometheus::Gauge& window_articles_;
  prometheus::Gauge& stories_active_;
};

}  // namespace newsflow::daemon
