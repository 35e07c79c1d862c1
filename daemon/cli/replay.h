#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "config/config.h"
#include "tl/expected.hpp"

namespace newsflow::daemon {

class Metrics;
struct Output;

/// Where `replay` reads and writes ("-" is stdin/stdout), and whether it shows progress.
struct ReplayPaths {
  /// JSONL or WARC files, plain or gzip-compressed (both detected from the bytes, file by
  /// file), directories (their files in name order) and globs (their matches in name order),
  /// read in the order given as one stream: one window, one numbering of stories.
  std::vector<std::string> inputs;
  std::string output;  ///< article JSONL
  std::string dlq;     ///< dead-letter JSONL; empty: `<output>.dlq.jsonl`, or stderr for "-"
  /// Optional: each story's new state after every article, as the daemon publishes it on
  /// `topics.stories` (story JSON, one line an article).
  std::string stories;
  /// No progress on stderr (`ProgressLine`): only the summary.
  bool quiet = false;
  /// Threads that read, parse and extract (judging and writing stay in input order on one):
  /// 0 for the machine's cores; 1 does everything on the calling thread. The output is the
  /// same byte for byte whatever the number.
  std::size_t jobs = 1;
  /// Called with every article as it is written (what `train-stories` learns from).
  std::function<void(const Output&)> observe;
};

/// Counts of one replay run.
struct ReplayStats {
  std::size_t lines = 0;  ///< input lines, or WARC records
  bool warc = false;      ///< an input was WARC or ARC
  std::size_t files = 0;  ///< input files read
  std::size_t articles = 0;
  std::size_t dead_letters = 0;
  std::size_t stories = 0;
  std::map<std::string, std::size_t> by_dup_kind;
  std::map<std::string, std::size_t> by_dlq_reason;
  std::size_t skipped = 0;  ///< WARC records that are not pages (requests, images, redirects...)
  std::map<std::string, std::size_t> by_skip_reason;
  std::size_t jobs = 1;  ///< threads used
  /// Where the time went: reading (the reading thread), parsing and extracting (summed over the
  /// threads), and judging and writing in input order (one thread): with `read_seconds`, the
  /// ordered part bounds the speed at (read + prepare + ordered) / (read + ordered) threads.
  double read_seconds = 0, prepare_seconds = 0, ordered_seconds = 0;
};

/// The files `inputs` names, in the order `replay` reads them: a file as it is ("-" too), a
/// directory's regular files (not hidden ones, not its subdirectories) in name order, a glob's
/// matches in name order. Fails for a path that does not exist and a glob that matches nothing.
tl::expected<std::vector<std::string>, std::string> expand_inputs(
    const std::vector<std::string>& inputs);

/// Runs the pipeline over JSONL files (one input a line), WARC and ARC files (the HTML pages
/// they recorded; see `WarcReader`, `ArcReader`), in order, as one stream. Every input line ends in
/// the output or in the dead-letter file, and every WARC record there too or among the skipped;
/// fails only when a file cannot be opened, read or written.
tl::expected<ReplayStats, std::string> run_replay(const config::Config& config,
                                                  const ReplayPaths& paths, Metrics* metrics);

}  // namespace newsflow::daemon
