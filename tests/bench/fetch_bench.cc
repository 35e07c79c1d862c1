// Fetcher throughput against a local HTTP server (civetweb on 127.0.0.1, keep-alive): pages/s
// and MB/s for batches of 256 article pages at several per-host concurrency limits.
//   build/tests/bench_fetch
#include <benchmark/benchmark.h>

#include "daemon/pipeline/fetcher.h"
#include "tests/integration/local_http_server.h"

namespace {

using newsflow::testing::LocalHttpServer;

const std::string& page() {
  static const std::string p = [] {
    std::string s = "<html><head><title>Bench</title></head><body><article>";
    while (s.size() < 60 * 1024) {
      s += "<p>A paragraph of a news article as a crawler fetches it, long enough to be "
           "realistic, with names, places and numbers like 2026 in it.</p>";
    }
    return s + "</article></body></html>";
  }();
  return p;
}

void BM_Fetch(benchmark::State& state) {
  static LocalHttpServer server({{"/a/",
                                  [](mg_connection* c, const mg_request_info*) {
                                    LocalHttpServer::send(c, 200, "text/html; charset=utf-8",
                                                          page());
                                  }}},
                                32);
  newsflow::config::FetchConfig options;
  options.allow_networks = {"127.0.0.0/8"};
  options.host_delay_ms = 0;
  options.per_host_concurrency = static_cast<int>(state.range(0));
  options.max_concurrency = static_cast<int>(state.range(0));
  auto fetcher = newsflow::daemon::Fetcher::create(options, nullptr);
  std::vector<std::string> urls;
  for (int i = 0; i < 256; ++i) urls.push_back(server.url("/a/" + std::to_string(i)));
  std::size_t pages = 0, bytes = 0;
  for (auto _ : state) {
    for (const auto& r : (*fetcher)->fetch(urls)) {
      if (!r.ok()) state.SkipWithError(r.detail.c_str());
      ++pages;
      bytes += r.body.size();
    }
  }
  state.counters["pages/s"] =
      benchmark::Counter(static_cast<double>(pages), benchmark::Counter::kIsRate);
  state.counters["MB/s"] =
      benchmark::Counter(static_cast<double>(bytes) / 1e6, benchmark::Counter::kIsRate);
  state.counters["connections"] = static_cast<double>(server.connections());
}
BENCHMARK(BM_Fetch)->Arg(1)->Arg(4)->Arg(16)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
