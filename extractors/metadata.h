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

/// Resolves `href` against the absolute URL `base` by RFC 3986 (libcurl's URL API: dot
/// segments, query-only and scheme-relative references, percent-encoding, IDN, IPv6); returns
/// `base` when `href` is unusable. An absolute URL of another scheme (file:, gopher:) is
/// returned as it is, for the fetcher to refuse.
std::string resolve_url(std::string_view base, std::string_view href);

/// The URL that identifies a page: lowercase host, no fragment, no default port, and no
/// tracking parameters (utm_*, fbclid, gclid, dclid, msclkid, yclid, mc_cid, mc_eid, igshid,
/// _ga, _gl, ocid, cmpid, ns_source, ns_campaign, ns_mchannel, smid, sr_share). Other schemes and
/// unparsable URLs come back unchanged.
std::string canonical_url(std::string_view url);

/// The lowercased scheme of an absolute URL ("https", "file", "gopher"); empty if none.
std::string url_scheme_of(std::string_view url);

/// The lowercased host of an absolute URL (IPv6 without brackets); empty if none.
std::string url_host(std::string_view url);

/// The outlet of an absolute URL: its registrable domain by the Public Suffix List (libpsl's
/// built-in list, so no file is read): news.bbc.co.uk and www.bbc.co.uk are bbc.co.uk. IP
/// addresses and unlisted hosts give the host without a leading "www."; empty if none.
std::string url_source(std::string_view url);

}  // namespace newsflow::extractors
