// Restore from the state changelog, end to end through Kafka: the state records of a real
// stream (the dev dedup stream when ../shared is there, else the sample pages), replicated under
// new ids and stories to N articles over the window, are produced to `newsflow.state` on an
// in-process mock cluster; a daemon then starts, restoring its window and stories from it as a
// restart or a standby does. Prints articles/s, seconds per million, and the bytes per article
// held, by the allocator's own counters (`mallinfo2`: what is allocated now, not what an
// earlier phase left in malloc's free lists), all-in and for each part of the state (each part
// fed the same records alone).
//
//   build/tests/bench_restore [ARTICLES (200000)] [PARTITIONS (256)] [--no-kafka|--parts-only]
//
// `--no-kafka` skips the mock cluster: only the parts and the pipeline's own apply (10 M
// articles take about 25 GiB of records through Kafka; without it they are generated one at a
// time). `--parts-only` measures the parts alone. The mock cluster keeps about 5 MB per
// partition: give 1 M articles 1200 partitions (records 2.5 GB, the snapshot 1.3 GB).
#include <librdkafka/rdkafka.h>
#include <malloc.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "daemon/kafka/daemon.h"
#include "daemon/kafka/kafka.h"
#include "daemon/ops/metrics.h"
#include "daemon/pipeline/input.h"
#include "daemon/pipeline/pipeline.h"
#include "dedup/boilerplate.h"
#include "dedup/state.h"
#include "dedup/stories.h"
#include "dedup/term_stats.h"
#include "tests/bench/stream_states.h"

namespace {

using namespace newsflow;

// Bytes malloc has handed out and not had back (main arena and mmapped chunks): the state
// restored on this thread.
double heap_bytes() {
  const struct mallinfo2 m = mallinfo2();
  return static_cast<double>(m.uordblks + m.hblkhd);
}

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

// The i-th of N records: a seed of the real stream under a new id and story, spread over 70 hours
// of event time, newest last.
class Records {
 public:
  Records(std::vector<dedup::ArticleState> seeds, std::size_t n)
      : seeds_(std::move(seeds)), n_(n) {}
  std::size_t size() const { return n_; }
  std::size_t seeds() const { return seeds_.size(); }
  dedup::ArticleState operator[](std::size_t i) const {
    dedup::ArticleState s = seeds_[i % seeds_.size()];
    // Four hex digits of the replica: the dev stream's 12-digit ids become 16, as the ids the
    // daemon derives from URLs are (a suffix such as "-17" kept them short of 16 bytes, where
    // strings leave their inline buffer).
    char suffix[24];
    std::snprintf(suffix, sizeof suffix, "%04zx", i / seeds_.size());
    s.seq = i + 1;
    s.id += suffix;
    s.story_id += suffix;
    if (!s.verdict.of.empty()) s.verdict.of += suffix;
    for (auto& m : s.merged_from) m += suffix;
    s.url += std::string("#") + suffix;
    distinct(s, i / seeds_.size());
    const std::int64_t span = 70 * 3600;
    s.event_time = seeds_.front().event_time +
                   static_cast<std::int64_t>(i) * span / static_cast<std::int64_t>(n_);
    return s;
  }

 private:
  std::vector<dedup::ArticleState> seeds_;
  std::size_t n_;
};

// Seconds the parts' `apply` took (without making the records), for `print_parts`.
double apply_seconds = 0;

// Heap bytes `apply` leaves allocated after it has taken every record, per record.
template <typename State, typename Apply>
double bytes_per_article(const Records& records, State& state, Apply apply) {
  const double before = heap_bytes();
  apply_seconds = 0;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const dedup::ArticleState record = records[i];
    const auto t0 = std::chrono::steady_clock::now();
    apply(state, record);
    apply_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  return (heap_bytes() - before) / static_cast<double>(records.size());
}

void print_parts(const config::Config& config, const Records& records, bool parts_only) {
  std::printf(
      "bytes per article held, %zu articles (allocator counters, each part alone), and the "
      "microseconds an article took it:\n",
      records.size());
  double sum = 0;
  auto part = [&sum, &records](const char* name, double bytes) {
    std::printf("  %-34s %7.0f %7.2f us\n", name, bytes,
                apply_seconds * 1e6 / static_cast<double>(records.size()));
    apply_seconds = 0;
    sum += bytes;
  };
  // As a restore from the records alone feeds them: the window's bands made at the end, the
  // boilerplate filter's parts grown in larger steps and made full again at the end (the end in
  // the time and the bytes, as the last record's apply).
  {
    dedup::DedupWindow window(config.window);
    window.defer_bands();
    part("window", bytes_per_article(records, window, [&](auto& w, const dedup::ArticleState& s) {
           w.restore(s.id, s.fp, s.event_time, s.verdict);
           if (s.seq == records.size()) w.build_bands();
         }));
  }
  {
    dedup::BoilerplateFilter filter(config.boilerplate);
    filter.begin_bulk();
    part("boilerplate filter",
         bytes_per_article(records, filter, [&](auto& f, const dedup::ArticleState& s) {
           f.record(s.source, s.url, s.paragraphs, s.event_time);
           if (s.seq == records.size()) f.end_bulk();
         }));
  }
  {
    const double before = heap_bytes();
    auto stats = std::make_unique<dedup::TermStats>(config.window.window_seconds, 8, 20);
    part("document frequencies (fixed)",
         (heap_bytes() - before) / static_cast<double>(records.size()));
  }
  {
    const double before = heap_bytes();
    auto book = std::make_unique<dedup::StoryBook>(config.stories);
    const double fixed = heap_bytes() - before;
    part("story book",
         fixed / static_cast<double>(records.size()) +
             bytes_per_article(records, *book, [](auto& b, const dedup::ArticleState& s) {
               b.assign_terms({s.id, s.url, s.source, s.verdict.kind, s.language}, s.title,
                              s.verdict, s.event_time, dedup::StoryBook::TermList(s.story_terms),
                              s.story_id);
             }));
  }
  std::printf("  %-34s %7.0f\n", "sum", sum);
  if (parts_only) return;
  // The pipeline as a restore fills it, records decoded from their bytes.
  const double before = heap_bytes();
  auto pipeline = std::make_unique<daemon::Pipeline>(config, nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  pipeline->begin_restore();
  for (std::size_t i = 0; i < records.size(); ++i) {
    pipeline->restore(*dedup::decode_state(dedup::encode_state(records[i])));
  }
  pipeline->end_restore();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double held = static_cast<double>(pipeline->window().size());
  std::printf(
      "pipeline (records encoded, decoded and applied, no Kafka): %.0f bytes per article held, "
      "%.0f articles/s (with making the records)\n",
      (heap_bytes() - before) / held, static_cast<double>(records.size()) / s);
  // The same state saved whole and loaded into a new pipeline: what a restore from a snapshot
  // costs instead of applying the records.
  auto t1 = std::chrono::steady_clock::now();
  const std::string snapshot = pipeline->save_state();
  const double saved = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  auto loaded = std::make_unique<daemon::Pipeline>(config, nullptr);
  t1 = std::chrono::steady_clock::now();
  if (!loaded->load_state(snapshot)) {
    std::printf("snapshot: not loaded\n");
    return;
  }
  const double load = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  std::printf(
      "snapshot of the whole state: %.0f bytes per article held, saved in %.2f s, loaded in "
      "%.2f s: %.0f articles/s\n",
      static_cast<double>(snapshot.size()) / held, saved, load, held / load);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  // --parts-only: each part alone, without the whole pipeline and its snapshot (which hold the
  // state twice: 10 M articles need about 18 GB once).
  const bool parts_only = std::erase(args, "--parts-only") > 0;
  const bool kafka = std::erase(args, "--no-kafka") == 0 && !parts_only;
  const std::size_t articles =
      args.size() > 0 ? std::strtoul(args[0].c_str(), nullptr, 10) : 200000;
  const int partitions = args.size() > 1 ? std::atoi(args[1].c_str()) : 256;
  const std::string stream = bench::default_stream();

  auto config = config::parse_config("", config::process_environment());
  if (!config) return 2;
  // Every record held (the bound not reached), so bytes are per article held.
  if (config->window.max_articles > 0 && config->window.max_articles < articles) {
    config->window.max_articles = articles;
  }
  // Real records: the stream through the pipeline.
  const Records records(bench::stream_states(*config, stream), articles);
  if (records.seeds() == 0) return 2;
  print_parts(*config, records, parts_only);
  if (!kafka) return 0;

  // librdkafka's mock cluster keeps about 5 MB per partition: the partitions hold it all.
  const std::string compacted = config->topics.state + ".compacted";
  auto cluster = daemon::EmbeddedCluster::start(
      1, {{config->topics.state, partitions}, {compacted, partitions}});
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
    // Chunks the cluster refused: a restore would find no complete snapshot.
    static std::atomic<std::uint64_t> undelivered{0};
    static std::string first_error;
    undelivered = 0;
    rd_kafka_conf_set_dr_msg_cb(conf, [](rd_kafka_t*, const rd_kafka_message_t* m, void*) {
      if (m->err && undelivered++ == 0) first_error = rd_kafka_err2str(m->err);
    });
    daemon::KafkaHandle producer(rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err));
    for (std::size_t i = 0; i < articles; ++i) {
      const dedup::ArticleState s = records[i];
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
    if (rd_kafka_flush(producer.get(), 600000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      std::printf("snapshot: not all chunks sent within 10 minutes\n");
    }
    if (undelivered > 0) {
      std::printf("snapshot: %llu chunks not delivered (%s)\n",
                  static_cast<unsigned long long>(undelivered.load()), first_error.c_str());
    }
  }
  std::printf(
      "state records: %zu from %zu real articles of %s, %.0f bytes each on average, %d "
      "partitions\n",
      articles, records.seeds(), stream.c_str(), static_cast<double>(bytes) / articles, partitions);

  // The daemon's own start: it restores from the changelog before it subscribes.
  config->kafka.brokers = bootstrap;
  daemon::Metrics metrics;
  const double rss0 = rss_mib();
  const double heap0 = heap_bytes();
  auto owned = std::make_unique<daemon::Daemon>(*config, metrics);
  daemon::Daemon& d = *owned;
  const auto t0 = std::chrono::steady_clock::now();
  if (auto started = d.start(bootstrap); !started) {
    std::fprintf(stderr, "start failed: %s: %s\n", started.error().front().path.c_str(),
                 started.error().front().message.c_str());
    return 1;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double heap1 = heap_bytes();
  const double rss1 = rss_mib();
  const std::size_t held = d.pipeline().window().size();
  std::printf("started with %zu articles restored in %.2f s: %.0f articles/s, %.1f s per million\n",
              held, seconds, static_cast<double>(held) / seconds,
              seconds * 1e6 / static_cast<double>(held));
  std::printf(
      "held %zu articles, %zu stories: %.0f bytes per article held (allocator counters, the "
      "daemon's thread), RSS +%.0f MiB\n",
      held, d.pipeline().stories().size(), (heap1 - heap0) / static_cast<double>(held),
      rss1 - rss0);
  // The same state as a compacted changelog holds it after a snapshot: the snapshot's chunks
  // only, on a topic of their own, restored by a second daemon's start.
  {
    const std::string state = d.pipeline().save_state();
    char err[512];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), err, sizeof err);
    rd_kafka_conf_set(conf, "linger.ms", "50", err, sizeof err);
    // Chunks the cluster refused: a restore would find no complete snapshot.
    static std::atomic<std::uint64_t> undelivered{0};
    static std::string first_error;
    undelivered = 0;
    rd_kafka_conf_set_dr_msg_cb(conf, [](rd_kafka_t*, const rd_kafka_message_t* m, void*) {
      if (m->err && undelivered++ == 0) first_error = rd_kafka_err2str(m->err);
    });
    daemon::KafkaHandle producer(rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err));
    constexpr std::size_t kChunk = 512 * 1024;
    const std::uint64_t chunks = (state.size() + kChunk - 1) / kChunk;
    const std::uint64_t seq = d.pipeline().last_seq();
    for (std::uint64_t i = 0; i < chunks; ++i) {
      const std::string key = dedup::snapshot_key(seq, i);
      const std::string value = dedup::encode_snapshot_chunk(
          seq, i, i + 1 == chunks, std::string_view(state).substr(i * kChunk, kChunk));
      while (rd_kafka_producev(producer.get(), RD_KAFKA_V_TOPIC(compacted.c_str()),
                               RD_KAFKA_V_KEY(key.data(), key.size()),
                               RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                               RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                               RD_KAFKA_V_END) == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        rd_kafka_poll(producer.get(), 10);
      }
    }
    if (rd_kafka_flush(producer.get(), 600000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      std::printf("snapshot: not all chunks sent within 10 minutes\n");
    }
    if (undelivered > 0) {
      std::printf("snapshot: %llu chunks not delivered (%s)\n",
                  static_cast<unsigned long long>(undelivered.load()), first_error.c_str());
    }
    std::printf("snapshot: %zu bytes in %llu chunks (%.0f bytes per article held)\n", state.size(),
                static_cast<unsigned long long>(chunks),
                static_cast<double>(state.size()) / static_cast<double>(held));
  }
  // Gone before the next one joins the group under the same static member id.
  d.stop();
  owned.reset();
  auto after = *config;
  after.topics.state = compacted;
  daemon::Metrics metrics2;
  daemon::Daemon d2(after, metrics2);
  const auto t2 = std::chrono::steady_clock::now();
  if (auto started = d2.start(bootstrap); !started) {
    std::fprintf(stderr, "start failed: %s\n", started.error().front().message.c_str());
    return 1;
  }
  const double s2 = std::chrono::duration<double>(std::chrono::steady_clock::now() - t2).count();
  const std::size_t held2 = d2.pipeline().window().size();
  std::printf(
      "started from the snapshot (a compacted changelog) with %zu articles held in %.2f s: %.0f "
      "articles/s, %.1f s per million%s\n",
      held2, s2, static_cast<double>(held2) / s2, s2 * 1e6 / static_cast<double>(held2),
      held2 == held ? "" : " (NOT the articles held before)");
  d2.stop();
  std::fflush(stdout);
  return held2 == held ? 0 : 1;
}
