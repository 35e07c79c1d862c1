#include "extractors/metadata.h"

#include <nlohmann/json.hpp>

#include "extractors/text.h"

namespace newsflow::extractors {
namespace {

std::string_view find_meta(const RawMetadata& raw, std::string_view name) {
  for (const auto& [key, content] : raw.metas) {
    if (key == name && !content.empty()) return content;
  }
  return {};
}

// The string value of the first `"key": "value"` in a JSON-LD body, JSON escapes left as they
// are except \" and \/; good enough for headlines and dates.
std::string json_ld_string(const std::vector<std::string>& bodies, std::string_view key) {
  const std::string quoted = "\"" + std::string(key) + "\"";
  for (const auto& body : bodies) {
    std::size_t pos = body.find(quoted);
    if (pos == std::string::npos) continue;
    pos += quoted.size();
    while (pos < body.size() && (body[pos] == ' ' || body[pos] == '\n' || body[pos] == '\t' ||
                                 body[pos] == '\r' || body[pos] == ':')) {
      ++pos;
    }
    if (pos >= body.size() || body[pos] != '"') continue;
    std::string value;
    for (++pos; pos < body.size() && body[pos] != '"'; ++pos) {
      if (body[pos] == '\\' && pos + 1 < body.size()) {
        const char next = body[++pos];
        if (next == '"' || next == '/' || next == '\\') {
          value += next;
        } else if (next == 'n' || next == 't') {
          value += ' ';
        } else {
          value += '\\';
          value += next;
        }
      } else {
        value += body[pos];
      }
    }
    if (!value.empty()) return collapse_whitespace(value);
  }
  return {};
}

// Author names of JSON-LD bodies: "author" of the objects (and their @graph) as a string, an
// object with "name", or a list of either.
void json_ld_authors(const nlohmann::json& j, std::vector<std::string>& out, int depth) {
  if (depth > 6 || out.size() >= 8) return;
  if (j.is_array()) {
    for (const auto& v : j) json_ld_authors(v, out, depth + 1);
    return;
  }
  if (!j.is_object()) return;
  if (const auto a = j.find("author"); a != j.end()) {
    const auto add = [&out](const nlohmann::json& v) {
      if (v.is_string()) {
        out.push_back(v.get<std::string>());
      } else if (v.is_object()) {
        if (const auto n = v.find("name"); n != v.end() && n->is_string()) {
          out.push_back(n->get<std::string>());
        }
      }
    };
    if (a->is_array()) {
      for (const auto& v : *a) add(v);
    } else {
      add(*a);
    }
  }
  if (const auto g = j.find("@graph"); g != j.end()) json_ld_authors(*g, out, depth + 1);
}

// `body` with every JSON string literal longer than `max_bytes` (article bodies, descriptions)
// replaced by "": the structure and the short strings (names) are kept, and the JSON parser no
// longer lexes the article a second time. Unterminated strings are kept as they are (the parse
// then fails as it would have).
std::string without_long_strings(std::string_view body, std::size_t max_bytes) {
  std::string out;
  out.reserve(std::min<std::size_t>(body.size(), 4096));
  std::size_t copied = 0;
  for (std::size_t open = body.find('"'); open != std::string_view::npos;) {
    std::size_t close = open + 1;
    while (true) {  // the next quote not escaped by an odd run of backslashes
      close = body.find('"', close);
      if (close == std::string_view::npos) break;
      std::size_t slashes = 0;
      while (close - slashes > open + 1 && body[close - 1 - slashes] == '\\') ++slashes;
      if (slashes % 2 == 0) break;
      ++close;
    }
    if (close == std::string_view::npos) break;
    if (close - open - 1 > max_bytes) {
      out.append(body.substr(copied, open - copied));
      out += "\"\"";
      copied = close + 1;
    }
    open = body.find('"', close + 1);
  }
  out.append(body.substr(copied));
  return out;
}

std::string_view url_scheme(std::string_view url) {
  const auto colon = url.find("://");
  if (colon == std::string_view::npos) return {};
  return url.substr(0, colon);
}

}  // namespace

std::string clean_byline(std::string_view text) {
  std::string s = collapse_whitespace(text);
  const std::string lower = ascii_lower(s.substr(0, 8));
  if (lower.starts_with("http://") || lower.starts_with("https://") || s.size() > 200) return {};
  for (std::string_view prefix : {"by ", "von ", "par ", "por ", "door ", "di "}) {
    if (lower.starts_with(prefix)) {
      s.erase(0, prefix.size());
      break;
    }
  }
  // "A and B" -> "A, B"
  for (std::size_t p; (p = s.find(" and ")) != std::string::npos;) s.replace(p, 5, ", ");
  while (!s.empty() && (s.back() == ',' || s.back() == ' ')) s.pop_back();
  return s.size() >= 2 ? s : std::string();
}

std::string resolve_url(std::string_view base, std::string_view href) {
  std::string h = collapse_whitespace(href);
  if (h.empty() || h.starts_with("#") || h.starts_with("javascript:")) return std::string(base);
  const std::string lower = ascii_lower(h.substr(0, 8));
  if (lower.starts_with("http://") || lower.starts_with("https://")) return h;
  const std::string_view scheme = url_scheme(base);
  if (scheme.empty()) return std::string(base);
  if (h.starts_with("//")) return std::string(scheme) + ":" + h;
  const std::size_t host_start = scheme.size() + 3;
  std::size_t path_start = base.find('/', host_start);
  if (path_start == std::string_view::npos) path_start = base.size();
  const std::string origin(base.substr(0, path_start));
  if (h.starts_with("/")) return origin + h;
  // Relative path: drop query, fragment and the last segment of the base path.
  std::string_view path = base.substr(path_start);
  path = path.substr(0, path.find_first_of("?#"));
  const auto slash = path.rfind('/');
  const std::string dir =
      slash == std::string_view::npos ? "/" : std::string(path.substr(0, slash + 1));
  return origin + dir + h;
}

std::string url_source(std::string_view url) {
  const std::string_view scheme = url_scheme(url);
  if (scheme.empty()) return {};
  std::string_view rest = url.substr(scheme.size() + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  if (const auto at = rest.rfind('@'); at != std::string_view::npos) rest = rest.substr(at + 1);
  if (!rest.starts_with("[")) rest = rest.substr(0, rest.find(':'));
  std::string host = ascii_lower(rest);
  if (host.starts_with("www.")) host.erase(0, 4);
  return host;
}

PageMetadata resolve_metadata(const RawMetadata& raw, std::string_view url) {
  PageMetadata out;
  // Held here: a view of a temporary inside the list below would dangle.
  const std::string ld_headline = json_ld_string(raw.json_ld, "headline");
  for (std::string_view candidate :
       {find_meta(raw, "og:title"), std::string_view(ld_headline), std::string_view(raw.first_h1),
        find_meta(raw, "twitter:title"), std::string_view(raw.title_tag)}) {
    if (!candidate.empty()) {
      out.title = collapse_whitespace(candidate);
      break;
    }
  }
  std::string_view canonical = raw.canonical_href;
  if (canonical.empty()) canonical = find_meta(raw, "og:url");
  out.canonical_url = canonical.empty() ? std::string(url) : resolve_url(url, canonical);
  out.source = url_source(out.canonical_url);
  if (out.source.empty()) out.source = url_source(url);

  std::string lang = raw.html_lang;
  if (lang.empty()) lang = std::string(find_meta(raw, "content-language"));
  if (lang.empty()) lang = std::string(find_meta(raw, "og:locale"));
  lang = ascii_lower(collapse_whitespace(lang));
  if (lang.size() >= 2 && lang[0] >= 'a' && lang[0] <= 'z' && lang[1] >= 'a' && lang[1] <= 'z' &&
      (lang.size() == 2 || lang[2] == '-' || lang[2] == '_')) {
    out.lang = lang.substr(0, 2);
  }

  std::vector<std::string> names;
  for (const auto& body : raw.json_ld) {
    if (body.find("\"author\"") == std::string::npos) continue;
    const auto j = nlohmann::json::parse(without_long_strings(body, 1024), nullptr, false);
    if (!j.is_discarded()) json_ld_authors(j, names, 0);
  }
  std::string ld_authors;
  for (const auto& n : names) {
    const std::string c = clean_byline(n);
    if (c.empty() || ld_authors.find(c) != std::string::npos) continue;
    if (!ld_authors.empty()) ld_authors += ", ";
    ld_authors += c;
  }
  for (std::string_view candidate :
       {std::string_view(ld_authors), find_meta(raw, "author"), find_meta(raw, "article:author"),
        find_meta(raw, "byl"), find_meta(raw, "parsely-author"), find_meta(raw, "sailthru.author"),
        find_meta(raw, "dc.creator"), find_meta(raw, "dcterms.creator"),
        std::string_view(raw.markup_byline)}) {
    if (std::string c = clean_byline(candidate); !c.empty()) {
      out.byline = std::move(c);
      break;
    }
  }

  const std::string ld_date = json_ld_string(raw.json_ld, "datePublished");
  for (std::string_view candidate :
       {find_meta(raw, "article:published_time"), std::string_view(ld_date),
        find_meta(raw, "datepublished"), find_meta(raw, "pubdate"), find_meta(raw, "publishdate"),
        find_meta(raw, "date"), find_meta(raw, "dc.date"), find_meta(raw, "og:published_time"),
        std::string_view(raw.first_time)}) {
    if (candidate.empty()) continue;
    if (auto t = parse_iso8601(candidate)) {
      out.published_at = t;
      break;
    }
  }
  return out;
}

}  // namespace newsflow::extractors
