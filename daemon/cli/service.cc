#include "daemon/cli/service.h"

#include <librdkafka/rdkafka.h>
#include <prometheus/text_serializer.h>
#include <signal.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "daemon/cli/produce.h"
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
