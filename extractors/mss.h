#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "extractors/page.h"
#include "tl/expected.hpp"

namespace newsflow::extractors {

/// A logistic-regression model over hashed block features: P(article | features). Immutable
/// after construction; thread-safe to share.
class MssModel {
 public:
  /// An all-zero model (every block scores 0.5) with 2^bits weights.
  explicit MssModel(int bits = 18);

  /// Parses the text format written by `serialize`: a header line
  /// `newsflow-mss-model 1 <bits>` then one `<index> <weight>` line per non-zero weight.
  static tl::expected<MssModel, std::string> parse(std::string_view text);
  std::string serialize() const;

  /// P(article) of a block with these hashed features.
  double probability(const std::vector<std::uint64_t>& features) const;

  /// The model compiled into the binary (extractors/model/mss_model.txt).
  static const MssModel& builtin();

  int bits() const { return bits_; }
  std::vector<float>& weights() { return weights_; }
  const std::vector<float>& weights() const { return weights_; }

 private:
  int bits_;
  std::vector<float> weights_;
};

/// One labelled block for training.
struct TrainingBlock {
  std::vector<std::uint64_t> features;
  bool article;
  float weight;  ///< importance, e.g. derived from the block's word count
};

/// Options of `train_mss`.
struct TrainOptions {
  int bits = 18;
  int epochs = 12;
  double learning_rate = 0.05;
  double l2 = 1e-6;
  std::uint64_t seed = 1;
};

/// Fits the model with stochastic gradient descent (deterministic for a given seed).
MssModel train_mss(const std::vector<TrainingBlock>& blocks, const TrainOptions& options);

/// Options of segmentation.
struct SegmentOptions {
  /// Blocks inside the chosen run whose P(article) is below this are left out (inline ads and
  /// link boxes inside the article); 0 keeps the run whole.
  double drop_below = 0.15;
  /// Further maximal runs (Ruzzo-Tompa) are kept when their score is at least this share of
  /// the best run's (an article split by a large inline box); >= 1 keeps only the best run.
  double secondary_share = 0.35;
};

/// Scores each block `(P(article) - 0.5) * words` and returns the indices of the blocks of the
/// article: the maximum-sum run(s) of blocks.
std::vector<std::uint32_t> segment_mss(const ParsedPage& page, const MssModel& model,
                                       const SegmentOptions& options);

}  // namespace newsflow::extractors
