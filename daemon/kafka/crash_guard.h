#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace newsflow::config {
struct Config;
}

namespace newsflow::daemon {

/// Keeps an input that kills the process from crash-looping the daemon, with two notes in a
/// directory that survives a restart (the second only with `state.dir` set: without it, a
/// process killed by its operator would count against the inputs it was processing):
/// - `crashed.jsonl`: a fatal signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) on a thread that
///   was processing an input names that input there (`CrashScope`, `scope_note`). At the next
///   start that input is dead-lettered without being processed (`worker_crash`): one crash.
/// - `inflight.jsonl`: before each batch the daemon notes the batch's inputs (written to a
///   temporary file and renamed) and removes the note when the batch is done. A process that
///   finds a note at start died while processing those inputs without naming one (a SIGKILL, an
///   OOM kill): each gets one more crash. Inputs with one crash are processed one at a time, and
///   an input with two is dead-lettered. That is right for an OOM kill too: the input may be
///   what made the process grow.
class CrashGuard {
 public:
  /// `dir` empty: disabled (every call is a no-op and `crashes` is 0). `count_kills` false:
  /// only inputs a fatal signal named are guarded (no in-flight note; a SIGKILL counts nothing).
  explicit CrashGuard(std::string dir, bool count_kills = true);

  /// The directory for `config`: `state.dir`, else one under $TMPDIR (or /tmp) named after the
  /// consumer group, the role, the host and the brokers, which a restarted process finds again
  /// ("" on an embedded cluster, which does not outlive the process).
  static std::string directory_for(const config::Config& config);

  struct Input {
    std::string topic;
    int partition = 0;
    std::int64_t offset = 0;
  };

  /// Whether in-flight notes are kept (`begin`, `end`).
  bool enabled() const { return !path_.empty(); }

  /// Creates the directory, reads the notes a previous process left and installs the fatal
  /// signal handler that writes `crashed.jsonl`; returns how many inputs the notes named.
  std::size_t load();

  /// Crashes seen while this input was being processed (2 for one named by a fatal signal).
  int crashes(const std::string& topic, int partition, std::int64_t offset) const;

  /// Linked pages named by a fatal signal while they were extracted: not extracted again.
  const std::set<std::string>& refused_links() const { return links_; }

  /// Why an input with two crashes or more is dead-lettered.
  std::string crash_detail(const std::string& topic, int partition, std::int64_t offset) const;

  /// The note a `CrashScope` holds while this input is processed.
  static std::string scope_note(const std::string& topic, int partition, std::int64_t offset);

  /// Notes that `inputs` are being processed. Returns false (and logs) if the note cannot be
  /// written; processing goes on unguarded.
  bool begin(const std::vector<Input>& inputs);

  /// The batch is done: removes the note.
  void end();

 private:
  using Key = std::tuple<std::string, int, std::int64_t>;
  std::string dir_;
  std::string path_;
  std::string crashed_path_;
  std::map<Key, int> crashes_;
  std::map<Key, std::string> signals_;  // the fatal signal an input was named by
  std::set<std::string> links_;
};

}  // namespace newsflow::daemon
