#include "daemon/ops/log.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

namespace newsflow::log {
namespace {

std::atomic<Level> g_level{Level::kInfo};
std::atomic<Format> g_format{Format::kText};

std::string_view level_name(Level l) {
  switch (l) {
    case Level::kDebug:
      return "debug";
    case Level::kInfo:
      return "info";
    case Level::kWarn:
      return "warn";
    case Level::kError:
      return "error";
  }
  return "info";
}

std::string timestamp() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

}  // namespace

void configure(Level min_level, Format format) {
  g_level = min_level;
  g_format = format;
}

Level parse_level(std::string_view s) {
  if (s == "debug") return Level::kDebug;
  if (s == "warn") return Level::kWarn;
  if (s == "error") return Level::kError;
  return Level::kInfo;
}

void write(Level level, std::string_view event, std::initializer_list<Field> fields) {
  if (level < g_level.load()) return;
  std::string line;
  if (g_format.load() == Format::kJson) {
    nlohmann::ordered_json j;
    j["ts"] = timestamp();
    j["level"] = level_name(level);
    j["event"] = event;
    for (const auto& [k, v] : fields) j[std::string(k)] = v;
    line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } else {
    line = timestamp() + " " + std::string(level_name(level)) + " " + std::string(event);
    for (const auto& [k, v] : fields) {
      line += " ";
      line += k;
      line += "=";
      const bool quote = v.empty() || v.find_first_of(" \"=") != std::string::npos;
      line += quote
                  ? nlohmann::json(v).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                  : v;
    }
  }
  line += '\n';
  // One write(2) per line keeps lines whole across threads.
  [[maybe_unused]] const auto n = ::write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace newsflow::log
