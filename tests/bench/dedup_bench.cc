// Dedup speed and memory: signature computation, and insert+query into a window that already
// holds N articles (default 1,000,000), with query latency percentiles and bytes per article.
//   build/tests/bench_dedup [--benchmark_filter=...]
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <random>

#include "dedup/normalize.h"
#include "dedup/stories.h"
#include "dedup/window.h"
#include "tests/bench/stream_states.h"

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

// Raw (not normalized) article text of about 1,800 bytes from shuffled sentences of one script,
// so normalization and word segmentation are in the measured cost.
std::string raw_article(std::mt19937_64& rng, const std::vector<std::string>& sentences) {
  std::string out;
  std::uniform_int_distribution<std::size_t> pick(0, sentences.size() - 1);
  while (out.size() < 1800) out += sentences[pick(rng)];
  return out;
}

const std::vector<std::string>& sentences_of(const std::string& script) {
  static const std::vector<std::string> latin = {
      "The council voted on Tuesday to close the bridge for repairs. ",
      "Residents said the detour would add twenty minutes to their commute. ",
      "The mayor promised that work would finish before the spring floods. ",
      "Engineers found cracks in two of the five supporting piers last year. ",
      "Opposition members asked why the plan had taken so long to approve. ",
      "Shops near the river expect fewer customers during the closure. ",
      "A temporary ferry will run every half hour from the old harbour. ",
      "The regional government will pay for most of the repair costs. "};
  static const std::vector<std::string> chinese = {
      "国家统计局今天发布数据显示，前三季度居民人均可支配收入名义增长百分之六点三。",
      "城镇居民人均可支配收入增长百分之五点二，农村居民收入增长百分之七点三。",
      "分析人士认为，就业形势总体稳定，消费市场持续恢复。",
      "专家表示，下一步应继续稳定就业，拓宽居民增收渠道，促进消费持续扩大。",
      "受冷空气和暖湿气流共同影响，华南地区多地出现强降雨天气。",
      "气象部门发布暴雨预警，提醒公众注意防范城市内涝和山洪灾害。",
      "市政府决定从下周起临时关闭大桥，进行为期三个月的维修。",
      "附近商户担心封桥期间客流减少，希望政府给予一定补贴。"};
  static const std::vector<std::string> japanese = {
      "気象庁によりますと、前線の影響で西日本を中心に大気の状態が非常に不安定になっています。",
      "局地的に雷を伴った非常に激しい雨が降っており、土砂災害に警戒が必要です。",
      "市議会は火曜日、老朽化した橋を修理のため閉鎖することを決めました。",
      "住民からは通勤時間が長くなるとの声が上がっています。",
      "市長は春の増水期までに工事を終えると約束しました。",
      "周辺の商店は閉鎖期間中の客足の減少を心配しています。",
      "臨時の渡し船が旧港から三十分ごとに運航される予定です。",
      "修理費用の大部分は県が負担することになっています。"};
  return script == "zh" ? chinese : script == "ja" ? japanese : latin;
}

// The whole dedup cost of one raw article in a script: normalize (with word segmentation for
// Chinese and Japanese), weighted signature, document frequencies, window insert and query.
void BM_ArticleOfScript(benchmark::State& state, const std::string& script) {
  std::mt19937_64 rng(5);
  std::vector<std::string> texts;
  for (int i = 0; i < 256; ++i) texts.push_back(raw_article(rng, sentences_of(script)));
  DedupWindow window;
  TermStats stats;
  const SignatureOptions options{SignatureScheme::kWeighted, 7, 2};
  std::vector<std::uint64_t> terms;
  std::size_t i = 0;
  for (auto _ : state) {
    const auto t = static_cast<std::int64_t>(i);
    const Fingerprint fp = make_fingerprint(texts[i % texts.size()], options, &stats, &terms);
    stats.add(terms, t);
    window.observe("a" + std::to_string(i), fp, t);
    ++i;
  }
  state.counters["articles/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

// An article's story terms (`StoryBook::terms_of`): whole words or stems (the default), from the
// text normalized once for the fingerprint (as the pipeline does).
void BM_StoryTerms(benchmark::State& state, bool stems) {
  std::mt19937_64 rng(5);
  std::vector<std::string> texts, normalized;
  for (int i = 0; i < 64; ++i) {
    texts.push_back(raw_article(rng, sentences_of("en")) + raw_article(rng, sentences_of("en")));
    normalized.push_back(normalize_text(texts.back()));
  }
  StoryOptions options;
  if (!stems) options.stem_chars = 0;
  const StoryBook book(options);
  std::size_t i = 0, terms = 0;
  for (auto _ : state) {
    const std::size_t k = i++ % 64;
    terms += book.terms_of("Council closes the bridge for repairs", texts[k], normalized[k]).size();
  }
  benchmark::DoNotOptimize(terms);
  state.counters["articles/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK_CAPTURE(BM_StoryTerms, words, false);
BENCHMARK_CAPTURE(BM_StoryTerms, stems, true);

// The story stage of a real stream: every article of the dev stream (or the sample pages) put
// into a fresh story book in order with its verdict and terms (as judged by the pipeline once,
// outside the timing): the candidates' similarity, joins and merges. Per article.
void BM_StoryBookStream(benchmark::State& state) {
  static const std::vector<ArticleState> states = [] {
    newsflow::config::Config c;
    return newsflow::bench::stream_states(c, newsflow::bench::default_stream());
  }();
  const newsflow::config::Config config;
  std::size_t stories = 0;
  for (auto _ : state) {
    StoryBook book(config.stories);
    for (const ArticleState& s : states) {
      const StoryBook::Terms terms(s.story_terms.begin(), s.story_terms.end());
      stories += book.assign_terms({s.id, s.url, s.source, s.verdict.kind, s.language}, s.title,
                                   s.verdict, s.event_time, terms)
                     .article_count;
    }
  }
  benchmark::DoNotOptimize(stories);
  // items_per_second: articles; 1e6 / that is the microseconds per article.
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(states.size()));
}
BENCHMARK(BM_StoryBookStream)->Unit(benchmark::kMillisecond);

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
BENCHMARK_CAPTURE(BM_ArticleOfScript, english, std::string("en"));
BENCHMARK_CAPTURE(BM_ArticleOfScript, chinese, std::string("zh"));
BENCHMARK_CAPTURE(BM_ArticleOfScript, japanese, std::string("ja"));
BENCHMARK_CAPTURE(BM_SignatureInsertQuery, shingles, SignatureScheme::kShingles);
BENCHMARK(BM_WindowInsertQuery)
    ->Arg(100000)
    ->Arg(1000000)
    ->Iterations(100000)
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
