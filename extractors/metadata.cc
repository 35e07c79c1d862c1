#include "extractors/metadata.h"

#include <curl/curl.h>
#include <libpsl.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

#include "extractors/page.h"
#include "extractors/text.h"

namespace newsflow::extractors {
namespace {

// JSON-LD nested deeper than this is not read (a real one nests three or four levels; 100,000
// levels would overflow the stack of whatever walks it).
constexpr std::size_t kMaxJsonLdDepth = 64;
// Nor a body longer than this once its long strings are cut (`without_long_strings`): a real one
// is a few KB, and a parsed document takes some twenty times its text in memory.
constexpr std::size_t kMaxJsonLdBytes = 512 * 1024;

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
// Eight names at most: a list of a million authors is read no further than that.
void json_ld_authors(const nlohmann::json& j, std::vector<std::string>& out, int depth) {
  constexpr std::size_t kMaxNames = 8;
  if (depth > 6 || out.size() >= kMaxNames) return;
  if (j.is_array()) {
    for (const auto& v : j) {
      if (out.size() >= kMaxNames) break;
      json_ld_authors(v, out, depth + 1);
    }
    return;
  }
  if (!j.is_object()) return;
  if (const auto a = j.find("author"); a != j.end()) {
    const auto add = [&out](const nlohmann::json& v) {
      if (out.size() >= kMaxNames) return;
      if (v.is_string()) {
        out.push_back(v.get<std::string>());
      } else if (v.is_object()) {
        if (const auto n = v.find("name"); n != v.end() && n->is_string()) {
          out.push_back(n->get<std::string>());
        }
      }
    };
    if (a->is_array()) {
      for (const auto& v : *a) {
        if (out.size() >= kMaxNames) break;
        add(v);
      }
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

// A JSON-LD body parsed, or discarded when it is too deep, too long or not JSON.
nlohmann::json parse_json_ld(std::string_view body, std::size_t max_string_bytes) {
  if (json_nesting_exceeds(body, kMaxJsonLdDepth)) return nlohmann::json::value_t::discarded;
  const std::string text = without_long_strings(body, max_string_bytes);
  if (text.size() > kMaxJsonLdBytes) return nlohmann::json::value_t::discarded;
  return nlohmann::json::parse(text, nullptr, false);
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

namespace {

// `resolve_metadata` with the page's JSON-LD objects already parsed (or null: parsed here).
PageMetadata resolve_basic(const RawMetadata& raw, std::string_view url,
                           const std::vector<const nlohmann::json*>* objects) {
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
  if (objects) {
    // (A @graph member is listed and followed both: a name met twice is kept once below.)
    for (const nlohmann::json* o : *objects) {
      if (o->contains("author")) json_ld_authors(*o, names, 0);
    }
  } else {
    for (const auto& body : raw.json_ld) {
      if (body.find("\"author\"") == std::string::npos) continue;
      const auto j = parse_json_ld(body, 1024);
      if (!j.is_discarded()) json_ld_authors(j, names, 0);
    }
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

  // The page path (`resolve_metadata` with the page) chooses the dates itself: not read twice.
  if (objects) return out;
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

}  // namespace

PageMetadata resolve_metadata(const RawMetadata& raw, std::string_view url) {
  return resolve_basic(raw, url, nullptr);
}

namespace {

// ---------------------------------------------------------------------------------------------
// JSON-LD read as objects.

template <std::size_t N>
bool has_type(const nlohmann::json& o, const std::array<std::string_view, N>& types) {
  const auto t = o.find("@type");
  if (t == o.end()) return false;
  const auto matches = [&types](const nlohmann::json& v) {
    if (!v.is_string()) return false;
    std::string_view name = v.get_ref<const std::string&>();
    if (const std::size_t colon = name.rfind(':'); colon != std::string_view::npos) {
      name.remove_prefix(colon + 1);  // "schema:NewsArticle"
    }
    if (const std::size_t slash = name.rfind('/'); slash != std::string_view::npos) {
      name.remove_prefix(slash + 1);  // "http://schema.org/NewsArticle"
    }
    return std::find(types.begin(), types.end(), name) != types.end();
  };
  if (t->is_array()) return std::any_of(t->begin(), t->end(), matches);
  return matches(*t);
}

constexpr std::array<std::string_view, 19> kArticleTypes = {"NewsArticle",
                                                            "Article",
                                                            "BlogPosting",
                                                            "ReportageNewsArticle",
                                                            "AnalysisNewsArticle",
                                                            "OpinionNewsArticle",
                                                            "ReviewNewsArticle",
                                                            "BackgroundNewsArticle",
                                                            "LiveBlogPosting",
                                                            "Report",
                                                            "ScholarlyArticle",
                                                            "TechArticle",
                                                            "SocialMediaPosting",
                                                            "DiscussionForumPosting",
                                                            "AdvertiserContentArticle",
                                                            "SatiricalArticle",
                                                            "Blog",
                                                            "PressRelease",
                                                            "VideoObject"};
constexpr std::array<std::string_view, 7> kPageTypes = {
    "WebPage", "ItemPage", "AboutPage", "CollectionPage", "ProfilePage", "QAPage", "MediaObject"};

// The page's JSON-LD bodies parsed, and every object of them: top-level ones, list members and
// @graph members, in order (nested objects such as an author are not listed). The objects point
// into the documents: nothing is copied.
struct JsonLd {
  std::vector<nlohmann::json> documents;
  std::vector<const nlohmann::json*> objects;
};

JsonLd read_json_ld(const std::vector<std::string>& bodies) {
  JsonLd out;
  for (const auto& body : bodies) {
    auto j = parse_json_ld(body, 4096);
    if (!j.is_discarded()) out.documents.push_back(std::move(j));
  }
  const auto collect = [&out](const auto& self, const nlohmann::json& j, int depth) -> void {
    if (depth > 4 || out.objects.size() >= 64) return;
    if (j.is_array()) {
      for (const auto& v : j) {
        if (out.objects.size() >= 64) break;
        self(self, v, depth + 1);
      }
    } else if (j.is_object()) {
      out.objects.push_back(&j);
      if (const auto g = j.find("@graph"); g != j.end()) self(self, *g, depth + 1);
    }
  };
  for (const auto& j : out.documents) collect(collect, j, 0);
  return out;
}

// The object that describes the page's article: the first of an article type, else of a page
// type with a date or headline, else the first with a datePublished.
const nlohmann::json* main_object(const std::vector<const nlohmann::json*>& objects) {
  for (const nlohmann::json* o : objects) {
    if (has_type(*o, kArticleTypes)) return o;
  }
  for (const nlohmann::json* o : objects) {
    if (has_type(*o, kPageTypes) && (o->contains("datePublished") || o->contains("headline"))) {
      return o;
    }
  }
  for (const nlohmann::json* o : objects) {
    if (o->contains("datePublished")) return o;
  }
  return nullptr;
}

std::string string_of(const nlohmann::json* o, std::string_view key) {
  if (!o) return {};
  const auto v = o->find(key);
  if (v == o->end()) return {};
  if (v->is_string()) return collapse_whitespace(v->get_ref<const std::string&>());
  if (v->is_array() && !v->empty() && v->front().is_string()) {
    return collapse_whitespace(v->front().get_ref<const std::string&>());
  }
  if (v->is_number_integer()) return std::to_string(v->get<long long>());
  return {};
}

int size_of(const nlohmann::json& o, std::string_view key) {
  const auto v = o.find(key);
  if (v == o.end()) return 0;
  if (v->is_number_integer())
    return static_cast<int>(std::clamp<long long>(v->get<long long>(), 0, 100000));
  if (v->is_number()) return static_cast<int>(std::clamp(v->get<double>(), 0.0, 100000.0));
  if (v->is_string()) {
    int n = 0;
    for (char c : v->get_ref<const std::string&>()) {
      if (c < '0' || c > '9' || n > 100000) break;
      n = n * 10 + (c - '0');
    }
    return n;
  }
  if (v->is_object()) {  // QuantitativeValue
    const auto value = v->find("value");
    if (value != v->end() && value->is_number()) {
      return static_cast<int>(std::clamp(value->get<double>(), 0.0, 100000.0));
    }
  }
  return 0;
}

// The first image of a JSON-LD "image" value: a URL, an ImageObject, or a list of either.
std::optional<LeadImage> json_ld_image(const nlohmann::json& v, int depth = 0) {
  if (depth > 3) return std::nullopt;
  if (v.is_string())
    return LeadImage{collapse_whitespace(v.get_ref<const std::string&>()), 0, 0, {}};
  if (v.is_array()) {
    for (const auto& e : v) {
      if (auto img = json_ld_image(e, depth + 1)) return img;
    }
    return std::nullopt;
  }
  if (!v.is_object()) return std::nullopt;
  LeadImage img;
  for (const char* key : {"url", "contentUrl", "@id"}) {
    if (const auto u = v.find(key);
        u != v.end() && u->is_string() && !u->get_ref<const std::string&>().empty()) {
      img.url = collapse_whitespace(u->get_ref<const std::string&>());
      break;
    }
  }
  if (img.url.empty()) return std::nullopt;
  img.width = size_of(v, "width");
  img.height = size_of(v, "height");
  if (const auto c = v.find("caption"); c != v.end() && c->is_string()) {
    img.caption = collapse_whitespace(c->get_ref<const std::string&>());
  }
  return img;
}

// A reference that names a scheme other than http(s) (javascript:, data:, file:): never an
// image URL, however resolution would read it.
bool other_scheme(std::string_view ref) {
  const std::size_t colon = ref.find(':');
  if (colon == std::string_view::npos || ref.find_first_of("/?#") < colon) return false;
  const std::string scheme = ascii_lower(collapse_whitespace(ref.substr(0, colon)));
  return scheme != "http" && scheme != "https";
}

bool is_http_url(std::string_view url) {
  const std::string scheme = url_scheme_of(url);
  return (scheme == "http" || scheme == "https") && !url_host(url).empty();
}

// Words that name a role or a desk, not a person ("Staff Writer", "Redaktion"): dropped at the
// end of a name, and a name of nothing else is none.
bool is_role_word(std::string_view lower) {
  static constexpr std::string_view kRoles[] = {"staff",
                                                "writer",
                                                "writers",
                                                "reporter",
                                                "reporters",
                                                "correspondent",
                                                "correspondents",
                                                "editor",
                                                "editors",
                                                "contributor",
                                                "contributors",
                                                "contributing",
                                                "senior",
                                                "chief",
                                                "redaktion",
                                                "redakteur",
                                                "redakteurin",
                                                "autor",
                                                "autorin",
                                                "author",
                                                "authors",
                                                "journalist",
                                                "correspondant",
                                                "rédaction",
                                                "redacción",
                                                "redazione",
                                                "redactie",
                                                "admin",
                                                "administrator",
                                                "guest",
                                                "newsroom",
                                                "staffer",
                                                "columnist",
                                                "photographer",
                                                "by",
                                                "and",
                                                "red",
                                                "desk",
                                                "team"};
  return std::find(std::begin(kRoles), std::end(kRoles), lower) != std::end(kRoles);
}

}  // namespace

std::vector<std::string> split_authors(std::string_view text) {
  std::string s = collapse_whitespace(text);
  std::vector<std::string> out;
  if (s.empty() || s.size() > 400) return out;
  const std::string lower_head = ascii_lower(s.substr(0, 8));
  if (lower_head.starts_with("http://") || lower_head.starts_with("https://")) return out;
  // What is in parentheses is a note ("(www.dw.com)", "(left)"); quotes are not names (an
  // apostrophe inside a word, O'Brien, is).
  std::string plain;
  int depth = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '(') ++depth;
    const bool inside_word = c == '\'' && i > 0 && i + 1 < s.size() && s[i - 1] != ' ' &&
                             s[i + 1] != ' ' && s[i - 1] != ',' && s[i + 1] != ',';
    if (depth == 0 && c != '"' && (c != '\'' || inside_word)) plain += c;
    if (c == ')' && depth > 0) --depth;
  }
  // A date or a time ends the names ("Jane Doe 7 June 2020", "Jane Doe, Updated 12:30").
  if (const auto dates = find_text_dates(plain, SlashOrder::kDayFirst, 1); !dates.empty()) {
    plain.resize(dates.front().offset);
  }
  for (std::size_t i = 0; i + 3 < plain.size(); ++i) {
    if (plain[i] >= '0' && plain[i] <= '9' && (plain[i + 1] == ':' || plain[i + 2] == ':')) {
      plain.resize(i);
      break;
    }
  }
  // Separators between names, in the languages newsflow reads, as one ',' each.
  std::string spaced = " " + plain + " ";
  for (std::string_view sep :
       {" and ", " And ", " AND ",  " und ", " y ",    " et ",  " e ",  " en ",
        " i ",   " и ",   " ve ",   " og ",  " och ",  " ja ",  " és ", " dan ",
        " & ",   " / ",   " | ",    " · ",   " • ",    " - ",   " — ",  " – ",
        ";",     "|",     " with ", " mit ", " avec ", " con ", " com "}) {
    for (std::size_t p; (p = spaced.find(sep)) != std::string::npos;) {
      spaced.replace(p, sep.size(), ",");
    }
  }
  std::size_t pos = 0;
  while (pos <= spaced.size() && out.size() < 20) {
    std::size_t end = spaced.find(',', pos);
    if (end == std::string::npos) end = spaced.size();
    std::string part = collapse_whitespace(std::string_view(spaced).substr(pos, end - pos));
    pos = end + 1;
    // Leading "By", "Von", "Text:", "Analysis by".
    for (bool again = true; again;) {
      again = false;
      const std::string lower = ascii_lower(part);
      for (std::string_view prefix :
           {"by ",           "von ",         "par ",         "por ",        "door ",
            "di ",           "de ",          "av ",          "przez ",      "written by ",
            "posted by ",    "reported by ", "analysis by ", "opinion by ", "commentary by ",
            "interview by ", "text: ",       "text ",        "autor: ",     "autorin: ",
            "author: ",      "texte: ",      "texto: ",      "testo: ",     "von: ",
            "by: ",          "foto: ",       "fotos: ",      "photo: ",     "автор: ",
            "автор ",        "yazar: ",      "كتب ",         "بقلم "}) {
        if (lower.starts_with(prefix)) {
          part.erase(0, prefix.size());
          again = !part.empty();
          break;
        }
      }
    }
    // Words with an e-mail address or a URL are not part of a name.
    std::vector<std::string_view> words;
    for (std::size_t w = 0; w < part.size();) {
      std::size_t e = part.find(' ', w);
      if (e == std::string::npos) e = part.size();
      const std::string_view word = std::string_view(part).substr(w, e - w);
      w = e + 1;
      if (word.empty() || word.find('@') != std::string_view::npos ||
          word.find("://") != std::string_view::npos) {
        continue;
      }
      words.push_back(word);
    }
    // Roles at the end ("Jane Doe, Staff Writer"; "AP Auto Writer" keeps "AP Auto").
    const auto role = [](std::string_view word) {
      std::string lower = ascii_lower(word);
      while (!lower.empty() && (lower.back() == '.' || lower.back() == ':')) lower.pop_back();
      return is_role_word(lower);
    };
    while (!words.empty() && role(words.back())) words.pop_back();
    std::size_t first = 0;
    while (first < words.size() && role(words[first])) ++first;
    std::string name;
    for (std::size_t k = first; k < words.size(); ++k) {
      if (!name.empty()) name += ' ';
      name.append(words[k]);
    }
    while (!name.empty() && (name.back() == '.' || name.back() == ':' || name.back() == '-')) {
      name.pop_back();
    }
    if (name.size() < 2 || words.size() - first > 6 || name.size() > 80) continue;
    const std::string lower_name = ascii_lower(name);
    if (std::any_of(out.begin(), out.end(),
                    [&lower_name](const std::string& n) { return ascii_lower(n) == lower_name; })) {
      continue;
    }
    out.push_back(std::move(name));
  }
  return out;
}

std::string cut_description(std::string_view text, std::size_t max_chars) {
  std::string s = collapse_whitespace(text);
  // Characters, not bytes: count UTF-8 lead bytes.
  std::size_t chars = 0, cut = s.size();
  for (std::size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;
    if (chars == max_chars) {
      cut = i;
      break;
    }
    ++chars;
  }
  if (cut == s.size()) return s;
  const std::string_view head = std::string_view(s).substr(0, cut);
  // The last sentence end inside, if it keeps more than half.
  std::size_t best = std::string_view::npos;
  for (std::string_view end : {". ", "! ", "? ", "。", "！", "？"}) {
    const std::size_t p = head.rfind(end);
    if (p != std::string_view::npos && (best == std::string_view::npos || p > best)) best = p;
  }
  if (best != std::string_view::npos && best > cut / 2) {
    const std::size_t keep =
        head[best] == '.' || head[best] == '!' || head[best] == '?' ? best + 1 : best + 3;
    return std::string(head.substr(0, keep));
  }
  std::size_t space = head.rfind(' ');
  if (space == std::string_view::npos || space < cut / 2) space = cut;
  std::string out(head.substr(0, space));
  while (!out.empty() && (out.back() == ',' || out.back() == ';' || out.back() == ':'))
    out.pop_back();
  return out + "\xE2\x80\xA6";  // …
}

PageMetadata resolve_metadata(const ParsedPage& page, std::string_view url,
                              const MetadataContext& context) {
  const RawMetadata& raw = page.metadata;
  const JsonLd json_ld = read_json_ld(raw.json_ld);
  const std::vector<const nlohmann::json*>& objects = json_ld.objects;
  PageMetadata out = resolve_basic(raw, url, &objects);
  FieldSources& sources = out.sources;
  const nlohmann::json* main = main_object(objects);

  // The article's words, for the fallbacks.
  std::size_t article_first_word = SIZE_MAX, article_end_word = 0;
  if (context.article_blocks && !context.article_blocks->empty()) {
    article_first_word = page.blocks[context.article_blocks->front()].first_word;
    article_end_word = page.blocks[context.article_blocks->back()].end_word;
  }

  // Dates.
  DateEvidence ev;
  ev.url = url;
  ev.metas = &raw.metas;
  ev.json_ld_published = string_of(main, "datePublished");
  if (ev.json_ld_published.empty()) ev.json_ld_published = string_of(main, "dateCreated");
  ev.json_ld_modified = string_of(main, "dateModified");
  ev.script_published = raw.script_published;
  // JSON-LD that does not parse (a trailing comma, a raw newline in a string) still names its
  // dates: the first of each, read as text.
  if (!main) {
    ev.json_ld_published = json_ld_string(raw.json_ld, "datePublished");
    ev.json_ld_modified = json_ld_string(raw.json_ld, "dateModified");
  }
  ev.marks = &raw.date_marks;
  ev.page = &page;
  // The headline: the first h1, unless it stands far above the article (a site's logo in an h1),
  // else where the article's text starts.
  ev.anchor_word = raw.first_h1_word;
  if (ev.anchor_word == SIZE_MAX ||
      (article_first_word != SIZE_MAX && article_first_word > ev.anchor_word + 200)) {
    ev.anchor_word = article_first_word;
  }
  ev.order = slash_order(out.lang, url);
  ev.not_after = context.fetched_at;
  PageDates dates = resolve_dates(ev);
  if (!dates.published && !raw.canonical_href.empty()) {
    // A canonical URL on another path may name the day (syndicated copies).
    if (auto d = url_date(resolve_url(url, raw.canonical_href));
        d && (!context.fetched_at || *d <= *context.fetched_at + 86400)) {
      dates.published = d;
      dates.published_from = DateSource::kUrl;
      dates.published_detail = "canonical";
    }
  }
  out.published_at = dates.published;
  out.modified_at = dates.modified;
  out.published_utc_offset = dates.published_offset;
  out.modified_utc_offset = dates.modified_offset;
  const auto explain_date = [](DateSource s, const std::string& detail) {
    std::string v(date_source_name(s));
    if (!detail.empty()) v += ":" + detail;
    return v;
  };
  if (dates.published)
    sources.emplace_back("published_at",
                         explain_date(dates.published_from, dates.published_detail));
  if (dates.modified)
    sources.emplace_back("modified_at", explain_date(dates.modified_from, dates.modified_detail));

  // Lead image: declared, else the first sizeable image of the article.
  std::optional<LeadImage> image;
  std::string image_from;
  for (const char* name :
       {"og:image", "og:image:url", "og:image:secure_url", "twitter:image", "twitter:image:src"}) {
    if (const std::string_view v = find_meta(raw, name); !v.empty()) {
      image = LeadImage{std::string(v), 0, 0, {}};
      image_from = std::string("meta:") + name;
      break;
    }
  }
  if (image && image_from.starts_with("meta:og")) {
    int w = 0, h = 0;
    for (const auto& [key, content] : raw.metas) {
      if (key == "og:image:width" && !w) w = std::atoi(content.c_str());
      if (key == "og:image:height" && !h) h = std::atoi(content.c_str());
      if (key == "og:image:alt" && image->caption.empty()) image->caption = content;
    }
    image->width = std::clamp(w, 0, 100000);
    image->height = std::clamp(h, 0, 100000);
  }
  if (!image && main) {
    if (const auto v = main->find("image"); v != main->end()) {
      image = json_ld_image(*v);
      if (image) image_from = "json_ld";
    }
    if (!image) {
      if (const auto v = main->find("thumbnailUrl"); v != main->end()) {
        image = json_ld_image(*v);
        if (image) image_from = "json_ld:thumbnailUrl";
      }
    }
  }
  if (image) {
    if (other_scheme(image->url)) {
      image.reset();
    } else {
      image->url = resolve_url(url, image->url);
      if (!is_http_url(image->url)) image.reset();
    }
  }
  if (!image && article_first_word != SIZE_MAX) {
    // From the headline (or a little before the text) to the article's end.
    std::size_t from = article_first_word > 30 ? article_first_word - 30 : 0;
    if (raw.first_h1_word != SIZE_MAX && raw.first_h1_word < article_first_word &&
        article_first_word - raw.first_h1_word <= 200) {
      from = std::min(from, raw.first_h1_word);
    }
    for (const auto& img : raw.images) {
      if (img.word < from || img.word > article_end_word) continue;
      // Icons, avatars, spacers and tracking pixels declare themselves small.
      if ((img.width > 0 && img.width < 150) || (img.height > 0 && img.height < 100)) continue;
      const std::string lower = ascii_lower(img.src);
      if (lower.find(".svg") != std::string::npos || lower.find("pixel") != std::string::npos ||
          lower.find("spacer") != std::string::npos || lower.find("logo") != std::string::npos ||
          lower.find("avatar") != std::string::npos || lower.find("icon") != std::string::npos) {
        continue;
      }
      if (other_scheme(img.src)) continue;
      LeadImage candidate{resolve_url(url, img.src), img.width, img.height, img.alt};
      if (!is_http_url(candidate.url)) continue;
      image = std::move(candidate);
      image_from = "article_image";
      break;
    }
  }
  if (image) {
    if (image->caption.size() > 512) truncate_text(image->caption, 512);
    out.image = std::move(image);
    sources.emplace_back("image", image_from);
  }

  // Description: declared, else the article's first sentences.
  std::string description;
  std::string description_from;
  for (const char* name :
       {"og:description", "description", "twitter:description", "dc.description"}) {
    if (const std::string_view v = find_meta(raw, name); !v.empty()) {
      description = std::string(v);
      description_from = std::string("meta:") + name;
      break;
    }
  }
  if (description.empty()) {
    description = string_of(main, "description");
    if (!description.empty()) description_from = "json_ld";
  }
  if (description.empty() && !context.article_text.empty()) {
    description = std::string(context.article_text.substr(0, 4096));
    description_from = "article_text";
  }
  if (!description.empty()) {
    out.description = cut_description(description, 300);
    sources.emplace_back("description", description_from);
  }

  // Authors: JSON-LD's article author, the author metas, a byline element, a byline line that
  // opens the article.
  std::vector<std::string> names;
  std::string authors_from;
  bool declared = false;  // JSON-LD names the article's author (maybe only "Staff"): it is that
  if (main) {
    std::vector<std::string> ld;
    json_ld_authors(*main, ld, 0);
    declared = !ld.empty();
    for (const auto& n : ld) {
      for (auto& a : split_authors(n)) names.push_back(std::move(a));
    }
    if (!names.empty()) authors_from = "json_ld";
  }
  if (names.empty() && !declared) {
    std::vector<std::string> ld;
    for (const nlohmann::json* o : objects) json_ld_authors(*o, ld, 0);
    for (const auto& n : ld) {
      for (auto& a : split_authors(n)) names.push_back(std::move(a));
    }
    if (!names.empty()) authors_from = "json_ld";
  }
  if (names.empty() && !declared) {
    for (const char* name : {"author", "article:author", "byl", "parsely-author", "sailthru.author",
                             "dc.creator", "dcterms.creator", "citation_author"}) {
      for (const auto& [key, content] : raw.metas) {
        if (key != name) continue;
        for (auto& a : split_authors(content)) names.push_back(std::move(a));
      }
      if (!names.empty()) {
        authors_from = std::string("meta:") + name;
        break;
      }
    }
  }
  if (names.empty() && !declared && !raw.markup_byline.empty()) {
    names = split_authors(raw.markup_byline);
    if (!names.empty()) authors_from = "byline_element";
  }
  if (names.empty() && !declared && context.article_blocks) {
    // "By Jane Doe", "Von Max Muster": a short first or second paragraph that opens with it.
    for (std::size_t k = 0; k < context.article_blocks->size() && k < 2; ++k) {
      const Block& b = page.blocks[(*context.article_blocks)[k]];
      if (b.word_count() > 12) continue;
      const std::string line = render_words(page, b.first_word, b.end_word);
      const std::string lower = ascii_lower(line.substr(0, 12));
      bool opens = false;
      for (std::string_view prefix :
           {"by ", "von ", "par ", "por ", "door ", "di ", "av ", "przez ", "text: ", "autor: "}) {
        if (lower.starts_with(prefix)) opens = true;
      }
      if (!opens) continue;
      names = split_authors(line);
      if (!names.empty()) {
        authors_from = "byline_text";
        break;
      }
    }
  }
  if (names.size() > 20) names.resize(20);
  // Deduplicate across sources.
  std::vector<std::string> unique;
  for (auto& n : names) {
    const std::string lower = ascii_lower(n);
    if (std::none_of(unique.begin(), unique.end(),
                     [&lower](const std::string& u) { return ascii_lower(u) == lower; })) {
      unique.push_back(std::move(n));
    }
  }
  out.authors = std::move(unique);
  if (!out.authors.empty()) sources.emplace_back("authors", authors_from);

  // Section, tags, site name, paywall.
  for (const char* name : {"article:section", "parsely-section", "section", "sailthru.section"}) {
    if (const std::string_view v = find_meta(raw, name); !v.empty()) {
      out.section = std::string(v);
      sources.emplace_back("section", std::string("meta:") + name);
      break;
    }
  }
  if (out.section.empty()) {
    out.section = string_of(main, "articleSection");
    if (!out.section.empty()) sources.emplace_back("section", "json_ld");
  }
  if (out.section.size() > 200) truncate_text(out.section, 200);

  std::vector<std::string> tags;
  std::string tags_from;
  const auto add_tags = [&tags](std::string_view list, bool split) {
    std::size_t pos = 0;
    while (pos <= list.size() && tags.size() < 32) {
      std::size_t end = split ? list.find(',', pos) : std::string_view::npos;
      if (end == std::string_view::npos) end = list.size();
      std::string t = collapse_whitespace(list.substr(pos, end - pos));
      pos = end + 1;
      if (t.empty() || t.size() > 100) continue;
      const std::string lower = ascii_lower(t);
      if (std::none_of(tags.begin(), tags.end(),
                       [&lower](const std::string& u) { return ascii_lower(u) == lower; })) {
        tags.push_back(std::move(t));
      }
    }
  };
  for (const auto& [key, content] : raw.metas) {
    if (key == "article:tag") add_tags(content, false);
  }
  if (!tags.empty()) tags_from = "meta:article:tag";
  if (tags.empty() && main) {
    if (const auto k = main->find("keywords"); k != main->end()) {
      if (k->is_string()) add_tags(k->get_ref<const std::string&>(), true);
      if (k->is_array()) {
        for (const auto& v : *k) {
          if (v.is_string()) add_tags(v.get_ref<const std::string&>(), false);
        }
      }
      if (!tags.empty()) tags_from = "json_ld";
    }
  }
  for (const char* name : {"news_keywords", "keywords", "parsely-tags"}) {
    if (!tags.empty()) break;
    if (const std::string_view v = find_meta(raw, name); !v.empty()) {
      add_tags(v, true);
      if (!tags.empty()) tags_from = std::string("meta:") + name;
    }
  }
  out.tags = std::move(tags);
  if (!out.tags.empty()) sources.emplace_back("tags", tags_from);

  if (const std::string_view v = find_meta(raw, "og:site_name"); !v.empty()) {
    out.site_name = std::string(v);
    sources.emplace_back("site_name", "meta:og:site_name");
  } else if (main) {
    if (const auto p = main->find("publisher"); p != main->end() && p->is_object()) {
      out.site_name = string_of(&*p, "name");
      if (!out.site_name.empty()) sources.emplace_back("site_name", "json_ld:publisher");
    }
  }
  if (out.site_name.empty()) {
    if (const std::string_view v = find_meta(raw, "application-name"); !v.empty()) {
      out.site_name = std::string(v);
      sources.emplace_back("site_name", "meta:application-name");
    }
  }
  if (out.site_name.size() > 200) truncate_text(out.site_name, 200);

  const auto not_free = [](const nlohmann::json& o) {
    const auto v = o.find("isAccessibleForFree");
    if (v == o.end()) return false;
    if (v->is_boolean()) return !v->get<bool>();
    if (v->is_string()) {
      const std::string s = ascii_lower(v->get_ref<const std::string&>());
      return s == "false" || s == "no" || s == "0";
    }
    return false;
  };
  if (main) {
    out.paywalled = not_free(*main);
    if (!out.paywalled) {
      if (const auto part = main->find("hasPart"); part != main->end()) {
        if (part->is_object()) out.paywalled = not_free(*part);
        if (part->is_array())
          out.paywalled = std::any_of(
              part->begin(), part->end(),
              [&not_free](const nlohmann::json& p) { return p.is_object() && not_free(p); });
      }
    }
    if (out.paywalled) sources.emplace_back("paywalled", "json_ld:isAccessibleForFree");
  }
  return out;
}

}  // namespace newsflow::extractors
