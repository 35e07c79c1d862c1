#include "daemon/cli/service.h"

#include <librdkafka/rdkafka.h>
#include <prometheus/text_serializer.h>
#include <signal.h>
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "daemon/cli/progress.h"
#include "daemon/cli/stop_signals.h"
#include "daemon/kafka/daemon.h"
#include "daemon/kafka/kafka.h"
#include "daemon/ops/http_server.h"
#include "daemon/ops/log.h"
#include "daemon/ops/metrics.h"
#include "daemon/ops/status_page.h"
#include "daemon/pipeline/input.h"
#include "daemon/pipeline/input_file.h"
#include "daemon/pipeline/warc.h"

namespace newsflow::daemon {
namespace {

using namespace std::chrono_literals;

// The parts every service mode shares: the embedded cluster when no brokers are configured,
// metrics, the HTTP endpoint and the daemon.
struct Service {
  std::unique_ptr<EmbeddedCluster> cluster;
  std::string bootstrap;
  Metrics metrics;
  std::unique_ptr<Daemon> daemon;
  std::unique_ptr<HttpServer> http;

  // Returns an exit code on failure.
  std::optional<int> start(const config::Config& config) {
    bootstrap = config.kafka.brokers;
    if (bootstrap.empty()) {
      auto c = EmbeddedCluster::start(config.kafka.embedded_brokers, daemon_topics(config));
      if (!c) {
        log::error("startup_failed", {{"error", c.error()}});
        return 2;
      }
      cluster = std::move(*c);
      bootstrap = cluster->bootstrap();
      log::info("kafka_embedded_started",
                {{"bootstrap", bootstrap},
                 {"brokers", std::to_string(config.kafka.embedded_brokers)},
                 {"partitions", std::to_string(config.kafka.embedded_partitions)},
                 {"hint", "kcat -b " + bootstrap + " -C -t " + config.topics.articles}});
    }
    daemon = std::make_unique<Daemon>(config, metrics);
    if (auto started = daemon->start(bootstrap); !started) {
      for (const auto& p : started.error()) {
        log::error("config_error", {{"key", p.path}, {"error", p.message}});
      }
      return 2;
    }
    if (!config.http.listen.empty()) {
      auto registry = metrics.registry();
      Daemon* d = daemon.get();
      // Liveness: the loop turns at least once per batch, and a batch takes at most its flush
      // timeout plus extraction; a loop silent for far longer than that is hung.
      const auto stall_limit = std::chrono::milliseconds(
          std::max(120000, 4 * (config.kafka.flush_timeout_ms + config.kafka.batch_max_ms)));
      auto server = HttpServer::start(
          config.http.listen,
          {{"/metrics",
            [registry] {
              return HttpResponse{200, "text/plain; version=0.0.4; charset=utf-8",
                                  prometheus::TextSerializer().Serialize(registry->Collect())};
            }},
           {"/healthz",
            [d, stall_limit] {
              return d->live(stall_limit) ? HttpResponse{200, "text/plain; charset=utf-8", "ok\n"}
                                          : HttpResponse{503, "text/plain; charset=utf-8",
                                                         "processing loop stalled\n"};
            }},
           {"/readyz",
            [d] {
              return d->ready() ? HttpResponse{200, "text/plain; charset=utf-8", "ready\n"}
                                : HttpResponse{503, "text/plain; charset=utf-8", "not ready\n"};
            }},
           {"/",
            [d] {
              return HttpResponse{200, "text/html; charset=utf-8", render_status_page(d->status())};
            }},
           {"/stories", [d] {
              return HttpResponse{200, "text/html; charset=utf-8",
                                  render_stories_page(d->status())};
            }}});
      if (!server) {
        log::error("startup_failed", {{"key", "http.listen"}, {"error", server.error()}});
        return 2;
      }
      http = std::move(*server);
      log::info(
          "http_listening",
          {{"metrics", "http://" + config.http.listen.substr(0, config.http.listen.rfind(':')) +
                           ":" + std::to_string(http->port()) + "/metrics"}});
    }
    return std::nullopt;
  }

  std::string metrics_url(const config::Config& config) const {
    if (!http) return "(http disabled)";
    return "http://" + config.http.listen.substr(0, config.http.listen.rfind(':')) + ":" +
           std::to_string(http->port()) + "/metrics";
  }
};

// A producer for replay files: each line becomes a message as a crawler or feed poller would
// send it (raw bytes, url/id/fetched_at headers; `text` lines as the JSON envelope); html and
// text lines go to the pages topic, feed lines to the feeds topic.
class ReplayProducer {
 public:
  ReplayProducer(const std::string& bootstrap, const config::Config& config) : config_(config) {
    // The same client properties as the daemon's producer (a managed Kafka's security).
    auto conf = make_kafka_conf({{"bootstrap.servers", bootstrap},
                                 {"message.max.bytes", "10000000"},
                                 {"enable.idempotence", "true"}},
                                config.kafka.client, config.kafka.producer, "kafka.producer");
    if (!conf) {
      for (const auto& p : conf.error()) {
        std::fprintf(stderr, "produce: %s: %s\n", p.path.c_str(), p.message.c_str());
      }
      return;
    }
    // Every record's fate: a broker can refuse one (over its message.max.bytes), and a count
    // of records queued would then claim inputs that never arrived.
    rd_kafka_conf_set_dr_msg_cb(conf->get(), &ReplayProducer::on_delivery);
    rd_kafka_conf_set_opaque(conf->get(), this);
    char err[512];
    producer_.reset(rd_kafka_new(RD_KAFKA_PRODUCER, conf->get(), err, sizeof err));
    if (producer_) conf->release();
  }
  ReplayProducer(const ReplayProducer&) = delete;  // the delivery callback holds `this`
  ReplayProducer& operator=(const ReplayProducer&) = delete;
  bool ok() const { return producer_ != nullptr; }

  void send(const std::string& topic, const std::string& key, const std::string& value,
            const Headers& headers, std::int64_t timestamp_ms = 0) {
    while (true) {
      rd_kafka_headers_t* hdrs = rd_kafka_headers_new(headers.size());
      for (const auto& [n, v] : headers) {
        rd_kafka_header_add(hdrs, n.data(), -1, v.data(), static_cast<ssize_t>(v.size()));
      }
      const auto e = rd_kafka_producev(
          producer_.get(), RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_KEY(key.data(), key.size()),
          RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_HEADERS(hdrs),
          RD_KAFKA_V_TIMESTAMP(timestamp_ms), RD_KAFKA_V_END);
      if (e == RD_KAFKA_RESP_ERR_NO_ERROR) {
        ++produced_;
        return;
      }
      rd_kafka_headers_destroy(hdrs);
      if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        note_failure(e);
        return;
      }
      rd_kafka_poll(producer_.get(), 100);
    }
  }

  /// Records stamped with their event time instead of the time they are sent.
  void stamp_event_times(bool on) { event_timestamps_ = on; }

  // Produces every line of `path`, or every page of a WARC or ARC file, `repeat` times (copies get
  // "-N" ids and "#N" URLs). Each (from, to) of `rewrites` is replaced in feed bodies.
  bool send_file(const std::string& path, int repeat,
                 const std::vector<std::pair<std::string, std::string>>& rewrites = {},
                 double rate = 0, ProgressLine::Mode progress_mode = ProgressLine::Mode::kOff) {
    auto file = InputFile::open(path);
    if (!file) return false;
    Sending sending{repeat, rewrites, rate, std::chrono::steady_clock::now()};
    ProgressLine progress(stderr, progress_mode, "produce", "inputs/s", (*file)->size(),
                          /*articles=*/false);
    ProgressCounts counts;
    auto tick = [&] {
      ++counts.inputs;
      counts.bytes = (*file)->raw_offset();
      progress.update(counts);
    };
    std::unique_ptr<ArchiveReader> archive;
    if (is_warc((*file)->peek(8))) {
      archive = std::make_unique<WarcReader>(**file, WarcOptions{config_.extract.max_html_bytes});
    } else if (is_arc((*file)->peek(11))) {
      archive = std::make_unique<ArcReader>(**file, WarcOptions{config_.extract.max_html_bytes});
    }
    if (archive) {
      // The pages a crawl recorded; what is not a page is counted, a broken record reported.
      warc_ = true;
      while (auto record = archive->next()) {
        ++warc_records_;
        take_record(*record, counts, progress, sending);
        tick();
      }
      return archive->error().empty();
    }
    return read_lines(**file, [&](std::string_view line) {
      ParsedInput p = parse_replay_line(line);
      if (p.failure) {
        ++counts.dead_letters;  // not sent: the line is not an input
      } else {
        send_input(p, line, sending);
      }
      tick();
    });
  }

  // For WARC input, as replay sums up: "N WARC records -> P pages + D dead letters ( reason=n
  // ... ) + S skipped ( reason=n ... )"; empty for replay lines.
  std::string warc_summary() const {
    if (!warc_) return "";
    auto counts = [](const std::map<std::string, std::size_t>& by) {
      std::size_t total = 0;
      std::string text;
      for (const auto& [r, n] : by) {
        total += n;
        text += " " + r + "=" + std::to_string(n);
      }
      return std::to_string(total) + " (" + text + " )";
    };
    return std::to_string(warc_records_) + " WARC records -> " + std::to_string(warc_pages_) +
           " pages + " + counts(warc_dead_letters_) + " dead letters + " + counts(warc_skipped_) +
           " skipped";
  }

  // Poison a real crawler produces too: each must end in the DLQ with its reason.
  void send_poison() {
    const std::string& pages = config_.topics.pages;
    send(pages, "junk", std::string("\x00\x01\x02\xff\xfe binary", 13),
         {{"url", "https://junk.example/bin"}});
    send(pages, "empty", "", {{"url", "https://junk.example/empty"}});
    send(pages, "nourl", "<html><body><p>no url header</p></body></html>", {});
  }

  /// Waits for every record's delivery report (up to a minute; what is still queued then counts
  /// as not delivered) and returns how many the brokers acknowledged.
  std::size_t flush() {
    if (rd_kafka_flush(producer_.get(), 60000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      const auto left = static_cast<std::size_t>(rd_kafka_outq_len(producer_.get()));
      failed_ += left;
      if (first_error_.empty()) first_error_ = "not acknowledged within 60 s";
      produced_ -= std::min(produced_, left);
    }
    return produced_ - std::min(produced_, delivery_failed_);
  }
  /// Records not delivered (refused when queued, or failed after), and the first reason.
  std::size_t failed() const { return failed_; }
  const std::string& first_error() const { return first_error_; }

 private:
  // How one `send_file` sends: each input `repeat` times, feed bodies rewritten, paced at `rate`
  // messages a second from `start` (0: as fast as the brokers take them).
  struct Sending {
    int repeat;
    const std::vector<std::pair<std::string, std::string>>& rewrites;
    double rate;
    std::chrono::steady_clock::time_point start;
    std::size_t sent = 0;
  };

  // An archive's record: a page sent, what is not a page counted, a broken record reported.
  void take_record(WarcRecord& record, ProgressCounts& counts, ProgressLine& progress,
                   Sending& sending) {
    if (record.outcome == WarcRecord::Outcome::kSkipped) {
      ++warc_skipped_[record.skip_reason];
      ++counts.skipped;
    } else if (record.outcome == WarcRecord::Outcome::kDeadLetter) {
      const Failure& f = *record.parsed.failure;
      ++warc_dead_letters_[f.reason];
      ++counts.dead_letters;
      progress.clear();
      log::warn("warc_record_dropped",
                {{"reason", f.reason}, {"detail", f.detail}, {"url", record.parsed.input.url}});
    } else {
      ++warc_pages_;
      send_input(record.parsed, {}, sending);
    }
  }

  // The headers of copy `k` of an input sent to `url` (`envelope`: extracted text as the JSON
  // envelope).
  Headers input_headers(const Input& in, const std::string& url, int k, bool feed,
                        bool envelope) const {
    const std::string suffix = k == 0 ? "" : std::to_string(k);
    Headers headers{{"url", url}};
    if (!in.id.empty()) headers.emplace_back("id", k == 0 ? in.id : in.id + "-" + suffix);
    if (in.fetched_at) {
      headers.emplace_back("fetched_at", extractors::format_rfc3339(*in.fetched_at));
    }
    if (envelope) {
      headers.emplace_back("content_type", "application/json");
    } else if (!feed && in.kind != BodyKind::kHtmlBytes) {
      headers.emplace_back("content_type", "text/html; charset=utf-8");
    } else if (warc_ && !in.content_type.empty()) {
      headers.emplace_back("content_type", in.content_type);  // as it was served
    }
    if (in.published_at) {
      headers.emplace_back("published_at", extractors::format_rfc3339(*in.published_at));
    }
    return headers;
  }

  // `line` is the replay line `p` was parsed from (empty for a WARC record).
  void send_input(ParsedInput& p, std::string_view line, Sending& sending) {
    const bool feed = p.input.kind == BodyKind::kFeedText || p.input.kind == BodyKind::kFeedBytes;
    for (const auto& [from, to] : sending.rewrites) {
      if (!feed) break;
      for (auto at = p.input.body.find(from); at != std::string::npos;
           at = p.input.body.find(from, at + to.size())) {
        p.input.body.replace(at, from.size(), to);
      }
    }
    // Already extracted text (a news API's item, an upstream extractor's output) travels as the
    // JSON envelope, with its title, language and dates: as HTML it would lose them.
    const bool envelope = p.input.kind == BodyKind::kText && !line.empty();
    for (int k = 0; k < sending.repeat; ++k) {
      const std::string suffix = k == 0 ? "" : std::to_string(k);
      const std::string url = k == 0 ? p.input.url : p.input.url + "#" + suffix;
      Headers headers = input_headers(p.input, url, k, feed, envelope);
      if (sending.rate > 0) {
        // Paced: the n-th message goes at start + n / rate (the brokers' own pace permitting).
        std::this_thread::sleep_until(
            sending.start + std::chrono::microseconds(
                                static_cast<std::int64_t>(1e6 * sending.sent / sending.rate)));
        rd_kafka_poll(producer_.get(), 0);
        headers.emplace_back("produced_at",
                             std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                std::chrono::system_clock::now().time_since_epoch())
                                                .count()));
      }
      ++sending.sent;
      // The record's timestamp: the time it is sent (0), or with --event-timestamps its event
      // time, as an archive's crawler may stamp it (then the topic's time retention counts
      // from the event time, and deletes a backfill older than it).
      std::int64_t timestamp_ms = 0;
      if (event_timestamps_) {
        if (const auto t = p.input.published_at ? p.input.published_at : p.input.fetched_at) {
          timestamp_ms = *t * 1000;
        }
      }
      std::string value;
      if (envelope) {
        auto j = nlohmann::json::parse(line, nullptr, false);
        j["url"] = url;
        if (!p.input.id.empty()) j["id"] = k == 0 ? p.input.id : p.input.id + "-" + suffix;
        value = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      }
      send(feed ? config_.topics.feeds : config_.topics.pages, url, envelope ? value : p.input.body,
           headers, timestamp_ms);
    }
  }

  bool event_timestamps_ = false;
  const config::Config& config_;
  KafkaHandle producer_;
  static void on_delivery(rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) return;
    auto* self = static_cast<ReplayProducer*>(opaque);
    ++self->delivery_failed_;
    self->note_failure(m->err);
  }
  void note_failure(rd_kafka_resp_err_t e) {
    ++failed_;
    if (first_error_.empty()) first_error_ = rd_kafka_err2str(e);
  }

  std::size_t produced_ = 0;         // queued
  std::size_t delivery_failed_ = 0;  // of those, failed after they were queued
  std::size_t failed_ = 0;
  std::string first_error_;
  bool warc_ = false;
  std::size_t warc_records_ = 0, warc_pages_ = 0;
  std::map<std::string, std::size_t> warc_skipped_, warc_dead_letters_;
};

// The demo's input: the sample pages and feeds plus three poison messages.
std::size_t produce_samples(const std::string& bootstrap, const config::Config& config,
                            const std::string& path, const std::string& feeds_path,
                            const std::vector<std::pair<std::string, std::string>>& rewrites) {
  ReplayProducer producer(bootstrap, config);
  if (!producer.ok()) return 0;
  if (!producer.send_file(path, 1)) {
    log::error("samples_missing", {{"path", path}});
    return 0;
  }
  if (!feeds_path.empty()) producer.send_file(feeds_path, 1, rewrites);
  producer.send_poison();
  return producer.flush();
}

}  // namespace

void block_stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int run_service(const config::Config& config) {
  Service service;
  if (auto code = service.start(config)) return *code;
  StopSignalWatcher watcher([&] { service.daemon->stop(); });
  return service.daemon->run();
}

int run_produce(const config::Config& config, const ProduceOptions& options) {
  if (config.kafka.brokers.empty()) {
    std::fprintf(stderr,
                 "produce: set kafka.brokers (NEWSFLOW_KAFKA__BROKERS) to a running broker\n");
    return 2;
  }
  ReplayProducer producer(config.kafka.brokers, config);
  if (!producer.ok()) return 2;
  producer.stamp_event_times(options.event_timestamps);
  if (!producer.send_file(options.input, std::max(1, options.repeat), {}, options.rate,
                          ProgressLine::mode_for(stderr, options.quiet))) {
    std::fprintf(stderr, "produce: cannot read %s\n", options.input.c_str());
    return 1;
  }
  if (options.poison) producer.send_poison();
  const std::size_t n = producer.flush();
  std::printf("%zu\n", n);
  if (const std::string warc = producer.warc_summary(); !warc.empty()) {
    std::fprintf(stderr, "produce: %s, %zu messages\n", warc.c_str(), n);
  }
  if (producer.failed() > 0) {
    // The count printed is what the brokers took; the rest are not there to be consumed.
    std::fprintf(stderr, "produce: %zu messages not delivered (%s)\n", producer.failed(),
                 producer.first_error().c_str());
    return 1;
  }
  return 0;
}

// The sample blog of feeds.jsonl.gz (https://blog.example/, whose feed only links to its post)
// served from 127.0.0.1, so the demo shows the fetcher end to end without the internet: the post
// is one of the sample pages, so its fetched article comes out as a copy in a known story.
struct DemoSite {
  std::unique_ptr<HttpServer> server;
  std::vector<std::pair<std::string, std::string>> rewrites;

  static DemoSite start(const std::string& samples) {
    DemoSite site;
    std::string post;
    read_lines(samples, [&](std::string_view line) {
      ParsedInput p = parse_replay_line(line);
      if (!p.failure && p.input.kind == BodyKind::kHtmlText) post = p.input.body;
    });
    if (post.empty()) return site;
    auto server = HttpServer::start("127.0.0.1:0",
                                    {{"/posts/1", [post] {
                                        return HttpResponse{200, "text/html; charset=utf-8", post};
                                      }}});
    if (!server) return site;
    site.server = std::move(*server);
    site.rewrites = {
        {"https://blog.example/", "http://127.0.0.1:" + std::to_string(site.server->port()) + "/"}};
    return site;
  }
};

namespace {

// The metrics the demo shows at its end (consumed: summed over partitions).
void print_selected_metrics(const Metrics& metrics) {
  std::printf("\nSelected metrics (consumed: summed over partitions):\n");
  std::istringstream text(prometheus::TextSerializer().Serialize(metrics.registry()->Collect()));
  std::map<std::string, double> consumed_by_topic;
  for (std::string line; std::getline(text, line);) {
    if (line.starts_with("newsflow_messages_consumed_total{")) {
      const auto t = line.find("topic=\"");
      const auto end = t == std::string::npos ? t : line.find('"', t + 7);
      if (end != std::string::npos) {
        consumed_by_topic[line.substr(t + 7, end - t - 7)] +=
            std::strtod(line.c_str() + line.rfind(' ') + 1, nullptr);
      }
    } else if (line.starts_with("newsflow_articles_total") ||
               line.starts_with("newsflow_dlq_total") || line.starts_with("newsflow_fetch_total") ||
               line.starts_with("newsflow_messages_produced")) {
      std::printf("  %s\n", line.c_str());
    }
  }
  for (const auto& [topic, n] : consumed_by_topic) {
    std::printf("  newsflow_messages_consumed_total{topic=\"%s\"} %.0f\n", topic.c_str(), n);
  }
}

}  // namespace

int run_demo(const config::Config& base_config, const DemoOptions& options) {
  const DemoSite site = DemoSite::start(options.samples);
  config::Config config = base_config;
  if (site.server) {
    config.fetch.allow_networks.push_back("127.0.0.1/32");  // the demo site only
    config.fetch.host_delay_ms = 0;
  }
  Service service;
  if (auto code = service.start(config)) return *code;
  const std::size_t produced =
      produce_samples(service.bootstrap, config, options.samples, options.feeds, site.rewrites);
  if (produced == 0) return 2;
  log::info("demo_samples_produced",
            {{"messages", std::to_string(produced)}, {"topic", config.topics.pages}});
  std::atomic<bool> interrupted{false};
  int code = 0;
  std::optional<std::chrono::steady_clock::time_point> first_consumed;
  double processing_seconds = 0;
  {
    StopSignalWatcher watcher([&] {
      interrupted = true;
      service.daemon->stop();
    });
    std::thread runner([&] { code = service.daemon->run(); });
    const auto deadline = std::chrono::steady_clock::now() + 120s;
    while (!interrupted && service.daemon->progress().committed.load() < produced &&
           std::chrono::steady_clock::now() < deadline) {
      if (!first_consumed && service.daemon->progress().consumed.load() > 0) {
        first_consumed = std::chrono::steady_clock::now();
      }
      std::this_thread::sleep_for(10ms);
    }
    processing_seconds =
        first_consumed
            ? std::chrono::duration<double>(std::chrono::steady_clock::now() - *first_consumed)
                  .count()
            : 0.0;
    service.daemon->stop();
    runner.join();
  }
  const Progress& p = service.daemon->progress();
  std::printf("\nnewsflow demo: %zu pages and feeds in (3 of them poison), through Kafka at %s\n",
              produced, service.bootstrap.c_str());
  std::printf("  articles extracted : %llu\n", static_cast<unsigned long long>(p.articles.load()));
  std::printf("  duplicates found   : %llu\n",
              static_cast<unsigned long long>(p.duplicates.load()));
  std::printf("  dead letters       : %llu\n",
              static_cast<unsigned long long>(p.dead_letters.load()));
  std::printf("  stories            : %llu\n", static_cast<unsigned long long>(p.stories.load()));
  std::printf("  offsets committed  : %llu of %zu inputs\n",
              static_cast<unsigned long long>(p.committed.load()), produced);
  if (processing_seconds > 0) {
    std::printf("  throughput         : %.0f inputs/s (first consumed to last committed, %.2f s)\n",
                static_cast<double>(p.committed.load()) / processing_seconds, processing_seconds);
  }
  std::printf("  metrics            : %s\n\n", service.metrics_url(config).c_str());
  std::printf("Largest stories:\n");
  for (const auto& s : service.daemon->pipeline().stories().largest(5)) {
    std::printf("  %3zu articles, %2zu sources  %s\n", s.article_count, s.sources,
                s.title.substr(0, 90).c_str());
  }
  print_selected_metrics(service.metrics);
  std::fflush(stdout);
  if (options.linger_seconds > 0 && !interrupted) {
    std::printf("\nServing %s for %.0f s (Ctrl-C to stop)\n", service.metrics_url(config).c_str(),
                options.linger_seconds);
    std::fflush(stdout);
    std::atomic<bool> stop{false};
    StopSignalWatcher watcher([&] { stop = true; });
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(options.linger_seconds);
    while (!stop && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(100ms);
  }
  return p.committed.load() == produced ? code : 1;
}

}  // namespace newsflow::daemon
