#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "extractors/timestamp.h"

namespace newsflow::extractors {

/// What a page says about itself, gathered while walking its tree; strings are raw (trimmed).
struct RawMetadata {
  std::string html_lang;                                   ///< `<html lang>`
  std::string title_tag;                                   ///< `<title>` text
  std::string first_h1;                                    ///< text of the first `<h1>`
  std::string canonical_href;                              ///< `<link rel=canonical href>`
  std::string first_time;                                  ///< `datetime` of the first `<time>`
  std::vector<std::pair<std::string, std::string>> metas;  ///< (lowercase name/property, content)
  std::vector<std::string> json_ld;                        ///< bodies of ld+json scripts
  /// Text of the first itemprop=author, rel=author or class *byline* element.
  std::string markup_byline;
};

/// The metadata fields of an `Article`.
struct PageMetadata {
  std::string title;
  std::string canonical_url;
  std::string source;
  std::string lang;
  std::string byline;  ///< the authors, "A, B"; empty when unknown
  std::optional<UnixSeconds> published_at;
};

/// Chooses title (og:title, JSON-LD headline, first h1, `<title>`), canonical URL (canonical
/// link, og:url, else `url`), source host, language, byline (JSON-LD author names, author meta
/// tags, then an author/byline element; "By " and URLs dropped) and published date (article
/// meta tags, JSON-LD datePublished, `<time datetime>`).
PageMetadata resolve_metadata(const RawMetadata& raw, std::string_view url);

/// A byline as printed ("By Jane Doe and John Roe | Reuters") cleaned to names
/// ("Jane Doe, John Roe | Reuters" keeps what follows); empty for URLs and over-long text.
std::string clean_byline(std::string_view text);

/// Resolves `href` against the absolute URL `base`; returns `base` when `href` is unusable.
std::string resolve_url(std::string_view base, std::string_view href);

/// Lowercased host of an absolute URL without port, userinfo or a leading "www."; empty if none.
std::string url_source(std::string_view url);

}  // namespace newsflow::extractors
