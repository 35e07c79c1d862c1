#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "extractors/article.h"
#include "extractors/dates.h"
#include "extractors/timestamp.h"

namespace newsflow::extractors {

struct ParsedPage;

/// What a page says about itself, gathered while walking its tree; strings are raw (trimmed).
struct RawMetadata {
  std::string html_lang;                                   ///< `<html lang>`
  std::string title_tag;                                   ///< `<title>` text
  std::string first_h1;                                    ///< text of the first `<h1>`
  std::string canonical_href;                              ///< `<link rel=canonical href>`
  std::string first_time;                                  ///< `datetime` of the first `<time>`
  std::vector<std::pair<std::string, std::string>> metas;  ///< (lowercase name/property, content)
  std::vector<std::string> json_ld;                        ///< bodies of ld+json scripts
  /// The first publication date a page's other scripts give as data (`"datePublished": "..."`,
  /// `"publishedDate"`, `"published_at"`, ...: a framework's page state), as written.
  std::string script_published;
  /// Text of the first itemprop=author, rel=author or class *byline* element.
  std::string markup_byline;
  /// Elements that carry a date (`DateMark`), in page order; at most `kMaxMarks`.
  std::vector<DateMark> date_marks;
  /// A visible `<img>`: its URL (src, else data-src or the first srcset candidate), alt text,
  /// declared size (0 when not declared) and the number of visible words before it.
  struct Image {
    std::string src;
    std::string alt;
    int width = 0;
    int height = 0;
    std::uint32_t word = 0;
  };
  std::vector<Image> images;  ///< in page order; at most `kMaxMarks`
  /// Index of the first word of the first `<h1>`; SIZE_MAX when there is none.
  std::size_t first_h1_word = SIZE_MAX;
  static constexpr std::size_t kMaxMarks = 256;
};

/// The metadata fields of an `Article`.
struct PageMetadata {
  std::string title;
  std::string canonical_url;
  std::string source;
  std::string lang;
  std::string byline;                ///< the authors, "A, B"; empty when unknown
  std::vector<std::string> authors;  ///< the same as names
  std::string credit;                ///< an agency, the site or its staff credited, not a person
  std::optional<UnixSeconds> published_at;
  std::optional<UnixSeconds> modified_at;
  int published_utc_offset = 0;  ///< as the page wrote its dates (seconds east of UTC)
  int modified_utc_offset = 0;
  std::optional<LeadImage> image;
  std::string description;
  std::string section;
  std::vector<std::string> tags;
  std::string site_name;
  bool paywalled = false;  ///< JSON-LD says isAccessibleForFree: false
  FieldSources sources;
  /// The candidates each field's picker did not take: (field, "source value"), for --explain.
  FieldSources passed_over;
};

/// What `resolve_metadata` needs besides the page.
struct MetadataContext {
  /// The article's blocks as extraction chose them (ascending); the lead image and the
  /// description fall back to them.
  const std::vector<std::uint32_t>* article_blocks = nullptr;
  std::string_view article_text;
  /// When the page was fetched: no date after it (and a day for time zones) is the page's.
  std::optional<UnixSeconds> fetched_at;
  /// Date sources not read (`DateEvidence::disabled`).
  DateSources disabled_date_sources = 0;
};

/// Chooses title (og:title, JSON-LD headline, first h1, `<title>`), canonical URL (canonical
/// link, og:url, else `url`), source host, language, byline (JSON-LD author names, author meta
/// tags, then an author/byline element; "By " and URLs dropped) and published date (article
/// meta tags, JSON-LD datePublished, `<time datetime>`).
PageMetadata resolve_metadata(const RawMetadata& raw, std::string_view url);

/// The same with everything a page shows: the dates (`resolve_dates`), modified date, lead
/// image (og:image, twitter:image, JSON-LD image, else the first sizeable image among or just
/// before the article's blocks), description (og:description, meta description, JSON-LD, else
/// the article's first sentences, at most about 300 characters), authors as a list, section,
/// tags, site name and the paywall flag, each with its source in `sources`.
PageMetadata resolve_metadata(const ParsedPage& page, std::string_view url,
                              const MetadataContext& context);

/// `text` cut to at most `max_chars` characters: at the last sentence end within it when that
/// keeps more than half, else at the last word boundary with an ellipsis.
std::string cut_description(std::string_view text, std::size_t max_chars = 300);

}  // namespace newsflow::extractors
