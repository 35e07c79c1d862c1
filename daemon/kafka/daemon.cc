#include "daemon/kafka/daemon.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "daemon/ops/log.h"
#include "daemon/ops/metrics.h"
#include "daemon/pipeline/input.h"
#include "daemon/version.h"
#include "extractors/timestamp.h"

namespace newsflow::daemon {
namespace {

// How often an extractor says again that an idle partition is at its end; the dedup role's
// patience for a partition it has not heard of yet (`EventTimeMerger::Options`) is as long.
constexpr std::chrono::seconds kEndRepeat{30};

using Clock = std::chrono::steady_clock;

std::int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch())
      .count();
}

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

Headers message_headers(const rd_kafka_message_t* msg) {
  Headers out;
  rd_kafka_headers_t* hdrs = nullptr;
  if (rd_kafka_message_headers(msg, &hdrs) != RD_KAFKA_RESP_ERR_NO_ERROR || !hdrs) return out;
  const char* name;
  const void* value;
  size_t size;
  for (size_t i = 0;
       rd_kafka_header_get_all(hdrs, i, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR; ++i) {
    out.emplace_back(name, value ? std::string(static_cast<const char*>(value), size) : "");
  }
  return out;
}

std::string_view payload(const rd_kafka_message_t* msg) {
  return msg->payload ? std::string_view(static_cast<const char*>(msg->payload), msg->len)
                      : std::string_view();
}

std::string_view key_of(const rd_kafka_message_t* msg) {
  return msg->key ? std::string_view(static_cast<const char*>(msg->key), msg->key_len)
                  : std::string_view();
}

// The event time the pipeline will file a page under, as far as the message shows it: the
// `published_at` header, else `fetched_at`, else the message timestamp (a crawler's CreateTime).
std::int64_t order_time(const rd_kafka_message_t* msg) {
  rd_kafka_headers_t* hdrs = nullptr;
  std::optional<std::int64_t> published, fetched;
  if (rd_kafka_message_headers(msg, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR && hdrs) {
    const void* value;
    size_t size;
    for (const char* name : {"published_at", "fetched_at"}) {
      if (rd_kafka_header_get_last(hdrs, name, &value, &size) != RD_KAFKA_RESP_ERR_NO_ERROR ||
          !value) {
        continue;
      }
      auto t = extractors::parse_iso8601(std::string_view(static_cast<const char*>(value), size));
      if (t) (name[0] == 'p' ? published : fetched) = *t;
    }
  }
  if (published) return *published;
  if (fetched) return *fetched;
  rd_kafka_timestamp_type_t type;
  const std::int64_t ms = rd_kafka_message_timestamp(msg, &type);
  return ms > 0 ? ms / 1000 : 0;
}

std::pair<std::string, int> partition_of(const rd_kafka_message_t* msg) {
  return {rd_kafka_topic_name(msg->rkt), msg->partition};
}

// The number of partitions of `topic` (metadata, retried while the cluster comes up).
tl::expected<int, std::string> topic_partitions(rd_kafka_t* c, const std::string& topic) {
  for (int attempt = 0; attempt < 10; ++attempt) {
    const rd_kafka_metadata_t* md = nullptr;
    rd_kafka_topic_t* t = rd_kafka_topic_new(c, topic.c_str(), nullptr);
    const rd_kafka_resp_err_t e = rd_kafka_metadata(c, 0, t, &md, 5000);
    rd_kafka_topic_destroy(t);
    if (e == RD_KAFKA_RESP_ERR_NO_ERROR) {
      const int n = md->topic_cnt == 1 && md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR
                        ? md->topics[0].partition_cnt
                        : 0;
      rd_kafka_metadata_destroy(md);
      if (n > 0) return n;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  return tl::unexpected("topic " + topic + " does not exist or has no partitions");
}

// The watermark an extractor sent (header `watermark`: Unix seconds or "end"), if `msg` is one.
std::optional<std::int64_t> watermark_header(const rd_kafka_message_t* msg) {
  rd_kafka_headers_t* hdrs = nullptr;
  const void* value = nullptr;
  size_t size = 0;
  if (rd_kafka_message_headers(msg, &hdrs) != RD_KAFKA_RESP_ERR_NO_ERROR || !hdrs ||
      rd_kafka_header_get_last(hdrs, "watermark", &value, &size) != RD_KAFKA_RESP_ERR_NO_ERROR ||
      !value) {
    return std::nullopt;
  }
  const std::string_view v(static_cast<const char*>(value), size);
  if (v == "end") return EventTimeMerger<rd_kafka_message_t*>::kEnd;
  std::int64_t t = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), t);
  if (ec != std::errc() || end != v.data() + v.size()) return std::nullopt;
  return t;
}

// The value of header `name` of `msg` ("" when it has none).
std::string_view header_of(const rd_kafka_message_t* msg, const char* name) {
  rd_kafka_headers_t* hdrs = nullptr;
  const void* value = nullptr;
  size_t size = 0;
  if (rd_kafka_message_headers(msg, &hdrs) != RD_KAFKA_RESP_ERR_NO_ERROR || !hdrs ||
      rd_kafka_header_get_last(hdrs, name, &value, &size) != RD_KAFKA_RESP_ERR_NO_ERROR || !value) {
    return {};
  }
  return {static_cast<const char*>(value), size};
}

}  // namespace

Daemon::Daemon(const config::Config& config, Metrics& metrics)
    : config_(config),
      metrics_(metrics),
      pipeline_(config, &metrics),
      workers_(config.kafka.workers > 0
                   ? static_cast<std::size_t>(config.kafka.workers)
                   : std::max<std::size_t>(1, std::thread::hardware_concurrency())),
      exactly_once_(config.kafka.delivery == "exactly_once"),
      crash_guard_(config.state.dir),
      // A partition known to lag holds the others back for up to 10 s: longer than a slow
      // fetch round, short enough that a partition whose leader is gone stalls little.
      merger_({std::chrono::milliseconds(config.kafka.max_idle_ms), kEndRepeat,
               std::chrono::milliseconds(config.kafka.extractor_silence_ms),
               std::chrono::seconds(10)}) {
  // Fault injection for the crash-loop test: a worker that meets this text in an input aborts
  // the process, as a crashing parser would.
  if (const char* marker = std::getenv("NEWSFLOW_FAULT_CRASH_MARKER")) crash_marker_ = marker;
  pool_ = std::make_unique<WorkerPool>(workers_);
  // Fault injection for the partial-batch test: the state record of the first input holding this
  // text is never written and no offsets are committed from then on (as when a batch's records
  // reached some brokers only and commits fail); the process is killed once the batch of the
  // next input holding it is acknowledged. At-least-once delivery only.
  if (const char* marker = std::getenv("NEWSFLOW_FAULT_LOSE_STATE_MARKER"))
    lose_state_marker_ = marker;
  if (config.role == "extract") {
    metrics_.initialize(input_topics(), {config.topics.extracted, config.topics.dlq});
  } else {
    metrics_.initialize(input_topics(),
                        {config.topics.articles, config.topics.stories, config.topics.dlq});
  }
  metrics_.window_limit(static_cast<double>(config.window.max_articles));
  metrics_.role(config.role);
  metrics_.dedup_owner(config.role != "extract");  // a dedup standby says otherwise at start
  crash_guard_.load();
  status_.version = kVersion;
  status_.started = unix_now();
}

void Daemon::stop() {
  drain_deadline_ms_.store(steady_ms() + config_.kafka.drain_timeout_ms);
  stop_.store(true);
  notifier_.stopping();
}

bool Daemon::live(std::chrono::milliseconds stall_limit) const {
  const std::int64_t last = last_tick_ms_.load();
  return last == 0 || steady_ms() - last <= stall_limit.count();
}

StatusSnapshot Daemon::status() const {
  std::lock_guard lock(status_mu_);
  StatusSnapshot copy = status_;
  copy.now = unix_now();
  return copy;
}

Daemon::~Daemon() {
  if (consumer_) rd_kafka_consumer_close(consumer_.get());
  tail_.reset();
  if (lease_) rd_kafka_consumer_close(lease_.get());
  if (producer_) rd_kafka_flush(producer_.get(), config_.kafka.flush_timeout_ms);
}

tl::expected<void, std::vector<config::Problem>> Daemon::start(const std::string& bootstrap) {
  const std::string max_bytes = std::to_string(config_.extract.max_html_bytes + (1 << 20));
  std::map<std::string, std::string> producer_defaults{{"bootstrap.servers", bootstrap},
                                                       {"enable.idempotence", "true"},
                                                       {"acks", "all"},
                                                       {"linger.ms", "5"},
                                                       {"message.max.bytes", max_bytes},
                                                       {"client.id", "newsflow"}};
  if (exactly_once_) producer_defaults["transactional.id"] = config_.kafka.transactional_id;
  auto pconf = make_kafka_conf(producer_defaults, config_.kafka.producer, "kafka.producer");
  if (!pconf) return tl::unexpected(pconf.error());
  rd_kafka_conf_set_dr_msg_cb(pconf->get(), &Daemon::on_delivery);
  rd_kafka_conf_set_opaque(pconf->get(), this);
  char err[512];
  producer_.reset(rd_kafka_new(RD_KAFKA_PRODUCER, pconf->get(), err, sizeof err));
  if (!producer_)
    return tl::unexpected(std::vector<config::Problem>{{"kafka.producer", std::string(err)}});
  pconf->release();
  // A dedup standby initializes its transactions when it takes over: doing so fences the
  // producer of the owner before it (the same transactional.id), which a standby must not do
  // while that owner is well.
  const bool leased = config_.role == "dedup" && !config_.topics.dedup_lease.empty();
  if (exactly_once_ && !leased) {
    if (rd_kafka_error_t* e = rd_kafka_init_transactions(producer_.get(), 60000)) {
      const std::string message = rd_kafka_error_string(e);
      rd_kafka_error_destroy(e);
      return tl::unexpected(std::vector<config::Problem>{
          {"kafka.delivery", "exactly_once: cannot initialize transactions: " + message}});
    }
    log::info("transactions_initialized", {{"transactional_id", config_.kafka.transactional_id}});
  }

  if (config_.fetch.enabled) {
    auto f = Fetcher::create(config_.fetch, &metrics_);
    if (!f) return tl::unexpected(std::vector<config::Problem>{{"fetch", f.error()}});
    fetcher_ = std::move(*f);
  }

  // Each role is its own consumer group: extractors share the input partitions, the dedup
  // role the extracted ones.
  const std::string group =
      config_.role == "all" ? config_.kafka.group_id : config_.kafka.group_id + "-" + config_.role;
  auto cconf = make_kafka_conf({{"bootstrap.servers", bootstrap},
                                {"group.id", group},
                                {"enable.auto.commit", "false"},
                                {"enable.auto.offset.store", "false"},
                                {"auto.offset.reset", "earliest"},
                                {"partition.assignment.strategy", "cooperative-sticky"},
                                // A SIGKILLed member's partitions wait for its session to end:
                                // 6 s (the brokers' default minimum), not librdkafka's 45 s, so
                                // a restarted daemon publishes again within about 10 s. A C++
                                // process has no GC pauses to ride out; heartbeats go from a
                                // thread of librdkafka's own, every 1.5 s.
                                {"session.timeout.ms", "6000"},
                                {"heartbeat.interval.ms", "1500"},
                                {"statistics.interval.ms", "5000"},
                                // Per partition: each has its own queue (event-time order).
                                {"queued.max.messages.kbytes", "4096"},
                                {"client.id", "newsflow"}},
                               config_.kafka.consumer, "kafka.consumer");
  if (!cconf) return tl::unexpected(cconf.error());
  // Event-time order needs to know when a partition has nothing older to deliver.
  rd_kafka_conf_set(cconf->get(), "enable.partition.eof", "true", err, sizeof err);
  rd_kafka_conf_set_rebalance_cb(
      cconf->get(),
      reinterpret_cast<void (*)(rd_kafka_t*, rd_kafka_resp_err_t, rd_kafka_topic_partition_list_t*,
                                void*)>(&Daemon::on_rebalance));
  rd_kafka_conf_set_stats_cb(cconf->get(), &Daemon::on_statistics);
  rd_kafka_conf_set_opaque(cconf->get(), this);
  consumer_.reset(rd_kafka_new(RD_KAFKA_CONSUMER, cconf->get(), err, sizeof err));
  if (!consumer_)
    return tl::unexpected(std::vector<config::Problem>{{"kafka.consumer", std::string(err)}});
  cconf->release();
  rd_kafka_poll_set_consumer(consumer_.get());

  if (config_.role == "extract") {
    // An extractor hands each input partition's articles to a partition of its own, numbered
    // in (topic, partition) order: the dedup role's event-time merge then meets them as the
    // all-in-one daemon meets the inputs, ties included.
    auto n = topic_partitions(consumer_.get(), config_.topics.extracted);
    if (!n) return tl::unexpected(std::vector<config::Problem>{{"topics.extracted", n.error()}});
    extracted_partitions_ = *n;
    std::vector<std::string> inputs = input_topics();
    std::sort(inputs.begin(), inputs.end());
    int offset = 0;
    for (const auto& t : inputs) {
      extracted_offset_[t] = offset;
      offset += topic_partitions(consumer_.get(), t).value_or(0);
    }
    if (extracted_partitions_ < offset) {
      log::warn("extracted_partitions_shared",
                {{"topic", config_.topics.extracted},
                 {"partitions", std::to_string(extracted_partitions_)},
                 {"input_partitions", std::to_string(offset)},
                 {"consequence",
                  "input partitions share extracted partitions: a backlog is judged in an order "
                  "close to, not exactly, the event-time order"}});
    }
  }
  // The window before the first input: a copy arriving right after a restart is still caught.
  notifier_.status("restoring the dedup window from " + config_.topics.articles);
  if (config_.role == "extract") {
    log::info("window_restored", {{"articles", "0"}, {"reason", "an extractor holds no window"}});
    // What every extractor fetched comes back through the changelog: a link published once is
    // not fetched again here, whichever extractor saw it first (or this one before a restart).
    if (fetcher_ && !config_.topics.state.empty()) {
      auto tail = open_changelog_tail(bootstrap, std::chrono::milliseconds(0));
      auto learned =
          tail
              ? tail_->catch_up(
                    [this](const dedup::ArticleState& s) { pipeline_.remember_published_links(s); },
                    std::chrono::minutes(10))
              : tl::expected<std::size_t, std::string>(tl::unexpected(tail.error()));
      if (!learned) {
        return tl::unexpected(std::vector<config::Problem>{{"topics.state", learned.error()}});
      }
      log::info("published_links_learned",
                {{"records", std::to_string(*learned)}, {"from", config_.topics.state}});
    }
  } else if (auto restored = restore_state(bootstrap); !restored) {
    return tl::unexpected(std::vector<config::Problem>{
        {"window", "cannot restore the dedup window from " + config_.topics.articles + ": " +
                       restored.error()}});
  }

  if (config_.role == "dedup" && !config_.topics.dedup_lease.empty()) {
    // One owner judges, standbys follow the changelog: no subscription to the extracted topic
    // (a second subscriber would split its partitions and the window with them).
    if (auto standby = start_standby(bootstrap); !standby) {
      return tl::unexpected(std::vector<config::Problem>{{"topics.dedup_lease", standby.error()}});
    }
    return {};
  }
  rd_kafka_topic_partition_list_t* topics = rd_kafka_topic_partition_list_new(2);
  for (const std::string& t : input_topics()) {
    rd_kafka_topic_partition_list_add(topics, t.c_str(), RD_KAFKA_PARTITION_UA);
  }
  const rd_kafka_resp_err_t e = rd_kafka_subscribe(consumer_.get(), topics);
  rd_kafka_topic_partition_list_destroy(topics);
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return tl::unexpected(std::vector<config::Problem>{{"topics", rd_kafka_err2str(e)}});
  }
  std::string names;
  for (const std::string& t : input_topics()) names += (names.empty() ? "" : ",") + t;
  log::info(
      "kafka_subscribed",
      {{"bootstrap", bootstrap}, {"group_id", group}, {"role", config_.role}, {"topics", names}});
  return {};
}

namespace {

struct PartitionRange {
  int partition;
  std::int64_t low, high;
};

// The partitions of `topic` that hold records, with their offsets; empty when the topic does not
// exist.
tl::expected<std::vector<PartitionRange>, std::string> partitions_with_data(
    rd_kafka_t* c, const std::string& topic) {
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t e = RD_KAFKA_RESP_ERR_NO_ERROR;
  for (int attempt = 0; attempt < 10; ++attempt) {
    rd_kafka_topic_t* t = rd_kafka_topic_new(c, topic.c_str(), nullptr);
    e = rd_kafka_metadata(c, 0, t, &md, 5000);
    rd_kafka_topic_destroy(t);
    if (e == RD_KAFKA_RESP_ERR_NO_ERROR) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return tl::unexpected("metadata of " + topic + ": " + rd_kafka_err2str(e));
  }
  std::unique_ptr<const rd_kafka_metadata_t, void (*)(const rd_kafka_metadata_t*)> guard(
      md, rd_kafka_metadata_destroy);
  std::vector<PartitionRange> out;
  if (md->topic_cnt < 1 || md->topics[0].err != RD_KAFKA_RESP_ERR_NO_ERROR) return out;
  for (int p = 0; p < md->topics[0].partition_cnt; ++p) {
    std::int64_t low = 0, high = 0;
    if (rd_kafka_query_watermark_offsets(c, topic.c_str(), p, &low, &high, 5000) ==
            RD_KAFKA_RESP_ERR_NO_ERROR &&
        high > low) {
      out.push_back({p, low, high});
    }
  }
  return out;
}

}  // namespace

tl::expected<void, std::string> Daemon::refresh_committed() {
  committed_at_ = Clock::now();
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(64);
  for (const std::string& topic : input_topics()) {
    const auto n = topic_partitions(consumer_.get(), topic);
    if (!n) continue;  // no such topic yet: nothing of it was judged
    for (int p = 0; p < *n; ++p) rd_kafka_topic_partition_list_add(list, topic.c_str(), p);
  }
  const rd_kafka_resp_err_t e = rd_kafka_committed(consumer_.get(), list, 10000);
  if (e == RD_KAFKA_RESP_ERR_NO_ERROR) {
    committed_.clear();
    for (int i = 0; i < list->cnt; ++i) {
      const auto& tp = list->elems[i];
      if (tp.err == RD_KAFKA_RESP_ERR_NO_ERROR && tp.offset >= 0) {
        committed_[{tp.topic, tp.partition}] = tp.offset;
      }
    }
  }
  rd_kafka_topic_partition_list_destroy(list);
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return tl::unexpected(std::string("committed offsets: ") + rd_kafka_err2str(e));
  }
  return {};
}

Admission Daemon::admit(const rd_kafka_message_t* state_record, bool final) const {
  return admit_state_record(header_of(state_record, kInputHeader), input_topics(), committed_,
                            final);
}

tl::expected<std::size_t, std::string> Daemon::restore_state(const std::string& bootstrap) {
  const auto t0 = Clock::now();
  auto conf = make_kafka_conf({{"bootstrap.servers", bootstrap},
                               {"group.id", config_.kafka.group_id + ".restore"},
                               {"enable.auto.commit", "false"},
                               {"enable.partition.eof", "true"},
                               // Outputs of aborted transactions are not state.
                               {"isolation.level", "read_committed"},
                               {"client.id", "newsflow-restore"}},
                              config_.kafka.consumer, "kafka.consumer");
  if (!conf) return tl::unexpected(conf.error().front().path + ": " + conf.error().front().message);
  // The daemon's own consumer settings may say otherwise; restore needs these.
  char err[512];
  rd_kafka_conf_set(conf->get(), "enable.partition.eof", "true", err, sizeof err);
  rd_kafka_conf_set(conf->get(), "enable.auto.commit", "false", err, sizeof err);
  KafkaHandle c(rd_kafka_new(RD_KAFKA_CONSUMER, conf->get(), err, sizeof err));
  if (!c) return tl::unexpected(std::string(err));
  conf->release();
  if (!config_.topics.state.empty()) {
    // What the group committed says which records are state (`admit_state_record`).
    if (auto committed = refresh_committed(); !committed) return tl::unexpected(committed.error());
    // The changelog when it holds anything; the articles topic otherwise (a first start after
    // an upgrade from a version without it).
    auto from_changelog = restore_changelog(c.get());
    if (!from_changelog) return tl::unexpected(from_changelog.error());
    if (*from_changelog) {
      const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      metrics_.restored(static_cast<double>(**from_changelog), seconds);
      rd_kafka_consumer_close(c.get());
      return **from_changelog;
    }
  }
  auto ranges = partitions_with_data(c.get(), config_.topics.articles);
  if (!ranges) return tl::unexpected(ranges.error());
  if (ranges->empty()) {
    log::info("window_restored", {{"articles", "0"}, {"reason", "no articles yet"}});
    return std::size_t{0};
  }
  rd_kafka_topic_partition_list_t* list =
      rd_kafka_topic_partition_list_new(static_cast<int>(ranges->size()));
  for (const auto& r : *ranges) {
    rd_kafka_topic_partition_list_add(list, config_.topics.articles.c_str(), r.partition)->offset =
        r.low;
  }
  auto pending = static_cast<int>(ranges->size());
  rd_kafka_assign(c.get(), list);
  rd_kafka_topic_partition_list_destroy(list);
  std::size_t restored = 0, skipped = 0;
  const auto deadline = Clock::now() + std::chrono::minutes(10);
  auto last_extend = Clock::time_point{};
  while (pending > 0 && !stop_.load() && Clock::now() < deadline) {
    if (Clock::now() - last_extend > std::chrono::seconds(10)) {
      // A long restore is progress, not a hung start: ask systemd for more start-up time.
      last_extend = Clock::now();
      notifier_.extend_timeout(30'000'000);
      notifier_.status("restoring the dedup window: " + std::to_string(restored) + " articles");
    }
    rd_kafka_message_t* m = rd_kafka_consumer_poll(c.get(), 500);
    if (!m) continue;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      --pending;
    } else if (m->err) {
      log::warn("window_restore_error", {{"error", rd_kafka_message_errstr(m)}});
    } else if (pipeline_.restore(payload(m))) {
      ++restored;
    } else {
      ++skipped;
    }
    rd_kafka_message_destroy(m);
  }
  rd_kafka_consumer_close(c.get());
  metrics_.window_size(static_cast<double>(pipeline_.window().size()),
                       static_cast<double>(pipeline_.window().memory_bytes()));
  metrics_.stories_active(static_cast<double>(pipeline_.stories().size()));
  metrics_.restored(static_cast<double>(restored),
                    std::chrono::duration<double>(Clock::now() - t0).count());
  log::info(
      "window_restored",
      {{"articles", std::to_string(restored)},
       {"skipped", std::to_string(skipped)},
       {"held", std::to_string(pipeline_.window().size())},
       {"seconds", std::to_string(std::chrono::duration<double>(Clock::now() - t0).count())}});
  if (pending > 0 && !stop_.load())
    return tl::unexpected(std::string("restore did not reach the end of every partition"));
  return restored;
}

tl::expected<std::optional<std::size_t>, std::string> Daemon::restore_changelog(rd_kafka_t* c) {
  const auto t0 = Clock::now();
  const std::string& topic = config_.topics.state;
  auto ranges = partitions_with_data(c, topic);
  if (!ranges) return tl::unexpected(ranges.error());
  if (ranges->empty()) return std::optional<std::size_t>();
  // Records are keyed by article, so they spread over the partitions; each partition holds them
  // in the order they were written. Merged by `seq` across the partitions (the merger that
  // orders input by event time), they are applied in the order the articles were judged.
  rd_kafka_topic_partition_list_t* list =
      rd_kafka_topic_partition_list_new(static_cast<int>(ranges->size()));
  for (const auto& r : *ranges) {
    rd_kafka_topic_partition_list_add(list, topic.c_str(), r.partition)->offset = r.low;
  }
  EventTimeMerger<rd_kafka_message_t*> merger({std::chrono::hours(1), std::chrono::hours(1)});
  std::map<int, rd_kafka_queue_t*> queues;
  const auto now = Clock::now();
  for (const auto& r : *ranges) {
    merger.assign({topic, r.partition}, now);
    rd_kafka_queue_t* q = rd_kafka_queue_get_partition(c, topic.c_str(), r.partition);
    rd_kafka_queue_forward(q, nullptr);  // before the assignment starts fetching
    queues[r.partition] = q;
  }
  rd_kafka_assign(c, list);
  rd_kafka_topic_partition_list_destroy(list);
  std::size_t restored = 0, skipped = 0, ended = 0, uncommitted = 0;
  std::optional<std::uint64_t> applied_seq;
  const bool standby_role = config_.role == "dedup" && !config_.topics.dedup_lease.empty();
  bool deferred = false;
  std::map<int, std::int64_t> defer_from;  // partition -> first record left to the tail
  auto file = [&](rd_kafka_message_t* m) {
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      merger.end_of_partition({topic, m->partition});
      // Where a standby's tail goes on: what the restore did not read.
      changelog_positions_[m->partition] = std::max(changelog_positions_[m->partition], m->offset);
      ++ended;
      rd_kafka_message_destroy(m);
      return;
    }
    if (!m->err) changelog_positions_[m->partition] = m->offset + 1;
    const auto seq = m->err || !m->payload ? std::nullopt : dedup::state_seq(payload(m));
    if (m->err) log::warn("window_restore_error", {{"error", rd_kafka_message_errstr(m)}});
    if (!seq) {
      if (!m->err) ++skipped;  // a tombstone or a record of another version
      rd_kafka_message_destroy(m);
      return;
    }
    merger.add({topic, m->partition}, m, static_cast<std::int64_t>(*seq), 0);
  };
  const auto deadline = Clock::now() + std::chrono::minutes(10);
  auto last_extend = Clock::now();
  while (!stop_.load() && Clock::now() < deadline) {
    for (auto& [p, q] : queues) {
      while (merger.buffered_records({topic, p}) < 256) {
        rd_kafka_message_t* m = rd_kafka_consume_queue(q, 0);
        if (!m) break;
        file(m);
      }
    }
    bool progressed = false;
    while (auto m = merger.next(Clock::now())) {
      progressed = true;
      if (deferred || admit(*m, true) != Admission::kApply) {
        ++uncommitted;
        // This process judges them again; a standby leaves them, and every later record (they
        // belong to later batches), to its changelog tail, which waits for their commits: the
        // owner is likely alive and about to commit them.
        if (standby_role) {
          deferred = true;
          auto [from, first] = defer_from.try_emplace((*m)->partition, (*m)->offset);
          if (!first) from->second = std::min(from->second, (*m)->offset);
        }
      } else if (auto state = dedup::decode_state(payload(*m))) {
        // The same `seq` again: a batch written once more after a crash, the same judgment.
        if (!applied_seq || *applied_seq != state->seq) {
          pipeline_.restore(*state);
          changelog_last_seq_ = std::max(changelog_last_seq_, state->seq);
          applied_seq = state->seq;
          ++restored;
        } else {
          ++skipped;
        }
      } else {
        ++skipped;
      }
      rd_kafka_message_destroy(*m);
    }
    if (ended >= queues.size() && merger.buffered_records() == 0) break;
    if (!progressed) {
      // Serves the consumer (and anything fetched before a partition got its own queue).
      if (rd_kafka_message_t* m = rd_kafka_consumer_poll(c, 5)) file(m);
    }
    if (Clock::now() - last_extend > std::chrono::seconds(10)) {
      last_extend = Clock::now();
      notifier_.extend_timeout(30'000'000);
      notifier_.status("restoring from " + topic + ": " + std::to_string(restored) + " articles");
    }
  }
  for (rd_kafka_message_t* m : merger.clear()) rd_kafka_message_destroy(m);
  for (auto& [p, q] : queues) rd_kafka_queue_destroy(q);
  for (const auto& [p, from] : defer_from) {
    changelog_positions_[p] = std::min(changelog_positions_[p], from);
  }
  metrics_.window_size(static_cast<double>(pipeline_.window().size()),
                       static_cast<double>(pipeline_.window().memory_bytes()));
  metrics_.stories_active(static_cast<double>(pipeline_.stories().size()));
  log::info("window_restored", {{"from", topic},
                                {"articles", std::to_string(restored)},
                                {"skipped", std::to_string(skipped)},
                                {"uncommitted", std::to_string(uncommitted)},
                                {"held", std::to_string(pipeline_.window().size())},
                                {"seconds", std::to_string(seconds_since(t0))}});
  if (ended < queues.size() && !stop_.load()) {
    return tl::unexpected("restore did not reach the end of every partition of " + topic);
  }
  return std::optional<std::size_t>(restored);
}

void Daemon::adopt_partition(rd_kafka_t* rk, const std::string& topic, int partition,
                             Clock::time_point now) {
  merger_.assign({topic, partition}, now);
  next_offset_.erase({topic, partition});
  // What extractors write is read while it is written: its end means nothing until the
  // extractor says how far it has come.
  if (config_.role == "dedup") merger_.expect_watermarks({topic, partition});
  metrics_.partition_assigned(topic, partition);
  // Each partition's messages wait in its own queue (librdkafka then bounds prefetching per
  // partition, queued.max.messages.kbytes), so the loop can take them in event-time order. The
  // queue is detached before the assignment starts fetching: a message that went to the
  // consumer queue instead could overtake (or fall behind) its partition's others.
  if (rd_kafka_queue_t* q = rd_kafka_queue_get_partition(rk, topic.c_str(), partition)) {
    rd_kafka_queue_forward(q, nullptr);
    auto& slot = partition_queues_[{topic, partition}];
    if (slot) rd_kafka_queue_destroy(slot);
    slot = q;
  }
}

tl::expected<void, std::string> Daemon::open_changelog_tail(const std::string& bootstrap,
                                                            std::chrono::milliseconds hold) {
  char err[512];
  // A consumer of its own, assigned every changelog partition where the restore ended.
  auto tconf = make_kafka_conf({{"bootstrap.servers", bootstrap},
                                {"group.id", config_.kafka.group_id + ".tail"},
                                {"enable.auto.commit", "false"},
                                {"isolation.level", "read_committed"},
                                {"client.id", "newsflow-tail"}},
                               config_.kafka.consumer, "kafka.consumer");
  if (!tconf) return tl::unexpected(tconf.error().front().message);
  rd_kafka_conf_set(tconf->get(), "enable.partition.eof", "true", err, sizeof err);
  rd_kafka_conf_set(tconf->get(), "enable.auto.commit", "false", err, sizeof err);
  KafkaHandle tc(rd_kafka_new(RD_KAFKA_CONSUMER, tconf->get(), err, sizeof err));
  if (!tc) return tl::unexpected(std::string(err));
  tconf->release();
  // A standby applies the owner's records once their inputs are committed (`admit`); an
  // extractor learns links from every record.
  ChangelogTail::Admit gate;
  if (config_.role == "dedup") {
    gate = [this](const rd_kafka_message_t* m, bool final) { return admit(m, final); };
  }
  auto tail = ChangelogTail::open(std::move(tc), config_.topics.state, changelog_positions_,
                                  changelog_last_seq_, hold, std::move(gate));
  if (!tail) return tl::unexpected(tail.error());
  tail_ = std::move(*tail);
  return {};
}

tl::expected<void, std::string> Daemon::start_standby(const std::string& bootstrap) {
  char err[512];
  if (auto tail = open_changelog_tail(bootstrap, std::chrono::milliseconds(1000)); !tail) {
    return tl::unexpected(tail.error());
  }

  if (auto n = topic_partitions(consumer_.get(), config_.topics.dedup_lease); !n) {
    return tl::unexpected(n.error() + " (create it with one partition)");
  } else if (*n != 1) {
    log::warn("dedup_lease_partitions",
              {{"topic", config_.topics.dedup_lease},
               {"partitions", std::to_string(*n)},
               {"consequence", "partition 0 is the lease; the others are never used"}});
  }
  // The lease: one partition in a group of its own; the member it is assigned to owns the
  // window. Cooperative-sticky keeps it where it is when standbys come and go; a killed owner
  // loses it after session.timeout.ms, a stopped one at once (it leaves the group).
  const std::string group = config_.kafka.group_id + "-dedup-lease";
  auto lconf = make_kafka_conf({{"bootstrap.servers", bootstrap},
                                {"group.id", group},
                                {"enable.auto.commit", "false"},
                                {"partition.assignment.strategy", "cooperative-sticky"},
                                {"session.timeout.ms", "6000"},
                                {"heartbeat.interval.ms", "1000"},
                                {"client.id", "newsflow-lease"}},
                               config_.kafka.lease, "kafka.lease");
  if (!lconf)
    return tl::unexpected(lconf.error().front().path + ": " + lconf.error().front().message);
  rd_kafka_conf_set_rebalance_cb(
      lconf->get(),
      reinterpret_cast<void (*)(rd_kafka_t*, rd_kafka_resp_err_t, rd_kafka_topic_partition_list_t*,
                                void*)>(&Daemon::on_lease_rebalance));
  rd_kafka_conf_set_opaque(lconf->get(), this);
  lease_.reset(rd_kafka_new(RD_KAFKA_CONSUMER, lconf->get(), err, sizeof err));
  if (!lease_) return tl::unexpected(std::string(err));
  lconf->release();
  rd_kafka_poll_set_consumer(lease_.get());
  rd_kafka_topic_partition_list_t* topics = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(topics, config_.topics.dedup_lease.c_str(),
                                    RD_KAFKA_PARTITION_UA);
  const rd_kafka_resp_err_t e = rd_kafka_subscribe(lease_.get(), topics);
  rd_kafka_topic_partition_list_destroy(topics);
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) return tl::unexpected(rd_kafka_err2str(e));
  standby_ = true;
  metrics_.dedup_owner(false);
  log::info("dedup_standby", {{"lease_topic", config_.topics.dedup_lease},
                              {"lease_group", group},
                              {"changelog", config_.topics.state},
                              {"last_seq", std::to_string(changelog_last_seq_)}});
  return {};
}

void Daemon::on_lease_rebalance(rd_kafka_t* rk, int err_int, void* partitions_ptr, void* opaque) {
  auto* self = static_cast<Daemon*>(opaque);
  auto* partitions = static_cast<rd_kafka_topic_partition_list_t*>(partitions_ptr);
  const auto err = static_cast<rd_kafka_resp_err_t>(err_int);
  const bool cooperative = std::string_view(rd_kafka_rebalance_protocol(rk)) == "COOPERATIVE";
  const bool assign = err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS;
  // The lease is partition 0 (a topic created with more would otherwise make several owners).
  bool lease = false;
  for (int i = 0; i < partitions->cnt; ++i) lease = lease || partitions->elems[i].partition == 0;
  if (lease) {
    self->lease_granted_ = assign;
    self->lease_revoked_ = !assign;
  }
  rd_kafka_error_t* e = nullptr;
  if (cooperative) {
    e = assign ? rd_kafka_incremental_assign(rk, partitions)
               : rd_kafka_incremental_unassign(rk, partitions);
  } else {
    rd_kafka_assign(rk, assign ? partitions : nullptr);
  }
  if (e) rd_kafka_error_destroy(e);
  log::info(assign ? "dedup_lease_assigned" : "dedup_lease_revoked",
            {{"partitions", std::to_string(partitions->cnt)}, {"reason", rd_kafka_err2name(err)}});
}

bool Daemon::serve_lease() {
  // Serves the lease group (heartbeats run in the background; rebalances need this poll).
  while (rd_kafka_message_t* m = rd_kafka_consumer_poll(lease_.get(), 0)) {
    rd_kafka_message_destroy(m);
  }
  if (owner_) {
    if (lease_revoked_) {
      // Another process judges now; this one's window went on past the changelog it shares
      // with the new owner. It stops (its supervisor starts it again: a fresh standby).
      log::error("dedup_lease_lost", {{"consequence", "exiting; restart to rejoin as standby"}});
      return false;
    }
    return true;
  }
  lease_revoked_ = false;  // a lease granted and taken back before this standby used it
  auto apply = [this](const dedup::ArticleState& s) { pipeline_.restore(s); };
  if (lease_granted_) return take_over();
  if (Clock::now() - committed_at_ > std::chrono::milliseconds(500)) {
    if (auto c = refresh_committed(); !c)
      log::warn("committed_offsets_failed", {{"error", c.error()}});
  }
  const std::size_t applied = tail_->poll(apply);
  metrics_.standby_lag(static_cast<double>(tail_->pending() + tail_->behind()));
  if (applied > 0) {
    metrics_.window_size(static_cast<double>(pipeline_.window().size()),
                         static_cast<double>(pipeline_.window().memory_bytes()));
    metrics_.stories_active(static_cast<double>(pipeline_.stories().size()));
  }
  if (Clock::now() - last_standby_log_ > std::chrono::seconds(30)) {
    last_standby_log_ = Clock::now();
    log::info("dedup_standby_following", {{"last_seq", std::to_string(tail_->last_seq())},
                                          {"late_records", std::to_string(tail_->late())},
                                          {"held", std::to_string(pipeline_.window().size())}});
  }
  return true;
}

bool Daemon::take_over() {
  const auto t0 = Clock::now();
  if (exactly_once_) {
    // Fences the old owner's producer, should it still be alive somewhere, and aborts its open
    // transaction, so the changelog's stable end is its end.
    if (rd_kafka_error_t* e = rd_kafka_init_transactions(producer_.get(), 60000)) {
      log::error("takeover_failed", {{"error", std::string("cannot initialize transactions: ") +
                                                   rd_kafka_error_string(e)}});
      rd_kafka_error_destroy(e);
      return false;
    }
  }
  auto apply = [this](const dedup::ArticleState& s) { pipeline_.restore(s); };
  // The old owner is gone (the group gave its lease away): nothing older can arrive, and its
  // commits are final; the records of inputs it did not commit are judged again here.
  if (auto c = refresh_committed(); !c) {
    log::error("takeover_failed", {{"error", c.error()}});
    return false;
  }
  auto applied = tail_->catch_up(apply, std::chrono::seconds(120));
  if (!applied) {
    log::error("takeover_failed", {{"error", applied.error()}});
    return false;
  }
  const std::uint64_t last_seq = tail_->last_seq();
  const std::uint64_t tail_dropped = tail_->dropped();
  const double catch_up_seconds = seconds_since(t0);
  tail_.reset();
  standby_ = false;
  auto n = topic_partitions(consumer_.get(), config_.topics.extracted);
  if (!n) {
    log::error("takeover_failed", {{"error", n.error()}});
    return false;
  }
  // Every extracted partition, from the offsets the dedup group committed.
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(*n);
  const auto now = Clock::now();
  for (int p = 0; p < *n; ++p) {
    rd_kafka_topic_partition_list_add(list, config_.topics.extracted.c_str(), p)->offset =
        RD_KAFKA_OFFSET_INVALID;
    adopt_partition(consumer_.get(), config_.topics.extracted, p, now);
  }
  const rd_kafka_resp_err_t e = rd_kafka_assign(consumer_.get(), list);
  rd_kafka_topic_partition_list_destroy(list);
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
    log::error("takeover_failed", {{"error", rd_kafka_err2str(e)}});
    return false;
  }
  assigned_ = *n;
  owner_ = true;
  const double seconds = seconds_since(t0);
  metrics_.dedup_owner(true);
  metrics_.standby_lag(0);
  metrics_.took_over(seconds);
  metrics_.window_size(static_cast<double>(pipeline_.window().size()),
                       static_cast<double>(pipeline_.window().memory_bytes()));
  log::info("dedup_lease_acquired", {{"caught_up_records", std::to_string(*applied)},
                                     {"uncommitted_dropped", std::to_string(tail_dropped)},
                                     {"catch_up_seconds", std::to_string(catch_up_seconds)},
                                     {"last_seq", std::to_string(last_seq)},
                                     {"held", std::to_string(pipeline_.window().size())},
                                     {"partitions", std::to_string(*n)},
                                     {"seconds", std::to_string(seconds)}});
  return true;
}

void Daemon::on_rebalance(rd_kafka_t* rk, int err_int, void* partitions_ptr, void* opaque) {
  auto* self = static_cast<Daemon*>(opaque);
  auto* partitions = static_cast<rd_kafka_topic_partition_list_t*>(partitions_ptr);
  const auto err = static_cast<rd_kafka_resp_err_t>(err_int);
  const bool cooperative = std::string_view(rd_kafka_rebalance_protocol(rk)) == "COOPERATIVE";
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    const auto now = Clock::now();
    for (int i = 0; i < partitions->cnt; ++i) {
      self->adopt_partition(rk, partitions->elems[i].topic, partitions->elems[i].partition, now);
    }
    if (cooperative) {
      if (rd_kafka_error_t* e = rd_kafka_incremental_assign(rk, partitions))
        rd_kafka_error_destroy(e);
      self->assigned_ += partitions->cnt;
    } else {
      rd_kafka_assign(rk, partitions);
      self->assigned_ = partitions->cnt;
    }
    log::info("partitions_assigned", {{"count", std::to_string(partitions->cnt)}});
  } else {
    // Rebalance callbacks run inside the consumer poll, while a batch is being collected and
    // never while one is judged: the collected messages of revoked partitions are dropped
    // (uncommitted, so their new owner reads them again). Batches judged before are
    // acknowledged and their offsets committed now, so the new owner does not judge them again;
    // one that fails is judged again here (its inputs of partitions still assigned) once the
    // rebalance is done.
    self->settle(/*drain=*/true, /*rewind=*/false);
    std::size_t abandoned = 0;
    for (int i = 0; i < partitions->cnt; ++i) {
      const auto& tp = partitions->elems[i];
      self->metrics_.forget_lag(tp.topic, tp.partition);
      self->next_offset_.erase({tp.topic, tp.partition});
      // Its new owner starts from the last committed offset (at least once).
      self->pending_commit_.erase({tp.topic, tp.partition});
      if (self->pending_commit_.empty()) self->pending_commit_messages_ = 0;
      for (rd_kafka_message_t* m : self->merger_.revoke({tp.topic, tp.partition})) {
        rd_kafka_message_destroy(m);
        ++abandoned;
      }
      if (auto q = self->partition_queues_.find({tp.topic, tp.partition});
          q != self->partition_queues_.end()) {
        rd_kafka_queue_destroy(q->second);
        self->partition_queues_.erase(q);
      }
      if (self->waiting_) {
        // Extracted, not judged: its inputs of the partition go with it.
        Stage& w = *self->waiting_;
        std::size_t kept = 0;
        for (std::size_t j = 0; j < w.batch.size(); ++j) {
          rd_kafka_message_t* m = w.batch[j].msg;
          if (m->partition == tp.partition &&
              rd_kafka_topic_name(m->rkt) == std::string_view(tp.topic)) {
            rd_kafka_message_destroy(m);
            ++abandoned;
            continue;
          }
          if (kept != j) {
            w.batch[kept] = w.batch[j];
            w.messages[kept] = w.messages[j];
            w.work[kept] = std::move(w.work[j]);
          }
          ++kept;
        }
        w.batch.resize(kept);
        w.messages.resize(kept);
        w.work.resize(kept);
      }
      if (!self->collecting_) continue;
      auto& batch = *self->collecting_;
      for (auto it = batch.begin(); it != batch.end();) {
        if (it->msg->partition == tp.partition &&
            rd_kafka_topic_name(it->msg->rkt) == std::string_view(tp.topic)) {
          rd_kafka_message_destroy(it->msg);
          it = batch.erase(it);
          ++abandoned;
        } else {
          ++it;
        }
      }
    }
    if (cooperative) {
      if (rd_kafka_error_t* e = rd_kafka_incremental_unassign(rk, partitions))
        rd_kafka_error_destroy(e);
      self->assigned_ -= partitions->cnt;
    } else {
      rd_kafka_assign(rk, nullptr);
      self->assigned_ = 0;
    }
    log::info("partitions_revoked", {{"count", std::to_string(partitions->cnt)},
                                     {"reason", rd_kafka_err2name(err)},
                                     {"abandoned_messages", std::to_string(abandoned)}});
  }
}

int Daemon::on_statistics(rd_kafka_t*, char* json, size_t len, void* opaque) {
  auto* self = static_cast<Daemon*>(opaque);
  const auto stats = nlohmann::json::parse(std::string_view(json, len), nullptr, false);
  if (!stats.is_object() || !stats.contains("topics") || !stats["topics"].is_object()) return 0;
  for (const auto& [topic, t] : stats["topics"].items()) {
    if (!t.is_object() || !t.contains("partitions") || !t["partitions"].is_object()) continue;
    for (const auto& [partition, p] : t["partitions"].items()) {
      if (partition == "-1" || !p.is_object()) continue;  // -1: librdkafka's internal partition
      // Only partitions this consumer fetches; consumer_lag is -1 until both offsets are known.
      if (p.value("fetch_state", "") != "active") continue;
      // Before the first message of a group without committed offsets it is what lies between
      // the partition's ends (auto.offset.reset is earliest), so the gauge exists from the start.
      std::int64_t lag = p.value("consumer_lag", std::int64_t{-1});
      const std::int64_t hi = p.value("hi_offset", std::int64_t{-1});
      const std::int64_t lo = p.value("lo_offset", std::int64_t{-1});
      if (lag < 0 && p.value("committed_offset", std::int64_t{-1}) < 0 &&
          p.value("app_offset", std::int64_t{-1}) < 0 && hi >= 0 && lo >= 0) {
        lag = hi - lo;
      }
      if (lag < 0) continue;
      self->metrics_.consumer_lag(topic,
                                  static_cast<int>(std::strtol(partition.c_str(), nullptr, 10)),
                                  static_cast<double>(lag));
    }
  }
  return 0;  // librdkafka frees the JSON
}

void Daemon::on_delivery(rd_kafka_t*, const rd_kafka_message_t* msg, void* opaque) {
  auto* self = static_cast<Daemon*>(opaque);
  if (auto* batch = static_cast<InFlight*>(msg->_private)) {
    if (batch->outstanding > 0) --batch->outstanding;
    if (msg->err) batch->failed = true;
  }
  if (msg->err) {
    ++self->delivery_errors_;
    self->last_delivery_error_ = rd_kafka_err2str(msg->err);
    self->metrics_.delivery_failed();
  } else {
    self->metrics_.produced(rd_kafka_topic_name(msg->rkt));
    if (msg->offset < 0) self->metrics_.delivery_unconfirmed();
  }
}

std::vector<std::string> Daemon::input_topics() const {
  if (config_.role == "dedup") return {config_.topics.extracted};
  return {config_.topics.pages, config_.topics.feeds};
}

bool Daemon::produce(const std::string& topic, const std::string& key, const std::string& value,
                     const std::vector<std::pair<std::string, std::string>>& headers,
                     bool tombstone, std::int32_t partition, std::int64_t timestamp_ms) {
  while (true) {
    rd_kafka_headers_t* hdrs = rd_kafka_headers_new(headers.size());
    for (const auto& [name, v] : headers) {
      rd_kafka_header_add(hdrs, name.data(), static_cast<ssize_t>(name.size()), v.data(),
                          static_cast<ssize_t>(v.size()));
    }
    const rd_kafka_resp_err_t e = rd_kafka_producev(
        producer_.get(), RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_KEY(key.data(), key.size()),
        RD_KAFKA_V_VALUE(tombstone ? nullptr : const_cast<char*>(value.data()), value.size()),
        RD_KAFKA_V_PARTITION(partition < 0 ? RD_KAFKA_PARTITION_UA : partition),
        RD_KAFKA_V_TIMESTAMP(timestamp_ms), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_OPAQUE(producing_), RD_KAFKA_V_END);
    if (e == RD_KAFKA_RESP_ERR_NO_ERROR) {
      if (producing_) ++producing_->outstanding;
      return true;
    }
    rd_kafka_headers_destroy(hdrs);
    if (e == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      // During an outage the queue frees up as messages time out (message.timeout.ms); after
      // SIGTERM the wait ends at the drain deadline: the batch is not acknowledged, its inputs
      // are not committed, and the process exits in time.
      if (stop_.load() && steady_ms() >= drain_deadline_ms_.load()) {
        if (producing_) producing_->failed = true;
        ++delivery_errors_;
        last_delivery_error_ = "producer queue still full at the drain deadline";
        metrics_.delivery_failed();
        log::error("produce_failed", {{"topic", topic}, {"error", last_delivery_error_}});
        return false;
      }
      rd_kafka_poll(producer_.get(), 50);  // serve delivery reports to make room
      continue;
    }
    if (producing_) producing_->failed = true;
    ++delivery_errors_;
    last_delivery_error_ = rd_kafka_err2str(e);
    metrics_.delivery_failed();
    log::error("produce_failed", {{"topic", topic}, {"error", last_delivery_error_}});
    return false;
  }
}

void Daemon::dead_letter(rd_kafka_message_t* msg, const Failure& failure) {
  Headers headers = message_headers(msg);
  headers.emplace_back("error_reason", failure.reason);
  headers.emplace_back("error_detail", failure.detail);
  headers.emplace_back("source_topic", rd_kafka_topic_name(msg->rkt));
  headers.emplace_back("source_partition", std::to_string(msg->partition));
  headers.emplace_back("source_offset", std::to_string(msg->offset));
  headers.emplace_back("schema", "newsflow.dead-letter/1");
  std::string_view value = payload(msg);
  if (static_cast<std::int64_t>(value.size()) > config_.kafka.dlq_max_payload_bytes) {
    headers.emplace_back("payload_truncated_from", std::to_string(value.size()));
    value = value.substr(0, static_cast<std::size_t>(config_.kafka.dlq_max_payload_bytes));
  }
  record_dead_letter(msg, failure);
  produce(config_.topics.dlq, std::string(key_of(msg)), std::string(value), headers);
}

// A feed item whose page could not be had: the DLQ record names the item (a small JSON value,
// keyed by its link) rather than repeating the whole feed, with the feed message's coordinates.
void Daemon::item_dead_letter(rd_kafka_message_t* msg, const Pipeline::Extracted& item) {
  const Failure& failure = *item.fetch_failure;
  Headers headers{{"url", item.fetch_url},
                  {"error_reason", failure.reason},
                  {"error_detail", failure.detail},
                  {"source_topic", rd_kafka_topic_name(msg->rkt)},
                  {"source_partition", std::to_string(msg->partition)},
                  {"source_offset", std::to_string(msg->offset)},
                  {"schema", "newsflow.dead-letter/1"}};
  nlohmann::ordered_json value;
  value["id"] = item.article.id;
  value["link"] = item.fetch_url;
  value["title"] = item.article.title;
  value["feed_key"] = std::string(key_of(msg));
  value["kept_feed_text"] = !item.skip;
  record_dead_letter(msg, failure);
  produce(config_.topics.dlq, item.fetch_url,
          value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), headers);
}

void Daemon::record_dead_letter(rd_kafka_message_t* msg, const Failure& failure) {
  metrics_.dead_letter(failure.reason);
  ++progress_.dead_letters;
  {
    std::lock_guard lock(status_mu_);
    status_.dead_letters.push_front({unix_now(), failure.reason, failure.detail,
                                     rd_kafka_topic_name(msg->rkt), msg->partition, msg->offset});
    if (status_.dead_letters.size() > StatusSnapshot::kMaxDeadLetters) {
      status_.dead_letters.pop_back();
    }
  }
  log::debug("dead_letter", {{"reason", failure.reason},
                             {"detail", failure.detail},
                             {"topic", rd_kafka_topic_name(msg->rkt)},
                             {"offset", std::to_string(msg->offset)}});
}

ParsedInput Daemon::parse(rd_kafka_message_t* msg) const {
  rd_kafka_timestamp_type_t ts_type;
  const std::int64_t ts_ms = rd_kafka_message_timestamp(msg, &ts_type);
  ParsedInput parsed =
      parse_page_message(payload(msg), message_headers(msg), ts_ms > 0 ? ts_ms / 1000 : 0);
  if (config_.topics.feeds == rd_kafka_topic_name(msg->rkt) &&
      parsed.input.kind == BodyKind::kHtmlBytes) {
    parsed.input.kind = BodyKind::kFeedBytes;
  }
  return parsed;
}

bool Daemon::dead_letters_of(rd_kafka_message_t* msg, Work& work) {
  if (work.parsed.failure) {
    dead_letter(msg, *work.parsed.failure);
    return true;
  }
  if (!work.prepared) {
    dead_letter(msg, work.prepared.error());
    return true;
  }
  for (const auto& item : *work.prepared) {
    if (item.fetch_failure) item_dead_letter(msg, item);
  }
  return false;
}

void Daemon::publish(rd_kafka_message_t* msg, Work& work) {
  // One try/catch per message: no input can crash-loop the daemon.
  try {
    if (dead_letters_of(msg, work)) return;
    for (const Output& o : pipeline_.commit(std::move(*work.prepared), work.parsed.input)) {
      const std::string kind(dedup::dup_kind_name(o.verdict.kind));
      produce(config_.topics.articles, o.article.id, article_json(o),
              {{"schema", "newsflow.article/1"}});
      const bool marked = !lose_state_marker_.empty() &&
                          payload(msg).find(lose_state_marker_) != std::string_view::npos;
      const bool lose_state = marked && !lost_state_;
      kill_after_batch_ = kill_after_batch_ || (marked && lost_state_);
      lost_state_ = lost_state_ || lose_state;
      if (!config_.topics.state.empty() && !lose_state) {
        produce(config_.topics.state, o.article.id, dedup::encode_state(o.state),
                {{"schema", "newsflow.state/1"},
                 {kInputHeader,
                  input_header(rd_kafka_topic_name(msg->rkt), msg->partition, msg->offset)}});
        metrics_.state_written();
      }
      produce(config_.topics.stories, o.story.story_id, story_json(o.story),
              {{"schema", "newsflow.story/1"}});
      // A merged story is gone: a tombstone, so compaction drops it.
      for (const auto& gone : o.story.merged_from)
        produce(config_.topics.stories, gone, {}, {}, true);
      metrics_.article(kind, o.article.language);
      ++progress_.articles;
      if (o.verdict.kind != dedup::DupKind::kUnique) ++progress_.duplicates;
    }
    progress_.stories = pipeline_.stories().size();
  } catch (const std::exception& e) {
    dead_letter(msg, {"internal_error", e.what()});
  }
}

void Daemon::hand_over(rd_kafka_message_t* msg, Work& work) {
  try {
    if (dead_letters_of(msg, work)) return;
    // Each input partition to an extracted partition of its own, stamped with the time the
    // input is ordered by, so the dedup role merges them as `--role all` merges the inputs.
    const auto it = extracted_offset_.find(rd_kafka_topic_name(msg->rkt));
    const int base = it == extracted_offset_.end() ? 0 : it->second;
    const std::int32_t partition = (base + msg->partition) % std::max(1, extracted_partitions_);
    const std::int64_t ts = order_time(msg) * 1000;
    for (const auto& e : pipeline_.hand_over(std::move(*work.prepared))) {
      produce(config_.topics.extracted, Pipeline::article_id(e, work.parsed.input),
              extracted_json(e, work.parsed.input), {{"schema", "newsflow.extracted/1"}}, false,
              partition, ts);
      wrote_since_watermark_.insert(partition);
      ++progress_.articles;
    }
  } catch (const std::exception& e) {
    dead_letter(msg, {"internal_error", e.what()});
  }
}

void Daemon::extract(Stage& stage, bool wait) {
  stage.messages.clear();
  for (const Taken& t : stage.batch) stage.messages.push_back(t.msg);
  stage.work.clear();
  stage.work.resize(stage.messages.size());
  for (rd_kafka_message_t* m : stage.messages) {
    metrics_.consumed(rd_kafka_topic_name(m->rkt), m->partition);
    ++progress_.consumed;
  }
  // Extraction is stateless: one input at a time to each of the pool's threads; judging stays
  // in input order on the loop's thread.
  pool_->start(stage.messages.size(), [this, &messages = stage.messages,
                                       &work = stage.work](std::size_t i) {
    if (crash_guard_.crashes(rd_kafka_topic_name(messages[i]->rkt), messages[i]->partition,
                             messages[i]->offset) >= 2) {
      work[i].parsed.failure =
          Failure{"worker_crash", "the process died twice while processing this input"};
      return;
    }
    if (!crash_marker_.empty() && payload(messages[i]).find(crash_marker_) != std::string::npos) {
      std::abort();
    }
    try {
      const auto t0 = Clock::now();
      if (config_.role == "dedup") {
        // An extractor's record: extraction is done; the article goes straight to judging.
        auto record = parse_extracted(payload(messages[i]));
        metrics_.stage_seconds("parse", seconds_since(t0));
        if (!record) {
          work[i].parsed.failure = Failure{"invalid_extracted", record.error()};
          return;
        }
        work[i].parsed.input = std::move(record->second);
        work[i].prepared = std::vector<Pipeline::Extracted>{};
        work[i].prepared->push_back(std::move(record->first));
        return;
      }
      work[i].parsed = parse(messages[i]);
      metrics_.stage_seconds("parse", seconds_since(t0));
      if (!work[i].parsed.failure) work[i].prepared = pipeline_.prepare(work[i].parsed.input);
    } catch (const std::exception& e) {
      work[i].prepared = tl::unexpected(Failure{"internal_error", e.what()});
    }
  });
  if (wait) pool_->wait();
}

namespace {

// The offsets to commit after `messages`: one past the last message of each partition.
rd_kafka_topic_partition_list_t* next_offsets(const std::vector<rd_kafka_message_t*>& messages) {
  std::map<std::pair<std::string, int>, std::int64_t> next;
  for (const auto* m : messages) {
    auto& o = next[{rd_kafka_topic_name(m->rkt), m->partition}];
    o = std::max(o, m->offset + 1);
  }
  rd_kafka_topic_partition_list_t* list =
      rd_kafka_topic_partition_list_new(static_cast<int>(next.size()));
  for (const auto& [tp, offset] : next) {
    rd_kafka_topic_partition_list_add(list, tp.first.c_str(), tp.second)->offset = offset;
  }
  return list;
}

}  // namespace

bool Daemon::commit_transaction(const std::vector<rd_kafka_message_t*>& messages) {
  const int timeout = std::max(1, flush_timeout_ms());
  rd_kafka_topic_partition_list_t* offsets = next_offsets(messages);
  rd_kafka_consumer_group_metadata_t* group = rd_kafka_consumer_group_metadata(consumer_.get());
  rd_kafka_error_t* e =
      rd_kafka_send_offsets_to_transaction(producer_.get(), offsets, group, timeout);
  rd_kafka_consumer_group_metadata_destroy(group);
  rd_kafka_topic_partition_list_destroy(offsets);
  if (!e) e = rd_kafka_commit_transaction(producer_.get(), timeout);
  for (int attempt = 0; e && rd_kafka_error_is_retriable(e) && attempt < 3; ++attempt) {
    rd_kafka_error_destroy(e);
    e = rd_kafka_commit_transaction(producer_.get(), timeout);
  }
  if (!e && delivery_errors_ == 0) return true;
  const std::string message = e ? rd_kafka_error_string(e) : last_delivery_error_;
  const bool fatal = e && rd_kafka_error_is_fatal(e);
  if (e) rd_kafka_error_destroy(e);
  log::error("transaction_failed", {{"error", message}, {"fatal", fatal ? "true" : "false"}});
  if (!fatal) {
    // Abortable (or a delivery failed): abort, so no reader sees this batch's outputs.
    if (rd_kafka_error_t* a = rd_kafka_abort_transaction(producer_.get(), timeout)) {
      log::error("transaction_abort_failed", {{"error", rd_kafka_error_string(a)}});
      rd_kafka_error_destroy(a);
    }
  }
  return false;
}

void Daemon::note_processing(std::initializer_list<const std::vector<Taken>*> batches) {
  if (!crash_guard_.enabled()) return;
  std::vector<CrashGuard::Input> inputs;
  for (const auto* batch : batches) {
    if (!batch) continue;
    for (const auto& t : *batch) {
      inputs.push_back({rd_kafka_topic_name(t.msg->rkt), t.msg->partition, t.msg->offset});
    }
  }
  if (inputs.empty()) {
    crash_guard_.end();
  } else {
    crash_guard_.begin(inputs);
  }
}

void Daemon::judge_waiting() {
  if (!waiting_) return;
  judge(*waiting_);
  waiting_.reset();
  note_processing({});
}

bool Daemon::process_batch(std::vector<Taken>& batch) {
  note_processing({&batch});
  Stage stage;
  stage.batch = std::move(batch);
  batch.clear();
  extract(stage, /*wait=*/true);
  const bool delivered = judge(stage);
  // exactly_once: a batch not delivered goes back to the caller (at_least_once: `settle`).
  batch = std::move(stage.batch);
  crash_guard_.end();
  return delivered;
}

bool Daemon::judge(Stage& stage) {
  delivery_errors_ = 0;
  std::vector<rd_kafka_message_t*>& messages = stage.messages;
  std::vector<Work>& work = stage.work;
  std::vector<Taken>& batch = stage.batch;
  if (fetcher_) {
    // Link-only feed items of the whole batch are fetched together.
    std::vector<Pipeline::Extracted*> items;
    for (auto& w : work) {
      if (!w.prepared) continue;
      for (auto& e : *w.prepared) {
        if (!e.fetch_url.empty()) items.push_back(&e);
      }
    }
    if (!items.empty()) {
      try {
        pipeline_.resolve_links(items, *fetcher_);
      } catch (const std::exception& e) {
        log::error("fetch_failed", {{"error", e.what()}});
      }
    }
  }
  const auto t0 = Clock::now();
  std::unique_ptr<InFlight> flight;
  if (!exactly_once_) {
    flight = std::make_unique<InFlight>();
    producing_ = flight.get();
  } else {
    if (rd_kafka_error_t* e = rd_kafka_begin_transaction(producer_.get())) {
      log::error("transaction_begin_failed", {{"error", rd_kafka_error_string(e)}});
      rd_kafka_error_destroy(e);
      return false;
    }
  }
  for (std::size_t i = 0; i < messages.size(); ++i) {
    // Expiry never runs ahead of what a partition may still deliver.
    pipeline_.hold_expiry_at(batch[i].low_watermark);
    if (config_.role == "extract") {
      hand_over(messages[i], work[i]);
    } else {
      publish(messages[i], work[i]);
    }
  }
  // After the batch's records, in the same partitions: how far the inputs have come.
  if (config_.role == "extract") emit_watermarks();
  producing_ = nullptr;
  metrics_.producer_queue(rd_kafka_outq_len(producer_.get()));
  if (!exactly_once_) {
    // The next batch is judged while this one's outputs are on their way (`settle`).
    flight->queued = Clock::now();
    flight->links = pipeline_.take_pending_links();
    flight->kill = kill_after_batch_;
    flight->batch = std::move(batch);
    batch.clear();
    in_flight_.push_back(std::move(flight));
    metrics_.stage_seconds("produce", seconds_since(t0));
    return true;
  }
  // Outputs and input offsets commit together or not at all.
  const bool delivered = commit_transaction(messages);
  metrics_.stage_seconds("produce", seconds_since(t0));
  metrics_.producer_queue(rd_kafka_outq_len(producer_.get()));
  if (!delivered) {
    pipeline_.drop_pending_links();
    return false;
  }
  pipeline_.confirm_links();
  metrics_.committed();
  progress_.committed += messages.size();
  return true;
}

void Daemon::release(InFlight& f) {
  for (const Taken& t : f.batch) rd_kafka_message_destroy(t.msg);
  f.batch.clear();
}

bool Daemon::settle(bool drain, bool rewind) {
  if (drain && !in_flight_.empty()) {
    // Everything queued, acknowledged within the flush limit (after SIGTERM, the drain limit).
    rd_kafka_flush(producer_.get(), flush_timeout_ms());
  } else {
    rd_kafka_poll(producer_.get(), 0);
  }
  const auto limit = std::chrono::milliseconds(config_.kafka.flush_timeout_ms);
  // Outputs in flight are bounded: the judging waits while the oldest of kMaxInFlight batches
  // is on its way.
  constexpr std::size_t kMaxInFlight = 4;
  while (in_flight_.size() > kMaxInFlight && in_flight_.front()->outstanding > 0 &&
         !in_flight_.front()->failed && Clock::now() - in_flight_.front()->queued < limit &&
         !(stop_.load() && steady_ms() >= drain_deadline_ms_.load())) {
    rd_kafka_poll(producer_.get(), 10);
  }
  bool ok = true;
  const auto now = Clock::now();
  while (!in_flight_.empty()) {
    InFlight& f = *in_flight_.front();
    if (!f.failed && f.outstanding > 0) {
      if (!drain && now - f.queued < limit) break;  // on its way
      f.failed = true;                              // not acknowledged in time
    }
    if (f.failed) {
      if (!rewind) break;
      log::error("batch_not_delivered",
                 {{"errors", std::to_string(delivery_errors_)},
                  {"unacknowledged", std::to_string(f.outstanding)},
                  {"batches_judged_again", std::to_string(in_flight_.size())},
                  {"last_error", last_delivery_error_}});
      // Its inputs and those of every later batch go back to the front of their partitions,
      // the latest first, and are judged again (the window repeats its verdicts for ids it
      // knows). Delivery reports still due for them find them among the retired.
      if (waiting_) {
        give_back(waiting_->batch.begin(), waiting_->batch.end());
        waiting_.reset();
        note_processing({});
      }
      for (auto it = in_flight_.rbegin(); it != in_flight_.rend(); ++it) {
        give_back((*it)->batch.begin(), (*it)->batch.end());
        (*it)->batch.clear();
        if ((*it)->outstanding > 0) retired_.push_back(std::move(*it));
      }
      in_flight_.clear();
      ok = false;
      break;
    }
    // Acknowledged in full, and every batch before it too.
    metrics_.stage_seconds("acknowledge", std::chrono::duration<double>(now - f.queued).count());
    pipeline_.confirm_links(f.links);
    if (f.kill) {
      log::error("fault_injected", {{"fault", "a state record lost, killed before the commit"}});
      std::raise(SIGKILL);
    }
    if (!lost_state_) {  // fault injection: from then on the commit "fails"
      for (const Taken& t : f.batch) {
        auto& o = pending_commit_[{rd_kafka_topic_name(t.msg->rkt), t.msg->partition}];
        o = std::max(o, t.msg->offset + 1);
      }
      pending_commit_messages_ += f.batch.size();
    }
    release(f);
    in_flight_.pop_front();
  }
  std::erase_if(retired_, [](const auto& f) { return f->outstanding == 0; });
  if (!pending_commit_.empty() &&
      (drain ||
       now - last_commit_attempt_ >= std::chrono::milliseconds(config_.kafka.commit_interval_ms))) {
    commit_offsets({}, 0);
  }
  return ok;
}

bool Daemon::commit_offsets(const std::map<std::pair<std::string, int>, std::int64_t>& offsets,
                            std::size_t messages) {
  // Offsets whose commit failed earlier go along: a partition that delivers nothing after a
  // failed commit would otherwise keep its old committed offset, and a restart or a new owner
  // would process its inputs again.
  for (const auto& [tp, offset] : offsets) {
    auto& o = pending_commit_[tp];
    o = std::max(o, offset);
  }
  pending_commit_messages_ += messages;
  if (pending_commit_.empty()) return true;
  last_commit_attempt_ = Clock::now();
  rd_kafka_topic_partition_list_t* list =
      rd_kafka_topic_partition_list_new(static_cast<int>(pending_commit_.size()));
  for (const auto& [tp, offset] : pending_commit_) {
    rd_kafka_topic_partition_list_add(list, tp.first.c_str(), tp.second)->offset = offset;
  }
  const rd_kafka_resp_err_t c = rd_kafka_commit(consumer_.get(), list, /*async=*/0);
  rd_kafka_topic_partition_list_destroy(list);
  if (c != RD_KAFKA_RESP_ERR_NO_ERROR) {
    // Outputs are out; the offsets are committed with the next batch's, or on their own a
    // second later while idle, and before the process exits.
    metrics_.commit_failed();
    log::warn("commit_failed", {{"error", rd_kafka_err2str(c)},
                                {"partitions", std::to_string(pending_commit_.size())}});
    return false;
  }
  metrics_.committed();
  progress_.committed += pending_commit_messages_;
  pending_commit_.clear();
  pending_commit_messages_ = 0;
  return true;
}

int Daemon::flush_timeout_ms() const {
  if (!stop_.load()) return config_.kafka.flush_timeout_ms;
  const std::int64_t left = drain_deadline_ms_.load() - steady_ms();
  return static_cast<int>(
      std::clamp<std::int64_t>(left, 0, static_cast<std::int64_t>(config_.kafka.flush_timeout_ms)));
}

void Daemon::refresh_status(bool force) {
  const auto now = Clock::now();
  if (!force && now - last_status_ < std::chrono::seconds(1)) return;
  last_status_ = now;
  const bool is_ready = ready();
  metrics_.ready(is_ready);
  std::lock_guard lock(status_mu_);
  status_.ready = is_ready;
  status_.window_articles = pipeline_.window().size();
  status_.window_bytes = pipeline_.window().memory_bytes();
  status_.stories_active = pipeline_.stories().size();
  status_.stories = pipeline_.stories().largest(10);
  if (force || status_.samples.empty() || now - last_sample_ >= std::chrono::seconds(10)) {
    last_sample_ = now;
    status_.samples.push_back({unix_now(), progress_.consumed.load(), progress_.articles.load(),
                               progress_.duplicates.load(), progress_.dead_letters.load()});
    if (status_.samples.size() > StatusSnapshot::kMaxSamples) status_.samples.pop_front();
  }
}

// Once per turn of the processing loop: the watchdog ping comes from here, so a pipeline that
// stops turning (a hung flush, a stuck extraction) stops the pings.
void Daemon::tick() {
  last_tick_ms_.store(steady_ms());
  notifier_.alive();
  metrics_.loop_alive(static_cast<double>(unix_now()));
  if (!notified_ready_ && ready()) {
    notified_ready_ = true;
    notifier_.ready();
    log::info("daemon_ready", {{"partitions", std::to_string(assigned_.load())}});
  }
  refresh_status(false);
  if (Clock::now() - last_notify_status_ >= std::chrono::seconds(2)) {
    last_notify_status_ = Clock::now();
    notifier_.status("consumed " + std::to_string(progress_.consumed.load()) + ", articles " +
                     std::to_string(progress_.articles.load()) + ", duplicates " +
                     std::to_string(progress_.duplicates.load()) + ", dead letters " +
                     std::to_string(progress_.dead_letters.load()) + ", window " +
                     std::to_string(pipeline_.window().size()));
  }
}

void Daemon::give_back(std::vector<Taken>::const_iterator first,
                       std::vector<Taken>::const_iterator last) {
  while (last != first) {
    --last;
    rd_kafka_message_t* m = last->msg;
    const auto p = partition_of(m);
    if (merger_.assigned(p)) {
      merger_.give_back(p, m, order_time(m), m->len + m->key_len);
    } else {
      rd_kafka_message_destroy(m);
    }
  }
}

bool Daemon::collect_batch(std::vector<Taken>& batch, bool wait) {
  const auto deadline =
      Clock::now() + std::chrono::milliseconds(wait ? config_.kafka.batch_max_ms : 0);
  std::int64_t batch_bytes = 0;
  collecting_ = &batch;  // the rebalance callback drops messages of revoked partitions
  // A batch that starts the pipeline (nothing extracted waits to be judged) is a quarter of the
  // most: its extraction has no judging to overlap with, so the sooner it goes the better.
  const int most = wait && !exactly_once_ ? std::max(1, config_.kafka.batch_max_messages / 4)
                                         : config_.kafka.batch_max_messages;
  auto full = [&] {
    return static_cast<int>(batch.size()) >= most || batch_bytes >= config_.kafka.batch_max_bytes;
  };
  bool ok = true;
  bool polled = false;
  while (!full() && !stop_.load()) {
    if (!take_fetched()) {
      ok = false;
      break;
    }
    // What the event-time order lets go now.
    auto now = Clock::now();
    std::int64_t low = 0;
    std::size_t released = 0;
    while (!full()) {
      std::optional<rd_kafka_message_t*> m = merger_.next(now, &low);
      if (!m) break;
      batch.push_back({*m, low});
      batch_bytes += static_cast<std::int64_t>((*m)->len + (*m)->key_len);
      ++released;
    }
    if (full()) break;
    // The partitions' own queues may hold the next records already: refill before waiting.
    if (released > 0 && (!wait || now < deadline)) continue;
    if (!wait) {
      // Only what is here already (the loop judges the batch before meanwhile): one look at
      // the consumer queue for rebalances and ends of partitions, then go.
      if (polled) break;
      polled = true;
      rd_kafka_message_t* msg = rd_kafka_consumer_poll(consumer_.get(), 0);
      if (msg && !take(msg)) {
        ok = false;
        break;
      }
      continue;
    }
    // Held back by a partition still fetching: process what the order has let go (the fetch
    // goes on meanwhile) rather than wait for the batch to fill.
    if (static_cast<int>(batch.size()) >= std::max(1, config_.kafka.batch_max_messages / 4) &&
        merger_.waiting(now)) {
      break;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    if (left.count() <= 0) break;
    // The consumer queue serves rebalances and errors (and messages forwarded before their
    // partition got its own queue); partition queues are looked at again soon.
    const int timeout = static_cast<int>(std::min<std::int64_t>(left.count(), 5));
    rd_kafka_message_t* msg = rd_kafka_consumer_poll(consumer_.get(), timeout);
    if (msg && !take(msg)) {
      ok = false;
      break;
    }
  }
  collecting_ = nullptr;
  return ok;
}

bool Daemon::take(rd_kafka_message_t* msg) {
  if (msg->err) {
    if (msg->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      if (msg->rkt) merger_.end_of_partition(partition_of(msg));
    } else {
      log::warn("consumer_error", {{"error", rd_kafka_message_errstr(msg)}});
    }
    const bool fatal = msg->err == RD_KAFKA_RESP_ERR__FATAL;
    rd_kafka_message_destroy(msg);
    if (fatal) {
      char reason[512];
      rd_kafka_fatal_error(consumer_.get(), reason, sizeof reason);
      log::error("consumer_fatal", {{"error", reason}});
      return false;
    }
    return true;
  }
  const auto p = partition_of(msg);
  if (!merger_.assigned(p)) {
    // A message of a partition the rebalance callback has not announced: take it as assigned.
    merger_.assign(p, Clock::now());
    if (config_.role == "dedup") merger_.expect_watermarks(p);
  }
  if (config_.role == "dedup") {
    // An extractor's watermark: nothing older will follow in this partition.
    if (const auto w = watermark_header(msg)) {
      merger_.advance(p, *w, Clock::now());
      rd_kafka_message_destroy(msg);
      return true;
    }
  }
  next_offset_[p] = msg->offset + 1;
  merger_.add(p, msg, order_time(msg), msg->len + msg->key_len);
  return true;
}

bool Daemon::fetch_lags(const std::pair<std::string, int>& p) const {
  std::int64_t low = -1, high = -1;
  // librdkafka's view as of the partition's last fetch response (no request to a broker).
  if (rd_kafka_get_watermark_offsets(consumer_.get(), p.first.c_str(), p.second, &low, &high) !=
          RD_KAFKA_RESP_ERR_NO_ERROR ||
      high < 0) {
    return true;  // not fetched yet: it may hold anything
  }
  if (high == 0 || high == low) return false;  // it holds nothing
  // Nothing taken yet: a fetch round may have left it out (a response is bounded in bytes), so
  // its records may still come, unless its end is reported first.
  const auto next = next_offset_.find(p);
  return next == next_offset_.end() || next->second < high;
}

void Daemon::emit_watermarks() {
  // Per extracted partition, the oldest record its input partitions (assigned here) may still
  // deliver; sent when it moves, and once a second as a sign of life.
  std::map<std::int32_t, std::int64_t> lowest;
  for (const auto& [p, q] : partition_queues_) {
    const auto w = merger_.watermark_of(p);
    const auto it = extracted_offset_.find(p.first);
    if (it == extracted_offset_.end()) continue;
    const std::int32_t part = (it->second + p.second) % std::max(1, extracted_partitions_);
    auto [slot, inserted] = lowest.try_emplace(part, w.value_or(kUnknownWatermark));
    if (!inserted) slot->second = std::min(slot->second, w.value_or(kUnknownWatermark));
  }
  // The order has let the batch being extracted go, but its records are not handed over yet:
  // nothing they precede may be promised.
  if (extracting_) {
    for (const Taken& t : extracting_->batch) {
      const auto it = extracted_offset_.find(rd_kafka_topic_name(t.msg->rkt));
      if (it == extracted_offset_.end()) continue;
      const std::int32_t part =
          (it->second + t.msg->partition) % std::max(1, extracted_partitions_);
      auto slot = lowest.find(part);
      if (slot != lowest.end()) slot->second = std::min(slot->second, order_time(t.msg));
    }
  }
  const auto now = Clock::now();
  for (const auto& [part, w] : lowest) {
    if (w == kUnknownWatermark) continue;  // it may still deliver anything: promise nothing
    auto& last = sent_watermarks_[part];
    // At most five a second per partition while it moves (an end is said at once, and again
    // after records, so a partition's last record is its end: a dedup process that takes over
    // reads it there). One that stands still is said again once a second, a sign of life the
    // dedup role waits for at most `kafka.extractor_silence_ms`; an end only every 30 s: it
    // holds nothing back, and an idle extractor would otherwise fill `topics.extracted` with a
    // record per partition and second.
    const bool end = w == EventTimeMerger<rd_kafka_message_t*>::kEnd;
    const bool wrote = wrote_since_watermark_.count(part) > 0;
    const auto since = now - last.second;
    if (last.first == w && !wrote ? since < (end ? kEndRepeat : std::chrono::seconds(1))
                                  : !end && since < std::chrono::milliseconds(200)) {
      continue;
    }
    const std::string value =
        w == EventTimeMerger<rd_kafka_message_t*>::kEnd ? "end" : std::to_string(w);
    produce(config_.topics.extracted, "", "",
            {{"watermark", value}, {"schema", "newsflow.watermark/1"}}, false, part);
    last = {w, now};
    wrote_since_watermark_.erase(part);
  }
}

bool Daemon::take_fetched() {
  // A few messages per partition are enough to order by; the rest wait in librdkafka, which
  // stops fetching a partition whose queue is full.
  constexpr std::size_t kLookahead = 2;
  for (auto& [p, q] : partition_queues_) {
    while (merger_.buffered_records(p) < kLookahead) {
      rd_kafka_message_t* msg = rd_kafka_consume_queue(q, 0);
      if (!msg) break;
      const bool event = msg->err != RD_KAFKA_RESP_ERR_NO_ERROR;  // `take` destroys events
      if (!take(msg)) return false;
      if (event) break;  // an end of partition or an error
    }
    // An empty partition the broker holds more of is waited for longer than an idle one: on a
    // loaded machine a fetch can take longer than max_idle_ms (KIP-695's known lag).
    if (merger_.buffered_records(p) == 0) merger_.set_behind(p, fetch_lags(p));
  }
  return true;
}

int Daemon::run() {
  std::vector<Taken> batch;
  int exit_code = 0;
  auto backoff = std::chrono::milliseconds(100);
  // After a batch that was not delivered: waits before it is tried again, longer each time;
  // false when the producer failed for good.
  auto backoff_after_failure = [&] {
    if (stop_.load()) return true;
    char reason[512];
    if (rd_kafka_fatal_error(producer_.get(), reason, sizeof reason) !=
        RD_KAFKA_RESP_ERR_NO_ERROR) {
      log::error("producer_fatal", {{"error", reason}});
      return false;
    }
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(5000));
    return true;
  };
  refresh_status(true);
  while (!stop_.load()) {
    tick();
    if (lease_ && !serve_lease()) {
      exit_code = 3;
      break;
    }
    if (config_.role == "extract" && tail_) {
      tail_->poll([this](const dedup::ArticleState& s) { pipeline_.remember_published_links(s); });
    }
    // With a batch extracted and waiting to be judged, take only what is here already.
    if (!collect_batch(batch, /*wait=*/!waiting_)) {
      stop_ = true;
      exit_code = 1;
    }
    rd_kafka_poll(producer_.get(), 0);
    metrics_.order_buffer(static_cast<double>(merger_.buffered_records()),
                          static_cast<double>(merger_.buffered_bytes()));
    if (const std::uint64_t n = merger_.passed_over(); n > passed_over_reported_) {
      metrics_.order_passed_over(static_cast<double>(n - passed_over_reported_));
      passed_over_reported_ = n;
    }
    if (batch.empty()) {
      if (waiting_) judge_waiting();                     // nothing to extract meanwhile
      if (config_.role == "extract") emit_watermarks();  // a sign of life while idle
      // Acknowledgements come in and offsets are committed (a failed commit is retried) while
      // nothing new arrives; a failed batch goes back to be judged again.
      if (!settle(false) && !backoff_after_failure()) {
        exit_code = 1;
        break;
      }
      continue;
    }
    // Inputs that were in flight when an earlier process died go alone, so the one that kills
    // the process is found (and dead-lettered at its second crash) without taking others along.
    bool suspect = false;
    for (const auto& t : batch) {
      suspect = suspect || crash_guard_.crashes(rd_kafka_topic_name(t.msg->rkt), t.msg->partition,
                                                t.msg->offset) > 0;
    }
    if (!exactly_once_) {
      // Queued when judged; acknowledged, committed or sent back by `settle`.
      if (suspect) {
        judge_waiting();
        for (const Taken& t : batch) {
          std::vector<Taken> one{t};
          process_batch(one);
        }
      } else {
        // Extracted on the pool while the batch before it is judged here.
        Stage next;
        next.batch = std::move(batch);
        note_processing({&next.batch, waiting_ ? &waiting_->batch : nullptr});
        extract(next, /*wait=*/false);
        extracting_ = &next;
        if (waiting_) {
          judge(*waiting_);
          waiting_.reset();
        }
        pool_->wait();  // this thread extracts what the pool has not taken yet
        extracting_ = nullptr;
        waiting_ = std::move(next);
        note_processing({&waiting_->batch});
      }
      batch.clear();
      refresh_status(false);
      if (settle(false)) {
        backoff = std::chrono::milliseconds(100);
      } else if (!backoff_after_failure()) {
        exit_code = 1;
        break;
      }
      continue;
    }
    bool delivered = true;
    std::size_t done = batch.size();
    if (suspect && batch.size() > 1) {  // exactly_once: one transaction each
      for (std::size_t i = 0; i < batch.size(); ++i) {
        std::vector<Taken> one{batch[i]};
        if (!process_batch(one)) {
          done = i;
          delivered = false;
          break;
        }
      }
    } else {
      delivered = process_batch(batch);
      if (!delivered) done = 0;
    }
    // Messages not delivered wait at the front of their partitions for the next try.
    for (std::size_t i = 0; i < done; ++i) rd_kafka_message_destroy(batch[i].msg);
    give_back(batch.begin() + static_cast<std::ptrdiff_t>(done), batch.end());
    batch.clear();
    refresh_status(false);
    if (delivered) {
      backoff = std::chrono::milliseconds(100);
    } else if (!backoff_after_failure()) {
      exit_code = 1;
      break;
    }
  }
  if (waiting_ && exit_code == 0) {
    judge_waiting();  // extracted already; its outputs are acknowledged within the drain limit
  } else if (waiting_) {
    for (const Taken& t : waiting_->batch) rd_kafka_message_destroy(t.msg);
    waiting_.reset();
    note_processing({});
  }
  for (rd_kafka_message_t* m : merger_.clear()) rd_kafka_message_destroy(m);
  for (auto& [p, q] : partition_queues_) rd_kafka_queue_destroy(q);
  partition_queues_.clear();
  notifier_.stopping();
  log::info("daemon_stopping", {{"consumed", std::to_string(progress_.consumed.load())},
                                {"articles", std::to_string(progress_.articles.load())},
                                {"dead_letters", std::to_string(progress_.dead_letters.load())}});
  // What is acknowledged by the drain limit is committed (with a last try for a failed commit);
  // the rest is judged again after the restart. A dedup process that lost its lease commits
  // nothing more: its successor goes on from the group's offsets.
  if (exit_code != 3) settle(/*drain=*/true, /*rewind=*/false);
  for (auto& f : in_flight_) {
    release(*f);
    if (f->outstanding > 0) retired_.push_back(std::move(f));
  }
  in_flight_.clear();
  rd_kafka_consumer_close(consumer_.get());
  if (rd_kafka_flush(producer_.get(), flush_timeout_ms()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    // Only outputs of an uncommitted batch can be left: the restart processes it again.
    log::warn("drain_timeout",
              {{"unacknowledged", std::to_string(rd_kafka_outq_len(producer_.get()))},
               {"drain_timeout_ms", std::to_string(config_.kafka.drain_timeout_ms)}});
  }
  consumer_.reset();
  // The lease goes last, when every output is acknowledged: a standby takes over at once.
  tail_.reset();
  if (lease_) rd_kafka_consumer_close(lease_.get());
  lease_.reset();
  refresh_status(true);
  return exit_code;
}

}  // namespace newsflow::daemon
