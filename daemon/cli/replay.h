#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>

#include "config/config.h"
#include "tl/expected.hpp"

namespace newsflow::daemon {

class Metrics;
struct Output;

/// Where `replay` reads and writes ("-" is stdin/stdout), and whether it shows progress.
struct ReplayPaths {
  /// JSONL or WARC, plain or gzip-compressed (both detected from the bytes)
  std::string input;
  std::string output;  ///< article JSONL
  std::string dlq;     ///< dead-letter JSONL; empty: `<output>.dlq.jsonl`, or stderr for "-"
  /// Optional: each story's new state after every article, as the daemon publishes it on
  /// `topics.stories` (story JSON, one line an article).
  std::string stories;
  /// No progress on stderr (`ProgressLine`): only the summary.
  bool quiet = false;
  /// Called with every article as it is written (what `train-stories` learns from).
  std::function<void(const Output&)> observe;
};

/// Counts of one replay run.
struct ReplayStats {
  std::size_t lines = 0;  ///< input lines, or WARC records
  bool warc = false;      ///< the input was WARC
  std::size_t articles = 0;
  std::size_t dead_letters = 0;
  std::size_t stories = 0;
  std::map<std::string, std::size_t> by_dup_kind;
  std::map<std::string, std::size_t> by_dlq_reason;
  std::size_t skipped = 0;  ///< WARC records that are not pages (requests, images, redirects...)
  std::map<std::string, std::size_t> by_skip_reason;
};

/// Runs the pipeline over a JSONL file (DESIGN.md section 3, batch mode) or a WARC file (the
/// HTML pages it recorded; see `WarcReader`). Every input line ends in the output or in the
/// dead-letter file, and every WARC record there too or among the skipped; fails only when a
/// file cannot be opened, read or written.
tl::expected<ReplayStats, std::string> run_replay(const config::Config& config,
                                                  const ReplayPaths& paths, Metrics* metrics);

}  // namespace newsflow::daemon
