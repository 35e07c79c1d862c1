#include "extractors/internal/json_ld.h"

#include <algorithm>

#include "extractors/text.h"

namespace newsflow::extractors::internal {
namespace {

// JSON-LD nested deeper than this is not read (a real one nests three or four levels; 100,000
// levels would overflow the stack of whatever walks it).
constexpr std::size_t kMaxJsonLdDepth = 64;
// Nor a body longer than this once its long strings are cut (`without_long_strings`): a real one
// is a few KB, and a parsed document takes some twenty times its text in memory.
constexpr std::size_t kMaxJsonLdBytes = 512 * 1024;

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

void json_ld_authors(const nlohmann::json& j, std::vector<std::string>& out, int depth,
                     const std::vector<const nlohmann::json*>* objects) {
  constexpr std::size_t kMaxNames = 8;
  if (depth > 6 || out.size() >= kMaxNames) return;
  if (j.is_array()) {
    for (const auto& v : j) {
      if (out.size() >= kMaxNames) break;
      json_ld_authors(v, out, depth + 1, objects);
    }
    return;
  }
  if (!j.is_object()) return;
  if (const auto a = j.find("author"); a != j.end()) {
    const auto add = [&out, objects](const nlohmann::json& v) {
      if (out.size() >= kMaxNames) return;
      // Names as a template HTML-escaped them ("H&#233;ctor") are read as the page shows them.
      if (v.is_string()) {
        out.push_back(decode_char_refs(v.get<std::string>()));
      } else if (v.is_object()) {
        const nlohmann::json* named = &v;
        if (const auto id = v.find("@id");
            id != v.end() && id->is_string() && objects && !v.contains("name")) {
          for (const nlohmann::json* o : *objects) {
            if (const auto oid = o->find("@id"); oid != o->end() && *oid == *id && o != &v) {
              named = o;
              break;
            }
          }
        }
        if (const auto n = named->find("name"); n != named->end() && n->is_string()) {
          out.push_back(decode_char_refs(n->get<std::string>()));
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
  if (const auto g = j.find("@graph"); g != j.end()) {
    json_ld_authors(*g, out, depth + 1, objects);
  }
}

nlohmann::json parse_json_ld(std::string_view body, std::size_t max_string_bytes) {
  if (json_nesting_exceeds(body, kMaxJsonLdDepth)) return nlohmann::json::value_t::discarded;
  const std::string text = without_long_strings(body, max_string_bytes);
  if (text.size() > kMaxJsonLdBytes) return nlohmann::json::value_t::discarded;
  return nlohmann::json::parse(text, nullptr, false);
}

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

std::optional<LeadImage> json_ld_image(const nlohmann::json& v, int depth) {
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

}  // namespace newsflow::extractors::internal
