// Extraction speed over real pages: Gumbo's parse alone beside Finn and MSS end to end.
// Pages: $NEWSFLOW_BENCH_PAGES, else ../shared/data/extraction/aeb/pages.jsonl.gz when present,
// else samples/. tests/bench/extract_compare.sh runs it beside other extractors.
//   build/tests/bench_extract [--benchmark_filter=...]
#include <benchmark/benchmark.h>
#include <gumbo.h>

#include <cstdlib>
#include <filesystem>

#include "daemon/input.h"
#include "extractors/html.h"
#include "extractors/page.h"

namespace {

using namespace newsflow;

const std::vector<std::string>& pages() {
  static const std::vector<std::string> all = [] {
    std::vector<std::string> out;
    std::string path = NEWSFLOW_SOURCE_DIR "/../shared/data/extraction/aeb/pages.jsonl.gz";
    if (!std::filesystem::exists(path)) path = NEWSFLOW_SOURCE_DIR "/samples/pages.jsonl.gz";
    if (const char* given = std::getenv("NEWSFLOW_BENCH_PAGES"); given && *given) path = given;
    daemon::read_lines(path, [&](std::string_view line) {
      auto p = daemon::parse_replay_line(line);
      if (!p.failure) out.push_back(std::move(p.input.body));
    });
    return out;
  }();
  return all;
}

void report(benchmark::State& state, std::size_t bytes) {
  state.counters["pages/s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * pages().size()), benchmark::Counter::kIsRate);
  state.counters["MB/s"] = benchmark::Counter(static_cast<double>(state.iterations() * bytes) / 1e6,
                                              benchmark::Counter::kIsRate);
}

std::size_t total_bytes() {
  std::size_t n = 0;
  for (const auto& p : pages()) n += p.size();
  return n;
}

void BM_GumboParseOnly(benchmark::State& state) {
  for (auto _ : state) {
    for (const auto& html : pages()) {
      GumboOutput* out = gumbo_parse_with_options(&kGumboDefaultOptions, html.data(), html.size());
      benchmark::DoNotOptimize(out);
      gumbo_destroy_output(&kGumboDefaultOptions, out);
    }
  }
  report(state, total_bytes());
}

void BM_GumboParseStripped(benchmark::State& state) {
  std::vector<std::string> stripped;
  std::size_t bytes = 0;
  for (const auto& html : pages()) {
    stripped.push_back(extractors::strip_invisible(html));
    bytes += stripped.back().size();
  }
  for (auto _ : state) {
    for (const auto& html : stripped) {
      GumboOutput* out = gumbo_parse_with_options(&kGumboDefaultOptions, html.data(), html.size());
      benchmark::DoNotOptimize(out);
      gumbo_destroy_output(&kGumboDefaultOptions, out);
    }
  }
  report(state, total_bytes());
  state.counters["kept_bytes_share"] =
      static_cast<double>(bytes) / static_cast<double>(total_bytes());
}

// The parse as extraction does it: invisible content stripped, Gumbo into a per-page arena.
void BM_Parse(benchmark::State& state) {
  for (auto _ : state) {
    for (const auto& html : pages()) benchmark::DoNotOptimize(extractors::parse_tree_only(html));
  }
  report(state, total_bytes());
}

void BM_StripInvisible(benchmark::State& state) {
  for (auto _ : state) {
    for (const auto& html : pages()) benchmark::DoNotOptimize(extractors::strip_invisible(html));
  }
  report(state, total_bytes());
}

void BM_ParsePage(benchmark::State& state) {
  for (auto _ : state) {
    for (const auto& html : pages()) benchmark::DoNotOptimize(extractors::parse_page(html, {}));
  }
  report(state, total_bytes());
}

void BM_Extract(benchmark::State& state, extractors::ExtractMethod method) {
  extractors::ExtractOptions options;
  options.method = method;
  for (auto _ : state) {
    for (const auto& html : pages()) {
      benchmark::DoNotOptimize(extractors::extract_html(html, "https://bench.test/", options));
    }
  }
  report(state, total_bytes());
}

BENCHMARK(BM_GumboParseOnly)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GumboParseStripped)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Parse)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StripInvisible)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ParsePage)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Extract, finn, extractors::ExtractMethod::kFinn)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Extract, mss, extractors::ExtractMethod::kMss)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
