#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace newsflow::daemon {

/// Writes one JSON document straight into a string, byte for byte as nlohmann's
/// `dump(-1, ' ', false, error_handler_t::replace)` writes the same document (what the records
/// were written with before): no document is built first, so an article's record costs a copy
/// of its text and little more. Keys and values go in the order they are written; the caller
/// keeps the structure well-formed.
///
///     JsonWriter w;
///     w.begin_object().key("id").string(id).key("tags").strings(tags).end_object();
///     std::string json = w.take();
class JsonWriter {
 public:
  JsonWriter& begin_object() { return open('{'); }
  JsonWriter& end_object() { return close('}'); }
  JsonWriter& begin_array() { return open('['); }
  JsonWriter& end_array() { return close(']'); }
  /// An object's key; its value comes next.
  JsonWriter& key(std::string_view k);

  /// A string, escaped as nlohmann escapes it; a string that is not valid UTF-8 has each bad
  /// sequence replaced by U+FFFD, as its `replace` handler does.
  JsonWriter& string(std::string_view s);
  /// `string(s)`, or null for an empty one.
  JsonWriter& string_or_null(std::string_view s);
  JsonWriter& strings(const std::vector<std::string>& list);
  JsonWriter& integer(std::int64_t n);
  JsonWriter& unsigned_integer(std::uint64_t n);
  /// A double as nlohmann writes it (shortest round-trip form; null when not finite).
  JsonWriter& number(double x);
  JsonWriter& boolean(bool b);
  JsonWriter& null();

  std::string take() { return std::move(out_); }

 private:
  JsonWriter& open(char c);
  JsonWriter& close(char c);
  template <class Integer>
  JsonWriter& digits(Integer n) {
    separate();
    comma_ = true;
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, n);
    out_.append(buf, r.ptr);
    return *this;
  }
  void separate() {
    if (comma_) out_ += ',';
  }
  std::string out_;
  bool comma_ = false;  // a value was written in the open container: the next one needs ','
};

}  // namespace newsflow::daemon
