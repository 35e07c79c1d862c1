#include "extractors/internal/json_feed.h"

#include <nlohmann/json.hpp>
#include <string>

#include "extractors/text.h"
#include "extractors/timestamp.h"
#include "extractors/urls.h"

namespace newsflow::extractors::internal {

tl::expected<Feed, ExtractError> parse_json_feed(std::string_view text, std::string_view feed_url) {
  constexpr std::size_t kMaxDepth = 64;
  if (json_nesting_exceeds(text, kMaxDepth)) {
    return tl::unexpected(ExtractError{
        ExtractReason::kParse,
        "JSON Feed nests objects or arrays deeper than " + std::to_string(kMaxDepth) + " levels"});
  }
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("items") || !j["items"].is_array()) {
    return tl::unexpected(ExtractError{ExtractReason::kParse, "not a JSON Feed (no items array)"});
  }
  auto str = [](const nlohmann::json& o, const char* key) {
    const auto it = o.find(key);
    return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  Feed feed;
  feed.title = str(j, "title");
  feed.link = resolve_url(feed_url, str(j, "home_page_url"));
  feed.language = str(j, "language");
  for (const auto& item : j["items"]) {
    if (!item.is_object()) continue;
    FeedItem it;
    it.id = item.contains("id") && item["id"].is_number() ? item["id"].dump() : str(item, "id");
    it.title = str(item, "title");
    const std::string url = str(item, "url");
    if (!url.empty()) it.link = resolve_url(feed_url, url);
    it.content_html = str(item, "content_html");
    if (it.content_html.empty()) {
      // Plain text: escaped, so a '<' in it stays text when the item is rendered.
      for (const char c : str(item, "content_text")) {
        if (c == '<') {
          it.content_html += "&lt;";
        } else if (c == '&') {
          it.content_html += "&amp;";
        } else {
          it.content_html += c;
        }
      }
    }
    it.summary_html = str(item, "summary");
    it.published = parse_date(str(item, "date_published"));
    it.updated = parse_date(str(item, "date_modified"));
    if (item.contains("author") && item["author"].is_object())
      it.author = str(item["author"], "name");
    if (item.contains("authors") && item["authors"].is_array() && !item["authors"].empty() &&
        item["authors"][0].is_object()) {
      it.author = str(item["authors"][0], "name");
    }
    if (item.contains("tags") && item["tags"].is_array()) {
      for (const auto& t : item["tags"]) {
        if (t.is_string()) it.categories.push_back(t.get<std::string>());
      }
    }
    feed.items.push_back(std::move(it));
  }
  return feed;
}

}  // namespace newsflow::extractors::internal
