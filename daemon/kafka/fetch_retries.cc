#include "daemon/kafka/fetch_retries.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <utility>

#include "daemon/kafka/message.h"
#include "daemon/ops/log.h"
#include "daemon/ops/metrics.h"
#include "daemon/pipeline/fetcher.h"
#include "daemon/pipeline/reasons.h"
#include "extractors/timestamp.h"

namespace newsflow::daemon {

using namespace internal;

namespace {

// A record of librdkafka's own, kept as long as the call that lends it.
struct PartitionList {
  rd_kafka_topic_partition_list_t* list;
  explicit PartitionList(int size) : list(rd_kafka_topic_partition_list_new(size)) {}
  explicit PartitionList(rd_kafka_topic_partition_list_t* l) : list(l) {}
  ~PartitionList() {
    if (list) rd_kafka_topic_partition_list_destroy(list);
  }
  PartitionList(PartitionList&& o) noexcept : list(std::exchange(o.list, nullptr)) {}
  PartitionList(const PartitionList&) = delete;
  PartitionList& operator=(const PartitionList&) = delete;
  PartitionList& operator=(PartitionList&&) = delete;
};

PartitionList offsets_list(const std::map<OffsetLedger::Partition, std::int64_t>& offsets) {
  PartitionList l(static_cast<int>(offsets.size()));
  for (const auto& [p, offset] : offsets) {
    rd_kafka_topic_partition_list_add(l.list, p.first.c_str(), p.second)->offset = offset;
  }
  return l;
}

// Room left in a record for its key and headers.
constexpr std::size_t kHeadroomBytes = 64 * 1024;

}  // namespace

FetchRetrier::FetchRetrier(const config::Config& config, Metrics& metrics)
    : config_(config),
      metrics_(metrics),
      exactly_once_(config.kafka.delivery == config::Delivery::kExactlyOnce),
      committer_(
          [this](const OffsetCommitter::Offsets& offsets, bool sync, std::string& error) {
            PartitionList list = offsets_list(offsets);
            const rd_kafka_resp_err_t e = rd_kafka_commit(consumer_.get(), list.list, sync ? 0 : 1);
            if (e != RD_KAFKA_RESP_ERR_NO_ERROR) error = rd_kafka_err2str(e);
            return static_cast<int>(e);
          },
          [this](const OffsetCommitter::Partition& p) { return assigned_.count(p) > 0; }) {}

tl::expected<std::unique_ptr<FetchRetrier>, std::string> FetchRetrier::start(
    const config::Config& config, const std::string& bootstrap, Metrics& metrics) {
  std::unique_ptr<FetchRetrier> r(new FetchRetrier(config, metrics));
  auto problems_text = [](const std::vector<config::Problem>& problems) {
    std::string text;
    for (const auto& p : problems) text += (text.empty() ? "" : "; ") + p.path + ": " + p.message;
    return text;
  };
  // The user's client properties (security among them) hold for these clients too.
  auto cconf = make_kafka_conf({{"bootstrap.servers", bootstrap},
                                {"enable.auto.commit", "false"},
                                {"enable.auto.offset.store", "false"},
                                {"auto.offset.reset", "earliest"},
                                {"session.timeout.ms", "6000"},
                                {"heartbeat.interval.ms", "1500"},
                                // Retries wait minutes: no need to ask the brokers ten times a
                                // second (the mock cluster holds an empty fetch this long).
                                {"fetch.wait.max.ms", "1000"},
                                {"client.id", "newsflow-fetch-retries"}},
                               config.kafka.client, config.kafka.consumer, "kafka.consumer");
  if (!cconf) return tl::unexpected(problems_text(cconf.error()));
  // Its own group: the retries move between processes apart from the inputs.
  const std::string group = config.kafka.group_id + "-fetch-retries";
  ClientCallbacks consumer_callbacks;
  consumer_callbacks.opaque = r.get();
  consumer_callbacks.rebalance = &FetchRetrier::on_rebalance;
  auto consumer = create_client(ClientKind::kConsumer, std::move(*cconf),
                                {{"group.id", group},
                                 {"group.instance.id", ""},
                                 // A rebalance moves only the partitions that change hands:
                                 // the others keep their waiting records.
                                 {"partition.assignment.strategy", "cooperative-sticky"}},
                                consumer_callbacks);
  if (!consumer) return tl::unexpected("fetch retries consumer: " + consumer.error());
  r->consumer_ = std::move(*consumer);
  // A missing topic would fail every batch that schedules a retry: refused at start instead.
  if (auto n = topic_partitions(r->consumer_.get(), config.topics.fetch_retries); !n) {
    return tl::unexpected("topics.fetch_retries '" + config.topics.fetch_retries +
                          "': " + n.error() +
                          " (create it, or set topics.fetch_retries: \"\" to give up at once)");
  }

  auto pconf = make_kafka_conf(producer_defaults(config, bootstrap, "newsflow-fetch-retries",
                                                 config.fetch.max_body_bytes + kHeadroomBytes),
                               config.kafka.client, config.kafka.producer, "kafka.producer");
  if (!pconf) return tl::unexpected(problems_text(pconf.error()));
  std::map<std::string, std::string> forced;
  if (r->exactly_once_)
    forced["transactional.id"] = config.kafka.transactional_id + "-fetch-retries";
  ClientCallbacks producer_callbacks;
  producer_callbacks.opaque = r.get();
  producer_callbacks.delivery = &FetchRetrier::on_delivery;
  auto producer =
      create_client(ClientKind::kProducer, std::move(*pconf), forced, producer_callbacks);
  if (!producer) return tl::unexpected("fetch retries producer: " + producer.error());
  r->producer_ = std::move(*producer);
  if (r->exactly_once_) {
    if (auto ready = Transaction::initialize(r->producer_.get()); !ready) {
      return tl::unexpected("fetch retries: cannot initialize transactions: " + ready.error());
    }
  }
  auto fetcher = Fetcher::create(config.fetch, &metrics);
  if (!fetcher) return tl::unexpected(fetcher.error());
  r->fetcher_ = std::move(*fetcher);

  if (const rd_kafka_resp_err_t e =
          [&] {
            PartitionList topics(1);
            rd_kafka_topic_partition_list_add(topics.list, config.topics.fetch_retries.c_str(),
                                              RD_KAFKA_PARTITION_UA);
            return rd_kafka_subscribe(r->consumer_.get(), topics.list);
          }();
      e != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return tl::unexpected("fetch retries: cannot subscribe: " + std::string(rd_kafka_err2str(e)));
  }
  FetchRetrier* self = r.get();
  r->thread_ = std::thread([self] { self->run(); });
  log::info("fetch_retries_started", {{"topic", config.topics.fetch_retries}, {"group_id", group}});
  return r;
}

void FetchRetrier::request_stop(std::int64_t deadline_ms) {
  stop_deadline_ms_ = deadline_ms;
  stop_ = true;
  if (fetcher_) fetcher_->cut_short();  // what is not fetched waits in the topic
}

int FetchRetrier::flush_timeout_ms() const {
  const std::int64_t deadline = stop_deadline_ms_.load();
  if (!stop_.load() || deadline == 0) return config_.kafka.flush_timeout_ms;
  return static_cast<int>(
      std::clamp<std::int64_t>(deadline - steady_ms(), 0, config_.kafka.flush_timeout_ms));
}

FetchRetrier::~FetchRetrier() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  // Its offsets are the retries it took: one not committed is read again, and waits again.
  // Within what is left of a stop's deadline (a consumer closes in milliseconds while its
  // coordinator answers), and 5 s at most.
  const auto close_ms = std::clamp(flush_timeout_ms(), 500, 5000);
  // librdkafka 2.0 aborts when a cooperative-sticky consumer that never had an assignment is
  // destroyed (its issue 4312, fixed in 2.3): one stopped before its first (a restart stopped
  // while the group still waits out the killed member's session) waits a little for it, and is
  // left to the process's exit when none comes (as the input consumer is).
  bool keep = false;
  if (consumer_ && !assigned_once_) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(close_ms);
    while (!assigned_once_ && std::chrono::steady_clock::now() < until) {
      // Uncommitted: read again by the partition's next owner.
      if (rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer_.get(), 100)) {
        rd_kafka_message_destroy(m);
      }
    }
    keep = !assigned_once_;
    if (keep) {
      log::warn("consumer_left_undestroyed",
                {{"consumer", "fetch_retries"},
                 {"reason", "no assignment yet (librdkafka 2.0 aborts destroying it)"}});
    }
  }
  close_consumer(consumer_, std::chrono::milliseconds(close_ms), "fetch_retries",
                 &FetchRetrier::on_rebalance, this, keep);
  // What it could not send was not committed either: read again after the restart.
  if (producer_) rd_kafka_flush(producer_.get(), std::min(flush_timeout_ms(), 5000));
}

void FetchRetrier::run() {
  while (!stop_.load()) {
    const std::int64_t now = unix_now_ms();
    int timeout = 200;
    if (!waiting_.empty()) {
      timeout = static_cast<int>(std::clamp<std::int64_t>(waiting_.begin()->first - now, 0, 200));
    }
    if (rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer_.get(), timeout)) {
      take(m);
      rd_kafka_message_destroy(m);
      // What else is there already, without waiting.
      for (int i = 0; i < 1000; ++i) {
        rd_kafka_message_t* more = rd_kafka_consumer_poll(consumer_.get(), 0);
        if (!more) break;
        take(more);
        rd_kafka_message_destroy(more);
      }
    }
    if (waiting_.size() >= kMaxWaiting) {
      pause(true);
    } else if (waiting_.size() < kMaxWaiting / 2) {
      pause(false);
    }
    requeue_holding_back();
    fetch_due();
    end_round();  // records finished without a fetch (repeats, invalid ones)
    waiting_count_ = waiting_.size();
    metrics_.fetch_retries_waiting(static_cast<double>(waiting_.size()));
  }
  end_round();
}

void FetchRetrier::take(rd_kafka_message_t* msg) {
  if (msg->err) {
    if (msg->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      log::warn("fetch_retries_consumer_error", {{"error", rd_kafka_message_errstr(msg)}});
    }
    return;
  }
  ++read_count_;
  Waiting w;
  w.from = {rd_kafka_topic_name(msg->rkt), msg->partition};
  w.offset = msg->offset;
  w.taken_ms = unix_now_ms();
  ledger_.taken(w.from, w.offset);
  auto retry = parse_fetch_retry(payload(msg));
  if (!retry) {
    metrics_.fetch_retry("invalid");
    metrics_.dead_letter(std::string(reason_name(Reason::kInvalidRetry)));
    Headers headers;
    add_dead_letter_headers(headers, std::string(reason_name(Reason::kInvalidRetry)),
                            "not a fetch retry record (id, link and attempts are required)",
                            w.from.first, w.from.second, w.offset);
    produce(config_.topics.dlq, std::string(key_of(msg)),
            std::string(payload(msg).substr(0, 64 * 1024)), headers);
    round_.push_back({w.from, w.offset});
    return;
  }
  // Sent back by `newsflow redrive`: the cause is gone, the tries start again, now.
  if (!header_of(msg, "redriven_from").empty()) {
    retry->attempts = 1;
    retry->due_ms = 0;
  }
  // The same item twice (a feed polled again while its page waited, or a record and the copy
  // that rescheduled it, read again together after a rewind): one try is enough, and the copy
  // with more tries is the later one (the count of tries never goes back).
  if (const auto known = waiting_ids_.find(retry->id); known != waiting_ids_.end()) {
    auto [first, last] = waiting_.equal_range(known->second);
    auto it =
        std::find_if(first, last, [&](const auto& e) { return e.second.retry.id == retry->id; });
    if (it == last || it->second.retry.attempts >= retry->attempts) {
      round_.push_back({w.from, w.offset});
      return;
    }
    round_.push_back({it->second.from, it->second.offset});
    waiting_.erase(it);
    waiting_ids_.erase(known);
  }
  w.retry = std::move(*retry);
  waiting_ids_.emplace(w.retry.id, w.retry.due_ms);
  const std::int64_t due = w.retry.due_ms;
  waiting_.emplace(due, std::move(w));
}

void FetchRetrier::fetch_due() {
  const std::int64_t now = unix_now_ms();
  std::vector<Waiting> due;
  const std::size_t most = static_cast<std::size_t>(std::max(16, config_.fetch.max_concurrency));
  while (!waiting_.empty() && waiting_.begin()->first <= now && due.size() < most) {
    due.push_back(std::move(waiting_.begin()->second));
    waiting_.erase(waiting_.begin());
    waiting_ids_.erase(due.back().retry.id);
  }
  if (due.empty()) return;
  if (stop_.load()) return;  // stopping: not fetched, read again by the next owner
  std::vector<std::string> urls;
  urls.reserve(due.size());
  for (const Waiting& w : due) urls.push_back(w.retry.link);
  const std::vector<FetchResult> results = fetcher_->fetch(urls);
  const std::int64_t done_ms = unix_now_ms();
  const std::size_t max_record =
      static_cast<std::size_t>(config_.fetch.max_body_bytes) + kHeadroomBytes;
  for (std::size_t i = 0; i < due.size(); ++i) {
    const Waiting& w = due[i];
    const FetchResult& r = results[i];
    FetchRetry next = w.retry;
    next.attempts = w.retry.attempts + 1;
    if (r.ok() && r.body.size() + kHeadroomBytes <= max_record) {
      // The page, as a crawler would send it, naming the item it is for.
      std::vector<std::pair<std::string, std::string>> headers{
          {"url", r.final_url.empty() ? w.retry.link : r.final_url},
          {"content_type", r.content_type},
          {"fetched_at", extractors::format_rfc3339(done_ms / 1000)},
          {"id", w.retry.id},
          {"title", w.retry.title},
          {"link", w.retry.link},
          {"feed_url", w.retry.feed_url},
          {"feed_id", w.retry.feed_id},
          {"version", w.retry.published ? "2" : "1"},
          {"fetch_attempt", std::to_string(next.attempts)}};
      if (w.retry.published_at) {
        headers.emplace_back("published_at", extractors::format_rfc3339(*w.retry.published_at));
      }
      produce(config_.topics.pages, w.retry.link, r.body, headers);
      metrics_.fetch_retry("fetched");
      log::info(
          "fetch_retry_fetched",
          {{"id", w.retry.id}, {"link", w.retry.link}, {"attempt", std::to_string(next.attempts)}});
    } else {
      if (r.ok()) {
        next.reason = reason_name(Reason::kFetchTooLarge);
        next.detail = w.retry.link + ": " + std::to_string(r.body.size()) +
                      " bytes do not fit a record of the pages topic";
      } else {
        next.reason = reason_name(fetch_reason(r.outcome));
        next.detail = w.retry.link + ": " + r.detail;
      }
      if (fetch_retry_left(config_.fetch, next.attempts, next.reason)) {
        next.due_ms =
            done_ms + fetch_retry_delay_ms(config_.fetch, next.attempts, r.retry_after_seconds);
        produce(config_.topics.fetch_retries, next.id, fetch_retry_json(next),
                {{"schema", "newsflow.fetch-retry/1"}});
        metrics_.fetch_retry("rescheduled");
      } else {
        next.detail += " (gave up after " + std::to_string(next.attempts) + " attempts)";
        dead_letter(w, next);
        metrics_.fetch_retry("given_up");
      }
    }
    round_.push_back({w.from, w.offset});
  }
  end_round();
}

void FetchRetrier::requeue_holding_back() {
  const std::int64_t now = unix_now_ms();
  if (now < next_requeue_check_ms_ || waiting_.empty()) return;
  next_requeue_check_ms_ = now + 1000;
  const std::int64_t hold = config_.fetch.requeue_backoff_ms;
  std::map<std::pair<OffsetLedger::Partition, std::int64_t>, decltype(waiting_)::iterator>
      by_offset;
  for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
    by_offset.emplace(std::make_pair(it->second.from, it->second.offset), it);
  }
  // Oldest first in each partition: writing one again may leave the next holding back.
  for (const auto& [where, it] : by_offset) {
    const Waiting& w = it->second;
    if (now - w.taken_ms < hold || w.retry.due_ms - now < hold ||
        !ledger_.holds_back(w.from, w.offset)) {
      continue;
    }
    produce(config_.topics.fetch_retries, w.retry.id, fetch_retry_json(w.retry),
            {{"schema", "newsflow.fetch-retry/1"}});
    metrics_.fetch_retry("requeued");
    // Finished now (committed only with the round that writes its copy), so that the next one
    // of its partition is the oldest.
    ledger_.finished(w.from, w.offset);
    round_.push_back({w.from, w.offset});
    waiting_ids_.erase(w.retry.id);
    waiting_.erase(it);
  }
  end_round();
}

void FetchRetrier::dead_letter(const Waiting& w, const FetchRetry& retry) {
  metrics_.dead_letter(retry.reason);
  Headers headers{{"url", retry.link}};
  add_dead_letter_headers(headers, retry.reason, retry.detail, w.from.first, w.from.second,
                          w.offset);
  produce(config_.topics.dlq, retry.link, fetch_retry_json(retry), headers);
}

bool FetchRetrier::usable() const { return !exactly_once_ || Transaction::usable(producer_.get()); }

void FetchRetrier::produce(const std::string& topic, const std::string& key,
                           const std::string& value,
                           const std::vector<std::pair<std::string, std::string>>& headers) {
  if (exactly_once_ && !transaction_) {
    auto begun = Transaction::begin(producer_.get(), std::max(1, flush_timeout_ms()));
    if (!begun) {
      log::error("fetch_retries_transaction_failed", {{"error", begun.error().message}});
      round_failed_ = true;
      return;
    }
    transaction_.emplace(std::move(*begun));
  }
  rd_kafka_headers_t* hdrs = rd_kafka_headers_new(headers.size());
  for (const auto& [name, v] : headers) {
    rd_kafka_header_add(hdrs, name.data(), static_cast<ssize_t>(name.size()), v.data(),
                        static_cast<ssize_t>(v.size()));
  }
  rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
  for (int tries = 0; tries < 100; ++tries) {
    err = rd_kafka_producev(producer_.get(), RD_KAFKA_V_TOPIC(topic.c_str()),
                            RD_KAFKA_V_KEY(const_cast<char*>(key.data()), key.size()),
                            RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_HEADERS(hdrs),
                            RD_KAFKA_V_END);
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) break;
    rd_kafka_poll(producer_.get(), 100);
  }
  if (err) {
    rd_kafka_headers_destroy(hdrs);  // not taken over by the producer
    round_failed_ = true;
    last_delivery_error_ = rd_kafka_err2str(err);
  }
}

void FetchRetrier::on_delivery(rd_kafka_t*, const rd_kafka_message_t* msg, void* opaque) {
  auto* self = static_cast<FetchRetrier*>(opaque);
  if (msg->err) {
    self->round_failed_ = true;
    self->last_delivery_error_ = rd_kafka_err2str(msg->err);
  } else {
    self->metrics_.produced(rd_kafka_topic_name(msg->rkt));
  }
}

void FetchRetrier::end_round() {
  if (round_.empty() && !round_failed_) return;
  bool ok = true;
  for (const Done& d : round_) ledger_.finished(d.from, d.offset);
  const auto offsets = ledger_.to_commit();
  if (exactly_once_) {
    // The outcomes and the offsets of the records they finish, in one transaction.
    if (!transaction_) {
      auto begun = Transaction::begin(producer_.get(), std::max(1, flush_timeout_ms()));
      if (begun) {
        transaction_.emplace(std::move(*begun));
      } else {
        last_delivery_error_ = begun.error().message;
        ok = false;
      }
    }
    if (transaction_) {
      const auto committed = transaction_->commit(offsets, consumer_.get(), [this] {
        if (!round_failed_) return std::string();
        return last_delivery_error_.empty() ? std::string("a record was not sent")
                                            : last_delivery_error_;
      });
      if (!committed) {
        last_delivery_error_ = committed.error().message;
        ok = false;
      }
    }
    transaction_.reset();
  } else {
    // Every outcome acknowledged, then the offsets.
    rd_kafka_flush(producer_.get(), flush_timeout_ms());
    ok = !round_failed_ && rd_kafka_outq_len(producer_.get()) == 0;
    if (ok) commit_finished(offsets);
  }
  round_.clear();
  round_failed_ = false;
  if (!ok) {
    log::warn("fetch_retries_round_failed", {{"error", last_delivery_error_}});
    rewind();
    return;
  }
  ledger_.committed(offsets);
}

void FetchRetrier::commit_finished(const std::map<OffsetLedger::Partition, std::int64_t>& offsets) {
  for (const auto& [p, offset] : offsets) committer_.acknowledged(p, offset);
  if (!committer_.waiting()) return;
  // A failed commit stays due and goes with the next round's.
  const OffsetCommitter::Result r = committer_.commit(/*sync=*/true, OffsetCommitter::Clock::now());
  if (!r.ok) log::warn("fetch_retries_commit_failed", {{"error", r.error}});
}

void FetchRetrier::rewind() {
  // Everything not committed is read again from the committed offsets (what was produced of an
  // unfinished round may come twice at_least_once; exactly_once it was aborted).
  waiting_.clear();
  waiting_ids_.clear();
  ledger_.clear();
  rd_kafka_topic_partition_list_t* assigned = nullptr;
  if (rd_kafka_assignment(consumer_.get(), &assigned) == RD_KAFKA_RESP_ERR_NO_ERROR && assigned) {
    PartitionList list(assigned);
    if (list.list->cnt > 0) seek_committed(list.list);
  }
  resume_assigned(consumer_.get());
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
}

void FetchRetrier::seek_committed(rd_kafka_topic_partition_list_t* partitions) {
  // A seek drops what was fetched ahead. Where the group committed nothing, from the start
  // (`auto.offset.reset`: earliest).
  if (rd_kafka_committed(consumer_.get(), partitions, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    for (int i = 0; i < partitions->cnt; ++i) {
      if (partitions->elems[i].offset < 0) partitions->elems[i].offset = RD_KAFKA_OFFSET_BEGINNING;
    }
    rd_kafka_error_t* e = rd_kafka_seek_partitions(consumer_.get(), partitions, 5000);
    bool sought = !e;
    for (int i = 0; sought && i < partitions->cnt; ++i) sought = !partitions->elems[i].err;
    if (e) rd_kafka_error_destroy(e);
    if (sought) return;
  }
  // The committed offsets could not be had (the broker the round failed on): given up and
  // taken again incrementally, the partitions start from their committed offsets once the
  // coordinator answers, as at an assignment.
  log::warn("fetch_retries_rewind_reassigns", {{"partitions", std::to_string(partitions->cnt)}});
  for (int i = 0; i < partitions->cnt; ++i) partitions->elems[i].offset = RD_KAFKA_OFFSET_INVALID;
  follow_rebalance(consumer_.get(), /*assign=*/false, partitions, /*cooperative=*/true);
  follow_rebalance(consumer_.get(), /*assign=*/true, partitions, /*cooperative=*/true);
}

void FetchRetrier::resume_assigned(rd_kafka_t* consumer) {
  rd_kafka_topic_partition_list_t* assigned = nullptr;
  if (rd_kafka_assignment(consumer, &assigned) == RD_KAFKA_RESP_ERR_NO_ERROR && assigned) {
    PartitionList list(assigned);
    rd_kafka_resume_partitions(consumer, list.list);
  }
  paused_ = false;
}

void FetchRetrier::pause(bool paused) {
  if (paused == paused_) return;
  rd_kafka_topic_partition_list_t* assigned = nullptr;
  if (rd_kafka_assignment(consumer_.get(), &assigned) != RD_KAFKA_RESP_ERR_NO_ERROR || !assigned) {
    return;
  }
  PartitionList list(assigned);
  if (paused) {
    rd_kafka_pause_partitions(consumer_.get(), list.list);
  } else {
    rd_kafka_resume_partitions(consumer_.get(), list.list);
  }
  paused_ = paused;
}

void FetchRetrier::on_rebalance(rd_kafka_t* rk, int err, void* partitions, void* opaque) {
  auto* self = static_cast<FetchRetrier*>(opaque);
  auto* list = static_cast<rd_kafka_topic_partition_list_t*>(partitions);
  // Incremental (cooperative-sticky): `list` holds only the partitions that change hands.
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    for (int i = 0; list && i < list->cnt; ++i) {
      self->assigned_.emplace(list->elems[i].topic, list->elems[i].partition);
    }
    follow_rebalance(rk, /*assign=*/true, list, /*cooperative=*/true);
    self->assigned_once_ = true;
    self->resume_assigned(rk);
    return;
  }
  // Revoked: what is done is committed (at_least_once; exactly_once, in its transaction); what
  // waits in the partitions that go is their next owner's, read from the committed offsets.
  self->end_round();
  if (!self->exactly_once_) self->commit_finished(self->ledger_.to_commit());
  std::set<OffsetLedger::Partition> gone;
  for (int i = 0; list && i < list->cnt; ++i) {
    gone.emplace(list->elems[i].topic, list->elems[i].partition);
  }
  for (const auto& p : gone) {
    self->committer_.revoked(p);
    self->assigned_.erase(p);
    self->ledger_.forget(p);
  }
  for (auto it = self->waiting_.begin(); it != self->waiting_.end();) {
    if (!gone.count(it->second.from)) {
      ++it;
      continue;
    }
    if (const auto id = self->waiting_ids_.find(it->second.retry.id);
        id != self->waiting_ids_.end() && id->second == it->first) {
      self->waiting_ids_.erase(id);
    }
    it = self->waiting_.erase(it);
  }
  self->waiting_count_ = self->waiting_.size();
  follow_rebalance(rk, /*assign=*/false, list, /*cooperative=*/true);
}

}  // namespace newsflow::daemon
