#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "extractors/timestamp.h"

namespace newsflow::extractors {

/// The lead image of an article.
struct LeadImage {
  std::string url;  ///< absolute http(s)
  int width = 0;    ///< as declared; 0 when not
  int height = 0;
  std::string caption;  ///< its alt text or JSON-LD caption
};

/// Where each field of `PageMetadata` came from, for `newsflow extract --explain`.
using FieldSources = std::vector<std::pair<std::string, std::string>>;

/// One extracted article: what every later stage sees. Plain data; copyable.
struct Article {
  std::string id;             ///< stable id (input id, else derived from the canonical URL)
  std::string url;            ///< the URL the document was fetched from
  std::string canonical_url;  ///< `<link rel=canonical>` / og:url resolved, else `url`
  std::string source;         ///< host of the canonical URL without a leading "www."
  std::string title;          ///< headline
  std::string text;           ///< main text, paragraphs separated by "\n\n"
  std::string lang;           ///< declared language (ISO 639-1) when the page says, else empty
  std::string language;       ///< detected language, BCP-47 (`detect_language`); empty if unsure
  std::string byline;         ///< authors ("Jane Doe, John Roe") when known, else empty
  std::vector<std::string> authors;  ///< the authors' names, one each; empty when unknown
  /// Who the article is credited to that is no person: a news agency ("Associated Press"), the
  /// site itself or its staff ("Staff", "Redaktion"); empty when none.
  std::string credit;
  std::optional<UnixSeconds> published_at;
  std::optional<UnixSeconds> modified_at;  ///< the page's last update, when it says
  /// The offsets from UTC the page wrote those two dates in (seconds east; 0: UTC or not
  /// known): they are published in the page's local time, so the day is the one it shows.
  int published_utc_offset = 0;
  int modified_utc_offset = 0;
  std::optional<UnixSeconds> fetched_at;
  std::string description;  ///< a line about the article (declared, else its first sentences)
  /// The lead image (absolute http(s) URL, declared size, caption).
  std::optional<LeadImage> image;
  std::string section;            ///< the site's section ("Politics"), when declared
  std::vector<std::string> tags;  ///< keywords the page declares
  std::string site_name;          ///< the outlet's name as it writes it ("The Guardian")
  bool paywalled = false;         ///< declared not free to read (JSON-LD isAccessibleForFree)
  /// Where each metadata field came from (`extract --explain`); not published.
  FieldSources sources;
  /// The candidates passed over for each field (`extract --explain`); not published.
  FieldSources passed_over;
  /// What was repaired to read the page (`ParsedPage::warnings`); empty for a clean page.
  std::vector<std::string> warnings;
};

}  // namespace newsflow::extractors
