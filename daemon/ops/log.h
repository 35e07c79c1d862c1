#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace newsflow::log {

enum class Level { kDebug, kInfo, kWarn, kError };
enum class Format { kText, kJson };

/// Sets the minimum level and the output format. Call once at startup; thread-safe afterwards.
void configure(Level min_level, Format format);

/// Parses "debug", "info", "warn", "error" (anything else gives kInfo).
Level parse_level(std::string_view s);

/// A structured field of a log line.
using Field = std::pair<std::string_view, std::string>;

/// Writes one log line to stderr: an event name with stable snake_case keys, e.g.
/// `log::info("kafka_embedded_started", {{"bootstrap", addr}})` prints
/// `... INFO kafka_embedded_started bootstrap=127.0.0.1:39123` or, in JSON format,
/// `{"ts":"...","level":"info","event":"kafka_embedded_started","bootstrap":"127.0.0.1:39123"}`.
/// Thread-safe; one write per line.
void write(Level level, std::string_view event, std::initializer_list<Field> fields);

inline void debug(std::string_view e, std::initializer_list<Field> f = {}) {
  write(Level::kDebug, e, f);
}
inline void info(std::string_view e, std::initializer_list<Field> f = {}) {
  write(Level::kInfo, e, f);
}
inline void warn(std::string_view e, std::initializer_list<Field> f = {}) {
  write(Level::kWarn, e, f);
}
inline void error(std::string_view e, std::initializer_list<Field> f = {}) {
  write(Level::kError, e, f);
}

}  // namespace newsflow::log
