#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "extractors/error.h"
#include "extractors/timestamp.h"
#include "tl/expected.hpp"

namespace newsflow::extractors {

/// A media file attached to an item (RSS enclosure, media:content).
struct Enclosure {
  std::string url;
  std::string type;
};

/// One item of a feed (RSS item, Atom entry), with HTML fields as given.
struct FeedItem {
  std::string id;     ///< guid / Atom id
  std::string title;  ///< plain text
  std::string link;   ///< absolute (resolved against xml:base and the feed URL)
  std::string author;
  std::string summary_html;  ///< description / summary
  std::string content_html;  ///< content:encoded / Atom content
  std::optional<UnixSeconds> published;
  std::optional<UnixSeconds> updated;
  std::vector<std::string> categories;
  std::vector<Enclosure> enclosures;
};

/// A parsed feed.
struct Feed {
  std::string title;
  std::string link;
  std::string language;
  std::vector<FeedItem> items;
  /// Non-fatal problems, e.g. "ill-formed XML: recovered 3 items".
  std::vector<std::string> warnings;
};

/// Parses RSS 0.9x/2.0, RSS 1.0 (RDF), Atom 0.3/1.0, CDF and JSON Feed 1.x from UTF-8 text (see
/// `decode_to_utf8`). HTML named entities that XML lacks (`&nbsp;`, `&eacute;`, ...) and bare
/// ampersands are accepted. A document that is not well-formed XML still yields the items whose own
/// markup is, with a warning. Fails (kParse) when nothing feed-like can be read.
tl::expected<Feed, ExtractError> parse_feed(std::string_view xml, std::string_view feed_url);

/// Replaces HTML named character references that XML does not define with numeric ones and
/// escapes ampersands that start no reference; CDATA sections are left alone.
std::string xml_escape_html_entities(std::string_view xml);

/// The visible text of an HTML fragment, blocks separated by "\n\n"; empty if none.
std::string html_fragment_text(std::string_view html);

}  // namespace newsflow::extractors
