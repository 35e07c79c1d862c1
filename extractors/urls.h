#pragma once

// URLs as pages and feeds name them: references resolved against a base, the URL that identifies
// a page (no fragment, default port or tracking parameters), its scheme, host and outlet. Over
// libcurl's URL API and libpsl's built-in Public Suffix List: no I/O.

#include <string>
#include <string_view>

namespace newsflow::extractors {

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
