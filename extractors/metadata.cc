#include "extractors/metadata.h"

#include <curl/curl.h>
#include <libpsl.h>

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

namespace {

// A curl URL handle that frees itself.
struct Url {
  CURLU* u = curl_url();
  Url() = default;
  Url(const Url&) = delete;
  Url& operator=(const Url&) = delete;
  ~Url() { curl_url_cleanup(u); }
  // The part, or empty.
  std::string get(CURLUPart part, unsigned flags = 0) const {
    char* out = nullptr;
    if (curl_url_get(u, part, &out, flags) != CURLUE_OK || !out) return {};
    std::string s(out);
    curl_free(out);
    return s;
  }
  bool set(CURLUPart part, const std::string& value, unsigned flags) {
    return curl_url_set(u, part, value.c_str(), flags) == CURLUE_OK;
  }
};

constexpr unsigned kParseFlags = CURLU_NON_SUPPORT_SCHEME | CURLU_URLENCODE;

// Query parameters that say how a reader came, not what the page is.
bool tracking_parameter(std::string_view name) {
  const std::string n = ascii_lower(name);
  if (n.starts_with("utm_")) return true;
  for (std::string_view t :
       {"fbclid", "gclid", "dclid", "msclkid", "yclid", "mc_cid", "mc_eid", "igshid", "_ga", "_gl",
        "ocid", "cmpid", "ns_source", "ns_campaign", "ns_mchannel", "smid", "sr_share"}) {
    if (n == t) return true;
  }
  return false;
}

}  // namespace

std::string resolve_url(std::string_view base, std::string_view href) {
  const std::string h = collapse_whitespace(href);
  if (h.empty() || h.starts_with("#") || ascii_lower(h.substr(0, 11)) == "javascript:") {
    return std::string(base);
  }
  // RFC 3986 reference resolution by libcurl's URL API: dot segments, query-only and
  // scheme-relative references, IDN and IPv6 hosts. An absolute URL of another scheme stays
  // what it is (the fetcher refuses it), never rewritten onto the base's host.
  Url url;
  const bool has_base = url.set(CURLUPART_URL, std::string(base), kParseFlags);
  if (!url.set(CURLUPART_URL, h, kParseFlags)) return std::string(base);
  (void)has_base;
  std::string out = url.get(CURLUPART_URL);
  return out.empty() ? std::string(base) : out;
}

std::string canonical_url(std::string_view url) {
  Url u;
  if (!u.set(CURLUPART_URL, std::string(url), kParseFlags)) return std::string(url);
  const std::string scheme = ascii_lower(u.get(CURLUPART_SCHEME));
  if (scheme != "http" && scheme != "https") return std::string(url);
  u.set(CURLUPART_HOST, ascii_lower(u.get(CURLUPART_HOST)), 0);
  u.set(CURLUPART_FRAGMENT, "", 0);
  curl_url_set(u.u, CURLUPART_FRAGMENT, nullptr, 0);
  const std::string port = u.get(CURLUPART_PORT);
  if ((scheme == "http" && port == "80") || (scheme == "https" && port == "443")) {
    curl_url_set(u.u, CURLUPART_PORT, nullptr, 0);
  }
  const std::string query = u.get(CURLUPART_QUERY);
  if (!query.empty()) {
    std::string kept;
    std::size_t pos = 0;
    while (pos <= query.size()) {
      std::size_t end = query.find('&', pos);
      if (end == std::string::npos) end = query.size();
      const std::string_view param = std::string_view(query).substr(pos, end - pos);
      pos = end + 1;
      if (param.empty() || tracking_parameter(param.substr(0, param.find('=')))) continue;
      if (!kept.empty()) kept += '&';
      kept.append(param);
    }
    curl_url_set(u.u, CURLUPART_QUERY, kept.empty() ? nullptr : kept.c_str(), 0);
  }
  const std::string out = u.get(CURLUPART_URL);
  return out.empty() ? std::string(url) : out;
}

std::string url_scheme_of(std::string_view url) {
  Url u;
  if (!u.set(CURLUPART_URL, std::string(url), kParseFlags)) return {};
  return ascii_lower(u.get(CURLUPART_SCHEME));
}

std::string url_host(std::string_view url) {
  Url u;
  if (!u.set(CURLUPART_URL, std::string(url), kParseFlags)) return {};
  std::string host = ascii_lower(u.get(CURLUPART_HOST));
  if (host.starts_with("[") && host.ends_with("]")) host = host.substr(1, host.size() - 2);
  return host;
}

std::string url_source(std::string_view url) {
  std::string host = url_host(url);
  if (host.empty()) return {};
  // An outlet is its registrable domain (the Public Suffix List's eTLD+1): news.bbc.co.uk and
  // www.bbc.co.uk are one source. IP addresses and hosts the list does not know stay as they are.
  const bool ip = host.find(':') != std::string::npos ||
                  host.find_first_not_of("0123456789.") == std::string::npos;
  if (!ip) {
    if (const char* domain = psl_registrable_domain(psl_builtin(), host.c_str())) return domain;
  }
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
