// Dedup speed and memory: signature computation, and insert+query into a window that already
// holds N articles (default 1,000,000), with query latency percentiles and bytes per article.
//   build/tests/bench_dedup [--benchmark_filter=...]
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <random>

#include "dedup/normalize.h"
#include "dedup/window.h"

namespace {

using namespace newsflow::dedup;

// A synthetic normalized article of about 600 words from a 20,000-word vocabulary.
std::string synthetic_article(std::mt19937_64& rng) {
  static const std::vector<std::string> vocab = [] {
    std::vector<std::string> v;
    for (int i = 0; i < 20000; ++i) v.push_back("w" + std::to_string(i * 7919 % 100003));
    return v;
  }();
  std::uniform_int_distribution<std::size_t> pick(0, vocab.size() - 1);
  std::string out;
  for (int i = 0; i < 600; ++i) {
    if (i) out += ' ';
    out += vocab[pick(rng)];
  }
  return out;
}

// Signature plus window insert and query, the whole dedup cost of one article (with the
// weighted scheme's document-frequency update).
void BM_SignatureInsertQuery(benchmark::State& state, SignatureScheme scheme) {
  std::mt19937_64 rng(3);
  std::vector<std::string> texts;
  for (int i = 0; i < 256; ++i) texts.push_back(synthetic_article(rng));
  DedupWindow window;
  TermStats stats;
  const SignatureOptions options{scheme, scheme == SignatureScheme::kWeighted ? 7 : 5, 2};
  std::vector<std::uint64_t> terms;
  std::size_t i = 0;
  for (auto _ : state) {
    const auto t = static_cast<std::int64_t>(i);
    const bool weighted = scheme == SignatureScheme::kWeighted;
    const Fingerprint fp = make_fingerprint(
        texts[i % texts.size()], options, weighted ? &stats : nullptr, weighted ? &terms : nullptr);
    if (weighted) stats.add(terms, t);
    window.observe("a" + std::to_string(i), fp, t);
    ++i;
  }
  state.counters["articles/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_Signature(benchmark::State& state, SignatureScheme scheme) {
  std::mt19937_64 rng(1);
  std::vector<std::string> texts;
  for (int i = 0; i < 256; ++i) texts.push_back(synthetic_article(rng));
  std::size_t i = 0;
  const SignatureOptions options{scheme, 5, 2};
  for (auto _ : state) {
    benchmark::DoNotOptimize(make_fingerprint(texts[i++ % texts.size()], options));
  }
  state.counters["articles/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_WindowInsertQuery(benchmark::State& state) {
  const auto held = static_cast<std::size_t>(state.range(0));
  std::mt19937_64 rng(2);
  // Fingerprints are what the window stores; build them from random phrase sets (fast) rather
  // than from texts.
  auto random_fp = [&rng](std::size_t phrases) {
    std::vector<std::uint64_t> p(phrases);
    for (auto& x : p) x = rng();
    std::sort(p.begin(), p.end());
    Fingerprint fp;
    fp.exact = {rng(), rng()};
    fp.sketch = minhash_sketch(p);
    fp.phrases = static_cast<std::uint32_t>(phrases);
    return fp;
  };
  // Heap in use: small blocks plus mmapped large ones (big vectors and tables).
  const auto heap = [] {
    const struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
  };
  const std::size_t before = heap();
  WindowOptions options;
  options.window_seconds = INT64_MAX / 4;
  DedupWindow window(options);
  for (std::size_t i = 0; i < held; ++i)
    window.observe("h" + std::to_string(i), random_fp(400), static_cast<std::int64_t>(i));
  const std::size_t after = heap();
  std::vector<Fingerprint> queries;
  for (int i = 0; i < 4096; ++i) queries.push_back(random_fp(400));
  std::vector<double> latencies;
  std::size_t i = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(window.observe("q" + std::to_string(i), queries[i % queries.size()],
                                            static_cast<std::int64_t>(held + i)));
    latencies.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    ++i;
  }
  std::sort(latencies.begin(), latencies.end());
  state.counters["articles/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["bytes/article"] =
      static_cast<double>(after - before) / static_cast<double>(std::max<std::size_t>(1, held));
  state.counters["p50_us"] = latencies[latencies.size() / 2];
  state.counters["p99_us"] = latencies[latencies.size() * 99 / 100];
}

// The weighted scheme against document frequencies of a window that has seen 10,000 articles
// (and keeps counting, as the pipeline does).
void BM_SignatureWeighted(benchmark::State& state) {
  std::mt19937_64 rng(1);
  std::vector<std::string> texts;
  for (int i = 0; i < 256; ++i) texts.push_back(synthetic_article(rng));
  TermStats stats;
  for (int i = 0; i < 10000; ++i) {
    stats.add(term_hashes(normalize_text(texts[static_cast<std::size_t>(i) % texts.size()])), i);
  }
  const SignatureOptions options{SignatureScheme::kWeighted, 7, 2};
  std::size_t i = 0;
  std::vector<std::uint64_t> terms;
  for (auto _ : state) {
    const std::string& text = texts[i++ % texts.size()];
    benchmark::DoNotOptimize(make_fingerprint(text, options, &stats, &terms));
    stats.add(terms, static_cast<std::int64_t>(10000 + i));
  }
  state.counters["articles/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

BENCHMARK_CAPTURE(BM_Signature, shingles, SignatureScheme::kShingles);
BENCHMARK(BM_SignatureWeighted);
BENCHMARK_CAPTURE(BM_Signature, spotsigs, SignatureScheme::kSpotSigs);
BENCHMARK_CAPTURE(BM_Signature, sentences, SignatureScheme::kSentences);
BENCHMARK_CAPTURE(BM_Signature, simhash, SignatureScheme::kSimHash);
BENCHMARK_CAPTURE(BM_SignatureInsertQuery, weighted, SignatureScheme::kWeighted);
BENCHMARK_CAPTURE(BM_SignatureInsertQuery, shingles, SignatureScheme::kShingles);
BENCHMARK(BM_WindowInsertQuery)
    ->Arg(100000)
    ->Arg(1000000)
    ->Iterations(100000)
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
