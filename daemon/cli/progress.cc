#include "daemon/cli/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace newsflow::daemon {
namespace {

constexpr auto kTerminalInterval = std::chrono::milliseconds(250);
constexpr auto kPlainInterval = std::chrono::seconds(5);

std::string bytes_text(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, unit == 0 ? "%.0f %s" : "%.1f %s", bytes, kUnits[unit]);
  return buf;
}

std::string duration_text(double seconds) {
  const auto s = static_cast<long long>(std::llround(seconds));
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lld:%02lld", s / 60, s % 60);
  }
  return buf;
}

}  // namespace

ProgressLine::Mode ProgressLine::mode_for(std::FILE* stream, bool quiet) {
  if (quiet) return Mode::kOff;
  return ::isatty(::fileno(stream)) ? Mode::kTerminal : Mode::kPlain;
}

ProgressLine::ProgressLine(std::FILE* stream, Mode mode, std::string label, std::string rate_unit,
                           std::optional<std::uint64_t> total_bytes, bool articles)
    : stream_(stream),
      mode_(mode),
      label_(std::move(label)),
      rate_unit_(std::move(rate_unit)),
      total_bytes_(total_bytes),
      articles_(articles),
      start_(Clock::now()),
      // A terminal shows the first line at once; a log gets one only from a run that lasts.
      next_(mode == Mode::kTerminal ? start_ : start_ + kPlainInterval) {}

std::string ProgressLine::format(const ProgressCounts& c, double elapsed) const {
  std::string line = label_ + ": " + std::to_string(c.inputs) + " inputs, " +
                     bytes_text(static_cast<double>(c.bytes));
  if (total_bytes_ && *total_bytes_ > 0) {
    const double share = std::min(1.0, static_cast<double>(c.bytes) / *total_bytes_);
    char percent[16];
    std::snprintf(percent, sizeof percent, " (%.0f%%)", 100 * share);
    line += " of " + bytes_text(static_cast<double>(*total_bytes_)) + percent;
  }
  // Rates and the time left only once there is a second to average over.
  if (elapsed >= 1) {
    char rate[32];
    std::snprintf(rate, sizeof rate, ", %.0f ", static_cast<double>(c.inputs) / elapsed);
    line += rate + rate_unit_;
  }
  if (articles_) {
    line += ", " + std::to_string(c.articles) + " articles, " + std::to_string(c.duplicates) +
            " duplicates";
  }
  line += ", " + std::to_string(c.dead_letters) + " dead letters";
  if (c.skipped > 0) line += ", " + std::to_string(c.skipped) + " skipped";
  if (total_bytes_ && elapsed >= 1 && c.bytes > 0 && c.bytes < *total_bytes_) {
    const double left = elapsed * static_cast<double>(*total_bytes_ - c.bytes) / c.bytes;
    line += ", " + duration_text(left) + " left";
  }
  return line;
}

void ProgressLine::update(const ProgressCounts& counts) {
  if (mode_ == Mode::kOff) return;
  const auto now = Clock::now();
  if (now < next_) return;
  next_ = now + (mode_ == Mode::kTerminal ? kTerminalInterval : kPlainInterval);
  std::string line = format(counts, std::chrono::duration<double>(now - start_).count());
  if (mode_ == Mode::kPlain) {
    std::fprintf(stream_, "%s\n", line.c_str());
    std::fflush(stream_);
    return;
  }
  // One screen line: a wrapped line could not be redrawn in place.
  winsize ws{};
  if (::ioctl(::fileno(stream_), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 &&
      line.size() >= ws.ws_col) {
    line.resize(ws.ws_col - 1);
  }
  std::fprintf(stream_, "\r%s\x1b[K", line.c_str());
  std::fflush(stream_);
  shown_ = true;
}

void ProgressLine::clear() {
  if (!shown_) return;
  std::fputs("\r\x1b[K", stream_);
  std::fflush(stream_);
  shown_ = false;
}

}  // namespace newsflow::daemon
