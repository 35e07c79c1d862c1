// Restore from the state changelog, end to end through Kafka: the state records of a real
// stream (the dev dedup stream when ../shared is there, else the sample pages), replicated under
// new ids and stories to N articles over the window, are produced to `newsflow.state` on an
// in-process mock cluster; a daemon then restores its window and stories from it, as a restart
// or a standby does. Prints articles/s, seconds per million, and the RSS the restored state takes
// per million articles held.
//
//   build/tests/bench_restore [ARTICLES (200000)] [PARTITIONS (256)]
#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "config/config.h"
#include "daemon/kafka/daemon.h"
#include "daemon/kafka/kafka.h"
#include "daemon/ops/metrics.h"
#include "daemon/pipeline/input.h"
#include "daemon/pipeline/pipeline.h"
#include "dedup/state.h"
#include "tests/bench/stream_states.h"

namespace {

using namespace newsflow;

double rss_mib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("VmRSS:")) return std::strtod(line.c_str() + 6, nullptr) / 1024.0;
  }
  return 0;
}

// A replica is an article of its own: its fingerprint, sketch and terms are moved by the replica
// number (else 64 exact copies of each seed would share every LSH bucket).
void distinct(dedup::ArticleState& s, std::size_t replica) {
  if (replica == 0) return;
  const std::uint64_t r = (replica + 1) * 0x9E3779B97F4A7C15ULL;
  s.fp.exact.high ^= r;
  for (std::size_t k = 0; k < s.fp.sketch.size(); ++k) {
    s.fp.sketch[k] = static_cast<std::uint16_t>(s.fp.sketch[k] ^ (r >> (k % 48)));
  }
  for (auto& t : s.df_terms) t ^= static_cast<std::uint32_t>(r >> 13);
  for (auto& p : s.paragraphs) p ^= r;
  for (auto& [term, w] : s.story_terms) term += std::to_string(replica % 97);
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t articles = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 200000;
  const int partitions = argc > 2 ? std::atoi(argv[2]) : 256;
  const std::string stream = bench::default_stream();

  auto config = config::parse_config("", config::process_environment());
  if (!config) return 2;
  // Real records: the stream through the pipeline.
  const std::vector<dedup::ArticleState> seeds = bench::stream_states(*config, stream);
  if (seeds.empty()) return 2;

  auto cluster = daemon::EmbeddedCluster::start(1, {{config->topics.state, partitions}});
  if (!cluster) {
    std::fprintf(stderr, "%s\n", cluster.error().c_str());
    return 2;
  }
  const std::string bootstrap = (*cluster)->bootstrap();
  std::size_t bytes = 0;
  {
    char err[512];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), err, sizeof err);
    rd_kafka_conf_set(conf, "linger.ms", "50", err, sizeof err);
    daemon::KafkaHandle producer(rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err));
    // Replicas spread over the window: each its own article and story, newest last.
    const std::int64_t base = seeds.front().event_time;
    const std::int64_t span = 70 * 3600;
    for (std::size_t i = 0; i < articles; ++i) {
      dedup::ArticleState s = seeds[i % seeds.size()];
      const std::string suffix = "-" + std::to_string(i / seeds.size());
      s.seq = i + 1;
      s.id += suffix;
      s.story_id += suffix;
      if (!s.verdict.of.empty()) s.verdict.of += suffix;
      for (auto& m : s.merged_from) m += suffix;
      s.url += "#" + suffix;
      distinct(s, i / seeds.size());
      s.event_time =
          base + static_cast<std::int64_t>(i) * span / static_cast<std::int64_t>(articles);
      const std::string value = dedup::encode_state(s);
      bytes += value.size();
      while (rd_kafka_producev(producer.get(), RD_KAFKA_V_TOPIC(config->topics.state.c_str()),
                               RD_KAFKA_V_KEY(s.id.data(), s.id.size()),
                               RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                               RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                               RD_KAFKA_V_END) == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        rd_kafka_poll(producer.get(), 10);
      }
    }
    rd_kafka_flush(producer.get(), 120000);
  }
  std::printf(
      "state records: %zu from %zu real articles of %s, %.0f bytes each on average, %d "
      "partitions\n",
      articles, seeds.size(), stream.c_str(), static_cast<double>(bytes) / articles, partitions);

  {
    // The same records without Kafka: what decoding and applying them costs alone.
    std::vector<std::string> values;
    for (std::size_t i = 0; i < std::min<std::size_t>(articles, 100000); ++i) {
      dedup::ArticleState s = seeds[i % seeds.size()];
      const std::string suffix = "-" + std::to_string(i / seeds.size());
      s.seq = i + 1;
      s.id += suffix;
      s.story_id += suffix;
      s.event_time = seeds.front().event_time + static_cast<std::int64_t>(i);
      distinct(s, i / seeds.size());
      values.push_back(dedup::encode_state(s));
    }
    daemon::Pipeline pipeline(*config, nullptr);
    const auto t0 = std::chrono::steady_clock::now();
    for (const auto& v : values) pipeline.restore(*dedup::decode_state(v));
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("decode and apply alone: %.0f articles/s\n",
                static_cast<double>(values.size()) / s);
  }

  config->kafka.brokers = bootstrap;
  daemon::Metrics metrics;
  const double rss0 = rss_mib();
  daemon::Daemon d(*config, metrics);
  const auto t0 = std::chrono::steady_clock::now();
  auto restored = d.restore_state(bootstrap);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!restored) {
    std::fprintf(stderr, "restore failed: %s\n", restored.error().c_str());
    return 1;
  }
  const double rss1 = rss_mib();
  const std::size_t held = d.pipeline().window().size();
  std::printf("restored %zu articles in %.2f s: %.0f articles/s, %.1f s per million\n", *restored,
              seconds, static_cast<double>(*restored) / seconds,
              seconds * 1e6 / static_cast<double>(*restored));
  std::printf(
      "held %zu articles, %zu stories; window %.0f bytes/article (its own estimate); "
      "RSS +%.0f MiB for the window, stories, document frequencies and boilerplate "
      "filter: %.0f MiB per million articles held (16 MiB of it fixed counters)\n",
      held, d.pipeline().stories().size(),
      static_cast<double>(d.pipeline().window().memory_bytes()) / held, rss1 - rss0,
      (rss1 - rss0) * 1e6 / static_cast<double>(held));
  return 0;
}
