#pragma once

#include <string>
#include <vector>

#include "config/config.h"

namespace newsflow::daemon {

/// Options of `newsflow train-stories`.
struct TrainStoriesCommand {
  /// Replay streams (JSONL, plain or gzip) and, for each, its labels: JSON with `story_pos` and
  /// `story_neg` (`[[id, id]]`), optionally `scored_pairs` (`[[id, id, overall]]`, 1 = same
  /// event ... 4 = different events) and `dup_groups` (`[[id, ...]]`, copies: one event).
  std::vector<std::string> inputs;
  std::vector<std::string> labels;
  std::string out;  ///< YAML config file to write (`stories:` thresholds and model); empty: none
  int folds = 5;    ///< k of the cross-validation by event (pairs of one event in one fold)
  /// >= 0: the written model is trained without this fold's events (the online figures of a
  /// held-out fold: replay with it, score that fold's pairs).
  int hold_out = -1;
  std::string folds_output;  ///< optional: JSON {"id id": fold} of every labelled pair
  /// The written `similarity_threshold` is the lowest at which the streams' stories, replayed
  /// with the model, merge at most this share of the labelled different-event pairs outside
  /// `hold_out`; `merge_threshold` is the pairwise cut at half of it (at least the former).
  double merge_rate = 0.025;
  double l2 = 0.01;  ///< L2 penalty of the logistic regression (per pair)
};

/// Replays the streams with `config`, takes the features of every labelled pair as the story
/// book sees them when the later article arrives (`StoryBook::features`, document frequencies
/// of that moment), fits the logistic `StoryModel`, reports its cross-validated recall of
/// same-event pairs at fixed rates of different-event pairs merged (in all and per language,
/// beside the cosine alone) and writes the model trained on every fold but `hold_out`, its
/// threshold chosen by replaying the streams with it (`merge_rate`).
/// Returns the exit code.
int run_train_stories(const config::Config& config, const TrainStoriesCommand& command);

}  // namespace newsflow::daemon
