#include "daemon/kafka/daemon.h"

// The daemon: its Kafka clients, start and stop, the loop that drives the roles, outputs,
// delivery reports and status. The intake (intake.cc), the judging (judge.cc), the restore
// (restore.cc), the standby (standby.cc) and what only an extractor does (extract_role.cc) have
// files of their own.

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "daemon/kafka/message.h"
#include "daemon/ops/log.h"
#include "daemon/ops/metrics.h"
#include "daemon/pipeline/input.h"
#include "daemon/version.h"

namespace newsflow::daemon {

using namespace internal;

Daemon::Daemon(const config::Config& config, Metrics& metrics)
    : config_(config),
      metrics_(metrics),
      pipeline_(config, &metrics),
      workers_(config.kafka.workers > 0
                   ? static_cast<std::size_t>(config.kafka.workers)
                   : std::max<std::size_t>(1, std::thread::hardware_concurrency())),
      collector_(metrics, config.topics.dlq,
                 {.fenced = [this] { return lease_.fenced(); },
                  .stop_waiting = [this]() -> std::optional<std::string> {
                    // After SIGTERM the wait ends at the drain deadline: the batch is not
                    // acknowledged, its inputs are not committed, and the process exits in time.
                    if (stop_.load() && steady_ms() >= drain_deadline_ms_.load()) {
                      return "producer queue still full at the drain deadline";
                    }
                    // A dedup owner stuck here past the group's session gives its lease to a
                    // standby: from then on nothing of this batch may be published.
                    if (lease_.lost()) return "the dedup lease is gone";
                    return std::nullopt;
                  }}),
      dead_letters_(config_, collector_, metrics_,
                    [this](const rd_kafka_message_t* msg, const Failure& failure) {
                      ++progress_.dead_letters;
                      std::lock_guard lock(status_mu_);
                      status_.dead_letters.push_front({unix_now(), failure.reason, failure.detail,
                                                       rd_kafka_topic_name(msg->rkt),
                                                       msg->partition, msg->offset});
                      if (status_.dead_letters.size() > StatusSnapshot::kMaxDeadLetters) {
                        status_.dead_letters.pop_back();
                      }
                    }),
      exactly_once_(config.kafka.delivery == config::Delivery::kExactlyOnce),
      crash_guard_(config.state.dir),
      merger_(order_options(config.kafka)),
      committer_(
          [this](const OffsetCommitter::Offsets& offsets, bool sync, std::string& error) {
            rd_kafka_topic_partition_list_t* list =
                rd_kafka_topic_partition_list_new(static_cast<int>(offsets.size()));
            for (const auto& [tp, offset] : offsets) {
              rd_kafka_topic_partition_list_add(list, tp.first.c_str(), tp.second)->offset = offset;
            }
            const rd_kafka_resp_err_t err = rd_kafka_commit(consumer_.get(), list, sync ? 0 : 1);
            rd_kafka_topic_partition_list_destroy(list);
            if (err != RD_KAFKA_RESP_ERR_NO_ERROR) error = rd_kafka_err2str(err);
            return static_cast<int>(err);
          },
          // A partition revoked since its batch was judged is its new owner's to commit.
          [this](const OffsetCommitter::Partition& p) { return merger_.assigned(p); }),
      store_(config_, metrics_, pipeline_, notifier_, stop_),
      lease_(config_, metrics_, pipeline_, store_) {
  pool_ = std::make_unique<WorkerPool>(workers_);
  output_pool_ = std::make_unique<WorkerPool>(workers_);
  if (config.role == config::Role::kExtract) {
    metrics_.initialize(input_topics(config_), {config.topics.extracted, config.topics.dlq});
  } else {
    metrics_.initialize(input_topics(config_),
                        {config.topics.articles, config.topics.stories, config.topics.dlq});
  }
  metrics_.window_limit(static_cast<double>(config.window.max_articles));
  metrics_.role(std::string(config::role_name(config.role)));
  // A dedup standby says otherwise at start.
  metrics_.dedup_owner(config.role != config::Role::kExtract);
  crash_guard_.load();
  status_.version = kVersion;
  status_.started = unix_now();
}

void Daemon::stop() {
  drain_deadline_ms_.store(steady_ms() + config_.kafka.drain_timeout_ms);
  stop_.store(true);
  // The later tries end their round while the batches drain (joined when the daemon goes).
  if (retrier_) retrier_->request_stop();
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

EventOrderOptions order_options(const config::KafkaConfig& kafka) {
  EventOrderOptions o;
  o.max_idle = std::chrono::milliseconds(kafka.max_idle_ms);
  o.writer_silence = std::chrono::milliseconds(kafka.extractor_silence_ms);
  // A partition no extractor has spoken for yet is waited for as long as one whose extractor
  // fell silent, and at least until an idle extractor says its end again: its input may be
  // held by an extractor still starting, or by one that joined the group while a rebalance
  // handed out the partitions. Going on without it reorders the backlog it then hands over
  // (30 s, shorter than the silence allowed, cost the roles test 24% of its verdicts on a
  // loaded machine, where an extractor's first assignment came 30 s after the dedup started).
  o.first_watermark = std::max<std::chrono::milliseconds>(o.writer_silence, kEndRepeat);
  // A partition known to lag holds the others back for up to 10 s: longer than a slow fetch
  // round, short enough that a partition whose leader is gone stalls little.
  o.behind = std::chrono::seconds(10);
  return o;
}

Daemon::~Daemon() {
  retrier_.reset();
  close_input_consumer();
  links_tail_.reset();
  lease_.close(close_timeout());
  if (collector_.producer()) rd_kafka_flush(collector_.producer(), flush_timeout_ms());
}

namespace {

// The producer's properties before the user's: idempotent, every replica acknowledging, and
// room for the largest page with its headers.
std::map<std::string, std::string> producer_defaults(const config::Config& config,
                                                     const std::string& bootstrap) {
  std::map<std::string, std::string> p{
      {"bootstrap.servers", bootstrap},
      {"enable.idempotence", "true"},
      {"acks", "all"},
      {"linger.ms", "5"},
      {"message.max.bytes", std::to_string(config.extract.max_html_bytes + (1 << 20))},
      {"client.id", "newsflow"}};
  if (config.kafka.delivery == config::Delivery::kExactlyOnce) {
    p["transactional.id"] = config.kafka.transactional_id;
  }
  return p;
}

// Each role is its own consumer group: extractors share the input partitions, the dedup role
// the extracted ones.
std::string consumer_group(const config::Config& config) {
  return config.role == config::Role::kAll
             ? config.kafka.group_id
             : config.kafka.group_id + "-" + std::string(config::role_name(config.role));
}

// The input consumer's properties before the user's.
std::map<std::string, std::string> consumer_properties(const std::string& bootstrap,
                                                       const std::string& group) {
  return {{"bootstrap.servers", bootstrap},
          {"group.id", group},
          {"enable.auto.commit", "false"},
          {"enable.auto.offset.store", "false"},
          {"auto.offset.reset", "earliest"},
          {"partition.assignment.strategy", "cooperative-sticky"},
          // A SIGKILLed member's partitions wait for its session to end: 6 s (the brokers' default
          // minimum), not librdkafka's 45 s, so a restarted daemon publishes again within about
          // 10 s. A C++ process has no GC pauses to ride out; heartbeats go from a thread of
          // librdkafka's own, every 1.5 s.
          {"session.timeout.ms", "6000"},
          {"heartbeat.interval.ms", "1500"},
          {"statistics.interval.ms", "5000"},
          // Per partition: each has its own queue (event-time order).
          {"queued.max.messages.kbytes", "4096"},
          // A fetch that finds nothing new waits at most this long. A real broker answers as soon
          // as a record arrives; the mock cluster (demo, dev-broker) holds an empty fetch for the
          // whole wait: librdkafka's 500 ms was most of a quiet stream's latency there. Idle, it
          // costs ten fetch requests a second per broker.
          {"fetch.wait.max.ms", "100"},
          {"client.id", "newsflow"}};
}

}  // namespace

tl::expected<void, std::vector<config::Problem>> Daemon::start(const std::string& bootstrap) {
  auto pconf = make_kafka_conf(producer_defaults(config_, bootstrap), config_.kafka.client,
                               config_.kafka.producer, "kafka.producer");
  if (!pconf) return tl::unexpected(pconf.error());
  if (auto opened = collector_.open(std::move(*pconf)); !opened) {
    return tl::unexpected(std::vector<config::Problem>{{"kafka.producer", opened.error()}});
  }
  // A dedup standby initializes its transactions when it takes over: doing so fences the
  // producer of the owner before it (the same transactional.id), which a standby must not do
  // while that owner is well.
  const bool leased = config_.role == config::Role::kDedup && !config_.topics.dedup_lease.empty();
  if (exactly_once_ && !leased) {
    if (rd_kafka_error_t* e = rd_kafka_init_transactions(collector_.producer(), 60000)) {
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

  const std::string group = consumer_group(config_);
  std::map<std::string, std::string> consumer_defaults = consumer_properties(bootstrap, group);
  // Static membership for the subscribing roles: a process restarted under its id (a crashed
  // container in the same pod, a systemd restart) takes its partitions back without a
  // rebalance. A leased dedup process assigns its partitions itself and is not a member.
  if (!leased && !config_.kafka.consumer.count("group.instance.id")) {
    instance_id_ = group_instance_id(config_.kafka.group_instance_id,
                                     std::string(config::role_name(config_.role)), host_name());
    if (!instance_id_.empty()) consumer_defaults["group.instance.id"] = instance_id_;
  } else if (auto it = config_.kafka.consumer.find("group.instance.id");
             it != config_.kafka.consumer.end()) {
    instance_id_ = it->second;
  }
  auto cconf = make_kafka_conf(consumer_defaults, config_.kafka.client, config_.kafka.consumer,
                               "kafka.consumer");
  if (!cconf) return tl::unexpected(cconf.error());
  consumer_cooperative_ = cooperative_strategy(cconf->get());
  ClientCallbacks consumer_callbacks;
  consumer_callbacks.opaque = this;
  consumer_callbacks.rebalance = &Daemon::on_rebalance;
  consumer_callbacks.offset_commit = &Daemon::on_commit;
  consumer_callbacks.statistics = &Daemon::on_statistics;
  // Event-time order needs to know when a partition has nothing older to deliver.
  auto consumer = create_client(ClientKind::kConsumer, std::move(*cconf),
                                {{"enable.partition.eof", "true"}}, consumer_callbacks);
  if (!consumer) {
    return tl::unexpected(std::vector<config::Problem>{{"kafka.consumer", consumer.error()}});
  }
  consumer_ = std::move(*consumer);

  if (config_.role == config::Role::kExtract) {
    if (auto laid = lay_out_extracted(); !laid) {
      return tl::unexpected(std::vector<config::Problem>{{"topics.extracted", laid.error()}});
    }
  }
  // The window before the first input: a copy arriving right after a restart is still caught.
  notifier_.status("restoring the dedup window from " + config_.topics.articles);
  if (config_.role == config::Role::kExtract) {
    log::info("window_restored", {{"articles", "0"}, {"reason", "an extractor holds no window"}});
    // What every extractor fetched comes back through the changelog: a link published once is
    // not fetched again here, whichever extractor saw it first (or this one before a restart).
    if (fetcher_ && !config_.topics.state.empty()) {
      auto tail = store_.open_tail(bootstrap, std::chrono::milliseconds(0));
      if (tail) links_tail_ = std::move(*tail);
      auto learned =
          tail
              ? links_tail_->catch_up(
                    [this](const dedup::ArticleState& s) { pipeline_.remember_published_links(s); },
                    std::chrono::minutes(10))
              : tl::expected<std::size_t, std::string>(tl::unexpected(tail.error()));
      if (!learned) {
        return tl::unexpected(std::vector<config::Problem>{{"topics.state", learned.error()}});
      }
      log::info("published_links_learned",
                {{"records", std::to_string(*learned)}, {"from", config_.topics.state}});
    }
  } else if (auto restored = store_.restore(bootstrap, consumer_.get()); !restored) {
    return tl::unexpected(std::vector<config::Problem>{
        {"window", "cannot restore the dedup window from " + config_.topics.articles + ": " +
                       restored.error()}});
  }

  if (config_.role == config::Role::kDedup && !config_.topics.dedup_lease.empty()) {
    // One owner judges, standbys follow the changelog: no subscription to the extracted topic
    // (a second subscriber would split its partitions and the window with them).
    auto standby =
        lease_.start(bootstrap, consumer_.get(), exactly_once_ ? collector_.producer() : nullptr,
                     [this] { return assign_every_partition(config_.topics.extracted); });
    if (!standby) {
      return tl::unexpected(std::vector<config::Problem>{{"topics.dedup_lease", standby.error()}});
    }
    return {};
  }
  rd_kafka_topic_partition_list_t* topics = rd_kafka_topic_partition_list_new(2);
  for (const std::string& t : input_topics(config_)) {
    rd_kafka_topic_partition_list_add(topics, t.c_str(), RD_KAFKA_PARTITION_UA);
  }
  const rd_kafka_resp_err_t e = rd_kafka_subscribe(consumer_.get(), topics);
  rd_kafka_topic_partition_list_destroy(topics);
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return tl::unexpected(std::vector<config::Problem>{{"topics", rd_kafka_err2str(e)}});
  }
  subscribed_ = true;
  // Pages that failed for a reason time may cure are tried again beside the pipeline (roles
  // that fetch: all and extract).
  dead_letters_.allow_fetch_retries(fetcher_ && config_.role != config::Role::kDedup &&
                                    !config_.topics.fetch_retries.empty() &&
                                    config_.fetch.requeue_attempts > 0);
  if (dead_letters_.fetch_retries()) {
    auto retrier = FetchRetrier::start(config_, bootstrap, metrics_);
    if (!retrier) {
      return tl::unexpected(
          std::vector<config::Problem>{{"topics.fetch_retries", retrier.error()}});
    }
    retrier_ = std::move(*retrier);
  }
  std::string names;
  for (const std::string& t : input_topics(config_)) names += (names.empty() ? "" : ",") + t;
  log::info("kafka_subscribed", {{"bootstrap", bootstrap},
                                 {"group_id", group},
                                 {"group_instance_id", instance_id_},
                                 {"role", std::string(config::role_name(config_.role))},
                                 {"topics", names}});
  return {};
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

std::chrono::milliseconds Daemon::close_timeout() const {
  // After SIGTERM, what is left of the drain limit, and at least 5 s: a consumer closes in a
  // few milliseconds while its coordinator answers; with the brokers gone the process's
  // consumers together add 15 s at most to the drain limit (20 s), within systemd's and
  // Kubernetes' 45 s.
  constexpr std::int64_t kLeast = 5000;
  if (!stop_.load())
    return std::chrono::milliseconds(
        std::max<std::int64_t>(kLeast, config_.kafka.drain_timeout_ms));
  return std::chrono::milliseconds(
      std::max<std::int64_t>(kLeast, drain_deadline_ms_.load() - steady_ms()));
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
  status_.newest = pipeline_.stories().newest(10);
  status_.related.clear();
  for (const auto* list : {&status_.stories, &status_.newest}) {
    for (const dedup::Story& story : *list) {
      for (const std::string& id : story.related_stories) {
        if (const dedup::Story* r = pipeline_.stories().find(id)) {
          status_.related[id] = {r->title, r->language};
        }
      }
    }
  }
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

int Daemon::run() {
  std::vector<Taken> batch;
  int exit_code = 0;
  auto backoff = std::chrono::milliseconds(100);
  // After a batch that was not delivered: waits before it is tried again, longer each time;
  // false when the producer failed for good.
  auto backoff_after_failure = [&] {
    if (stop_.load()) return true;
    char reason[512];
    if (rd_kafka_fatal_error(collector_.producer(), reason, sizeof reason) !=
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
    if (lease_.active() && !lease_.serve()) {
      exit_code = 3;
      break;
    }
    maybe_snapshot();
    if (links_tail_) {
      links_tail_->poll(
          [this](const dedup::ArticleState& s) { pipeline_.remember_published_links(s); });
    }
    // With a batch extracted and waiting to be judged, take only what is here already.
    if (!collect_batch(batch, /*wait=*/!waiting_)) {
      stop_ = true;
      exit_code = 1;
    }
    rd_kafka_poll(collector_.producer(), 0);
    metrics_.order_buffer(static_cast<double>(merger_.buffered_records()),
                          static_cast<double>(merger_.buffered_bytes()));
    if (const std::uint64_t n = merger_.passed_over(); n > passed_over_reported_) {
      metrics_.order_passed_over(static_cast<double>(n - passed_over_reported_));
      passed_over_reported_ = n;
    }
    if (batch.empty()) {
      if (waiting_) judge_waiting();  // nothing to extract meanwhile
      // A sign of life while idle; with exactly_once in a transaction of its own (outside one the
      // producer refuses it, and the dedup role waited 30 s for a watermark that never came).
      if (config_.role == config::Role::kExtract)
        emit_watermarks(/*own_transaction=*/exactly_once_);
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
        fetch_links(*waiting_);  // while the next batch is collected and extracted
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
  notifier_.stopping();
  log::info("daemon_stopping", {{"consumed", std::to_string(progress_.consumed.load())},
                                {"articles", std::to_string(progress_.articles.load())},
                                {"dead_letters", std::to_string(progress_.dead_letters.load())}});
  // What is acknowledged by the drain limit is committed (with a last try for a failed commit);
  // the rest is judged again after the restart. A dedup process that lost its lease commits
  // nothing more: its successor goes on from the group's offsets.
  if (exit_code != 3) settle(/*drain=*/true, /*rewind=*/false);
  collector_.retire_all([this](InFlight& f) { release(f); });
  // After the last settle: it commits only partitions still assigned, which the merger knows.
  close_input_consumer();
  if (rd_kafka_flush(collector_.producer(), flush_timeout_ms()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    // Only outputs of an uncommitted batch can be left: the restart processes it again.
    log::warn("drain_timeout",
              {{"unacknowledged", std::to_string(rd_kafka_outq_len(collector_.producer()))},
               {"drain_timeout_ms", std::to_string(config_.kafka.drain_timeout_ms)}});
  }
  // The lease goes last, when every output is acknowledged: a standby takes over at once.
  links_tail_.reset();
  lease_.close(close_timeout());
  refresh_status(true);
  return exit_code;
}

}  // namespace newsflow::daemon
