// Extraction speed over real pages: Gumbo's parse alone beside Finn and MSS end to end.
// Pages: $NEWSFLOW_BENCH_PAGES, else ../shared/data/extraction/aeb/pages.jsonl.gz when present,
// else samples/. tests/bench/extract_compare.sh runs it beside other extractors.
//   build/tests/bench_extract [--benchmark_filter=...]
#include <benchmark/benchmark.h>
#include <gumbo.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "daemon/pipeline/input.h"
#include "extractors/dates.h"
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

// As the daemon runs it: the page decoded to UTF-8 first (outside the timing; the decoder has
// validated it), so the extraction does not validate it again. Extraction minus BM_Parse here is
// what the MSS stage itself adds to the parse.
void BM_ExtractDecoded(benchmark::State& state) {
  std::vector<extractors::Decoded> decoded;
  for (const auto& html : pages()) {
    if (auto d = extractors::decode_to_utf8(html, "text/html; charset=utf-8")) {
      decoded.push_back(std::move(*d));
    }
  }
  for (auto _ : state) {
    for (const auto& d : decoded) {
      benchmark::DoNotOptimize(extractors::extract_html(d, "https://bench.test/", {}));
    }
  }
  report(state, total_bytes());
}

// The MSS stage's share over the parse, measured interleaved (parse all pages, then extract all
// pages, in every iteration) so that drift of the machine's speed between separate benchmarks
// does not enter the ratio. Counters: parse and extract milliseconds per page, and
// stage_over_parse = (extract - parse) / parse for raw pages (validated as UTF-8 here) and for
// decoded pages (validated by the decoder, as the daemon runs).
void BM_MssStageOverParse(benchmark::State& state) {
  using Clock = std::chrono::steady_clock;
  std::vector<extractors::Decoded> decoded;
  for (const auto& html : pages()) {
    if (auto d = extractors::decode_to_utf8(html, "text/html; charset=utf-8")) {
      decoded.push_back(std::move(*d));
    }
  }
  double parse = 0, raw = 0, dec = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    for (const auto& html : pages()) benchmark::DoNotOptimize(extractors::parse_tree_only(html));
    const auto t1 = Clock::now();
    for (const auto& html : pages()) {
      benchmark::DoNotOptimize(extractors::extract_html(html, "https://bench.test/", {}));
    }
    const auto t2 = Clock::now();
    for (const auto& d : decoded) {
      benchmark::DoNotOptimize(extractors::extract_html(d, "https://bench.test/", {}));
    }
    const auto t3 = Clock::now();
    parse += std::chrono::duration<double>(t1 - t0).count();
    raw += std::chrono::duration<double>(t2 - t1).count();
    dec += std::chrono::duration<double>(t3 - t2).count();
  }
  const double n = static_cast<double>(state.iterations() * pages().size());
  state.counters["parse_ms"] = parse / n * 1e3;
  state.counters["extract_ms"] = raw / n * 1e3;
  state.counters["stage_over_parse"] = (raw - parse) / parse;
  state.counters["stage_over_parse_decoded"] = (dec - parse) / parse;
}

// The date scan's worst inputs (issue 52): 4 MB of one glued shape, a date's start at every
// token and no date; MB/s of text scanned (the target: over 3.3 MB/s, under 0.3 s per MB).
void BM_TextDatesGlued(benchmark::State& state, std::string_view piece) {
  std::string text;
  while (text.size() < (std::size_t{4} << 20)) text += piece;
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        extractors::find_text_dates(text, extractors::SlashOrder::kDayFirst, 256));
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}

BENCHMARK_CAPTURE(BM_TextDatesGlued, dotted, "28.09.2019.")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TextDatesGlued, iso, "2019-09-28")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TextDatesGlued, slashes, "28/09/2019")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TextDatesGlued, dots, "1.2.3.4.5.")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TextDatesGlued, short_years, "28.09.19.")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TextDatesGlued, month_names, "28Juni2019")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TextDatesGlued, letters_digits, "a1.")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GumboParseOnly)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GumboParseStripped)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Parse)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StripInvisible)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ParsePage)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Extract, finn, extractors::ExtractMethod::kFinn)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Extract, mss, extractors::ExtractMethod::kMss)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ExtractDecoded)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MssStageOverParse)->Unit(benchmark::kMillisecond)->MinTime(3);

}  // namespace

BENCHMARK_MAIN();
