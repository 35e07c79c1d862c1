#include "daemon/kafka/daemon.h"

// The daemon: its start and stop, and the loop that moves batches between its parts (the
// intake, the judging in batch_processor.cc, the state store, the lease, the producer).

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "daemon/kafka/message.h"
#include "daemon/kafka/topics.h"
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
      exactly_once_(config.kafka.delivery == config::Delivery::kExactlyOnce),
      crash_guard_(CrashGuard::directory_for(config), !config.state.dir.empty()),
      collector_(metrics, config.topics.dlq,
                 {.fenced = [this] { return lease_.fenced(); },
                  .stop_waiting = [this]() -> std::optional<std::string> {
                    // Waiting for room in a full queue through an outage is the loop at work:
                    // liveness and the watchdog hear of it (the records time out within
                    // kafka.flush_timeout_ms and make room).
                    status_.tick(ready(), intake_.assigned());
                    // After SIGTERM the wait ends at the drain deadline: the batch is not
                    // acknowledged, its inputs are not committed, and the process exits in time.
                    if (drain_.over()) {
                      return "producer queue still full at the drain deadline";
                    }
                    // A dedup owner stuck here past the group's session gives its lease to a
                    // standby: from then on nothing of this batch may be published.
                    if (lease_.lost()) return "the dedup lease is gone";
                    return std::nullopt;
                  }}),
      extracted_(config_, collector_),
      dead_letters_(
          config_, collector_, metrics_,
          [this](const rd_kafka_message_t* msg, const Failure& failure) {
            ++progress_.dead_letters;
            status_.dead_letter({unix_now(), failure.reason, failure.detail,
                                 rd_kafka_topic_name(msg->rkt), msg->partition, msg->offset});
          }),
      store_(config_, metrics_, pipeline_, status_.notifier(), stop_),
      inputs_(config_, metrics_, pipeline_, collector_, dead_letters_, store_, extracted_, faults_,
              progress_),
      lease_(config_, metrics_, pipeline_, store_),
      committer_(
          [this](const OffsetCommitter::Offsets& offsets, bool sync, std::string& error) {
            rd_kafka_topic_partition_list_t* list =
                rd_kafka_topic_partition_list_new(static_cast<int>(offsets.size()));
            for (const auto& [tp, offset] : offsets) {
              rd_kafka_topic_partition_list_add(list, tp.first.c_str(), tp.second)->offset = offset;
            }
            const rd_kafka_resp_err_t err = rd_kafka_commit(intake_.consumer(), list, sync ? 0 : 1);
            rd_kafka_topic_partition_list_destroy(list);
            if (err != RD_KAFKA_RESP_ERR_NO_ERROR) error = rd_kafka_err2str(err);
            return static_cast<int>(err);
          },
          // A partition revoked since its batch was judged is its new owner's to commit.
          [this](const OffsetCommitter::Partition& p) { return intake_.owns(p); }),
      processor_({.config = config_,
                  .metrics = metrics_,
                  .pipeline = pipeline_,
                  .progress = progress_,
                  .crash_guard = crash_guard_,
                  .faults = faults_,
                  .inputs = inputs_,
                  .collector = collector_,
                  .extracted = extracted_,
                  .intake = intake_,
                  .drain = drain_,
                  .tick = [this] { status_.tick(ready(), intake_.assigned()); }}),
      intake_(config_, metrics_, store_, stop_, intake_listener()) {
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
  pipeline_.refuse_links(crash_guard_.refused_links());
}

void Daemon::stop() {
  drain_.start();
  stop_.store(true);
  // The later tries end their round while the batches drain, by the same deadline (joined at
  // the end of `shut_down`).
  if (retrier_) retrier_->request_stop(drain_.deadline_ms());
  status_.notifier().stopping();
}

Daemon::~Daemon() {
  retrier_.reset();
  intake_.close(drain_.close_timeout());
  links_tail_.reset();
  lease_.close(drain_.close_timeout());
  // Nothing is left after a deposed owner's purge: the flush returns at once.
  if (collector_.producer()) rd_kafka_flush(collector_.producer(), drain_.flush_timeout_ms());
}

namespace {

// A batch's inputs are done: destroys them (after `settle`).
void release(RecordCollector::Batch& f) {
  for (const Taken& t : f.inputs) rd_kafka_message_destroy(t.msg);
  f.inputs.clear();
}

// The producer's properties before the user's: the daemon's producer defaults, room for the
// largest page with its headers, and the transactional id exactly_once.
std::map<std::string, std::string> pipeline_producer(const config::Config& config,
                                                     const std::string& bootstrap) {
  auto p =
      producer_defaults(config, bootstrap, "newsflow", config.extract.max_html_bytes + (1 << 20));
  if (config.kafka.delivery == config::Delivery::kExactlyOnce) {
    p["transactional.id"] = config.kafka.transactional_id;
  }
  return p;
}

}  // namespace

tl::expected<void, std::vector<config::Problem>> Daemon::start(const std::string& bootstrap) {
  auto pconf = make_kafka_conf(pipeline_producer(config_, bootstrap), config_.kafka.client,
                               config_.kafka.producer, "kafka.producer");
  if (!pconf) return tl::unexpected(pconf.error());
  if (auto opened = collector_.open(std::move(*pconf)); !opened) {
    return tl::unexpected(std::vector<config::Problem>{{"kafka.producer", opened.error()}});
  }
  // A changelog or stories topic that deletes by retention would lose state a restart needs: the
  // daemon does not start on one (as Kafka Streams checks its internal topics).
  if (auto problems = check_compacted_topics(collector_.producer(), config_); !problems.empty()) {
    return tl::unexpected(std::move(problems));
  }
  // A dedup standby initializes its transactions when it takes over: doing so fences the
  // producer of the owner before it (the same transactional.id), which a standby must not do
  // while that owner is well.
  const bool leased = config_.role == config::Role::kDedup && !config_.topics.dedup_lease.empty();
  if (exactly_once_ && !leased) {
    if (auto ready = Transaction::initialize(collector_.producer()); !ready) {
      return tl::unexpected(std::vector<config::Problem>{
          {"kafka.delivery", "exactly_once: cannot initialize transactions: " + ready.error()}});
    }
    log::info("transactions_initialized", {{"transactional_id", config_.kafka.transactional_id}});
  }

  if (auto opened = processor_.open_fetcher(); !opened) {
    return tl::unexpected(std::vector<config::Problem>{{"fetch", opened.error()}});
  }

  if (auto opened = intake_.open(bootstrap, leased); !opened) return tl::unexpected(opened.error());

  // The window before the first input: a copy arriving right after a restart is still caught.
  status_.notifier().status("restoring the dedup window from " + config_.topics.articles);
  if (config_.role == config::Role::kExtract) {
    if (auto started = start_extractor(bootstrap); !started) return started;
  } else if (auto restored = store_.restore(bootstrap, intake_.consumer()); !restored) {
    return tl::unexpected(std::vector<config::Problem>{
        {"window", "cannot restore the dedup window from " + config_.topics.articles + ": " +
                       restored.error()}});
  }

  if (config_.role == config::Role::kDedup && !config_.topics.dedup_lease.empty()) {
    // One owner judges, standbys follow the changelog: no subscription to the extracted topic
    // (a second subscriber would split its partitions and the window with them).
    auto standby =
        lease_.start(bootstrap, intake_.consumer(), exactly_once_ ? collector_.producer() : nullptr,
                     [this] { return intake_.assign_every_partition(config_.topics.extracted); });
    if (!standby) {
      return tl::unexpected(std::vector<config::Problem>{{"topics.dedup_lease", standby.error()}});
    }
    return {};
  }
  if (auto subscribed = intake_.subscribe(); !subscribed) {
    return tl::unexpected(std::vector<config::Problem>{{"topics", subscribed.error()}});
  }
  // Pages that failed for a reason time may cure are tried again beside the pipeline (roles
  // that fetch: all and extract).
  dead_letters_.allow_fetch_retries(processor_.fetcher() && config_.role != config::Role::kDedup &&
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
                                 {"group_id", intake_.group()},
                                 {"group_instance_id", intake_.instance_id()},
                                 {"role", std::string(config::role_name(config_.role))},
                                 {"topics", names}});
  return {};
}

tl::expected<void, std::vector<config::Problem>> Daemon::start_extractor(
    const std::string& bootstrap) {
  if (auto laid = extracted_.lay_out(intake_.consumer()); !laid) {
    return tl::unexpected(std::vector<config::Problem>{{"topics.extracted", laid.error()}});
  }
  log::info("window_restored", {{"articles", "0"}, {"reason", "an extractor holds no window"}});
  // What every extractor fetched comes back through the changelog: a link published once is
  // not fetched again here, whichever extractor saw it first (or this one before a restart).
  if (!processor_.fetcher() || config_.topics.state.empty()) return {};
  auto tail = store_.open_tail(bootstrap, std::chrono::milliseconds(0));
  if (!tail) return tl::unexpected(std::vector<config::Problem>{{"topics.state", tail.error()}});
  links_tail_ = std::move(*tail);
  auto learned = links_tail_->catch_up(
      [this](const dedup::ArticleState& s) { pipeline_.remember_published_links(s); },
      std::chrono::minutes(10));
  if (!learned) {
    return tl::unexpected(std::vector<config::Problem>{{"topics.state", learned.error()}});
  }
  log::info("published_links_learned",
            {{"records", std::to_string(*learned)}, {"from", config_.topics.state}});
  return {};
}

bool Daemon::back_off(std::chrono::milliseconds& backoff) {
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
}

int Daemon::run() {
  std::vector<Taken> batch;
  int exit_code = 0;
  auto backoff = std::chrono::milliseconds(100);
  status_.refresh(ready(), true);
  while (!stop_.load()) {
    status_.tick(ready(), intake_.assigned());
    // A transaction that can neither finish nor be aborted (the pipeline's, the watermarks' or
    // the later tries'): only a restart, with a fresh init_transactions, gets out of it.
    if (!Transaction::usable(collector_.producer()) || (retrier_ && !retrier_->usable())) {
      exit_code = 1;
      break;
    }
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
    // A batch that starts the pipeline (nothing extracted waits to be judged) is a quarter of
    // the most: its extraction has no judging to overlap with, so the sooner it goes the better.
    const bool wait = !processor_.waiting();
    const int most = wait && !exactly_once_ ? std::max(1, config_.kafka.batch_max_messages / 4)
                                            : config_.kafka.batch_max_messages;
    if (!intake_.collect(batch, wait, most)) {
      drain_.start();
      stop_ = true;
      exit_code = 1;
    }
    // Ready as soon as partitions are assigned, not once the first batch is judged: a restart
    // with a backlog was ready 2 s later than it could take new work (/readyz, systemd).
    status_.tick(ready(), intake_.assigned());
    rd_kafka_poll(collector_.producer(), 0);
    intake_.count_order();
    bool delivered = true;
    if (batch.empty()) {
      processor_.judge_waiting();  // nothing to extract meanwhile
      // A sign of life while idle; with exactly_once in a transaction of its own (outside one the
      // producer refuses it, and the dedup role waited 30 s for a watermark that never came).
      if (config_.role == config::Role::kExtract)
        extracted_.emit_watermarks(intake_, nullptr,
                                   /*own_transaction=*/exactly_once_, drain_.flush_timeout_ms());
      // Acknowledgements come in and offsets are committed (a failed commit is retried) while
      // nothing new arrives; a failed batch goes back to be judged again.
      delivered = settle(false);
    } else {
      // exactly_once: delivered, or its inputs are back in their partitions. at_least_once:
      // queued, and `settle` finds what became of it.
      const bool taken = processor_.take(batch);
      status_.refresh(ready(), false);
      delivered = exactly_once_ ? taken : settle(false);
      if (delivered) backoff = std::chrono::milliseconds(100);
    }
    if (!delivered && !back_off(backoff)) {
      exit_code = 1;
      break;
    }
  }
  shut_down(exit_code);
  return exit_code;
}

void Daemon::shut_down(int exit_code) {
  // After an error too (no stop asked for): the later tries end within a drain limit.
  if (retrier_) retrier_->request_stop(drain_.deadline_ms());
  const bool deposed = exit_code == 3;
  if (deposed) {
    // The lease went to a standby, which publishes from the group's offsets: what is still
    // queued here would land after its outputs (and the compacted stories topic could end on
    // this process's older state). Nothing more leaves this process, in either delivery mode.
    rd_kafka_purge(collector_.producer(), RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
    rd_kafka_poll(collector_.producer(), 0);
    log::warn("dedup_lease_outputs_purged", {{"consequence", "its successor judges them again"}});
  }
  // The batch extracted already is judged; its outputs are acknowledged within the drain limit.
  processor_.finish(/*judge=*/exit_code == 0);
  status_.notifier().stopping();
  log::info("daemon_stopping", {{"consumed", std::to_string(progress_.consumed.load())},
                                {"articles", std::to_string(progress_.articles.load())},
                                {"dead_letters", std::to_string(progress_.dead_letters.load())}});
  // What is acknowledged by the drain limit is committed (with a last try for a failed commit);
  // the rest is judged again after the restart. A dedup process that lost its lease commits
  // nothing more: its successor goes on from the group's offsets.
  if (!deposed) settle(/*drain=*/true, /*rewind=*/false);
  collector_.retire_all([](InFlight& f) { release(f); });
  // After the last settle: it commits only partitions still assigned, which the merger knows.
  intake_.close(drain_.close_timeout());
  if (!deposed && rd_kafka_flush(collector_.producer(), drain_.flush_timeout_ms()) !=
                      RD_KAFKA_RESP_ERR_NO_ERROR) {
    // Only outputs of an uncommitted batch can be left: the restart processes it again.
    log::warn("drain_timeout",
              {{"unacknowledged", std::to_string(rd_kafka_outq_len(collector_.producer()))},
               {"drain_timeout_ms", std::to_string(config_.kafka.drain_timeout_ms)}});
  }
  // Stopping beside the rest since the stop: joined within what is left of the drain limit.
  retrier_.reset();
  // The lease goes last, when every output is acknowledged: a standby takes over at once.
  links_tail_.reset();
  lease_.close(drain_.close_timeout());
  status_.refresh(ready(), true);
}

bool Daemon::settle(bool drain, bool rewind) {
  if (drain && !collector_.empty()) {
    // Everything queued, acknowledged within the flush limit (after SIGTERM, the drain limit).
    rd_kafka_flush(collector_.producer(), drain_.flush_timeout_ms());
  } else {
    rd_kafka_poll(collector_.producer(), 0);
  }
  const auto limit = std::chrono::milliseconds(config_.kafka.flush_timeout_ms);
  // Outputs in flight are bounded: the judging waits while the oldest of kMaxInFlight batches
  // is on its way.
  constexpr std::size_t kMaxInFlight = 4;
  collector_.wait_for_room(kMaxInFlight, limit, [this] { return drain_.over(); });
  bool ok = true;
  const auto now = Clock::now();
  while (!collector_.empty()) {
    InFlight& f = collector_.front();
    if (!f.failed && f.outstanding > 0) {
      if (!drain && now - f.queued < limit) break;  // on its way
      f.failed = true;                              // not acknowledged in time
    }
    if (f.failed) {
      if (!rewind) break;
      log::error("batch_not_delivered",
                 {{"errors", std::to_string(collector_.errors())},
                  {"unacknowledged", std::to_string(f.outstanding)},
                  {"batches_judged_again", std::to_string(collector_.size())},
                  {"last_error", collector_.last_error()}});
      // Its inputs and those of every later batch go back to the front of their partitions,
      // the latest first, and are judged again (the window repeats its verdicts for ids it
      // knows). Delivery reports still due for them find them among the retired.
      processor_.give_back_waiting();
      collector_.retire_all([this](InFlight& later) {
        intake_.give_back(later.inputs.begin(), later.inputs.end());
        later.inputs.clear();
      });
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
    if (!faults_.commits_lost()) {  // fault injection: from then on the commit "fails"
      for (const Taken& t : f.inputs) {
        // A partition revoked since its batch was judged is its new owner's to commit: its
        // offsets would move that owner's position (as on_commit knows too).
        const auto tp = partition_of(t.msg);
        if (!intake_.owns(tp)) continue;
        committer_.acknowledged(tp, t.msg->offset + 1);
      }
    }
    release(f);
    collector_.pop_front();
  }
  collector_.prune();
  if (committer_.due(std::chrono::milliseconds(config_.kafka.commit_interval_ms), drain, now)) {
    commit_offsets(/*sync=*/drain);
  }
  return ok;
}

bool Daemon::commit_offsets(bool sync) {
  if ((!committer_.waiting() && !(sync && committer_.in_flight())) || faults_.commits_blocked()) {
    return true;
  }
  // A dedup owner that lost its lease commits nothing: its consumer is assigned by hand, so the
  // broker would take the commit and move the new owner's position.
  if (lease_.lost()) return false;
  const OffsetCommitter::Result result = committer_.commit(sync, Clock::now());
  note_commit(result);
  return result.ok;
}

void Daemon::note_commit(const OffsetCommitter::Result& result) {
  if (result.committed) {
    metrics_.committed();
    progress_.committed += result.messages;
  } else if (!result.ok) {
    // The offsets go with the next batch's, or on their own a moment later while idle, and
    // before the process exits.
    metrics_.commit_failed();
    log::warn("commit_failed", {{"error", result.error},
                                {"partitions", std::to_string(result.partitions)},
                                {"retry_ms", std::to_string(committer_.backoff().count())}});
  }
}

PartitionIntake::Listener Daemon::intake_listener() {
  PartitionIntake::Listener l;
  // Batches judged before a revoke are acknowledged and their offsets committed now, so the new
  // owner does not judge them again; one that fails is judged again once the rebalance is done
  // (its inputs of partitions still assigned).
  l.before_revoke = [this] { settle(/*drain=*/true, /*rewind=*/false); };
  l.revoked = [this](const PartitionIntake::Partition& p) {
    // Its new owner starts from the last committed offset (at least once).
    committer_.revoked(p);
    // Extracted, not judged: its inputs of the partition go with it.
    return processor_.drop(p);
  };
  l.commit_answered = [this](int err_int, void* partitions_ptr) {
    const auto* partitions = static_cast<const rd_kafka_topic_partition_list_t*>(partitions_ptr);
    if (!partitions) return;
    auto err = static_cast<rd_kafka_resp_err_t>(err_int);
    OffsetCommitter::Offsets offsets;
    for (int i = 0; i < partitions->cnt; ++i) {
      const auto& tp = partitions->elems[i];
      offsets[{tp.topic, tp.partition}] = tp.offset;
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR) err = tp.err;
    }
    if (const auto result = committer_.answered(err, offsets, rd_kafka_err2str(err))) {
      note_commit(*result);
    }
  };
  l.busy = [this] { return !collector_.empty() || committer_.waiting(); };
  return l;
}

void Daemon::maybe_snapshot() {
  if (!store_.snapshot_due()) return;
  if (lease_.active() && !lease_.owner()) return;  // a standby follows the owner's changelog
  // Fault injection makes commits fail or records go missing: what is judged is not state.
  if (faults_.state_unreliable() || stop_.load()) return;
  processor_.judge_waiting();
  const bool settled = settle(/*drain=*/true);  // not delivered: judged again first
  if (!settled || !collector_.empty() || processor_.waiting() || !committer_.idle()) {
    // Each try waits for every output and commits synchronously.
    store_.snapshot_later();
    return;
  }
  store_.write_snapshot(collector_, exactly_once_, drain_.flush_timeout_ms(),
                        [this] { status_.tick(ready(), intake_.assigned()); });
}

}  // namespace newsflow::daemon
