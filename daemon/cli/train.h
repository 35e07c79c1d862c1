#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"
#include "extractors/mss.h"

namespace newsflow::daemon {

/// Options of `newsflow train-extractor`.
struct TrainCommand {
  /// Labelled sets: replay JSONL(.gz) pages with id, url, html, and for each its truth,
  /// JSONL(.gz) with id and either articleBody or snippets (`with`, `without` lists).
  std::vector<std::string> pages;
  std::vector<std::string> truth;
  std::string out;        ///< model file to write (empty: do not train the final model)
  std::string cv_output;  ///< optional: the cross-validated predictions as replay output JSONL
  int folds = 5;          ///< k of k-fold cross-validation (0 or 1: none)
  std::uint64_t fold_seed = 0;  ///< 0: pages go to folds by sorted id; else shuffled with it
  /// With two or more sets: also train on all sets but one and score the one left out, for
  /// each (how the model does on page families it never saw).
  bool leave_one_set_out = true;
  int epochs = extractors::TrainOptions{}.epochs;
  double learning_rate = extractors::TrainOptions{}.learning_rate;
  double l2 = extractors::TrainOptions{}.l2;
  bool average = extractors::TrainOptions{}.average;
};

/// Trains the MSS block classifier on labelled pages, reports k-fold cross-validated token
/// 4-gram precision/recall/F1 (the AEB metric, as ../shared/tools/eval_extraction.py computes
/// it) and writes the model trained on all pages. Returns the exit code.
int run_train_extractor(const config::Config& config, const TrainCommand& command);

/// The AEB metric of one page: tp, fp, fn of 4-gram shingles of \w+ tokens (Unicode letters,
/// digits and underscore), normalised by their sum.
struct ShingleCounts {
  double tp = 0, fp = 0, fn = 0;
};
ShingleCounts aeb_page_counts(const std::string& truth, const std::string& predicted);

/// Unicode-aware `\w+` tokens of `text` (Python's re semantics: letters, digits, underscore).
std::vector<std::string> word_tokens(const std::string& text);

}  // namespace newsflow::daemon
