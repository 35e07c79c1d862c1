#include "extractors/mss.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>

#include "extractors/internal/hash.h"

namespace newsflow::extractors {

extern const char* const kBuiltinMssModel;

MssModel::MssModel(int bits)
    : bits_(bits), stage1_(std::size_t{1} << bits, 0.0f), stage2_(std::size_t{1} << bits, 0.0f) {}

namespace {

double logistic(const std::vector<float>& w, const std::vector<std::uint64_t>& features) {
  const std::uint64_t mask = w.size() - 1;
  double z = 0;
  for (const std::uint64_t f : features) z += w[f & mask];
  return 1.0 / (1.0 + std::exp(-z));
}

void sgd(std::vector<float>& w, const std::vector<const std::vector<std::uint64_t>*>& features,
         const std::vector<const TrainingBlock*>& blocks, const TrainOptions& options) {
  const std::uint64_t mask = w.size() - 1;
  std::vector<std::size_t> order(blocks.size());
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(options.seed);
  // With `average`, the weights at the end of each epoch of the second half are averaged.
  std::vector<double> sum;
  int averaged = 0;
  const int average_from = options.average ? options.epochs / 2 : options.epochs;
  for (int epoch = 0; epoch < options.epochs; ++epoch) {
    if (epoch > average_from) {
      if (sum.empty()) sum.assign(w.size(), 0.0);
      for (std::size_t k = 0; k < w.size(); ++k) sum[k] += w[k];
      ++averaged;
    }
    std::shuffle(order.begin(), order.end(), rng);
    const double lr = options.learning_rate / (1.0 + epoch * 0.5);
    for (const std::size_t i : order) {
      const TrainingBlock& b = *blocks[i];
      if (b.weight <= 0) continue;
      const auto& f = *features[i];
      const double g = (logistic(w, f) - (b.article ? 1.0 : 0.0)) * b.weight;
      for (const auto h : f) {
        float& wf = w[h & mask];
        wf -= static_cast<float>(lr * (g + options.l2 * wf));
      }
    }
  }
  if (averaged > 0) {
    for (std::size_t k = 0; k < w.size(); ++k) sum[k] += w[k];
    ++averaged;
    for (std::size_t k = 0; k < w.size(); ++k) w[k] = static_cast<float>(sum[k] / averaged);
  }
}

int bucket10(double p) { return std::clamp(static_cast<int>(p * 10), 0, 9); }

}  // namespace

namespace {

// The hashes of every stage-2 context feature, computed once from their names: a block's context
// features are then looked up instead of being formatted and hashed per block.
struct ContextHashes {
  static constexpr int kNone = 10;  // bucket index of "no block there"
  std::uint64_t single[7][11];      // s0, s-2, s-1, s1, s2, smaxb, smaxa by bucket (or none)
  std::uint64_t s3[3][3][3];        // levels of the previous, this and the next block
  std::uint64_t sba[3][3][3];       // levels of the best before, this and the best after
  std::uint64_t bias;
};

const ContextHashes& context_hashes() {
  static const ContextHashes hashes = [] {
    ContextHashes h{};
    const char* const keys[] = {"s0=", "s-2=", "s-1=", "s1=", "s2=", "smaxb=", "smaxa="};
    const char* const levels[] = {"lo", "mid", "hi"};
    for (int k = 0; k < 7; ++k) {
      for (int b = 0; b < 11; ++b) {
        h.single[k][b] =
            internal::fnv1a(keys[k] + (b == ContextHashes::kNone ? "none" : std::to_string(b)));
      }
    }
    for (int a = 0; a < 3; ++a) {
      for (int b = 0; b < 3; ++b) {
        for (int c = 0; c < 3; ++c) {
          const std::string triple = std::string(levels[a]) + "/" + levels[b] + "/" + levels[c];
          h.s3[a][b][c] = internal::fnv1a("s3=" + triple);
          h.sba[a][b][c] = internal::fnv1a("sba=" + triple);
        }
      }
    }
    h.bias = internal::fnv1a("s2bias");
    return h;
  }();
  return hashes;
}

int bucket_or_none(double p) { return p < 0 ? ContextHashes::kNone : bucket10(p); }
int level3(double p) { return p < 0.3 ? 0 : p < 0.7 ? 1 : 2; }

}  // namespace

ContextFeatures context_features(const std::vector<double>& stage1, std::size_t i) {
  const auto at = [&](std::ptrdiff_t d) -> double {
    const std::ptrdiff_t j = static_cast<std::ptrdiff_t>(i) + d;
    return j < 0 || j >= static_cast<std::ptrdiff_t>(stage1.size())
               ? -1.0
               : stage1[static_cast<std::size_t>(j)];
  };
  const ContextHashes& h = context_hashes();
  ContextFeatures out;
  std::size_t n = 0;
  out[n++] = h.single[0][bucket_or_none(at(0))];
  int key = 1;
  for (int d : {-2, -1, 1, 2}) out[n++] = h.single[key++][bucket_or_none(at(d))];
  double best_before = 0, best_after = 0;
  for (int d = 1; d <= 3; ++d) {
    best_before = std::max(best_before, at(-d));
    best_after = std::max(best_after, at(d));
  }
  out[n++] = h.single[5][bucket_or_none(best_before)];
  out[n++] = h.single[6][bucket_or_none(best_after)];
  out[n++] = h.s3[level3(at(-1))][level3(at(0))][level3(at(1))];
  out[n++] = h.sba[level3(best_before)][level3(at(0))][level3(best_after)];
  out[n++] = h.bias;
  return out;
}

void append_context_features(const std::vector<double>& stage1, std::size_t i,
                             std::vector<std::uint64_t>& features) {
  const ContextFeatures context = context_features(stage1, i);
  features.insert(features.end(), context.begin(), context.end());
}

tl::expected<MssModel, std::string> MssModel::parse(std::string_view text) {
  auto next_line = [&text]() {
    const auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    return line;
  };
  const std::string_view header = next_line();
  constexpr std::string_view kMagic = "newsflow-mss-model 2 ";
  if (!header.starts_with(kMagic)) return tl::unexpected(std::string("not an MSS model file (v2)"));
  int bits = 0;
  const auto b = header.substr(kMagic.size());
  if (std::from_chars(b.data(), b.data() + b.size(), bits).ec != std::errc() || bits < 8 ||
      bits > 24) {
    return tl::unexpected(std::string("bad model header: ") + std::string(header));
  }
  MssModel model(bits);
  std::size_t line_no = 1;
  while (!text.empty()) {
    const std::string_view line = next_line();
    ++line_no;
    if (line.empty()) continue;
    int stage = 0;
    std::size_t index = 0;
    float w = 0;
    const char* p = line.data();
    const char* end = line.data() + line.size();
    auto r1 = std::from_chars(p, end, stage);
    if (r1.ec != std::errc() || (stage != 1 && stage != 2) || r1.ptr == end) {
      return tl::unexpected("bad model line " + std::to_string(line_no));
    }
    auto r2 = std::from_chars(r1.ptr + 1, end, index);
    if (r2.ec != std::errc() || index >= model.stage1_.size() || r2.ptr == end) {
      return tl::unexpected("bad model line " + std::to_string(line_no));
    }
    if (std::from_chars(r2.ptr + 1, end, w).ec != std::errc()) {
      return tl::unexpected("bad weight on model line " + std::to_string(line_no));
    }
    (stage == 1 ? model.stage1_ : model.stage2_)[index] = w;
    if (stage == 2) model.has_stage2_ = true;
  }
  if (model.has_stage2_) model.pair_stages();
  return model;
}

std::string MssModel::serialize() const {
  std::string out = "newsflow-mss-model 2 " + std::to_string(bits_) + "\n";
  char buf[64];
  for (int stage : {1, 2}) {
    const auto& w = stage == 1 ? stage1_ : stage2_;
    if (stage == 2 && !has_stage2_) break;
    for (std::size_t i = 0; i < w.size(); ++i) {
      if (w[i] == 0.0f) continue;
      std::snprintf(buf, sizeof buf, "%d %zu %.6g\n", stage, i, static_cast<double>(w[i]));
      out += buf;
    }
  }
  return out;
}

double MssModel::stage1(const std::vector<std::uint64_t>& features) const {
  return logistic(stage1_, features);
}

void MssModel::enable_stage2() {
  has_stage2_ = true;
  pair_stages();
}

void MssModel::pair_stages() {
  paired_.resize(stage1_.size());
  for (std::size_t k = 0; k < stage1_.size(); ++k) paired_[k] = {stage1_[k], stage2_[k]};
}

std::vector<double> MssModel::probabilities(const ParsedPage& page) const {
  std::vector<double> p1(page.blocks.size());
  if (!has_stage2_) {
    for (std::size_t i = 0; i < p1.size(); ++i) p1[i] = stage1(page.blocks[i].features);
    return p1;
  }
  // Both stages' sums over the block's own features in one pass (the two weight lookups of a
  // feature overlap in memory); stage 2 then adds the context of the stage-1 probabilities.
  const std::uint64_t mask = stage1_.size() - 1;
  std::vector<double> z2(p1.size());
  for (std::size_t i = 0; i < p1.size(); ++i) {
    double z1 = 0, z = 0;
    if (paired_.empty()) {
      for (const std::uint64_t f : page.blocks[i].features) {
        z1 += stage1_[f & mask];
        z += stage2_[f & mask];
      }
    } else {
      for (const std::uint64_t f : page.blocks[i].features) {
        const std::array<float, 2>& w = paired_[f & mask];
        z1 += w[0];
        z += w[1];
      }
    }
    p1[i] = 1.0 / (1.0 + std::exp(-z1));
    z2[i] = z;
  }
  for (std::size_t i = 0; i < p1.size(); ++i) {
    double z = z2[i];
    for (const std::uint64_t f : context_features(p1, i)) z += stage2_[f & mask];
    z2[i] = 1.0 / (1.0 + std::exp(-z));
  }
  return z2;
}

const MssModel& MssModel::builtin() {
  static const MssModel model = [] {
    auto m = parse(kBuiltinMssModel);
    return m ? std::move(*m) : MssModel();
  }();
  return model;
}

MssModel train_mss(const std::vector<std::vector<TrainingBlock>>& pages,
                   const TrainOptions& options) {
  MssModel model(options.bits);
  auto collect = [&](auto keep_page, std::vector<const std::vector<std::uint64_t>*>& features,
                     std::vector<const TrainingBlock*>& blocks) {
    for (std::size_t p = 0; p < pages.size(); ++p) {
      if (!keep_page(p)) continue;
      for (const auto& b : pages[p]) {
        features.push_back(&b.features);
        blocks.push_back(&b);
      }
    }
  };
  // Stage 1 on everything.
  {
    std::vector<const std::vector<std::uint64_t>*> f;
    std::vector<const TrainingBlock*> b;
    collect([](std::size_t) { return true; }, f, b);
    sgd(model.weights(1), f, b, options);
  }
  // Stage-1 probabilities cross-fitted over 3 folds of pages.
  constexpr std::size_t kFolds = 3;
  std::vector<std::vector<double>> crossfit(pages.size());
  for (std::size_t fold = 0; fold < kFolds; ++fold) {
    std::vector<const std::vector<std::uint64_t>*> f;
    std::vector<const TrainingBlock*> b;
    collect([&](std::size_t p) { return p % kFolds != fold; }, f, b);
    std::vector<float> w(model.weights(1).size(), 0.0f);
    sgd(w, f, b, options);
    for (std::size_t p = fold; p < pages.size(); p += kFolds) {
      for (const auto& block : pages[p]) crossfit[p].push_back(logistic(w, block.features));
    }
  }
  // Stage 2 on block features plus the context of cross-fitted probabilities.
  std::vector<std::vector<std::uint64_t>> stage2_features;
  std::vector<const TrainingBlock*> blocks;
  for (std::size_t p = 0; p < pages.size(); ++p) {
    for (std::size_t i = 0; i < pages[p].size(); ++i) {
      stage2_features.push_back(pages[p][i].features);
      append_context_features(crossfit[p], i, stage2_features.back());
      blocks.push_back(&pages[p][i]);
    }
  }
  std::vector<const std::vector<std::uint64_t>*> f;
  for (const auto& v : stage2_features) f.push_back(&v);
  sgd(model.weights(2), f, blocks, options);
  model.enable_stage2();
  return model;
}

namespace {

// A page where no block looks like an article still has a most article-like region: the scores
// are centred on 3/4 of the best probability instead of 0.5 then. The best is taken over blocks
// of five words or more when there are any: a one-word link or label at 0.3 must not outweigh a
// paragraph at 0.2.
double centre_of(const ParsedPage& page, const std::vector<double>& prob) {
  double max_prob = 0, max_prob_text = 0;
  for (std::size_t i = 0; i < page.blocks.size(); ++i) {
    const std::uint32_t words = page.blocks[i].word_count();
    if (words > 0) max_prob = std::max(max_prob, prob[i]);
    if (words >= 5) max_prob_text = std::max(max_prob_text, prob[i]);
  }
  return max_prob > 0.5 ? 0.5 : (max_prob_text > 0 ? max_prob_text : max_prob) * 0.75;
}

// The blocks of the best maximal-scoring run of `(prob - centre) * words` (and of the runs close
// enough to it, `secondary_share`), without the blocks below `drop_below` inside it.
std::vector<std::uint32_t> best_runs(const ParsedPage& page, const std::vector<double>& prob,
                                     double centre, const SegmentOptions& options);

}  // namespace

std::vector<std::uint32_t> segment_mss(const ParsedPage& page, const MssModel& model,
                                       const SegmentOptions& options) {
  const std::size_t n = page.blocks.size();
  const std::vector<double> all = model.probabilities(page);
  std::vector<double> prob = all;
  bool comments_dropped = false;
  if (options.drop_comments) {
    bool any_left = false;
    for (std::size_t i = 0; i < n; ++i) {
      if (page.blocks[i].in_comments) {
        comments_dropped = comments_dropped || prob[i] > 0;
        prob[i] = 0;
      } else if (page.blocks[i].word_count() > 0) {
        any_left = true;
      }
    }
    if (!any_left) {
      prob = all;
      comments_dropped = false;
    }
  }
  std::vector<std::uint32_t> out = best_runs(page, prob, centre_of(page, prob), options);
  if (options.min_run_words == 0) return out;
  // A tiny run where the page holds far more: first the blocks the comment rule took away (a
  // forum thread, a comment's permalink: the comments are the article), then the long blocks
  // the model doubted (a login prompt or a browser notice trusted more than the article).
  auto words_of = [&page](const std::vector<std::uint32_t>& blocks) {
    std::uint32_t words = 0;
    for (const std::uint32_t i : blocks) words += page.blocks[i].word_count();
    return words;
  };
  const std::uint32_t chosen = words_of(out);
  if (chosen >= options.min_run_words) return out;
  const std::uint32_t enough = std::max(options.min_run_words, 4 * chosen);
  if (comments_dropped) {
    std::vector<std::uint32_t> with_comments = best_runs(page, all, centre_of(page, all), options);
    if (words_of(with_comments) >= enough) return with_comments;
  }
  std::uint32_t long_words = 0;
  double max_prob_long = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t words = page.blocks[i].word_count();
    if (words < 20 || prob[i] <= 0) continue;
    long_words += words;
    max_prob_long = std::max(max_prob_long, prob[i]);
  }
  if (long_words < enough || max_prob_long * 0.75 >= centre_of(page, prob)) return out;
  std::vector<std::uint32_t> lowered = best_runs(page, prob, max_prob_long * 0.75, options);
  return words_of(lowered) > chosen ? lowered : out;
}

namespace {

std::vector<std::uint32_t> best_runs(const ParsedPage& page, const std::vector<double>& prob,
                                     double centre, const SegmentOptions& options) {
  const std::size_t n = page.blocks.size();
  std::vector<double> score(n);
  for (std::size_t i = 0; i < n; ++i) score[i] = (prob[i] - centre) * page.blocks[i].word_count();
  // All maximal-scoring disjoint runs (Ruzzo & Tompa 1999), linear time.
  struct Run {
    std::size_t begin, end;  // [begin, end)
    double left, right;      // cumulative sum before begin / at end
  };
  std::vector<Run> runs;
  double cumulative = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double s = score[i];
    const double before = cumulative;
    cumulative += s;
    if (s <= 0) continue;
    Run run{i, i + 1, before, cumulative};
    while (true) {
      // The rightmost earlier run whose left cumulative is below ours.
      std::ptrdiff_t j = static_cast<std::ptrdiff_t>(runs.size()) - 1;
      while (j >= 0 && runs[static_cast<std::size_t>(j)].left >= run.left) --j;
      if (j < 0 || runs[static_cast<std::size_t>(j)].right >= run.right) {
        runs.push_back(run);
        break;
      }
      // Merge runs j..end into the new one.
      run.begin = runs[static_cast<std::size_t>(j)].begin;
      run.left = runs[static_cast<std::size_t>(j)].left;
      runs.resize(static_cast<std::size_t>(j));
    }
  }
  if (runs.empty()) return {};
  double best = 0;
  for (const auto& r : runs) best = std::max(best, r.right - r.left);
  std::vector<std::uint32_t> out;
  for (const auto& r : runs) {
    const double s = r.right - r.left;
    if (s < best && s < best * options.secondary_share) continue;
    for (std::size_t i = r.begin; i < r.end; ++i) {
      if (page.blocks[i].word_count() == 0) continue;
      if (prob[i] < options.drop_below * centre * 2) continue;
      out.push_back(static_cast<std::uint32_t>(i));
    }
  }
  return out;
}

}  // namespace

}  // namespace newsflow::extractors
