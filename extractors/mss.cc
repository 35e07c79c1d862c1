#include "extractors/mss.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>

namespace newsflow::extractors {

extern const char* const kBuiltinMssModel;

MssModel::MssModel(int bits) : bits_(bits), weights_(std::size_t{1} << bits, 0.0f) {}

tl::expected<MssModel, std::string> MssModel::parse(std::string_view text) {
  auto next_line = [&text]() {
    const auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    return line;
  };
  const std::string_view header = next_line();
  constexpr std::string_view kMagic = "newsflow-mss-model 1 ";
  if (!header.starts_with(kMagic)) return tl::unexpected(std::string("not an MSS model file"));
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
    const auto space = line.find(' ');
    std::size_t index = 0;
    if (space == std::string_view::npos ||
        std::from_chars(line.data(), line.data() + space, index).ec != std::errc() ||
        index >= model.weights_.size()) {
      return tl::unexpected("bad model line " + std::to_string(line_no));
    }
    // from_chars for float is in GCC 11+.
    float w = 0;
    if (std::from_chars(line.data() + space + 1, line.data() + line.size(), w).ec != std::errc()) {
      return tl::unexpected("bad weight on model line " + std::to_string(line_no));
    }
    model.weights_[index] = w;
  }
  return model;
}

std::string MssModel::serialize() const {
  std::string out = "newsflow-mss-model 1 " + std::to_string(bits_) + "\n";
  char buf[64];
  for (std::size_t i = 0; i < weights_.size(); ++i) {
    if (weights_[i] == 0.0f) continue;
    std::snprintf(buf, sizeof buf, "%zu %.6g\n", i, static_cast<double>(weights_[i]));
    out += buf;
  }
  return out;
}

double MssModel::probability(const std::vector<std::uint64_t>& features) const {
  const std::uint64_t mask = (std::uint64_t{1} << bits_) - 1;
  double z = 0;
  for (const std::uint64_t f : features) z += weights_[f & mask];
  return 1.0 / (1.0 + std::exp(-z));
}

const MssModel& MssModel::builtin() {
  static const MssModel model = [] {
    auto m = parse(kBuiltinMssModel);
    return m ? std::move(*m) : MssModel();
  }();
  return model;
}

MssModel train_mss(const std::vector<TrainingBlock>& blocks, const TrainOptions& options) {
  MssModel model(options.bits);
  auto& w = model.weights();
  const std::uint64_t mask = (std::uint64_t{1} << options.bits) - 1;
  std::vector<std::size_t> order(blocks.size());
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(options.seed);
  for (int epoch = 0; epoch < options.epochs; ++epoch) {
    std::shuffle(order.begin(), order.end(), rng);
    const double lr = options.learning_rate / (1.0 + epoch * 0.5);
    for (const std::size_t i : order) {
      const TrainingBlock& b = blocks[i];
      double z = 0;
      for (const auto f : b.features) z += w[f & mask];
      const double p = 1.0 / (1.0 + std::exp(-z));
      const double g = (p - (b.article ? 1.0 : 0.0)) * b.weight;
      for (const auto f : b.features) {
        float& wf = w[f & mask];
        wf -= static_cast<float>(lr * (g + options.l2 * wf));
      }
    }
  }
  return model;
}

std::vector<std::uint32_t> segment_mss(const ParsedPage& page, const MssModel& model,
                                       const SegmentOptions& options) {
  const std::size_t n = page.blocks.size();
  std::vector<double> prob(n), score(n);
  double max_prob = 0;
  for (std::size_t i = 0; i < n; ++i) {
    prob[i] = model.probability(page.blocks[i].features);
    if (page.blocks[i].word_count() > 0) max_prob = std::max(max_prob, prob[i]);
  }
  // A page where no block looks like an article still has a most article-like region: centre
  // the scores on half the best probability instead of returning nothing.
  const double centre = max_prob > 0.5 ? 0.5 : max_prob / 2;
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

}  // namespace newsflow::extractors
