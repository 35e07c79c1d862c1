#include "daemon/pipeline/robots.h"

#include <curl/curl.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "extractors/text.h"

namespace newsflow::daemon {
namespace {

constexpr std::size_t kMaxRobotsBytes = 500 * 1024;  // RFC 9309 2.5: at least 500 KiB are read

bool unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_escaped(std::string& out, unsigned char c) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  out += '%';
  out += kHex[c >> 4];
  out += kHex[c & 15];
}

// One form for paths and patterns, so that "/caf%C3%A9", "/café" and "/caf%c3%a9" compare
// equal: in the path (before '?'), escapes are decoded except %2F and %25, then every octet
// but the unreserved ones and '/' is escaped (upper-case hex); in a pattern '*' and a final '$'
// keep their meaning. The query is compared as it is written.
std::string normalize(std::string_view s, bool pattern) {
  std::string out;
  out.reserve(s.size() + 8);
  const std::size_t query = s.find('?');
  const std::string_view path = s.substr(0, query);
  const bool anchored = pattern && !path.empty() && path.back() == '$' && query == s.npos;
  const std::size_t end = anchored ? path.size() - 1 : path.size();
  for (std::size_t i = 0; i < end; ++i) {
    auto c = static_cast<unsigned char>(path[i]);
    if (c == '%' && i + 2 < end && hex_value(path[i + 1]) >= 0 && hex_value(path[i + 2]) >= 0) {
      const auto decoded =
          static_cast<unsigned char>(hex_value(path[i + 1]) * 16 + hex_value(path[i + 2]));
      i += 2;
      if (decoded == '/' || decoded == '%') {
        append_escaped(out, decoded);
        continue;
      }
      c = decoded;
    } else if (pattern && c == '*') {
      out += '*';
      continue;
    }
    if (unreserved(c) || c == '/') {
      out += static_cast<char>(c);
    } else {
      append_escaped(out, c);
    }
  }
  if (query != s.npos) out.append(s.substr(query));
  if (anchored) out += '$';
  return out;
}

// Bounds on what one match may cost, whatever a site writes: patterns are cut at Google's
// line limit (2,083 * 8 octets), a group keeps its first 10,000 rules, and a path longer than
// 16 KiB (no browser sends one) is not fetched. Matching is linear in pattern and path, so a
// decision costs at most about rules x path octets.
constexpr std::size_t kMaxPatternBytes = 2083 * 8;
constexpr std::size_t kMaxRules = 10000;
constexpr std::size_t kMaxPathBytes = 16 * 1024;

// The first occurrence of `needle` in `hay` at or after `from` (Knuth-Morris-Pratt: linear in
// both, where a naive search of "aaa...b" in "aaa...a" is their product).
std::size_t find_linear(std::string_view hay, std::string_view needle, std::size_t from,
                        std::vector<std::size_t>& fail) {
  if (needle.empty()) return from <= hay.size() ? from : std::string_view::npos;
  fail.assign(needle.size(), 0);
  for (std::size_t i = 1, k = 0; i < needle.size(); ++i) {
    while (k > 0 && needle[i] != needle[k]) k = fail[k - 1];
    if (needle[i] == needle[k]) ++k;
    fail[i] = k;
  }
  for (std::size_t i = from, k = 0; i < hay.size(); ++i) {
    while (k > 0 && hay[i] != needle[k]) k = fail[k - 1];
    if (hay[i] == needle[k]) ++k;
    if (k == needle.size()) return i + 1 - k;
  }
  return std::string_view::npos;
}

// Does `pattern` (normalized; '*' any run, a final '$' the end) match `path` from its start?
// Without '$' a match of a prefix is enough. The pieces between stars are matched in order,
// each at its leftmost place after the one before (which leaves the most room for the rest, so
// it finds a match whenever there is one); with '$' the last piece must end the path. Linear in
// pattern and path: the backtracking matcher this replaces was their product.
bool matches(std::string_view pattern, std::string_view path) {
  const bool anchored = !pattern.empty() && pattern.back() == '$';
  if (anchored) pattern.remove_suffix(1);
  std::vector<std::string_view> pieces;
  for (std::size_t start = 0;;) {
    const std::size_t star = pattern.find('*', start);
    pieces.push_back(pattern.substr(start, star == pattern.npos ? pattern.npos : star - start));
    if (star == pattern.npos) break;
    start = star + 1;
  }
  // No star: a prefix, or with '$' the whole path.
  if (pieces.size() == 1) return anchored ? path == pieces[0] : path.starts_with(pieces[0]);
  if (!path.starts_with(pieces.front())) return false;
  std::size_t at = pieces.front().size();
  const std::string_view last = pieces.back();
  std::vector<std::size_t> fail;
  for (std::size_t k = 1; k + 1 < pieces.size(); ++k) {
    const std::size_t found = find_linear(path, pieces[k], at, fail);
    if (found == std::string_view::npos) return false;
    at = found + pieces[k].size();
  }
  if (!anchored) return find_linear(path, last, at, fail) != std::string_view::npos;
  return path.size() >= at + last.size() && path.ends_with(last);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

enum class Field { kUserAgent, kAllow, kDisallow, kCrawlDelay, kOther };

Field field_of(std::string_view name) {
  const std::string f = extractors::ascii_lower(name);
  if (f == "user-agent" || f == "useragent" || f == "user agent") return Field::kUserAgent;
  if (f == "allow") return Field::kAllow;
  // Misspellings seen in the wild (as Google's and Scrapy's parsers accept them).
  if (f == "disallow" || f == "dissallow" || f == "dissalow" || f == "disalow" || f == "diasllow" ||
      f == "disallaw") {
    return Field::kDisallow;
  }
  if (f == "crawl-delay" || f == "crawl delay") return Field::kCrawlDelay;
  return Field::kOther;
}

// The product token a user-agent line names: its value up to a '/', a space or a '(' , lower
// case ("NewsFlow/1.0 (+https://...)" -> "newsflow").
std::string product_of(std::string_view value) {
  const std::size_t end = value.find_first_of("/ \t(");
  return extractors::ascii_lower(value.substr(0, end));
}

}  // namespace

RobotsRules RobotsRules::allow_all() { return RobotsRules(); }

RobotsRules RobotsRules::disallow_all() {
  RobotsRules r;
  r.disallow_everything_ = true;
  return r;
}

RobotsRules RobotsRules::parse(std::string_view body, std::string_view product) {
  if (body.size() > kMaxRobotsBytes) {
    body = body.substr(0, kMaxRobotsBytes);
    if (const auto nl = body.rfind('\n'); nl != body.npos) body = body.substr(0, nl);
  }
  if (body.starts_with("\xEF\xBB\xBF")) body.remove_prefix(3);
  const std::string token = extractors::ascii_lower(product);
  RobotsRules named, star;
  bool any_named = false, any_star = false;
  // The groups the current lines belong to: whether they name us and whether they are '*'.
  bool in_named = false, in_star = false, after_rules = true;
  std::size_t pos = 0;
  while (pos < body.size()) {
    std::size_t eol = body.find_first_of("\r\n", pos);
    if (eol == body.npos) eol = body.size();
    std::string_view line = body.substr(pos, eol - pos);
    pos = eol + 1;
    if (const auto hash = line.find('#'); hash != line.npos) line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) continue;
    std::string_view name, value;
    if (const auto colon = line.find(':'); colon != line.npos) {
      name = trim(line.substr(0, colon));
      value = trim(line.substr(colon + 1));
    } else if (const auto space = line.find_first_of(" \t"); space != line.npos) {
      name = line.substr(0, space);  // "Disallow /x": a missing colon, as lenient parsers read it
      value = trim(line.substr(space));
    } else {
      continue;
    }
    const Field field = field_of(name);
    if (field == Field::kUserAgent) {
      if (after_rules) in_named = in_star = false;  // a new group starts
      after_rules = false;
      if (value == "*") {
        in_star = any_star = true;
      } else if (!value.empty() && product_of(value) == token) {
        in_named = any_named = true;
      }
      continue;
    }
    if (field == Field::kOther) continue;  // sitemap, host, ...: they end no group
    after_rules = true;
    if (!in_named && !in_star) continue;
    if (field == Field::kCrawlDelay) {
      double seconds = 0;
      const std::string v(value);
      char* end = nullptr;
      seconds = std::strtod(v.c_str(), &end);
      if (end != v.c_str() && std::isfinite(seconds) && seconds >= 0) {
        if (in_named) named.crawl_delay_ = seconds;
        if (in_star) star.crawl_delay_ = seconds;
      }
      continue;
    }
    if (value.empty()) continue;  // "Disallow:" allows everything: no rule
    std::string pattern(value.substr(0, kMaxPatternBytes));
    if (pattern.front() != '/' && pattern.front() != '*') pattern.insert(0, "/");
    pattern = normalize(pattern, true);
    if (in_named && named.rules_.size() < kMaxRules) {
      named.rules_.push_back({pattern, field == Field::kAllow});
    }
    if (in_star && star.rules_.size() < kMaxRules) {
      star.rules_.push_back({pattern, field == Field::kAllow});
    }
  }
  if (any_named) return named;
  if (any_star) return star;
  return RobotsRules();
}

bool RobotsRules::allows(std::string_view path) const {
  if (path == "/robots.txt") return true;  // 2.2.2: always allowed
  if (disallow_everything_) return false;
  if (path.size() > kMaxPathBytes) return false;
  const std::string p = normalize(path.empty() ? "/" : path, false);
  const Rule* best = nullptr;
  for (const Rule& r : rules_) {
    if (!matches(r.pattern, p)) continue;
    if (!best || r.pattern.size() > best->pattern.size() ||
        (r.pattern.size() == best->pattern.size() && r.allow && !best->allow)) {
      best = &r;
    }
  }
  return !best || best->allow;
}

namespace {

struct UrlParts {
  std::string scheme, host, port, path, query;
};

std::optional<UrlParts> parts_of(std::string_view url) {
  std::unique_ptr<CURLU, void (*)(CURLU*)> u(curl_url(), curl_url_cleanup);
  if (!u) return std::nullopt;
  const std::string s(url);
  if (curl_url_set(u.get(), CURLUPART_URL, s.c_str(), 0) != CURLUE_OK) return std::nullopt;
  UrlParts out;
  auto get = [&u](CURLUPart part, std::string& into, unsigned flags = 0) {
    char* v = nullptr;
    if (curl_url_get(u.get(), part, &v, flags) != CURLUE_OK || !v) return false;
    into = v;
    curl_free(v);
    return true;
  };
  if (!get(CURLUPART_SCHEME, out.scheme) || !get(CURLUPART_HOST, out.host)) return std::nullopt;
  get(CURLUPART_PORT, out.port);
  get(CURLUPART_PATH, out.path);
  get(CURLUPART_QUERY, out.query);
  out.scheme = extractors::ascii_lower(out.scheme);
  out.host = extractors::ascii_lower(out.host);
  return out;
}

}  // namespace

std::optional<std::string> robots_path(std::string_view url) {
  auto p = parts_of(url);
  if (!p) return std::nullopt;
  std::string out = p->path.empty() ? "/" : p->path;
  if (!p->query.empty()) out += "?" + p->query;
  return out;
}

std::optional<std::string> robots_origin(std::string_view url) {
  auto p = parts_of(url);
  if (!p || (p->scheme != "http" && p->scheme != "https")) return std::nullopt;
  std::string out = p->scheme + "://" + p->host;
  // curl reports the port only when the URL gives one; a default port is no part of the origin.
  const bool default_port = p->port.empty() || (p->scheme == "http" && p->port == "80") ||
                            (p->scheme == "https" && p->port == "443");
  if (!default_port) out += ":" + p->port;
  return out;
}

int run_robots(const std::string& file, const std::vector<std::string>& paths,
               const std::string& agent, bool batch) {
  auto path_of = [](const std::string& p) {
    if (p.starts_with("/")) return p;
    return robots_path(p).value_or(p);
  };
  if (batch) {
    for (std::string line; std::getline(std::cin, line);) {
      const auto j = nlohmann::json::parse(line, nullptr, false);
      if (!j.is_object() || !j.contains("robots") || !j["robots"].is_string()) {
        std::fprintf(stderr, "robots: not a {\"robots\", \"paths\"} line\n");
        return 1;
      }
      const RobotsRules rules = RobotsRules::parse(j["robots"].get<std::string>(), agent);
      nlohmann::json out{{"allowed", nlohmann::json::array()}};
      for (const auto& p : j.value("paths", nlohmann::json::array())) {
        out["allowed"].push_back(p.is_string() && rules.allows(path_of(p.get<std::string>())));
      }
      out["crawl_delay"] = rules.crawl_delay() ? nlohmann::json(*rules.crawl_delay()) : nullptr;
      std::printf("%s\n", out.dump().c_str());
    }
    return 0;
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "robots: cannot read %s\n", file.c_str());
    return 1;
  }
  std::ostringstream text;
  text << in.rdbuf();
  const RobotsRules rules = RobotsRules::parse(text.str(), agent);
  for (const auto& p : paths) {
    std::printf("%s %s\n", rules.allows(path_of(p)) ? "allow" : "disallow", path_of(p).c_str());
  }
  if (rules.crawl_delay()) std::printf("crawl-delay %g\n", *rules.crawl_delay());
  return 0;
}

}  // namespace newsflow::daemon
