#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "extractors/page.h"
#include "tl/expected.hpp"

namespace newsflow::extractors {

/// A two-stage logistic-regression model over hashed block features. Stage 1 gives
/// P(article | block features); stage 2 sees the block's features plus the stage-1
/// probabilities of its neighbours (a stacked, contextual classifier), so a paragraph between
/// confident paragraphs is lifted and a lone link box among them is pushed down. Immutable after
/// construction; thread-safe to share.
class MssModel {
 public:
  /// An all-zero model (every block scores 0.5) with 2^bits weights per stage.
  explicit MssModel(int bits = 18);

  /// Parses the text format written by `serialize`: a header line
  /// `newsflow-mss-model 2 <bits>` then one `<stage> <index> <weight>` line per non-zero weight.
  static tl::expected<MssModel, std::string> parse(std::string_view text);
  std::string serialize() const;

  /// Stage-1 P(article) of a block with these hashed features.
  double stage1(const std::vector<std::uint64_t>& features) const;

  /// P(article) of every block of the page (both stages).
  std::vector<double> probabilities(const ParsedPage& page) const;

  /// The model compiled into the binary (extractors/model/mss_model.txt).
  static const MssModel& builtin();

  int bits() const { return bits_; }
  std::vector<float>& weights(int stage) {
    paired_.clear();  // may change: read from the stages until enable_stage2 pairs them again
    return stage == 1 ? stage1_ : stage2_;
  }
  /// Marks stage 2 as trained (an untrained stage 2 is skipped).
  void enable_stage2();

 private:
  void pair_stages();

  int bits_;
  std::vector<float> stage1_;
  std::vector<float> stage2_;
  /// Both stages' weights of each index side by side: scoring a block looks up both weights of
  /// each of its ~100 features, at random places in 1 MiB tables; side by side, one cache line
  /// brings both.
  std::vector<std::array<float, 2>> paired_;
  bool has_stage2_ = false;
};

/// The stage-2 context features of block `i` given stage-1 probabilities of all blocks: the
/// buckets of its own and its neighbours' probabilities, the best within three blocks either
/// side, and coarse levels of those.
using ContextFeatures = std::array<std::uint64_t, 10>;
ContextFeatures context_features(const std::vector<double>& stage1, std::size_t i);

/// `context_features` appended to `features`.
void append_context_features(const std::vector<double>& stage1, std::size_t i,
                             std::vector<std::uint64_t>& features);

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
  double learning_rate = 0.02;
  /// Shrinks a weight at every occurrence of its feature (frequent features the most), and
  /// `average` returns the mean of the weights at the end of each epoch of the second half
  /// (Polyak-Ruppert averaging). Chosen on the k-fold and leave-one-set-out figures together
  /// (AEB and trafilatura sets, mean of fold seeds 0-2; k-fold AEB / trafilatura, then trained
  /// on trafilatura only -> AEB, on AEB only -> trafilatura) and the held-out-template dedup
  /// figures (pairwise F1 / story B-cubed, tests/bench/dedup_heldout_templates.sh):
  ///   l2 1e-6, no averaging (until 2026-11): 0.9679 / 0.9209, 0.9575 / 0.8643 (0.8586-0.8753
  ///     by seed); 0.9898 / 0.9908
  ///   averaging, l2 0.1: 0.9714 / 0.9254, 0.9628 / 0.8859; 0.9947 / 0.9914
  ///   averaging, l2 0.2: 0.9701 / 0.9247, 0.9644 / 0.8905; 0.9947 / 0.9914
  ///   averaging, l2 0.5: 0.9705 / 0.9228, 0.9632 / 0.8955; 0.9963 / 0.9902
  ///   averaging, l2 1: 0.9701 / 0.9197, 0.9621 / 0.8955
  /// Stronger shrinking carries over to unseen families better but keeps more short furniture
  /// inside the article (a share bar, an inline advertisement) at 0.5 and above.
  double l2 = 0.2;
  bool average = true;
  std::uint64_t seed = 1;
};

/// Fits both stages with stochastic gradient descent (deterministic for a given seed). `pages`
/// holds every page's blocks in document order (weight 0 for unlabelled blocks, which still
/// give context). Stage 2 is trained on stage-1 probabilities cross-fitted over 3 folds of
/// pages, so it learns how much to trust stage 1 on unseen pages.
MssModel train_mss(const std::vector<std::vector<TrainingBlock>>& pages,
                   const TrainOptions& options);

/// Options of segmentation.
struct SegmentOptions {
  /// Blocks inside the chosen run whose P(article) is below this are left out (inline ads and
  /// link boxes inside the article); 0 keeps the run whole. Cross-validated (mean of three fold
  /// splits, AEB / trafilatura F1): 0.15: 0.952 / 0.907, 0.25: 0.953 / 0.911, 0.4: 0.953 /
  /// 0.913, 0.5: 0.953 / 0.913, 0.6: 0.951 / 0.911.
  double drop_below = 0.4;
  /// Further maximal runs (Ruzzo-Tompa) are kept when their score is at least this share of
  /// the best run's (an article split by a large inline box); >= 1 keeps only the best run, the
  /// default: cross-validated on AEB and the trafilatura pages, further runs changed nothing
  /// (0.35: F1 0.9516 / 0.9075; 1: 0.9517 / 0.9073), while on the held-out dedup stream they
  /// brought other stories' boxes in (same-template false pairs 18 -> 7 without them).
  double secondary_share = 1.0;
  /// Blocks inside an element whose class or id names comments ("comments", "comment-list")
  /// count as not article: readers' comments differ between copies of a story and look alike
  /// across a site's stories. A page left with nothing this way is segmented without the rule.
  bool drop_comments = true;
  /// A chosen run of fewer words than this, on a page that holds at least four times as many
  /// elsewhere, is furniture the model trusted more than the article: the page is segmented
  /// again, first without the comment rule (a forum thread, a comment's permalink: there the
  /// comments are the article), then with the centre lowered to 3/4 of the best long block's
  /// (>= 20 words) probability (a login prompt or a browser notice above the article). 0 never.
  /// Cross-validated (fold seed 0, AEB / trafilatura snippet F1, trafilatura pages below F1
  /// 0.5): 0: 0.9669 / 0.9228, 15 pages; 30, 50 and 100 alike: 0.9669 / 0.9234, 14 pages.
  std::uint32_t min_run_words = 50;
};

/// Scores each block `(P(article) - 0.5) * words` and returns the indices of the blocks of the
/// article: the maximum-sum run(s) of blocks.
std::vector<std::uint32_t> segment_mss(const ParsedPage& page, const MssModel& model,
                                       const SegmentOptions& options);

}  // namespace newsflow::extractors
