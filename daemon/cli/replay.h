#pragma once

#include <cstddef>
#include <map>
#include <string>

#include "config/config.h"
#include "tl/expected.hpp"

namespace newsflow::daemon {

class Metrics;

/// Where `replay` reads and writes; "-" is stdin/stdout.
struct ReplayPaths {
  std::string input;   ///< JSONL, plain or gzip-compressed (detected from the bytes)
  std::string output;  ///< article JSONL
  std::string dlq;     ///< dead-letter JSONL; empty: `<output>.dlq.jsonl`, or stderr for "-"
};

/// Counts of one replay run.
struct ReplayStats {
  std::size_t lines = 0;
  std::size_t articles = 0;
  std::size_t dead_letters = 0;
  std::size_t stories = 0;
  std::map<std::string, std::size_t> by_dup_kind;
  std::map<std::string, std::size_t> by_dlq_reason;
};

/// Runs the pipeline over a JSONL file (DESIGN.md section 3, batch mode). Every input line ends
/// in the output or in the dead-letter file; fails only when a file cannot be opened or
/// written.
tl::expected<ReplayStats, std::string> run_replay(const config::Config& config,
                                                  const ReplayPaths& paths, Metrics* metrics);

}  // namespace newsflow::daemon
