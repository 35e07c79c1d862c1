#include "daemon/metrics.h"

#include "daemon/version.h"

namespace newsflow::daemon {

Metrics::Metrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      consumed_(prometheus::BuildCounter()
                    .Name("newsflow_messages_consumed_total")
                    .Help("Input messages consumed, by topic")
                    .Register(*registry_)),
      produced_(prometheus::BuildCounter()
                    .Name("newsflow_messages_produced_total")
                    .Help("Output messages acknowledged by the brokers, by topic")
                    .Register(*registry_)),
      articles_(prometheus::BuildCounter()
                    .Name("newsflow_articles_total")
                    .Help("Articles out of the pipeline, by duplicate kind")
                    .Register(*registry_)),
      dlq_(prometheus::BuildCounter()
               .Name("newsflow_dlq_total")
               .Help("Inputs sent to the dead-letter queue, by reason")
               .Register(*registry_)),
      stages_(prometheus::BuildHistogram()
                  .Name("newsflow_stage_seconds")
                  .Help("Time spent per input in each pipeline stage")
                  .Register(*registry_)),
      delivery_failures_(prometheus::BuildCounter()
                             .Name("newsflow_delivery_failures_total")
                             .Help("Output messages the brokers did not acknowledge")
                             .Register(*registry_)
                             .Add({})),
      commits_(prometheus::BuildCounter()
                   .Name("newsflow_offset_commits_total")
                   .Help("Input offset commits after outputs were acknowledged")
                   .Register(*registry_)
                   .Add({})),
      feed_warnings_(prometheus::BuildCounter()
                         .Name("newsflow_feed_warnings_total")
                         .Help("Feeds read only in part (ill-formed XML; recovered items kept)")
                         .Register(*registry_)
                         .Add({})),
      window_articles_(prometheus::BuildGauge()
                           .Name("newsflow_window_articles")
                           .Help("Articles held in the dedup window")
                           .Register(*registry_)
                           .Add({})),
      stories_active_(prometheus::BuildGauge()
                          .Name("newsflow_stories_active")
                          .Help("Stories held in the window")
                          .Register(*registry_)
                          .Add({})) {
  prometheus::BuildGauge()
      .Name("newsflow_build_info")
      .Help("Always 1; the labels carry the build")
      .Register(*registry_)
      .Add({{"version", kVersion}})
      .Set(1);
}

void Metrics::stage_seconds(const std::string& stage, double seconds) {
  static const prometheus::Histogram::BucketBoundaries kBuckets{
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};
  stages_.Add({{"stage", stage}}, kBuckets).Observe(seconds);
}

}  // namespace newsflow::daemon
