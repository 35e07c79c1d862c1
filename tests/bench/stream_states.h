// Shared by the benchmarks that start from a real stream's state records.
#pragma once

#include <unistd.h>

#include <string>
#include <vector>

#include "config/config.h"
#include "daemon/pipeline/input.h"
#include "daemon/pipeline/pipeline.h"
#include "dedup/state.h"

namespace newsflow::bench {

/// The dev dedup stream when ../shared is there, else the committed sample pages.
inline std::string default_stream() {
  const std::string dev = NEWSFLOW_SOURCE_DIR "/../shared/data/dedup/dev/stream.jsonl.gz";
  return access(dev.c_str(), R_OK) == 0 ? dev : NEWSFLOW_SOURCE_DIR "/samples/pages.jsonl.gz";
}

/// The stream through the real pipeline, in order: each article's state record (fingerprint,
/// event time, the verdict one window gave it, story terms), what `newsflow replay` judges.
inline std::vector<dedup::ArticleState> stream_states(const config::Config& config,
                                                      const std::string& path) {
  std::vector<dedup::ArticleState> states;
  daemon::Pipeline pipeline(config, nullptr);
  daemon::read_lines(path, [&](std::string_view line) {
    auto p = daemon::parse_replay_line(line);
    if (p.failure) return;
    if (auto out = pipeline.process(p.input)) {
      for (auto& o : *out) states.push_back(std::move(o.state));
    }
  });
  return states;
}

}  // namespace newsflow::bench
