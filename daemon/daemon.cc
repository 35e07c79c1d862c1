#include "daemon/daemon.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "daemon/input.h"
#include "daemon/log.h"
#include "daemon/metrics.h"
#include "daemon/version.h"

namespace newsflow::daemon {
namespace {

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

}  // namespace

Daemon::Daemon(const config::Config& config, Metrics& metrics)
    : config_(config),
      metrics_(metrics),
      pipeline_(config, &metrics),
      workers_(config.kafka.workers > 0
                   ? static_cast<std::size_t>(config.kafka.workers)
                   : std::max<std::size_t>(1, std::thread::hardware_concurrency())),
      exactly_once_(config.kafka.delivery == "exactly_once"),
      crash_guard_(config.state.dir) {
  // Fault injection for the crash-loop test: a worker that meets this text in an input aborts
  // the process, as a crashing parser would.
  if (const char* marker = std::getenv("NEWSFLOW_FAULT_CRASH_MARKER")) crash_marker_ = marker;
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
  if (exactly_once_) {
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

  auto cconf = make_kafka_conf({{"bootstrap.servers", bootstrap},
                                {"group.id", config_.kafka.group_id},
                                {"enable.auto.commit", "false"},
                                {"enable.auto.offset.store", "false"},
                                {"auto.offset.reset", "earliest"},
                                {"partition.assignment.strategy", "cooperative-sticky"},
                                {"statistics.interval.ms", "5000"},
                                {"queued.max.messages.kbytes", "16384"},
                                {"client.id", "newsflow"}},
                               config_.kafka.consumer, "kafka.consumer");
  if (!cconf) return tl::unexpected(cconf.error());
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

  // The window before the first input: a copy arriving right after a restart is still caught.
  notifier_.status("restoring the dedup window from " + config_.topics.articles);
  if (auto restored = restore_state(bootstrap); !restored) {
    return tl::unexpected(std::vector<config::Problem>{
        {"window", "cannot restore the dedup window from " + config_.topics.articles + ": " +
                       restored.error()}});
  }

  rd_kafka_topic_partition_list_t* topics = rd_kafka_topic_partition_list_new(2);
  rd_kafka_topic_partition_list_add(topics, config_.topics.pages.c_str(), RD_KAFKA_PARTITION_UA);
  rd_kafka_topic_partition_list_add(topics, config_.topics.feeds.c_str(), RD_KAFKA_PARTITION_UA);
  const rd_kafka_resp_err_t e = rd_kafka_subscribe(consumer_.get(), topics);
  rd_kafka_topic_partition_list_destroy(topics);
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return tl::unexpected(std::vector<config::Problem>{{"topics", rd_kafka_err2str(e)}});
  }
  log::info("kafka_subscribed", {{"bootstrap", bootstrap},
                                 {"group_id", config_.kafka.group_id},
                                 {"topics", config_.topics.pages + "," + config_.topics.feeds}});
  return {};
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
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t e = RD_KAFKA_RESP_ERR_NO_ERROR;
  for (int attempt = 0; attempt < 10; ++attempt) {
    rd_kafka_topic_t* t = rd_kafka_topic_new(c.get(), config_.topics.articles.c_str(), nullptr);
    e = rd_kafka_metadata(c.get(), 0, t, &md, 5000);
    rd_kafka_topic_destroy(t);
    if (e == RD_KAFKA_RESP_ERR_NO_ERROR) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return tl::unexpected(std::string("metadata of ") + config_.topics.articles + ": " +
                          rd_kafka_err2str(e));
  }
  std::unique_ptr<const rd_kafka_metadata_t, void (*)(const rd_kafka_metadata_t*)> md_guard(
      md, rd_kafka_metadata_destroy);
  if (md->topic_cnt < 1 || md->topics[0].err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC ||
      md->topics[0].err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
    log::info("window_restored", {{"articles", "0"}, {"reason", "no articles topic yet"}});
    return std::size_t{0};
  }
  rd_kafka_topic_partition_list_t* list =
      rd_kafka_topic_partition_list_new(md->topics[0].partition_cnt);
  int pending = 0;
  for (int p = 0; p < md->topics[0].partition_cnt; ++p) {
    std::int64_t low = 0, high = 0;
    if (rd_kafka_query_watermark_offsets(c.get(), config_.topics.articles.c_str(), p, &low, &high,
                                         5000) != RD_KAFKA_RESP_ERR_NO_ERROR ||
        high <= low) {
      continue;
    }
    rd_kafka_topic_partition_list_add(list, config_.topics.articles.c_str(), p)->offset = low;
    ++pending;
  }
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

void Daemon::on_rebalance(rd_kafka_t* rk, int err_int, void* partitions_ptr, void* opaque) {
  auto* self = static_cast<Daemon*>(opaque);
  auto* partitions = static_cast<rd_kafka_topic_partition_list_t*>(partitions_ptr);
  const auto err = static_cast<rd_kafka_resp_err_t>(err_int);
  const bool cooperative = std::string_view(rd_kafka_rebalance_protocol(rk)) == "COOPERATIVE";
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
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
    // never while one is processed: the collected messages of revoked partitions are dropped
    // (uncommitted, so their new owner reads them again); nothing else is in flight.
    std::size_t abandoned = 0;
    for (int i = 0; i < partitions->cnt; ++i) {
      const auto& tp = partitions->elems[i];
      self->metrics_.forget_lag(tp.topic, tp.partition);
      if (!self->collecting_) continue;
      auto& batch = *self->collecting_;
      for (auto it = batch.begin(); it != batch.end();) {
        if ((*it)->partition == tp.partition &&
            rd_kafka_topic_name((*it)->rkt) == std::string_view(tp.topic)) {
          rd_kafka_message_destroy(*it);
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
      const std::int64_t lag = p.value("consumer_lag", std::int64_t{-1});
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
  if (msg->err) {
    ++self->delivery_errors_;
    self->last_delivery_error_ = rd_kafka_err2str(msg->err);
    self->metrics_.delivery_failed();
  } else {
    self->metrics_.produced(rd_kafka_topic_name(msg->rkt));
  }
}

bool Daemon::produce(const std::string& topic, const std::string& key, const std::string& value,
                     const std::vector<std::pair<std::string, std::string>>& headers,
                     bool tombstone) {
  while (true) {
    rd_kafka_headers_t* hdrs = rd_kafka_headers_new(headers.size());
    for (const auto& [name, v] : headers) {
      rd_kafka_header_add(hdrs, name.data(), static_cast<ssize_t>(name.size()), v.data(),
                          static_cast<ssize_t>(v.size()));
    }
    const rd_kafka_resp_err_t e = rd_kafka_producev(
        producer_.get(), RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_KEY(key.data(), key.size()),
        RD_KAFKA_V_VALUE(tombstone ? nullptr : const_cast<char*>(value.data()), value.size()),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_END);
    if (e == RD_KAFKA_RESP_ERR_NO_ERROR) return true;
    rd_kafka_headers_destroy(hdrs);
    if (e == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      rd_kafka_poll(producer_.get(), 50);  // serve delivery reports to make room
      continue;
    }
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
                  {"source_offset", std::to_string(msg->offset)}};
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

void Daemon::publish(rd_kafka_message_t* msg, Work& work) {
  // One try/catch per message: no input can crash-loop the daemon.
  try {
    if (work.parsed.failure) return dead_letter(msg, *work.parsed.failure);
    if (!work.prepared) return dead_letter(msg, work.prepared.error());
    for (const auto& item : *work.prepared) {
      if (item.fetch_failure) item_dead_letter(msg, item);
    }
    for (const Output& o : pipeline_.commit(std::move(*work.prepared), work.parsed.input)) {
      const std::string kind(dedup::dup_kind_name(o.verdict.kind));
      produce(config_.topics.articles, o.article.id, article_json(o), {});
      produce(config_.topics.stories, o.story.story_id, story_json(o.story), {});
      // A merged story is gone: a tombstone, so compaction drops it.
      for (const auto& gone : o.story.merged_from)
        produce(config_.topics.stories, gone, {}, {}, true);
      metrics_.article(kind);
      ++progress_.articles;
      if (o.verdict.kind != dedup::DupKind::kUnique) ++progress_.duplicates;
    }
    progress_.stories = pipeline_.stories().size();
  } catch (const std::exception& e) {
    dead_letter(msg, {"internal_error", e.what()});
  }
}

void Daemon::prepare_batch(std::vector<rd_kafka_message_t*>& messages, std::vector<Work>& work) {
  work.clear();
  work.resize(messages.size());
  for (std::size_t i = 0; i < messages.size(); ++i) {
    metrics_.consumed(rd_kafka_topic_name(messages[i]->rkt), messages[i]->partition);
    ++progress_.consumed;
  }
  // Extraction is stateless: spread it over the workers; dedup stays in input order.
  auto run = [&](std::size_t first, std::size_t stride) {
    for (std::size_t i = first; i < messages.size(); i += stride) {
      if (crash_guard_.crashes(rd_kafka_topic_name(messages[i]->rkt), messages[i]->partition,
                               messages[i]->offset) >= 2) {
        work[i].parsed.failure =
            Failure{"worker_crash", "the process died twice while processing this input"};
        continue;
      }
      if (!crash_marker_.empty() && payload(messages[i]).find(crash_marker_) != std::string::npos) {
        std::abort();
      }
      try {
        const auto t0 = Clock::now();
        work[i].parsed = parse(messages[i]);
        metrics_.stage_seconds("parse", seconds_since(t0));
        if (!work[i].parsed.failure) work[i].prepared = pipeline_.prepare(work[i].parsed.input);
      } catch (const std::exception& e) {
        work[i].prepared = tl::unexpected(Failure{"internal_error", e.what()});
      }
    }
  };
  const std::size_t workers = std::min<std::size_t>(workers_, messages.size());
  std::vector<std::thread> threads;
  for (std::size_t w = 1; w < workers; ++w) threads.emplace_back(run, w, workers);
  run(0, std::max<std::size_t>(1, workers));
  for (auto& t : threads) t.join();
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

void Daemon::rewind(const std::vector<rd_kafka_message_t*>& messages) {
  // Back to the batch's first offsets: the batch is processed again (ids are stable and the
  // window repeats its verdicts), so nothing is lost.
  std::map<std::pair<std::string, int>, std::int64_t> first;
  for (const auto* m : messages) {
    auto key = std::pair{std::string(rd_kafka_topic_name(m->rkt)), m->partition};
    auto [it, inserted] = first.emplace(key, m->offset);
    if (!inserted) it->second = std::min(it->second, m->offset);
  }
  rd_kafka_topic_partition_list_t* list =
      rd_kafka_topic_partition_list_new(static_cast<int>(first.size()));
  for (const auto& [tp, offset] : first) {
    rd_kafka_topic_partition_list_add(list, tp.first.c_str(), tp.second)->offset = offset;
  }
  if (rd_kafka_error_t* e = rd_kafka_seek_partitions(consumer_.get(), list, 5000)) {
    log::error("seek_failed", {{"error", rd_kafka_error_string(e)}});
    rd_kafka_error_destroy(e);
  }
  rd_kafka_topic_partition_list_destroy(list);
}

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

bool Daemon::process_batch(std::vector<rd_kafka_message_t*>& messages) {
  if (crash_guard_.enabled()) {
    std::vector<CrashGuard::Input> inputs;
    for (const auto* m : messages) {
      inputs.push_back({rd_kafka_topic_name(m->rkt), m->partition, m->offset});
    }
    crash_guard_.begin(inputs);
  }
  const bool delivered = process_guarded_batch(messages);
  crash_guard_.end();
  return delivered;
}

bool Daemon::process_guarded_batch(std::vector<rd_kafka_message_t*>& messages) {
  delivery_errors_ = 0;
  std::vector<Work> work;
  prepare_batch(messages, work);
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
  if (exactly_once_) {
    if (rd_kafka_error_t* e = rd_kafka_begin_transaction(producer_.get())) {
      log::error("transaction_begin_failed", {{"error", rd_kafka_error_string(e)}});
      rd_kafka_error_destroy(e);
      rewind(messages);
      return false;
    }
  }
  for (std::size_t i = 0; i < messages.size(); ++i) publish(messages[i], work[i]);
  metrics_.producer_queue(rd_kafka_outq_len(producer_.get()));
  bool delivered;
  if (exactly_once_) {
    // Outputs and input offsets commit together or not at all.
    delivered = commit_transaction(messages);
  } else {
    // Wait for every output of the batch to be acknowledged before committing its inputs;
    // after SIGTERM only as long as the drain limit leaves.
    const rd_kafka_resp_err_t flushed = rd_kafka_flush(producer_.get(), flush_timeout_ms());
    delivered = flushed == RD_KAFKA_RESP_ERR_NO_ERROR && delivery_errors_ == 0;
    if (!delivered) {
      log::error("batch_not_delivered", {{"errors", std::to_string(delivery_errors_)},
                                         {"flush", rd_kafka_err2str(flushed)},
                                         {"last_error", last_delivery_error_}});
    }
  }
  metrics_.stage_seconds("produce", seconds_since(t0));
  metrics_.producer_queue(rd_kafka_outq_len(producer_.get()));
  if (!delivered) {
    pipeline_.drop_pending_links();
    rewind(messages);
    return false;
  }
  pipeline_.confirm_links();
  if (exactly_once_) {
    metrics_.committed();
    progress_.committed += messages.size();
    return true;
  }
  rd_kafka_topic_partition_list_t* list = next_offsets(messages);
  const rd_kafka_resp_err_t c = rd_kafka_commit(consumer_.get(), list, /*async=*/0);
  rd_kafka_topic_partition_list_destroy(list);
  if (c != RD_KAFKA_RESP_ERR_NO_ERROR) {
    // Outputs are out; a failed commit only means these inputs may be processed again.
    log::warn("commit_failed", {{"error", rd_kafka_err2str(c)}});
  } else {
    metrics_.committed();
    progress_.committed += messages.size();
  }
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

int Daemon::run() {
  std::vector<rd_kafka_message_t*> batch;
  int exit_code = 0;
  auto backoff = std::chrono::milliseconds(100);
  refresh_status(true);
  while (!stop_.load()) {
    tick();
    const auto deadline = Clock::now() + std::chrono::milliseconds(config_.kafka.batch_max_ms);
    std::int64_t batch_bytes = 0;
    collecting_ = &batch;  // the rebalance callback drops messages of revoked partitions
    while (static_cast<int>(batch.size()) < config_.kafka.batch_max_messages &&
           batch_bytes < config_.kafka.batch_max_bytes && !stop_.load()) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) break;
      rd_kafka_message_t* msg =
          rd_kafka_consumer_poll(consumer_.get(), static_cast<int>(left.count()));
      if (!msg) continue;
      if (msg->err) {
        if (msg->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
          log::warn("consumer_error", {{"error", rd_kafka_message_errstr(msg)}});
        }
        const bool fatal = msg->err == RD_KAFKA_RESP_ERR__FATAL;
        rd_kafka_message_destroy(msg);
        if (fatal) {
          char reason[512];
          rd_kafka_fatal_error(consumer_.get(), reason, sizeof reason);
          log::error("consumer_fatal", {{"error", reason}});
          stop_ = true;
          exit_code = 1;
        }
        continue;
      }
      batch_bytes += static_cast<std::int64_t>(msg->len + msg->key_len);
      batch.push_back(msg);
    }
    collecting_ = nullptr;
    rd_kafka_poll(producer_.get(), 0);
    if (batch.empty()) continue;
    // Inputs that were in flight when an earlier process died go alone, so the one that kills
    // the process is found (and dead-lettered at its second crash) without taking others along.
    bool suspect = false;
    for (const auto* m : batch) {
      suspect =
          suspect || crash_guard_.crashes(rd_kafka_topic_name(m->rkt), m->partition, m->offset) > 0;
    }
    bool delivered = true;
    if (suspect && batch.size() > 1) {
      for (std::size_t i = 0; i < batch.size(); ++i) {
        std::vector<rd_kafka_message_t*> one{batch[i]};
        if (!process_batch(one)) {
          // Back to this message and to the first unprocessed one of every other partition.
          rewind(std::vector<rd_kafka_message_t*>(batch.begin() + static_cast<std::ptrdiff_t>(i),
                                                  batch.end()));
          delivered = false;
          break;
        }
      }
    } else {
      delivered = process_batch(batch);
    }
    for (auto* m : batch) rd_kafka_message_destroy(m);
    batch.clear();
    refresh_status(false);
    if (delivered) {
      backoff = std::chrono::milliseconds(100);
    } else if (!stop_.load()) {
      char reason[512];
      if (rd_kafka_fatal_error(producer_.get(), reason, sizeof reason) !=
          RD_KAFKA_RESP_ERR_NO_ERROR) {
        log::error("producer_fatal", {{"error", reason}});
        exit_code = 1;
        break;
      }
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(5000));
    }
  }
  notifier_.stopping();
  log::info("daemon_stopping", {{"consumed", std::to_string(progress_.consumed.load())},
                                {"articles", std::to_string(progress_.articles.load())},
                                {"dead_letters", std::to_string(progress_.dead_letters.load())}});
  rd_kafka_consumer_close(consumer_.get());
  if (rd_kafka_flush(producer_.get(), flush_timeout_ms()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    // Only outputs of an uncommitted batch can be left: the restart processes it again.
    log::warn("drain_timeout",
              {{"unacknowledged", std::to_string(rd_kafka_outq_len(producer_.get()))},
               {"drain_timeout_ms", std::to_string(config_.kafka.drain_timeout_ms)}});
  }
  consumer_.reset();
  refresh_status(true);
  return exit_code;
}

}  // namespace newsflow::daemon
