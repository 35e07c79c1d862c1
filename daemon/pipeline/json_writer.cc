#include "daemon/pipeline/json_writer.h"

#include <simdjson.h>

#include <nlohmann/json.hpp>

namespace newsflow::daemon {

JsonWriter& JsonWriter::open(char c) {
  separate();
  out_ += c;
  comma_ = false;
  return *this;
}

JsonWriter& JsonWriter::close(char c) {
  out_ += c;
  comma_ = true;
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view k) {
  string(k);
  out_ += ':';
  comma_ = false;
  return *this;
}

JsonWriter& JsonWriter::string(std::string_view s) {
  separate();
  comma_ = true;
  if (!simdjson::validate_utf8(s.data(), s.size())) {
    // Rare (a header or URL in another encoding): nlohmann's own replacement, byte for byte.
    out_ += nlohmann::json(std::string(s))
                .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return *this;
  }
  out_.reserve(out_.size() + s.size() + 2);
  out_ += '"';
  std::size_t run = 0;  // start of the bytes not yet copied
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out_.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"':
        out_ += "\\\"";
        break;
      case '\\':
        out_ += "\\\\";
        break;
      case '\b':
        out_ += "\\b";
        break;
      case '\f':
        out_ += "\\f";
        break;
      case '\n':
        out_ += "\\n";
        break;
      case '\r':
        out_ += "\\r";
        break;
      case '\t':
        out_ += "\\t";
        break;
      default: {
        static constexpr char kHex[] = "0123456789abcdef";
        const char u[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
        out_.append(u, sizeof u);
      }
    }
  }
  out_.append(s.data() + run, s.size() - run);
  out_ += '"';
  return *this;
}

JsonWriter& JsonWriter::string_or_null(std::string_view s) {
  return s.empty() ? null() : string(s);
}

JsonWriter& JsonWriter::strings(const std::vector<std::string>& list) {
  begin_array();
  for (const std::string& s : list) string(s);
  return end_array();
}

JsonWriter& JsonWriter::integer(std::int64_t n) { return digits(n); }

JsonWriter& JsonWriter::unsigned_integer(std::uint64_t n) { return digits(n); }

JsonWriter& JsonWriter::number(double x) {
  separate();
  comma_ = true;
  out_ += nlohmann::json(x).dump();  // one per record: its exact digits are nlohmann's
  return *this;
}

JsonWriter& JsonWriter::boolean(bool b) {
  separate();
  comma_ = true;
  out_ += b ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::null() {
  separate();
  comma_ = true;
  out_ += "null";
  return *this;
}

}  // namespace newsflow::daemon
