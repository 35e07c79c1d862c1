#include "daemon/pipeline/extracted_simdjson.h"

#include <simdjson.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "daemon/pipeline/record_fields.h"

namespace newsflow::daemon {
namespace {

using records::Need;
using simdjson::dom::element;
using JsonObject = simdjson::dom::object;

// Reads the fields of a list (`record_fields.h`) from one object, each key looked up once: a
// key found twice (nlohmann keeps the last, simdjson would find the first), an integer beyond
// int64 (nlohmann reads it as unsigned) or a required field missing ends the fast path.
class FastReader {
 public:
  explicit FastReader(JsonObject o) : o_(o) {}

  void string(std::string_view key, std::string& out, Need need) {
    element v;
    std::string_view s;
    if (find(key, v) && v.get_string().get(s) == simdjson::SUCCESS) {
      out = s;
    } else if (need == Need::kRequired) {
      missing_ = true;
    }
  }
  // The strings of an array, others skipped; nothing when it is not an array.
  void strings(std::string_view key, std::vector<std::string>& out) {
    element v;
    simdjson::dom::array list;
    if (!find(key, v) || v.get_array().get(list) != simdjson::SUCCESS) return;
    for (const element x : list) {
      std::string_view s;
      if (x.get_string().get(s) == simdjson::SUCCESS) out.emplace_back(s);
    }
  }
  void seconds(std::string_view key, std::optional<std::int64_t>& out) {
    element v;
    if (!find(key, v)) return;
    if (v.is_int64()) {
      out = v.get_int64().value_unsafe();
    } else if (v.is_uint64()) {
      ok_ = false;
    }
  }
  void clamped(std::string_view key, int& out, std::int64_t lo, std::int64_t hi) {
    std::optional<std::int64_t> n;
    seconds(key, n);
    if (n) out = static_cast<int>(std::clamp(*n, lo, hi));
  }
  void dimension(std::string_view key, int& out) {
    std::optional<std::int64_t> n;
    seconds(key, n);
    if (n) out = static_cast<int>(*n);
  }
  void boolean(std::string_view key, bool& out) {
    element v;
    if (find(key, v) && v.is_bool()) out = v.get_bool().value_unsafe();
  }
  // An image without an object or its URL is none.
  void image(std::string_view key, std::optional<extractors::LeadImage>& out) {
    element v;
    JsonObject o;
    if (!find(key, v) || v.get_object().get(o) != simdjson::SUCCESS) return;
    FastReader nested(o);
    extractors::LeadImage image;
    records::image_fields(nested, image);
    if (nested.repeated_) ok_ = false;
    if (nested.missing_ || !ok_) return;
    ok_ = nested.ok_;
    out = std::move(image);
  }
  template <class Fields>
  void object(std::string_view key, const Fields& fields) {
    element v;
    JsonObject o;
    if (!find(key, v) || v.get_object().get(o) != simdjson::SUCCESS) {
      ok_ = false;
      return;
    }
    FastReader nested(o);
    fields(nested);
    ok_ = ok_ && nested.ok_ && !nested.missing_;
  }
  bool when(bool) const { return true; }

  bool ok() const { return ok_ && !missing_; }

 private:
  // The value of `key`; false when the object has none, or has it twice (then the reading fails).
  bool find(std::string_view key, element& out) {
    bool found = false;
    for (const auto field : o_) {
      if (field.key != key) continue;
      if (found) {
        ok_ = false;
        repeated_ = true;
        return false;
      }
      found = true;
      out = field.value;
    }
    return found;
  }

  JsonObject o_;
  bool ok_ = true;
  bool missing_ = false;   // a required field absent or of another type
  bool repeated_ = false;  // a key found twice
};

}  // namespace

std::optional<std::pair<Extracted, Input>> read_extracted_fast(std::string_view json) {
  thread_local simdjson::dom::parser parser;
  element doc;
  JsonObject top;
  if (parser.parse(json.data(), json.size(), true).get(doc) != simdjson::SUCCESS ||
      doc.get_object().get(top) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  std::pair<Extracted, Input> out;
  FastReader reader(top);
  records::extracted_fields(reader, out.first, out.second);
  if (!reader.ok() || out.first.article.text.empty()) return std::nullopt;
  out.first.language_known = true;
  return out;
}

}  // namespace newsflow::daemon
