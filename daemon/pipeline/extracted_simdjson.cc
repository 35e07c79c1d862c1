#include "daemon/pipeline/extracted_simdjson.h"

#include <simdjson.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>

namespace newsflow::daemon {
namespace {

using simdjson::dom::element;
using simdjson::dom::object;

// The fields of one object that the record defines, each read at most once: a key seen twice
// ends the fast path.
class Fields {
 public:
  Fields(object o, std::initializer_list<std::string_view> keys) : keys_(keys) {
    for (const auto field : o) {
      const auto at = std::find(keys_.begin(), keys_.end(), field.key);
      if (at == keys_.end()) continue;  // not read, as in the general path
      const auto i = static_cast<std::size_t>(at - keys_.begin());
      if (found_[i]) {
        ok_ = false;
        return;
      }
      found_[i] = true;
      values_[i] = field.value;
    }
  }
  bool ok() const { return ok_; }

  // A required string (the general path names a missing one).
  bool string(std::size_t i, std::string& out) const {
    std::string_view s;
    if (!found_[i] || values_[i].get_string().get(s) != simdjson::SUCCESS) return false;
    out = s;
    return true;
  }
  // An optional string: "" when absent or of another type.
  void optional_string(std::size_t i, std::string& out) const {
    std::string_view s;
    if (found_[i] && values_[i].get_string().get(s) == simdjson::SUCCESS) out = s;
  }
  // An integer, nothing when absent or not an integer; false for one beyond int64, which
  // nlohmann reads as unsigned.
  bool integer(std::size_t i, std::optional<std::int64_t>& out) const {
    if (!found_[i]) return true;
    const element v = values_[i];
    if (v.is_int64()) {
      out = v.get_int64().value_unsafe();
      return true;
    }
    return !v.is_uint64();
  }
  bool boolean(std::size_t i, bool& out) const {
    if (found_[i] && values_[i].is_bool()) out = values_[i].get_bool().value_unsafe();
    return true;
  }
  // The strings of an array, others skipped; nothing when it is not an array.
  void strings(std::size_t i, std::vector<std::string>& out) const {
    simdjson::dom::array list;
    if (!found_[i] || values_[i].get_array().get(list) != simdjson::SUCCESS) return;
    for (const element x : list) {
      std::string_view s;
      if (x.get_string().get(s) == simdjson::SUCCESS) out.emplace_back(s);
    }
  }
  bool has(std::size_t i) const { return found_[i]; }
  element value(std::size_t i) const { return values_[i]; }

 private:
  std::vector<std::string_view> keys_;
  bool ok_ = true;
  bool found_[24] = {};
  element values_[24];
};

// The image object back, as `read_image` reads it; false when the fast path cannot say.
bool read_image(element v, std::optional<extractors::LeadImage>& out) {
  object o;
  if (v.get_object().get(o) != simdjson::SUCCESS) return true;  // not an object: no image
  enum { kUrl, kWidth, kHeight, kCaption };
  const Fields f(o, {"url", "width", "height", "caption"});
  if (!f.ok()) return false;
  extractors::LeadImage image;
  if (!f.string(kUrl, image.url)) return true;  // no URL: no image
  std::optional<std::int64_t> width, height;
  if (!f.integer(kWidth, width) || !f.integer(kHeight, height)) return false;
  if (width) image.width = static_cast<int>(*width);
  if (height) image.height = static_cast<int>(*height);
  f.optional_string(kCaption, image.caption);
  out = std::move(image);
  return true;
}

int clamped(std::int64_t v, std::int64_t lo, std::int64_t hi) {
  return static_cast<int>(std::clamp(v, lo, hi));
}

}  // namespace

std::optional<std::pair<Pipeline::Extracted, Input>> read_extracted_fast(std::string_view json) {
  thread_local simdjson::dom::parser parser;
  element doc;
  object top;
  if (parser.parse(json.data(), json.size(), true).get(doc) != simdjson::SUCCESS ||
      doc.get_object().get(top) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  enum { kArticle, kInput, kEventTime, kFromFeed, kFetchUrl };
  const Fields record(top, {"article", "input", "event_time", "from_feed", "fetch_url"});
  object art_object, in_object;
  if (!record.ok() || !record.has(kArticle) || !record.has(kInput) ||
      record.value(kArticle).get_object().get(art_object) != simdjson::SUCCESS ||
      record.value(kInput).get_object().get(in_object) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  enum {
    kId,
    kUrl,
    kCanonicalUrl,
    kSource,
    kTitle,
    kText,
    kLang,
    kLanguage,
    kByline,
    kPublishedAt,
    kModifiedAt,
    kPublishedOffset,
    kModifiedOffset,
    kAuthors,
    kCredit,
    kDescription,
    kImage,
    kSection,
    kTags,
    kSiteName,
    kPaywalled,
    kWarnings
  };
  const Fields art(art_object, {"id",
                                "url",
                                "canonical_url",
                                "source",
                                "title",
                                "text",
                                "lang",
                                "language",
                                "byline",
                                "published_at",
                                "modified_at",
                                "published_utc_offset",
                                "modified_utc_offset",
                                "authors",
                                "credit",
                                "description",
                                "image",
                                "section",
                                "tags",
                                "site_name",
                                "paywalled",
                                "warnings"});
  enum {
    kInId,
    kInUrl,
    kInTitle,
    kInPublishedAt,
    kInFetchedAt,
    kLink,
    kFeedUrl,
    kFeedId,
    kVersion
  };
  const Fields in(in_object, {"id", "url", "title", "published_at", "fetched_at", "link",
                              "feed_url", "feed_id", "version"});
  if (!art.ok() || !in.ok()) return std::nullopt;

  std::pair<Pipeline::Extracted, Input> out;
  Pipeline::Extracted& e = out.first;
  extractors::Article& a = e.article;
  Input& input = out.second;
  bool ok = true;
  for (auto [i, field] :
       {std::pair{kId, &a.id}, std::pair{kUrl, &a.url}, std::pair{kCanonicalUrl, &a.canonical_url},
        std::pair{kSource, &a.source}, std::pair{kTitle, &a.title}, std::pair{kText, &a.text},
        std::pair{kLang, &a.lang}, std::pair{kLanguage, &a.language},
        std::pair{kByline, &a.byline}}) {
    ok = ok && art.string(static_cast<std::size_t>(i), *field);
  }
  for (auto [i, field] : {std::pair{kInId, &input.id}, std::pair{kInUrl, &input.url},
                          std::pair{kInTitle, &input.title}}) {
    ok = ok && in.string(static_cast<std::size_t>(i), *field);
  }
  ok = ok && record.string(kFetchUrl, e.fetch_url);
  std::optional<std::int64_t> published_offset, modified_offset, version;
  ok = ok && art.integer(kPublishedAt, a.published_at) && art.integer(kModifiedAt, a.modified_at) &&
       art.integer(kPublishedOffset, published_offset) &&
       art.integer(kModifiedOffset, modified_offset) && record.integer(kEventTime, e.event_time) &&
       in.integer(kInPublishedAt, input.published_at) &&
       in.integer(kInFetchedAt, input.fetched_at) && in.integer(kVersion, version);
  if (ok && art.has(kImage)) ok = read_image(art.value(kImage), a.image);
  if (!ok || a.text.empty()) return std::nullopt;
  if (published_offset) a.published_utc_offset = clamped(*published_offset, -86399, 86399);
  if (modified_offset) a.modified_utc_offset = clamped(*modified_offset, -86399, 86399);
  if (version) input.version = clamped(*version, 1, 1000);
  art.strings(kAuthors, a.authors);
  art.optional_string(kCredit, a.credit);
  art.optional_string(kDescription, a.description);
  art.optional_string(kSection, a.section);
  art.strings(kTags, a.tags);
  art.optional_string(kSiteName, a.site_name);
  art.boolean(kPaywalled, a.paywalled);
  art.strings(kWarnings, a.warnings);
  record.boolean(kFromFeed, e.from_feed);
  e.language_known = true;
  in.optional_string(kLink, input.link);
  in.optional_string(kFeedUrl, input.feed_url);
  in.optional_string(kFeedId, input.feed_id);
  return out;
}

}  // namespace newsflow::daemon
