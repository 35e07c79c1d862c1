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

Metrics::Flow Metrics::register_flow(prometheus::Registry& r) {
  return {
      .consumed = counter(r, "newsflow_messages_consumed_total",
                          "Input messages consumed, by topic and partition"),
      .produced = counter(r, "newsflow_messages_produced_total",
                          "Output messages acknowledged by the brokers, by topic"),
      .articles = counter(r, "newsflow_articles_total",
                          "Articles out of the pipeline, by duplicate kind and language"),
      .dlq = counter(r, "newsflow_dlq_total", "Inputs sent to the dead-letter queue, by reason"),
      .extract_warnings = counter(r, "newsflow_extract_warnings_total",
                                  "Pages read only after a repair, by warning "
                                  "(control_characters_replaced, unterminated_element_closed, "
                                  "words_beyond_limit_not_read)"),
      .feed_warnings = counter(r, "newsflow_feed_warnings_total",
                               "Feeds read only in part (ill-formed XML; recovered items kept)")
                           .Add({}),
      .stages = prometheus::BuildHistogram()
                    .Name("newsflow_stage_seconds")
                    .Help("Time per input in each pipeline stage (parse, extract, dedup, cluster); "
                          "produce is per batch, until every output is acknowledged")
                    .Register(r),
      .stories_created = counter(r, "newsflow_stories_created_total", "Stories started").Add({}),
      .stories_updated =
          counter(r, "newsflow_stories_updated_total", "Articles that joined an existing story")
              .Add({}),
  };
}

Metrics::Fetching Metrics::register_fetching(prometheus::Registry& r) {
  return {
      .fetches = counter(r, "newsflow_fetch_total",
                         "Article page fetches for link-only feed items, by outcome"),
      .fetch_retries =
          counter(r, "newsflow_fetch_retries_total",
                  "Later tries of linked pages (topics.fetch_retries), by event: "
                  "scheduled (a try failed for a reason time may cure), fetched (a "
                  "later try brought the page), rescheduled, given_up (a dead letter), "
                  "invalid (a record that is no retry), requeued (a long wait written "
                  "again at the end of its topic, so the records after it commit)"),
      .fetch_retries_waiting =
          gauge(r, "newsflow_fetch_retries_waiting", "Linked pages waiting here for their next try")
              .Add({}),
      .robots = counter(r, "newsflow_robots_fetch_total",
                        "robots.txt fetches, by result: ok (rules read), unavailable (4xx: all "
                        "allowed), unreachable (5xx, 429 or network: all disallowed for a while), "
                        "error (not judged: DNS, blocked address)"),
  };
}

Metrics::Intake Metrics::register_intake(prometheus::Registry& r) {
  return {
      .lag = gauge(r, "newsflow_consumer_lag_messages",
                   "Messages behind the partition's end, per assigned input partition "
                   "(librdkafka statistics)"),
      .order_passed_over =
          counter(r, "newsflow_order_passed_over_total",
                  "Inputs taken while a partition that might still deliver an older one was passed "
                  "over (idle for kafka.max_idle_ms, or lagging for 10 s): possibly out of "
                  "event-time order")
              .Add({}),
      .order_late =
          counter(r, "newsflow_order_late_total",
                  "Inputs that arrived older than an input already taken from another partition "
                  "(held back by their producer past kafka's waits, or of a partition passed "
                  "over): judged out of event-time order, their verdicts may differ from replay's")
              .Add({}),
      .handed_over_again =
          counter(r, "newsflow_handed_over_again_total",
                  "Extracted records of inputs judged before, handed over again by an extractor "
                  "that took their partition over from the last commit: skipped")
              .Add({}),
      .order_buffer_messages = gauge(r, "newsflow_order_buffer_messages",
                                     "Fetched input messages waiting for their turn in "
                                     "event-time order across partitions")
                                   .Add({}),
      .order_buffer_bytes = gauge(r, "newsflow_order_buffer_bytes",
                                  "Bytes of the input messages waiting in event-time order")
                                .Add({}),
  };
}

Metrics::Delivery Metrics::register_delivery(prometheus::Registry& r) {
  return {
      .delivery_failures = counter(r, "newsflow_delivery_failures_total",
                                   "Output messages the brokers did not acknowledge")
                               .Add({}),
      .dead_letters_refused =
          counter(r, "newsflow_dead_letters_refused_total",
                  "Dead-letter records the producer or broker refused for good (too large for "
                  "the DLQ topic): logged as dead_letter_refused; the batch goes on")
              .Add({}),
      .delivery_unconfirmed =
          counter(r, "newsflow_delivery_unconfirmed_total",
                  "Output messages acknowledged without an offset (implied by a later request's "
                  "success under idempotence; only a broker that skips sequence checks, such as "
                  "librdkafka's mock cluster, makes this a loss)")
              .Add({}),
      .producer_queue = gauge(r, "newsflow_producer_queue_messages",
                              "Output messages waiting in the producer for acknowledgement")
                            .Add({}),
      .commits = counter(r, "newsflow_offset_commits_total",
                         "Input offset commits after outputs were acknowledged")
                     .Add({}),
      .commit_failures = counter(r, "newsflow_commit_failures_total",
                                 "Offset commits that failed (retried with the next commit, while "
                                 "idle and before exit)")
                             .Add({}),
  };
}

Metrics::State Metrics::register_state(prometheus::Registry& r) {
  return {
      .window_articles =
          gauge(r, "newsflow_window_articles", "Articles held in the dedup window").Add({}),
      .window_bytes =
          gauge(r, "newsflow_window_bytes", "Estimated heap bytes of the dedup window").Add({}),
      .stories_active = gauge(r, "newsflow_stories_active", "Stories held in the window").Add({}),
      .window_evictions = counter(r, "newsflow_window_evictions_total",
                                  "Articles that left the dedup window before their time because "
                                  "it held window.max_articles")
                              .Add({}),
      .window_max_articles = gauge(r, "newsflow_window_max_articles",
                                   "The window's bound on articles held (window.max_articles)")
                                 .Add({}),
      .state_records = counter(r, "newsflow_state_records_total",
                               "Per-article state records queued to the state changelog")
                           .Add({}),
      .snapshots = counter(r, "newsflow_state_snapshots_total",
                           "Snapshots of the judging state written to the state changelog")
                       .Add({}),
      .snapshot_bytes = gauge(r, "newsflow_state_snapshot_bytes",
                              "Bytes of the last snapshot of the judging state")
                            .Add({}),
      .snapshot_seconds = gauge(r, "newsflow_state_snapshot_seconds",
                                "Seconds the judging paused to write the last snapshot")
                              .Add({}),
      .restore_articles = gauge(r, "newsflow_restore_articles",
                                "Articles put back into the window by the last restore")
                              .Add({}),
      .restore_seconds = gauge(r, "newsflow_restore_seconds",
                               "Duration of the last restore of the window and the stories")
                             .Add({}),
  };
}

Metrics::Process Metrics::register_process(prometheus::Registry& r) {
  return {
      .role = gauge(r, "newsflow_role_info",
                    "Always 1; the label is the process's role (all, extract, dedup)"),
      .dedup_owner = gauge(r, "newsflow_dedup_owner",
                           "--role dedup: 1 while this process holds the dedup lease and judges, 0 "
                           "while it is a standby following the state changelog")
                         .Add({}),
      .standby_lag = gauge(r, "newsflow_standby_lag_records",
                           "--role dedup standby: state changelog records not applied yet")
                         .Add({}),
      .takeovers = counter(r, "newsflow_dedup_takeovers_total",
                           "Times this process took the dedup lease over as a standby")
                       .Add({}),
      .takeover_seconds = gauge(r, "newsflow_dedup_takeover_seconds",
                                "Catch-up and assignment time of the last takeover")
                              .Add({}),
      .ready =
          gauge(r, "newsflow_ready", "1 while partitions are assigned and the daemon is consuming")
              .Add({}),
      .last_loop = gauge(r, "newsflow_last_loop_timestamp_seconds",
                         "Unix time the processing loop last went round")
                       .Add({}),
  };
}

void Metrics::register_build(prometheus::Registry& r) {
  gauge(r, "newsflow_build_info", "Always 1; the labels carry the build")
      .Add({{"version", kVersion}, {"compiler", __VERSION__}})
      .Set(1);
  gauge(r, "newsflow_start_time_seconds", "Unix time the process started")
      .Add({})
      .Set(std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
               .count());
}

Metrics::Metrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      flow_(register_flow(*registry_)),
      fetching_(register_fetching(*registry_)),
      intake_(register_intake(*registry_)),
      delivery_(register_delivery(*registry_)),
      state_(register_state(*registry_)),
      process_(register_process(*registry_)) {
  register_build(*registry_);
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
    flow_.articles.Add({{"dup_kind", kind}, {"language", "und"}});
  for (const auto& reason : dead_letter_reasons()) flow_.dlq.Add({{"reason", reason}});
  for (const char* w : {"control_characters_replaced", "unterminated_element_closed",
                        "words_beyond_limit_not_read", "text_truncated", "title_truncated"}) {
    flow_.extract_warnings.Add({{"warning", w}});
  }
  for (const char* outcome :
       {"ok", "already_seen", "http_4xx", "http_5xx", "http_429", "timeout", "connect_error",
        "dns_error", "blocked_address", "blocked_scheme", "too_large", "too_many_redirects",
        "not_html", "disallowed", "deferred", "error"}) {
    fetching_.fetches.Add({{"outcome", outcome}});
  }
  for (const char* result : {"ok", "unavailable", "unreachable", "error"}) {
    fetching_.robots.Add({{"result", result}});
  }
  for (const char* event :
       {"scheduled", "fetched", "rescheduled", "given_up", "invalid", "requeued"}) {
    fetching_.fetch_retries.Add({{"event", event}});
  }
  for (const char* stage : {"parse", "extract", "fetch", "dedup", "cluster", "produce"}) {
    flow_.stages.Add({{"stage", stage}}, stage_buckets());
  }
  for (const auto& topic : output_topics) flow_.produced.Add({{"topic", topic}});
  // Partitions are known at assignment (`partition_assigned`); until then one series per topic.
  for (const auto& topic : input_topics) {
    flow_.consumed.Add({{"topic", topic}, {"partition", "0"}});
    intake_.lag.Add({{"topic", topic}, {"partition", "0"}});
  }
}

const prometheus::Histogram::BucketBoundaries& Metrics::stage_buckets() {
  static const prometheus::Histogram::BucketBoundaries kBuckets{
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};
  return kBuckets;
}

void Metrics::stage_seconds(const std::string& stage, double seconds) {
  flow_.stages.Add({{"stage", stage}}, stage_buckets()).Observe(seconds);
}

}  // namespace newsflow::daemon
