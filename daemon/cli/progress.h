#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace newsflow::daemon {

/// What a progress line shows.
struct ProgressCounts {
  std::uint64_t inputs = 0;        ///< lines or WARC records read
  std::uint64_t bytes = 0;         ///< of the input file consumed (compressed bytes for gzip)
  std::uint64_t articles = 0;      ///< articles written (or messages sent)
  std::uint64_t duplicates = 0;    ///< of them, exact, near or contained copies
  std::uint64_t dead_letters = 0;  ///< inputs that ended in the DLQ (or were dropped)
  std::uint64_t skipped = 0;       ///< WARC records that are not pages
};

/// Progress of a batch run on a stream (standard error): on a terminal one line redrawn in place
/// ("\r") at most four times a second, the first at once; elsewhere a plain line every five
/// seconds; nothing when off (`--quiet`). Not thread-safe.
///
///     ProgressLine progress(stderr, ProgressLine::mode_for(stderr, quiet), "replay",
///                           "pages/s", file.size());
///     for (...) { ...; progress.update(counts); }
///     progress.finish();  // the line erased, for the summary
class ProgressLine {
 public:
  enum class Mode {
    kOff,
    kTerminal,  ///< one line, redrawn in place
    kPlain,     ///< a line now and then, for logs
  };
  /// kOff when `quiet`, else kTerminal when `stream` is a terminal, else kPlain.
  static Mode mode_for(std::FILE* stream, bool quiet);

  /// `label` starts the line ("replay"), `rate_unit` names the inputs per second ("pages/s");
  /// `total_bytes`, the input's size when it is a regular file, gives the share read and the time
  /// left. `articles`: whether the article and duplicate counts mean something.
  ProgressLine(std::FILE* stream, Mode mode, std::string label, std::string rate_unit,
               std::optional<std::uint64_t> total_bytes, bool articles = true);
  /// Erases a terminal line (`finish`).
  ~ProgressLine() { finish(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  /// Draws `counts` when a line is due.
  void update(const ProgressCounts& counts);
  /// On a terminal, erases the line, so that other output to the stream starts on a clean line;
  /// the next due update draws it again.
  void clear();
  /// On a terminal, erases the line for good.
  void finish() { clear(); }

  /// The line for `counts` after `elapsed_seconds`, without a line end.
  std::string format(const ProgressCounts& counts, double elapsed_seconds) const;

 private:
  using Clock = std::chrono::steady_clock;
  std::FILE* stream_;
  Mode mode_;
  std::string label_, rate_unit_;
  std::optional<std::uint64_t> total_bytes_;
  bool articles_;
  Clock::time_point start_, next_;
  bool shown_ = false;  // a terminal line is on screen
};

}  // namespace newsflow::daemon
