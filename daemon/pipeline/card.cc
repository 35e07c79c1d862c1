#include "daemon/pipeline/card.h"

#include "extractors/timestamp.h"

namespace newsflow::daemon {
namespace {

std::string joined(const std::vector<std::string>& values) {
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "" : "; ") + v;
  return out;
}

std::string date(const std::optional<extractors::UnixSeconds>& t, int offset) {
  return t ? extractors::format_rfc3339(*t, offset) : std::string();
}

}  // namespace

std::string card_value(const extractors::Article& a, std::string_view field, bool detailed) {
  if (field == "title") return a.title;
  if (field == "canonical_url") return a.canonical_url;
  if (field == "lang") return a.lang;
  if (field == "byline") return a.byline;
  if (field == "authors") return joined(a.authors);
  if (field == "credit") return a.credit;
  if (field == "published_at") return date(a.published_at, a.published_utc_offset);
  if (field == "modified_at") return date(a.modified_at, a.modified_utc_offset);
  if (field == "image") {
    if (!a.image) return {};
    std::string v = a.image->url;
    if (detailed && (a.image->width || a.image->height)) {
      v += " " + std::to_string(a.image->width) + "x" + std::to_string(a.image->height);
    }
    if (detailed && !a.image->caption.empty()) v += " \"" + a.image->caption + "\"";
    return v;
  }
  if (field == "description") return a.description;
  if (field == "section") return a.section;
  if (field == "tags") return joined(a.tags);
  if (field == "site_name") return a.site_name;
  if (field == "paywalled") return a.paywalled ? "true" : "false";
  return {};
}

std::string card_source(const extractors::Article& a, std::string_view field) {
  for (const auto& [f, source] : a.sources) {
    if (f == field) return source;
  }
  return {};
}

std::string card_table(const extractors::Article& a) {
  std::string out;
  for (std::string_view field : kCardFields) {
    const std::string source = card_source(a, field);
    out.append(field).append("\t").append(source.empty() ? "-" : source);
    out.append("\t").append(card_value(a, field, true)).append("\n");
  }
  return out;
}

}  // namespace newsflow::daemon
