#include "daemon/pipeline/records.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "daemon/pipeline/extracted_simdjson.h"
#include "daemon/pipeline/json_writer.h"
#include "daemon/pipeline/record_fields.h"
#include "extractors/text.h"

namespace newsflow::daemon {
namespace {

using records::Need;

// A time as RFC 3339 in the local time the page wrote it in (the day is the one the page
// shows), or null.
void rfc3339_or_null(JsonWriter& w, const std::optional<extractors::UnixSeconds>& t,
                     int utc_offset) {
  if (t) {
    w.string(extractors::format_rfc3339(*t, utc_offset));
  } else {
    w.null();
  }
}

// Writes the fields of a list (`record_fields.h`) as JSON, in their order.
class FieldWriter {
 public:
  explicit FieldWriter(JsonWriter& w) : w_(w) {}
  void string(const char* key, const std::string& s, Need need) {
    w_.key(key);
    need == Need::kOrNull ? w_.string_or_null(s) : w_.string(s);
  }
  void strings(const char* key, const std::vector<std::string>& list) { w_.key(key).strings(list); }
  void seconds(const char* key, const std::optional<std::int64_t>& t) {
    w_.key(key);
    t ? w_.integer(*t) : w_.null();
  }
  void clamped(const char* key, int n, std::int64_t, std::int64_t) { w_.key(key).integer(n); }
  void dimension(const char* key, int n) {
    w_.key(key);
    n > 0 ? w_.integer(n) : w_.null();
  }
  void boolean(const char* key, bool b) { w_.key(key).boolean(b); }
  void image(const char* key, const std::optional<extractors::LeadImage>& image) {
    w_.key(key);
    write_image(image);
  }
  void write_image(const std::optional<extractors::LeadImage>& image) {
    if (!image) {
      w_.null();
      return;
    }
    w_.begin_object();
    records::image_fields(*this, *image);
    w_.end_object();
  }
  template <class Fields>
  void object(const char* key, const Fields& fields) {
    w_.key(key).begin_object();
    fields(*this);
    w_.end_object();
  }
  bool when(bool written) const { return written; }

 private:
  JsonWriter& w_;
};

// The lead image as the records write it (null when none).
void image_json(JsonWriter& w, const std::optional<extractors::LeadImage>& image) {
  FieldWriter(w).write_image(image);
}

// Reads the fields of a list (`record_fields.h`) from a parsed object with nlohmann, noting the
// first required field that is missing and whether a nested object is.
class FieldReader {
 public:
  explicit FieldReader(const nlohmann::json& o) : o_(o) {}

  void string(const char* key, std::string& out, Need need) {
    const auto it = o_.find(key);
    if (it != o_.end() && it->is_string()) {
      out = it->get<std::string>();
    } else if (need == Need::kRequired && problem_.empty()) {
      problem_ = std::string("'") + key + "' is not a string";
    }
  }
  void strings(const char* key, std::vector<std::string>& out) {
    if (const auto it = o_.find(key); it != o_.end() && it->is_array()) {
      for (const auto& x : *it) {
        if (x.is_string()) out.push_back(x.get<std::string>());
      }
    }
  }
  void seconds(const char* key, std::optional<std::int64_t>& out) {
    const auto it = o_.find(key);
    if (it == o_.end() || !it->is_number_integer()) return;
    out = it->get<std::int64_t>();
  }
  void clamped(const char* key, int& out, std::int64_t lo, std::int64_t hi) {
    if (const auto it = o_.find(key); it != o_.end() && it->is_number_integer()) {
      out = static_cast<int>(std::clamp<std::int64_t>(*it, lo, hi));
    }
  }
  void dimension(const char* key, int& out) {
    if (const auto it = o_.find(key); it != o_.end() && it->is_number_integer()) out = *it;
  }
  void boolean(const char* key, bool& out) {
    if (const auto it = o_.find(key); it != o_.end() && it->is_boolean()) out = *it;
  }
  // An image without an object or its URL is none.
  void image(const char* key, std::optional<extractors::LeadImage>& out) {
    const auto it = o_.find(key);
    if (it == o_.end() || !it->is_object()) return;
    FieldReader nested(*it);
    extractors::LeadImage image;
    records::image_fields(nested, image);
    if (nested.problem_.empty()) out = std::move(image);
  }
  template <class Fields>
  void object(const char* key, const Fields& fields) {
    const auto it = o_.find(key);
    if (it == o_.end() || !it->is_object()) {
      no_object_ = true;
      return;
    }
    FieldReader nested(*it);
    fields(nested);
    if (problem_.empty()) problem_ = std::move(nested.problem_);
  }
  bool when(bool) const { return true; }

  bool no_object() const { return no_object_; }
  const std::string& problem() const { return problem_; }

 private:
  const nlohmann::json& o_;
  std::string problem_;
  bool no_object_ = false;
};

}  // namespace

std::string article_json(const Output& out) {
  const extractors::Article& a = out.article;
  JsonWriter w;
  w.begin_object();
  w.key("id").string(a.id);
  w.key("url").string(a.url);
  w.key("canonical_url").string(a.canonical_url);
  w.key("source").string(a.source);
  w.key("title").string(a.title);
  w.key("byline").string_or_null(a.byline);
  w.key("authors").strings(a.authors);
  w.key("credit").string_or_null(a.credit);
  w.key("text").string(a.text);
  w.key("lang").string_or_null(a.lang);
  w.key("language").string_or_null(a.language);
  w.key("published_at");
  rfc3339_or_null(w, a.published_at, a.published_utc_offset);
  w.key("modified_at");
  rfc3339_or_null(w, a.modified_at, a.modified_utc_offset);
  w.key("fetched_at");
  rfc3339_or_null(w, a.fetched_at, 0);
  w.key("description").string_or_null(a.description);
  w.key("image");
  image_json(w, a.image);
  w.key("section").string_or_null(a.section);
  w.key("tags").strings(a.tags);
  w.key("site_name").string_or_null(a.site_name);
  w.key("paywalled").boolean(a.paywalled);
  w.key("content_hash").string(out.content_hash);
  w.key("dup").begin_object();
  w.key("kind").string(dedup::dup_kind_name(out.verdict.kind));
  w.key("of").string_or_null(out.verdict.of);
  w.key("similarity").number(out.verdict.similarity);
  w.end_object();
  w.key("story_id").string(out.story_id);
  // Stories this article's arrival merged into its story (restored with the window).
  if (!out.story.merged_from.empty()) w.key("story_merged_from").strings(out.story.merged_from);
  w.key("event_time").string(extractors::format_rfc3339(out.event_time));
  // What was repaired to read the page (e.g. a title never closed): the text may be less sure.
  if (!a.warnings.empty()) w.key("warnings").strings(a.warnings);
  if (!out.feed_url.empty()) {
    w.key("feed_url").string(out.feed_url);
    w.key("feed_id").string_or_null(out.feed_id);
  }
  // Published again under the same id: the page a feed item linked to, fetched after the item
  // went out with its own short text.
  if (out.version > 1) w.key("version").integer(out.version);
  w.end_object();
  return w.take();
}

std::string story_json(const dedup::Story& s) {
  JsonWriter w;
  w.begin_object();
  w.key("story_id").string(s.story_id);
  w.key("title").string(s.title);
  // The card: the representative's lead image and description.
  w.key("image_url").string_or_null(s.image_url);
  w.key("description").string_or_null(s.description);
  w.key("representative").string(s.representative);
  w.key("language").string_or_null(s.language);
  w.key("articles").begin_array();
  for (const auto& m : s.articles) {
    w.begin_object();
    w.key("id").string(m.id());
    w.key("url").string(m.url());
    w.key("source").string(m.source());
    w.key("dup").string(dedup::dup_kind_name(m.kind()));
    w.end_object();
  }
  w.end_array();
  w.key("article_count").unsigned_integer(s.article_count);
  w.key("sources").unsigned_integer(s.sources);
  w.key("copies").unsigned_integer(s.copies);
  w.key("languages").strings(s.languages);
  w.key("first_seen").string(extractors::format_rfc3339(s.first_seen));
  w.key("last_updated").string(extractors::format_rfc3339(s.last_updated));
  // With first_seen, the time span of its reports: the latest one that copies no other.
  w.key("last_report").string(extractors::format_rfc3339(s.last_report));
  w.key("version").unsigned_integer(s.version);
  if (!s.merged_from.empty()) w.key("merged_from").strings(s.merged_from);
  if (!s.related_stories.empty()) w.key("related_stories").strings(s.related_stories);
  w.end_object();
  return w.take();
}

std::string extracted_json(const Extracted& e, const Input& input) {
  JsonWriter w;
  w.begin_object();
  FieldWriter fields(w);
  records::extracted_fields(fields, e, input);
  w.end_object();
  return w.take();
}

tl::expected<std::pair<Extracted, Input>, std::string> parse_extracted(std::string_view text) {
  if (auto fast = read_extracted_fast(text)) return std::move(*fast);
  return parse_extracted_general(text);
}

tl::expected<std::pair<Extracted, Input>, std::string> parse_extracted_general(
    std::string_view text) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return tl::unexpected(std::string("not a JSON object"));
  std::pair<Extracted, Input> out;
  FieldReader reader(j);
  records::extracted_fields(reader, out.first, out.second);
  if (reader.no_object()) return tl::unexpected(std::string("no article or input object"));
  if (!reader.problem().empty()) return tl::unexpected(reader.problem());
  if (out.first.article.text.empty()) return tl::unexpected(std::string("the article has no text"));
  out.first.language_known = true;
  return out;
}

}  // namespace newsflow::daemon
