#include "daemon/pipeline/input.h"

#include <simdjson.h>
#include <unistd.h>

#include <charconv>
#include <nlohmann/json.hpp>
#include <optional>

#include "daemon/pipeline/input_file.h"
#include "extractors/text.h"
#include "extractors/timestamp.h"

namespace newsflow::daemon {
namespace {

// As deep as simdjson reads a replay line: nothing read from a line or an envelope nests deeper
// (a copy or a dump of a document 100,000 levels deep would overflow the stack).
constexpr std::size_t kMaxJsonDepth = 1024;

// An input URL names a web page, or with urn: a name (a wire service's item id): one with any
// other scheme ("javascript:", "data:", "file:", "mailto:") can be neither fetched, nor linked,
// nor made canonical, and on a page it would run. (`newsflow extract` reads a local file under
// a file: URL; it builds its input itself.)
bool web_url_or_relative(std::string_view url) {
  const std::size_t colon = url.find(':');
  if (colon == std::string_view::npos) return true;
  const std::size_t delimiter = url.find_first_of("/?#");
  if (delimiter != std::string_view::npos && delimiter < colon) return true;  // no scheme
  const std::string scheme = extractors::ascii_lower(url.substr(0, colon));
  return scheme == "http" || scheme == "https" || scheme == "urn";
}

using nlohmann::json;

std::optional<std::string> string_field(const json& j, const char* name, std::string& type_error) {
  const auto it = j.find(name);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_string()) {
    type_error = std::string("field '") + name + "' must be a string";
    return std::nullopt;
  }
  return it->get<std::string>();
}

// Fills `out` from a parsed JSON object (replay line or Kafka envelope).
void from_json_object(const json& j, ParsedInput& out) {
  Input& in = out.input;
  std::string type_error;
  auto fail = [&](Reason reason, std::string detail) {
    if (!out.failure) out.failure = Failure{reason, std::move(detail)};
  };
  if (auto id = string_field(j, "id", type_error)) in.id = *id;
  if (const auto it = j.find("id"); it != j.end() && it->is_number_integer()) {
    in.id = std::to_string(it->get<long long>());
    type_error.clear();
  }
  if (auto url = string_field(j, "url", type_error)) in.url = *url;
  if (auto ct = string_field(j, "content_type", type_error)) in.content_type = *ct;
  for (auto [name, field] :
       {std::pair{"fetched_at", &in.fetched_at}, std::pair{"published_at", &in.published_at}}) {
    if (auto v = string_field(j, name, type_error)) {
      if (auto t = extractors::parse_iso8601(*v)) {
        *field = t;
      } else {
        fail(Reason::kInvalidTimestamp, std::string("field '") + name + "' is not RFC 3339: " + *v);
      }
    }
  }
  if (!type_error.empty()) return fail(Reason::kInvalidField, type_error);
  if (in.url.empty()) return fail(Reason::kMissingUrl, "input has no url");
  if (!web_url_or_relative(in.url)) {
    return fail(Reason::kInvalidUrl,
                "the input's url is not http, https or urn: " + in.url.substr(0, 256));
  }

  int bodies = 0;
  for (const char* name : {"html", "html_b64", "text", "feed", "feed_b64"}) {
    if (j.contains(name) && !j[name].is_null()) ++bodies;
  }
  if (bodies == 0)
    return fail(Reason::kMissingBody, "input has none of html, html_b64, text, feed, feed_b64");
  if (bodies > 1)
    return fail(Reason::kAmbiguousBody,
                "input has more than one of html, html_b64, text, feed, feed_b64");

  if (auto html = string_field(j, "html", type_error)) {
    in.kind = BodyKind::kHtmlText;
    in.body = std::move(*html);
  } else if (auto b64 = string_field(j, "html_b64", type_error)) {
    auto bytes = base64_decode(*b64);
    if (!bytes) return fail(Reason::kInvalidBase64, "field 'html_b64' is not base64");
    in.kind = BodyKind::kHtmlBytes;
    in.body = std::move(*bytes);
  } else if (auto text = string_field(j, "text", type_error)) {
    in.kind = BodyKind::kText;
    in.body = std::move(*text);
    if (auto title = string_field(j, "title", type_error)) in.title = *title;
  } else if (auto feed = string_field(j, "feed", type_error)) {
    in.kind = BodyKind::kFeedText;
    in.body = std::move(*feed);
  } else if (auto feed64 = string_field(j, "feed_b64", type_error)) {
    auto bytes = base64_decode(*feed64);
    if (!bytes) return fail(Reason::kInvalidBase64, "field 'feed_b64' is not base64");
    in.kind = BodyKind::kFeedBytes;
    in.body = std::move(*bytes);
  }
  if (!type_error.empty()) return fail(Reason::kInvalidField, type_error);
}

// Replay lines are mostly one long `html` string: simdjson's DOM parser validates and unescapes
// them several times faster than nlohmann's lexer (a fifth of replay's time on 170 KB pages). It
// checks the whole line as strictly; anything it refuses, or a field of the wrong type, goes
// the nlohmann way, which names the failure.
bool from_simdjson(std::string_view line, ParsedInput& out) {
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(line.data(), line.size(), true).get(doc) != simdjson::SUCCESS) return false;
  simdjson::dom::object obj;
  if (doc.get_object().get(obj) != simdjson::SUCCESS) return false;
  Input& in = out.input;
  std::string_view body;
  int bodies = 0;
  const char* body_field = nullptr;
  std::optional<std::string_view> fetched_at, published_at;
  for (const auto field : obj) {
    const std::string_view key = field.key;
    const simdjson::dom::element v = field.value;
    if (v.is_null()) continue;
    const bool known = key == "id" || key == "url" || key == "content_type" ||
                       key == "fetched_at" || key == "published_at" || key == "title" ||
                       key == "html" || key == "html_b64" || key == "text" || key == "feed" ||
                       key == "feed_b64";
    if (!known) continue;
    if (key == "id" && v.is_int64()) {
      in.id = std::to_string(v.get_int64().value_unsafe());
      continue;
    }
    std::string_view str;
    if (v.get_string().get(str) != simdjson::SUCCESS) return false;  // a type error: named below
    if (key == "id") {
      in.id = str;
    } else if (key == "url") {
      in.url = str;
    } else if (key == "content_type") {
      in.content_type = str;
    } else if (key == "fetched_at") {
      fetched_at = str;
    } else if (key == "published_at") {
      published_at = str;
    } else if (key == "title") {
      in.title = str;
    } else {
      ++bodies;
      body = str;
      body_field = key == "html" ? "html" : key == "text" ? "text" : key == "feed" ? "feed" : "b64";
    }
  }
  // Repeated keys, base64 bodies and failures: the general path decides.
  if (bodies != 1 || std::string_view(body_field) == "b64" || in.url.empty() ||
      !web_url_or_relative(in.url)) {
    return false;  // the full reading names the problem
  }
  for (auto [value, field] :
       {std::pair{fetched_at, &in.fetched_at}, std::pair{published_at, &in.published_at}}) {
    if (!value) continue;
    const auto t = extractors::parse_iso8601(*value);
    if (!t) return false;
    *field = t;
  }
  in.kind = std::string_view(body_field) == "html"   ? BodyKind::kHtmlText
            : std::string_view(body_field) == "text" ? BodyKind::kText
                                                     : BodyKind::kFeedText;
  if (in.kind != BodyKind::kText) in.title.clear();  // read only with a text body
  in.body = body;
  return true;
}

}  // namespace

bool read_lines(const std::string& path, const std::function<void(std::string_view)>& fn) {
  auto in = InputFile::open(path);
  return in && read_lines(**in, fn);
}

bool read_lines(InputFile& in, const std::function<void(std::string_view)>& fn) {
  std::string line;
  std::vector<char> buf(std::size_t{1} << 17);
  std::ptrdiff_t n;
  while ((n = in.read(buf.data(), buf.size())) > 0) {
    std::string_view chunk(buf.data(), static_cast<std::size_t>(n));
    while (!chunk.empty()) {
      const auto nl = chunk.find('\n');
      line.append(chunk.substr(0, nl));
      if (nl == std::string_view::npos) break;
      fn(line);
      line.clear();
      chunk.remove_prefix(nl + 1);
    }
  }
  if (!line.empty()) fn(line);
  return n == 0;
}

ParsedInput parse_replay_line(std::string_view line) {
  ParsedInput out;
  std::string_view text = line;
  bool invalid_utf8 = false;
  std::string sanitized;
  if (!extractors::is_valid_utf8(text)) {
    // Still read id and url for the dead-letter record.
    invalid_utf8 = true;
    sanitized = extractors::sanitize_utf8(text);
    text = sanitized;
  }
  if (!invalid_utf8) {
    ParsedInput fast;
    if (from_simdjson(text, fast)) return fast;
  }
  if (extractors::json_nesting_exceeds(text, kMaxJsonDepth)) {
    out.failure = Failure{Reason::kInvalidJson, "line nests objects or arrays deeper than " +
                                                    std::to_string(kMaxJsonDepth) + " levels"};
    return out;
  }
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    out.failure = Failure{invalid_utf8 ? Reason::kInvalidUtf8 : Reason::kInvalidJson,
                          invalid_utf8 ? "line is not UTF-8" : "line is not valid JSON"};
    return out;
  }
  if (!j.is_object()) {
    out.failure = Failure{Reason::kInvalidJson, "line is not a JSON object"};
    return out;
  }
  from_json_object(j, out);
  if (invalid_utf8 && !out.failure)
    out.failure = Failure{Reason::kInvalidUtf8, "line is not UTF-8"};
  return out;
}

ParsedInput parse_page_message(std::string_view value, const Headers& headers,
                               std::int64_t timestamp) {
  ParsedInput out;
  Input& in = out.input;
  std::string fetched_at, published_at;
  for (const auto& [name, v] : headers) {
    if (name == "url") in.url = v;
    if (name == "content_type" || name == "content-type") in.content_type = v;
    if (name == "fetched_at") fetched_at = v;
    if (name == "published_at") published_at = v;
    if (name == "id") in.id = v;
    // A feed item's page, fetched later: what the item said of itself.
    if (name == "title") in.title = v;
    if (name == "link") in.link = v;
    if (name == "feed_url") in.feed_url = v;
    if (name == "feed_id") in.feed_id = v;
    if (name == "version") {
      int n = 0;
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (ec == std::errc() && end == v.data() + v.size() && n >= 1 && n <= 1000) in.version = n;
    }
  }
  if (!published_at.empty()) {
    // As in a replay line: the event time when the crawler knows it.
    in.published_at = extractors::parse_iso8601(published_at);
    if (!in.published_at) {
      out.failure = Failure{Reason::kInvalidTimestamp,
                            "header published_at is not RFC 3339: " + published_at};
      return out;
    }
  }
  if (timestamp > 0) in.fetched_at = timestamp;
  if (!fetched_at.empty()) {
    if (auto t = extractors::parse_iso8601(fetched_at)) {
      in.fetched_at = t;
    } else {
      out.failure =
          Failure{Reason::kInvalidTimestamp, "header fetched_at is not RFC 3339: " + fetched_at};
      return out;
    }
  }
  if (extractors::ascii_lower(in.content_type).starts_with("application/json")) {
    if (!extractors::is_valid_utf8(value)) {
      out.failure = Failure{Reason::kInvalidUtf8, "JSON envelope is not UTF-8"};
      return out;
    }
    if (extractors::json_nesting_exceeds(value, kMaxJsonDepth)) {
      out.failure =
          Failure{Reason::kInvalidJson, "JSON envelope nests objects or arrays deeper than " +
                                            std::to_string(kMaxJsonDepth) + " levels"};
      return out;
    }
    json j = json::parse(value, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      out.failure = Failure{Reason::kInvalidJson, "JSON envelope is not a JSON object"};
      return out;
    }
    // Header values fill what the envelope leaves out.
    if ((!j.contains("url") || j["url"].is_null()) && !in.url.empty()) j["url"] = in.url;
    const auto header_fetched = in.fetched_at;
    in.content_type.clear();
    from_json_object(j, out);
    if (!in.fetched_at) in.fetched_at = header_fetched;
    return out;
  }
  if (in.url.empty()) {
    out.failure = Failure{Reason::kMissingUrl, "message has no url header"};
    return out;
  }
  if (!web_url_or_relative(in.url)) {
    out.failure =
        Failure{Reason::kInvalidUrl,
                "the message's url header is not http, https or urn: " + in.url.substr(0, 256)};
    return out;
  }
  in.kind = BodyKind::kHtmlBytes;
  in.payload = value;
  if (value.empty()) out.failure = Failure{Reason::kEmptyDocument, "message value is empty"};
  return out;
}

}  // namespace newsflow::daemon
