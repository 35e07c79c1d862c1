#include "daemon/ops/metrics.h"

#include <chrono>

#include "daemon/pipeline/reasons.h"
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
                        "Articles out of the pipeline, by duplicate kind and language")),
      dlq_(counter(*registry_, "newsflow_dlq_total",
                   "Inputs sent to the dead-letter queue, by reason")),
      fetches_(counter(*registry_, "newsflow_fetch_total",
                       "Article page fetches for link-only feed items, by outcome")),
      fetch_retries_(counter(*registry_, "newsflow_fetch_retries_total",
                             "Later tries of linked pages (topics.fetch_retries), by event: "
                             "scheduled (a try failed for a reason time may cure), fetched (a "
                             "later try brought the page), rescheduled, given_up (a dead letter), "
                             "invalid (a record that is no retry), requeued (a long wait written "
                             "again at the end of its topic, so the records after it commit)")),
      fetch_retries_waiting_(gauge(*registry_, "newsflow_fetch_retries_waiting",
                                   "Linked pages waiting here for their next try")
                                 .Add({})),
      robots_(counter(*registry_, "newsflow_robots_fetch_total",
                      "robots.txt fetches, by result: ok (rules read), unavailable (4xx: all "
                      "allowed), unreachable (5xx, 429 or network: all disallowed for a while), "
                      "error (not judged: DNS, blocked address)")),
      extract_warnings_(counter(*registry_, "newsflow_extract_warnings_total",
                                "Pages read only after a repair, by warning "
                                "(control_characters_replaced, unterminated_element_closed, "
                                "words_beyond_limit_not_read)")),
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
      dead_letters_refused_(
          counter(*registry_, "newsflow_dead_letters_refused_total",
                  "Dead-letter records the producer or broker refused for good (too large for "
                  "the DLQ topic): logged as dead_letter_refused; the batch goes on")
              .Add({})),
      delivery_unconfirmed_(
          counter(*registry_, "newsflow_delivery_unconfirmed_total",
                  "Output messages acknowledged without an offset (implied by a later request's "
                  "success under idempotence; only a broker that skips sequence checks, such as "
                  "librdkafka's mock cluster, makes this a loss)")
              .Add({})),
      commit_failures_(counter(*registry_, "newsflow_commit_failures_total",
                               "Offset commits that failed (retried with the next commit, while "
                               "idle and before exit)")
                           .Add({})),
      order_passed_over_(
          counter(*registry_, "newsflow_order_passed_over_total",
                  "Inputs taken while a partition that might still deliver an older one was passed "
                  "over (idle for kafka.max_idle_ms, or lagging for 10 s): possibly out of "
                  "event-time order")
              .Add({})),
      handed_over_again_(
          counter(*registry_, "newsflow_handed_over_again_total",
                  "Extracted records of inputs judged before, handed over again by an extractor "
                  "that took their partition over from the last commit: skipped")
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
      window_evictions_(counter(*registry_, "newsflow_window_evictions_total",
                                "Articles that left the dedup window before their time because "
                                "it held window.max_articles")
                            .Add({})),
      window_max_articles_(gauge(*registry_, "newsflow_window_max_articles",
                                 "The window's bound on articles held (window.max_articles)")
                               .Add({})),
      order_buffer_messages_(gauge(*registry_, "newsflow_order_buffer_messages",
                                   "Fetched input messages waiting for their turn in "
                                   "event-time order across partitions")
                                 .Add({})),
      order_buffer_bytes_(gauge(*registry_, "newsflow_order_buffer_bytes",
                                "Bytes of the input messages waiting in event-time order")
                              .Add({})),
      state_records_(counter(*registry_, "newsflow_state_records_total",
                             "Per-article state records queued to the state changelog")
                         .Add({})),
      snapshots_(counter(*registry_, "newsflow_state_snapshots_total",
                         "Snapshots of the judging state written to the state changelog")
                     .Add({})),
      snapshot_bytes_(gauge(*registry_, "newsflow_state_snapshot_bytes",
                            "Bytes of the last snapshot of the judging state")
                          .Add({})),
      snapshot_seconds_(gauge(*registry_, "newsflow_state_snapshot_seconds",
                              "Seconds the judging paused to write the last snapshot")
                            .Add({})),
      restore_articles_(gauge(*registry_, "newsflow_restore_articles",
                              "Articles put back into the window by the last restore")
                            .Add({})),
      restore_seconds_(gauge(*registry_, "newsflow_restore_seconds",
                             "Duration of the last restore of the window and the stories")
                           .Add({})),
      producer_queue_(gauge(*registry_, "newsflow_producer_queue_messages",
                            "Output messages waiting in the producer for acknowledgement")
                          .Add({})),
      role_(gauge(*registry_, "newsflow_role_info",
                  "Always 1; the label is the process's role (all, extract, dedup)")),
      dedup_owner_(gauge(*registry_, "newsflow_dedup_owner",
                         "--role dedup: 1 while this process holds the dedup lease and judges, 0 "
                         "while it is a standby following the state changelog")
                       .Add({})),
      standby_lag_(gauge(*registry_, "newsflow_standby_lag_records",
                         "--role dedup standby: state changelog records not applied yet")
                       .Add({})),
      takeovers_(counter(*registry_, "newsflow_dedup_takeovers_total",
                         "Times this process took the dedup lease over as a standby")
                     .Add({})),
      takeover_seconds_(gauge(*registry_, "newsflow_dedup_takeover_seconds",
                              "Catch-up and assignment time of the last takeover")
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

const std::vector<std::string>& Metrics::dead_letter_reasons() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const ReasonName& r : kReasons) {
      if (r.on_topics) names.emplace_back(r.name);
    }
    return names;
  }();
  return kNames;
}

void Metrics::initialize(const std::vector<std::string>& input_topics,
                         const std::vector<std::string>& output_topics) {
  for (const char* kind : {"unique", "exact", "near", "contained"})
    articles_.Add({{"dup_kind", kind}, {"language", "und"}});
  for (const auto& reason : dead_letter_reasons()) dlq_.Add({{"reason", reason}});
  for (const char* w : {"control_characters_replaced", "unterminated_element_closed",
                        "words_beyond_limit_not_read", "text_truncated", "title_truncated"}) {
    extract_warnings_.Add({{"warning", w}});
  }
  for (const char* outcome :
       {"ok", "already_seen", "http_4xx", "http_5xx", "http_429", "timeout", "connect_error",
        "dns_error", "blocked_address", "blocked_scheme", "too_large", "too_many_redirects",
        "not_html", "disallowed", "deferred", "error"}) {
    fetches_.Add({{"outcome", outcome}});
  }
  for (const char* result : {"ok", "unavailable", "unreachable", "error"}) {
    robots_.Add({{"result", result}});
  }
  for (const char* event :
       {"scheduled", "fetched", "rescheduled", "given_up", "invalid", "requeued"}) {
    fetch_retries_.Add({{"event", event}});
  }
  for (const char* stage : {"parse", "extract", "fetch", "dedup", "cluster", "produce"}) {
    stages_.Add({{"stage", stage}}, stage_buckets());
  }
  for (const auto& topic : output_topics) produced_.Add({{"topic", topic}});
  // Partitions are known at assignment (`partition_assigned`); until then one series per topic.
  for (const auto& topic : input_topics) {
    consumed_.Add({{"topic", topic}, {"partition", "0"}});
    lag_.Add({{"topic", topic}, {"partition", "0"}});
  }
}

const prometheus::Histogram::BucketBoundaries& Metrics::stage_buckets() {
  static const prometheus::Histogram::BucketBoundaries kBuckets{
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};
  return kBuckets;
}

void Metrics::stage_seconds(const std::string& stage, double seconds) {
  stages_.Add({{"stage", stage}}, stage_buckets()).Observe(seconds);
}

}  // namespace newsflow::daemon
