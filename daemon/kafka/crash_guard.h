#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace newsflow::daemon {

/// Keeps an input that kills the process from crash-looping the daemon. Before each batch the
/// daemon notes the batch's inputs in `DIR/inflight.jsonl` (written to a temporary file and
/// renamed) and removes the note when the batch is done. A process that finds a note at start
/// died while processing those inputs: each gets one more crash. The daemon then processes
/// inputs with one crash alone, and dead-letters an input with two crashes without processing
/// it (`worker_crash`). A SIGKILL or an OOM kill mid-batch counts too, which is right: the
/// input may be what made the process grow.
class CrashGuard {
 public:
  /// `dir` empty: disabled (every call is a no-op and `crashes` is 0).
  explicit CrashGuard(std::string dir);

  struct Input {
    std::string topic;
    int partition = 0;
    std::int64_t offset = 0;
  };

  bool enabled() const { return !path_.empty(); }

  /// Reads the note a previous process left, if any; returns how many inputs it named.
  std::size_t load();

  /// Crashes seen while this input was being processed.
  int crashes(const std::string& topic, int partition, std::int64_t offset) const;

  /// Notes that `inputs` are being processed. Returns false (and logs) if the note cannot be
  /// written; processing goes on unguarded.
  bool begin(const std::vector<Input>& inputs);

  /// The batch is done: removes the note.
  void end();

 private:
  std::string dir_;
  std::string path_;
  std::map<std::tuple<std::string, int, std::int64_t>, int> crashes_;
};

}  // namespace newsflow::daemon
