// The dedup window split over S owners, simulated on a real stream (the dev dedup stream when
// ../shared is there, else the sample pages), against one window.
//
// The design (docs/architecture.md, "Beyond one dedup process"): each article is held by one
// owner, its home, chosen by its id (a partition of a compacted topic keyed by article id); a
// query goes to every owner, each judges the article against what it holds (exact fingerprint
// index and LSH buckets of its own articles), and a merger keyed by the article takes the best
// answer (an exact match over a near one, the higher score, on a tie the earlier article) and
// sends the article to its home.
// Owners answer a batch of B articles at a time, so the articles of one batch do not see each
// other in the owners' state; the merger then also judges each against the batch's earlier
// articles (it holds them all), which the simulation does unless --no-batch-check.
//
//   build/tests/bench_sharded_dedup [SHARDS...] [--batch B] [--no-batch-check]
//
// Prints, per S, the share of articles whose verdict (kind and matched article) equals one
// window's, the articles each owner holds at most and the judge calls per article.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <unordered_set>
#include <vector>

#include "config/config.h"
#include "dedup/state.h"
#include "dedup/window.h"
#include "tests/bench/stream_states.h"

namespace {

using namespace newsflow;

// The better of two answers, as one window's judge ranks candidates: exact first (the earlier
// article), then the higher score, on a tie the earlier article.
struct Answer {
  dedup::Verdict verdict;
  std::int64_t time = 0;  // event time of the matched article
};

bool better(const Answer& a, const Answer& b) {
  const bool ea = a.verdict.kind == dedup::DupKind::kExact;
  const bool eb = b.verdict.kind == dedup::DupKind::kExact;
  if (ea != eb) return ea;
  if (a.verdict.kind == dedup::DupKind::kUnique) return false;
  if (b.verdict.kind == dedup::DupKind::kUnique) return true;
  if (!ea && a.verdict.similarity != b.verdict.similarity) {
    return a.verdict.similarity > b.verdict.similarity;
  }
  return a.time < b.time;
}

struct Result {
  std::size_t same = 0, total = 0, max_held = 0;
  double seconds = 0;
};

Result simulate(const std::vector<dedup::ArticleState>& stream, const dedup::WindowOptions& options,
                std::size_t shards, std::size_t batch, bool batch_check) {
  std::vector<dedup::DedupWindow> owners(shards, dedup::DedupWindow(options));
  std::unordered_map<std::string, std::int64_t> time_of;  // matched article -> its event time
  std::unordered_set<std::string> seen;
  Result r;
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t begin = 0; begin < stream.size(); begin += batch) {
    const std::size_t end = std::min(stream.size(), begin + batch);
    // The merger's view of this batch: its earlier articles, judged like an owner's.
    dedup::DedupWindow in_batch(options);
    std::vector<std::pair<std::size_t, dedup::Verdict>> judged;
    for (std::size_t i = begin; i < end; ++i) {
      const dedup::ArticleState& a = stream[i];
      if (!seen.insert(a.id).second) continue;  // a repeat keeps its first verdict
      Answer best;
      for (auto& owner : owners) {
        owner.advance(a.event_time);
        const dedup::Verdict v = owner.judge(a.fp);
        const Answer answer{v, v.of.empty() ? 0 : time_of[v.of]};
        if (better(answer, best)) best = answer;
      }
      if (batch_check) {
        in_batch.advance(a.event_time);
        const dedup::Verdict v = in_batch.judge(a.fp);
        const Answer answer{v, v.of.empty() ? 0 : time_of[v.of]};
        if (better(answer, best)) best = answer;
        in_batch.remember(a.id, a.fp, a.event_time, best.verdict);
      }
      time_of[a.id] = a.event_time;
      judged.emplace_back(i, best.verdict);
    }
    for (const auto& [i, verdict] : judged) {
      const dedup::ArticleState& a = stream[i];
      owners[std::hash<std::string>{}(a.id) % shards].remember(a.id, a.fp, a.event_time, verdict);
      ++r.total;
      r.same += verdict.kind == a.verdict.kind && verdict.of == a.verdict.of;
    }
    for (const auto& owner : owners) r.max_held = std::max(r.max_held, owner.size());
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::size_t> shard_counts;
  std::size_t batch = 1;
  bool batch_check = true;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--batch" && i + 1 < argc) {
      batch = std::max<std::size_t>(1, std::strtoul(argv[++i], nullptr, 10));
    } else if (arg == "--no-batch-check") {
      batch_check = false;
    } else {
      shard_counts.push_back(std::max<std::size_t>(1, std::strtoul(arg.c_str(), nullptr, 10)));
    }
  }
  if (shard_counts.empty()) shard_counts = {1, 2, 4, 8};
  const std::string stream_path = bench::default_stream();
  auto config = config::parse_config("", config::process_environment());
  if (!config) return 2;
  const std::vector<dedup::ArticleState> stream = bench::stream_states(*config, stream_path);
  if (stream.empty()) return 2;
  std::printf("%zu articles of %s; batch %zu%s\n", stream.size(), stream_path.c_str(), batch,
              batch_check ? " (the merger checks each batch within itself)" : "");
  for (const std::size_t s : shard_counts) {
    const Result r = simulate(stream, config->window, s, batch, batch_check);
    std::printf(
        "owners %zu: same verdict as one window %zu/%zu (%.4f); at most %zu articles per owner; "
        "%zu judge calls per article; %.0f articles/s simulated\n",
        s, r.same, r.total, static_cast<double>(r.same) / static_cast<double>(r.total), r.max_held,
        s + (batch_check ? 1 : 0), static_cast<double>(r.total) / r.seconds);
  }
  return 0;
}
