#pragma once

// The fields of the extracted record (docs/contracts.md, deploy/schemas/extracted.schema.json),
// each written once: `extracted_json` writes them, and both readers (`parse_extracted_general`
// with nlohmann, `read_extracted_fast` with simdjson) read them, by walking these lists with a
// visitor of their own. A new field is one line here and reaches the writer and both readers.
//
// A visitor `v` has, for a field named `key` and the member `m` it is written from or read into:
//   v.string(key, m, need)      a string (see `Need`)
//   v.strings(key, m)           an array of strings; a reader skips what is not a string
//   v.seconds(key, m)           an optional integer (Unix seconds): a number, or null
//   v.clamped(key, m, lo, hi)   an int; a reader clamps it to [lo, hi] and keeps `m` without one
//   v.dimension(key, m)         an int written as null when not above 0 (an image's size)
//   v.boolean(key, m)           a bool; a reader keeps `m` without one
//   v.image(key, m)             an optional lead image: null, or an object of `image_fields`
//   v.object(key, fields)       a nested object whose fields `fields(v2)` visits with `v2`
//   v.when(written)             the fields that follow in the block are written only when
//                               `written` (a later addition); readers read them always
// A writer's members are const; a reader's are not, hence the templates on the record's types.

#include <cstdint>

namespace newsflow::daemon::records {

/// What a string field is when it is absent or not a string.
enum class Need {
  kRequired,  ///< the record is not one (for an image's URL: there is no image)
  kOptional,  ///< written as a string, read as "" when absent
  kOrNull,    ///< written as null when empty, read as "" when absent
};

/// Bounds of a UTC offset in seconds (a day less a second either way).
inline constexpr std::int64_t kMaxUtcOffset = 86399;
/// Bounds of an article's version (`Input::version`).
inline constexpr std::int64_t kMaxVersion = 1000;

/// The lead image's fields (`extractors::LeadImage`); also the image of the article JSON.
template <class V, class Image>
void image_fields(V& v, Image& im) {
  v.string("url", im.url, Need::kRequired);
  v.dimension("width", im.width);
  v.dimension("height", im.height);
  v.string("caption", im.caption, Need::kOrNull);
}

/// The extracted article's fields (`extractors::Article`), in the order they are written.
template <class V, class Article>
void article_fields(V& v, Article& a) {
  v.string("id", a.id, Need::kRequired);
  v.string("url", a.url, Need::kRequired);
  v.string("canonical_url", a.canonical_url, Need::kRequired);
  v.string("source", a.source, Need::kRequired);
  v.string("title", a.title, Need::kRequired);
  v.string("text", a.text, Need::kRequired);
  v.string("lang", a.lang, Need::kRequired);
  v.string("language", a.language, Need::kRequired);
  v.string("byline", a.byline, Need::kRequired);
  v.strings("authors", a.authors);
  v.string("credit", a.credit, Need::kOptional);
  v.seconds("published_at", a.published_at);
  v.clamped("published_utc_offset", a.published_utc_offset, -kMaxUtcOffset, kMaxUtcOffset);
  v.seconds("modified_at", a.modified_at);
  v.clamped("modified_utc_offset", a.modified_utc_offset, -kMaxUtcOffset, kMaxUtcOffset);
  v.string("description", a.description, Need::kOptional);
  v.image("image", a.image);
  v.string("section", a.section, Need::kOptional);
  v.strings("tags", a.tags);
  v.string("site_name", a.site_name, Need::kOptional);
  v.boolean("paywalled", a.paywalled);
  v.strings("warnings", a.warnings);
}

/// What `Pipeline::commit` reads of the input (`Input`): identity, the times, and for a feed
/// item's page fetched later the item's link and feed (added fields: older judging roles ignore
/// them).
template <class V, class In>
void input_fields(V& v, In& in) {
  v.string("id", in.id, Need::kRequired);
  v.string("url", in.url, Need::kRequired);
  v.string("title", in.title, Need::kRequired);
  v.seconds("published_at", in.published_at);
  v.seconds("fetched_at", in.fetched_at);
  if (v.when(!in.link.empty())) {
    v.string("link", in.link, Need::kOptional);
    v.string("feed_url", in.feed_url, Need::kOptional);
    v.string("feed_id", in.feed_id, Need::kOptional);
    v.clamped("version", in.version, 1, kMaxVersion);
  }
}

/// The whole record: the article, its event time, whether it is a feed item and the page it
/// links to, and its input.
template <class V, class Extracted, class In>
void extracted_fields(V& v, Extracted& e, In& in) {
  v.object("article", [&e](auto& nested) { article_fields(nested, e.article); });
  v.seconds("event_time", e.event_time);
  v.boolean("from_feed", e.from_feed);
  v.string("fetch_url", e.fetch_url, Need::kRequired);
  v.object("input", [&in](auto& nested) { input_fields(nested, in); });
}

}  // namespace newsflow::daemon::records
