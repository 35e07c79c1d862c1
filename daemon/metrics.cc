#include "daemon/metrics.h"

#include <chrono>

#include "daemon/version.h"

namespace newsflow::daemon {
namespace {

prometheus::Family<prometheus::Counter>& counter(prometheus::Registry& r, const char* name,
                                                 const char* help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(r);
}

prometheus::Family<prometheus::Gauge>& gauge(prometheus::Registry& r, const char* name,
                                             const char* help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(r);
}

}  // namespace

Metrics::Metrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      consumed_(counter(*registry_, "newsflow_messages_consumed_total",
                        "Input messages consumed, by topic and partition")),
      produced_(counter(*registry_, "newsflow_messages_produced_total",
                        "Output messages acknowledged by the brokers, by topic")),
      articles_(counter(*registry_, "newsflow_articles_total",
                        "Articles out of the pipeline, by duplicate kind")),
      dlq_(counter(*registry_, "newsflow_dlq_total",
                   "Inputs sent to the dead-letter queue, by reason")),
      fetches_(counter(*registry_, "newsflow_fetch_total",
                       "Article page fetches for link-only feed items, by outcome")),
      stages_(prometheus::BuildHistogram()
                  .Name("newsflow_stage_seconds")
                  .Help("Time per input in each pipeline stage (parse, extract, dedup, cluster); "
                        "produce is per batch, until every output is acknowledged")
                  .Register(*registry_)),
      lag_(gauge(*registry_, "newsflow_consumer_lag_messages",
                 "Messages behind the partition's end, per assigned input partition "
                 "(librdkafka statistics)")),
      stories_created_(
          counter(*registry_, "newsflow_stories_created_total", "Stories started").Add({})),
      stories_updated_(counter(*registry_, "newsflow_stories_updated_total",
                               "Articles that joined an existing story")
                           .Add({})),
      delivery_failures_(counter(*registry_, "newsflow_delivery_failures_total",
                                 "Output messages the brokers did not acknowledge")
                             .Add({})),
      commits_(counter(*registry_, "newsflow_offset_commits_total",
                       "Input offset commits after outputs were acknowledged")
                   .Add({})),
      feed_warnings_(counter(*registry_, "newsflow_feed_warnings_total",
                             "Feeds read only in part (ill-formed XML; recovered items kept)")
                         .Add({})),
      window_articles_(
          gauge(*registry_, "newsflow_window_articles", "Articles held in the dedup window")
              .Add({})),
      window_bytes_(
          gauge(*registry_, "newsflow_window_bytes", "Estimated heap bytes of the dedup window")
              .Add({})),
      stories_active_(
          gauge(*registry_, "newsflow_stories_active", "Stories held in the window").Add({})),
      producer_queue_(gauge(*registry_, "newsflow_producer_queue_messages",
                            "Output messages waiting in the producer for acknowledgement")
                          .Add({})),
      ready_(gauge(*registry_, "newsflow_ready",
                   "1 while partitions are assigned and the daemon is consuming")
                 .Add({})),
      last_loop_(gauge(*registry_, "newsflow_last_loop_timestamp_seconds",
                       "Unix time the processing loop last went round")
                     .Add({})) {
  gauge(*registry_, "newsflow_build_info", "Always 1; the labels carry the build")
      .Add({{"version", kVersion}, {"compiler", __VERSION__}})
      .Set(1);
  gauge(*registry_, "newsflow_start_time_seconds", "Unix time the process started")
      .Add({})
      .Set(std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
               .count());
}

void Metrics::stage_seconds(const std::string& stage, double seconds) {
  static const prometheus::Histogram::BucketBoundaries kBuckets{
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};
  stages_.Add({{"stage", stage}}, kBuckets).Observe(seconds);
}

}  // namespace newsflow::daemon
