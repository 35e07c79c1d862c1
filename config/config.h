#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dedup/boilerplate.h"
#include "dedup/stories.h"
#include "dedup/window.h"
#include "extractors/html.h"
#include "tl/expected.hpp"

namespace newsflow::config {

/// What `newsflow run` does (`role`, parsed once here): everything, extraction only, or
/// judging only.
enum class Role { kAll, kExtract, kDedup };
/// "all", "extract" or "dedup", as written in the configuration.
std::string_view role_name(Role role);
/// The role a name says; none for another name.
std::optional<Role> parse_role(std::string_view name);

/// How outputs and input offsets reach Kafka (`kafka.delivery`).
enum class Delivery { kAtLeastOnce, kExactlyOnce };
std::string_view delivery_name(Delivery delivery);

/// Kafka connection and batching.
struct KafkaConfig {
  std::string brokers;  ///< bootstrap servers; empty starts an embedded mock cluster
  std::string group_id = "newsflow";
  /// Static group membership (KIP-345) of the input consumer: a process restarted under the
  /// same id takes its partitions back at once, without a rebalance and without waiting for its
  /// old session, on brokers that support it (Kafka 2.3+). "auto": `<host>-<role>` (the host
  /// name is the pod name under Kubernetes); "none" (or empty): dynamic membership. Every
  /// process of one role in a group needs its own id.
  std::string group_instance_id = "auto";
  /// Passed to librdkafka as-is for every client newsflow makes (the consumers, producers and
  /// the lease's, the restore's, the changelog tail's, the fetch retries', redrive's and
  /// produce's), before its own section's below: where a managed Kafka's security goes once
  /// (`security.protocol`, `sasl.mechanism`, `sasl.username`, `sasl.password`, `ssl.*`).
  std::map<std::string, std::string> client;
  std::map<std::string, std::string> consumer;  ///< passed to librdkafka as-is
  std::map<std::string, std::string> producer;  ///< passed to librdkafka as-is
  /// `--role dedup`: the consumer that holds the dedup lease (`topics.dedup_lease`), passed to
  /// librdkafka as-is over newsflow's defaults (session.timeout.ms 6000: a killed owner's
  /// standby takes over within about that long).
  std::map<std::string, std::string> lease;
  int batch_max_messages = 500;  ///< inputs judged together
  int batch_max_ms = 200;        ///< ... or collected for at most this long
  /// How long a batch's outputs may wait for their acknowledgements before it counts as failed
  /// (it is judged again).
  int flush_timeout_ms = 30000;
  /// at_least_once: how often the offsets of acknowledged batches are committed (also when the
  /// daemon idles, on revoke and on stop); 0, the default, commits each batch as soon as it is
  /// acknowledged. Inputs of a crashed process past its last commit are judged again.
  int commit_interval_ms = 0;
  /// Input bytes a batch may hold: with the producer's own queue limit this bounds in-flight
  /// memory (a batch of many large pages closes early).
  std::int64_t batch_max_bytes = 64LL << 20;
  /// After SIGTERM: how long the last batch may take to be acknowledged before the process
  /// exits without committing it (it is then processed again after the restart). Waiting for
  /// room in the producer's queue during an outage counts too.
  int drain_timeout_ms = 20000;
  /// Event-time order across partitions: how long an assigned partition that has neither
  /// delivered a record nor reported its end may hold the others back (KIP-353's
  /// max.task.idle.ms).
  int max_idle_ms = 1000;
  /// `--role dedup`: how long an extracted partition whose extractor fell silent (it writes a
  /// watermark every second while alive) holds the others back: a killed extractor's input goes
  /// to another within the extractors' session.timeout.ms, and its records still go in order.
  int extractor_silence_ms = 60000;
  int embedded_brokers = 1;      ///< brokers of the embedded mock cluster
  int embedded_partitions = 16;  ///< partitions per topic of the embedded cluster
  int workers = 0;               ///< threads extracting a batch; 0: one per core
  /// at_least_once: outputs flushed, then offsets committed (a crash in between re-sends a
  /// batch under the same keys). exactly_once: each batch's outputs and offsets in one Kafka
  /// transaction (needs brokers with transactions; readers use isolation.level=read_committed).
  Delivery delivery = Delivery::kAtLeastOnce;
  std::string transactional_id = "newsflow";  ///< exactly_once: stable per instance
  /// Dead-letter records carry at most this much of the input (a 50 MB page must not become a
  /// 50 MB DLQ record the brokers refuse); the header payload_truncated_from gives the size.
  std::int64_t dlq_max_payload_bytes = 1 << 20;
  /// Every this many articles judged, the judging state is saved whole in the state changelog
  /// (a snapshot in chunks) and the records it covers are tombstoned: the changelog holds one
  /// snapshot and the records since, and a restore loads the snapshot and applies only those.
  /// 0: never (the changelog keeps a record per article ever judged).
  std::int64_t state_snapshot_articles = 100000;
  /// A restart reads the changelog once, holding the state records until the snapshot is
  /// loaded, while they take at most this many bytes (a snapshot interval's records at the
  /// default interval); past it, it applies them as it reads them; at 0 it reads them a second
  /// time instead.
  std::int64_t restore_buffer_bytes = std::int64_t{512} << 20;
};

/// Topic names.
struct TopicsConfig {
  std::string pages = "newsflow.pages";
  std::string feeds = "newsflow.feeds";
  std::string articles = "newsflow.articles";
  std::string stories = "newsflow.stories";
  std::string dlq = "newsflow.dlq";
  /// The state changelog (compacted; one record per article, no text): restores read it.
  /// Empty: no changelog, restores re-read the articles topic.
  std::string state = "newsflow.state";
  /// Extracted articles on their way from `--role extract` to `--role dedup` (as many
  /// partitions as the pages and feeds topics together, so each input partition has its own).
  std::string extracted = "newsflow.extracted";
  /// One partition whose owner in the consumer group `<group_id>-dedup-lease` is the one dedup
  /// process that judges; the others are hot standbys tailing `state`. Empty: no lease (the
  /// dedup role subscribes to `extracted` itself; run exactly one).
  std::string dedup_lease = "newsflow.dedup-lease";
  /// Feed items whose linked page failed for a reason time may cure (429, 5xx, timeouts,
  /// deferred), waiting for their next try (`fetch.requeue_*`); the pages fetched then go to
  /// `pages`. Empty: such an item is a dead letter at once, as before.
  std::string fetch_retries = "newsflow.fetch-retries";
};

/// The HTTP endpoint serving /metrics, /healthz and /readyz.
struct HttpConfig {
  std::string listen = "127.0.0.1:9464";  ///< host:port; port 0 picks a free port
};

/// The fetcher of article pages for feed items that carry no full text.
struct FetchConfig {
  bool enabled = true;
  /// Feed items whose own text (content, else summary) has fewer words are fetched.
  int min_feed_words = 80;
  std::string user_agent = "newsflow/0.1 (+https://github.com/newsflow/newsflow)";
  int max_concurrency = 16;      ///< transfers at once
  int per_host_concurrency = 2;  ///< transfers at once to one host
  int host_delay_ms = 250;       ///< politeness: between request starts to one host
  int connect_timeout_ms = 5000;
  int timeout_ms = 15000;  ///< whole transfer, per attempt
  int max_redirects = 5;
  std::int64_t max_body_bytes = 5 << 20;
  int retries = 2;             ///< further attempts after a 5xx, 429, timeout or refused connection
  int retry_backoff_ms = 500;  ///< doubles with every retry
  /// Networks that may be fetched from although they are not public (loopback, private,
  /// link-local, metadata, ...). Empty: only public addresses, checked after DNS resolution
  /// and on every redirect.
  std::vector<std::string> allow_networks;
  std::size_t seen_urls_max = 200000;  ///< links remembered to skip fetching a page again
  /// Honour each site's robots.txt (RFC 9309) for the product token of `user_agent`.
  bool robots_txt = true;
  int robots_cache_seconds = 86400;  ///< how long a fetched robots.txt is trusted (RFC: 24 h)
  int robots_error_seconds = 600;    ///< an unreachable robots.txt disallows all this long
  int max_crawl_delay_ms = 30000;    ///< a site's Crawl-delay raises host_delay_ms up to this
  /// Bound on one batch's fetching: links not fetched by then are given up ("deferred"), so a
  /// slow site or a long Crawl-delay never holds the stream longer (0: no bound).
  int batch_deadline_ms = 20000;
  /// How long the daemon's judging of a batch waits for its linked pages still being fetched;
  /// what is not fetched by then is given up ("deferred") and tried again later, so one slow
  /// site delays only its own items (0: wait up to `batch_deadline_ms`). `replay` always waits.
  int batch_wait_ms = 2000;
  /// Later tries of a page that failed for a reason time may cure (through
  /// `topics.fetch_retries`): this many, `requeue_backoff_ms` after the failure and doubling up
  /// to `requeue_max_backoff_ms`, or later when the site's Retry-After says so (up to the same
  /// bound). 0: none (a dead letter at once).
  int requeue_attempts = 4;
  std::int64_t requeue_backoff_ms = 60000;
  std::int64_t requeue_max_backoff_ms = 3600000;
  /// Bounds on the robots.txt files kept (not configuration keys: fixed, settable in tests).
  std::size_t robots_cache_max_sites = 20000;
  std::size_t robots_cache_max_bytes = 64 << 20;
};

/// Local state of the process.
struct StateConfig {
  /// A directory that survives process restarts (systemd StateDirectory, a Kubernetes volume).
  /// The crash guard notes there which inputs the process is processing and which one a fatal
  /// signal came on, so that input is dead-lettered at the next start instead of crash-looping
  /// the daemon. Empty: a folder under $TMPDIR (`CrashGuard::directory_for`).
  std::string dir;
};

/// Logging.
struct LogConfig {
  std::string format = "text";  ///< text | json
  std::string level = "info";   ///< debug | info | warn | error
};

/// The whole configuration.
struct Config {
  /// What `newsflow run` does: "all" (consume pages and feeds, extract, judge, publish),
  /// "extract" (consume pages and feeds, extract and fetch, hand each article to
  /// `topics.extracted`; as many instances as input partitions) or "dedup" (consume
  /// `topics.extracted`, judge and publish; one instance holds the window).
  Role role = Role::kAll;
  KafkaConfig kafka;
  TopicsConfig topics;
  HttpConfig http;
  LogConfig log;
  FetchConfig fetch;
  StateConfig state;
  extractors::ExtractOptions extract;
  std::string extract_model_file;  ///< `extract.model_file`: an MSS model to use instead of the
                                   ///< built-in one
  dedup::WindowOptions window;
  /// `window.max_lead_minutes`: an event time further than this ahead of the input's fetch time
  /// (a CMS that prints 2099, a wrong time zone) is taken as the fetch time, so one bad date
  /// cannot move the watermark ahead and expire the whole window.
  std::int64_t max_event_lead_seconds = 3600;
  dedup::SignatureOptions signature;
  dedup::BoilerplateOptions boilerplate;
  dedup::StoryOptions stories;
};

/// One configuration problem: where (`kafka.group_id`) and what is wrong.
struct Problem {
  std::string path;
  std::string message;
};

/// One key the parser reads, as the configuration reference (docs/configuration.md) lists it.
struct KeyInfo {
  std::string path;  ///< dotted YAML path: `kafka.batch_max_ms`
  std::string env;   ///< the environment variable that sets it: `NEWSFLOW_KAFKA__BATCH_MAX_MS`
  /// The default as YAML text: `200`, `0.4`, `true`, `newsflow`, `""` (the empty string), `{}`
  /// (a mapping: librdkafka properties), `[]` (an empty list).
  std::string default_value;
};

/// Every key `parse_config` reads, in the order it reads them, with its default. Found by running
/// the parser itself over an empty file, so the list is exactly what it accepts: a key missing
/// here would be reported as unknown.
///
///   for (const auto& k : known_keys()) std::printf("%s %s\n", k.path.c_str(), k.env.c_str());
std::vector<KeyInfo> known_keys();

/// The environment variable that overrides the key at `path`: `NEWSFLOW_`, then the path
/// upper-cased with each `.` written `__` (`kafka.batch_max_ms` -> `NEWSFLOW_KAFKA__BATCH_MAX_MS`,
/// `role` -> `NEWSFLOW_ROLE`).
std::string env_variable(std::string_view path);

/// Environment variables as name -> value.
using Environment = std::map<std::string, std::string>;

/// The process environment.
Environment process_environment();

/// Parses YAML text (empty text means all defaults), applies overrides from `env`
/// (`NEWSFLOW_KAFKA__BROKERS=...` sets `kafka.brokers`; under `kafka.client`, `kafka.consumer`,
/// `kafka.producer` and `kafka.lease` the rest of the name becomes a librdkafka property with `_`
/// read as `.`, so `NEWSFLOW_KAFKA__CONSUMER__FETCH_MAX_BYTES` sets `fetch.max.bytes`) and
/// validates. Returns every problem found, not only the first.
tl::expected<Config, std::vector<Problem>> parse_config(std::string_view yaml_text,
                                                        const Environment& env);

/// Reads `path` and parses it as `parse_config` does; a missing file is a problem at path "".
tl::expected<Config, std::vector<Problem>> load_config_file(const std::string& path,
                                                            const Environment& env);

}  // namespace newsflow::config
