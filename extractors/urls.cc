#include "extractors/urls.h"

#include <curl/curl.h>
#include <libpsl.h>

#include "extractors/text.h"

namespace newsflow::extractors {
namespace {

// A curl URL handle that frees itself.
struct Url {
  CURLU* u = curl_url();
  Url() = default;
  Url(const Url&) = delete;
  Url& operator=(const Url&) = delete;
  ~Url() { curl_url_cleanup(u); }
  // The part, or empty.
  std::string get(CURLUPart part, unsigned flags = 0) const {
    char* out = nullptr;
    if (curl_url_get(u, part, &out, flags) != CURLUE_OK || !out) return {};
    std::string s(out);
    curl_free(out);
    return s;
  }
  bool set(CURLUPart part, const std::string& value, unsigned flags) {
    return curl_url_set(u, part, value.c_str(), flags) == CURLUE_OK;
  }
};

constexpr unsigned kParseFlags = CURLU_NON_SUPPORT_SCHEME | CURLU_URLENCODE;

// Query parameters that say how a reader came, not what the page is.
bool tracking_parameter(std::string_view name) {
  const std::string n = ascii_lower(name);
  if (n.starts_with("utm_")) return true;
  for (std::string_view t :
       {"fbclid", "gclid", "dclid", "msclkid", "yclid", "mc_cid", "mc_eid", "igshid", "_ga", "_gl",
        "ocid", "cmpid", "ns_source", "ns_campaign", "ns_mchannel", "smid", "sr_share"}) {
    if (n == t) return true;
  }
  return false;
}

}  // namespace

std::string resolve_url(std::string_view base, std::string_view href) {
  const std::string h = collapse_whitespace(href);
  if (h.empty() || h.starts_with("#") || ascii_lower(h.substr(0, 11)) == "javascript:") {
    return std::string(base);
  }
  // RFC 3986 reference resolution by libcurl's URL API: dot segments, query-only and
  // scheme-relative references, IDN and IPv6 hosts. An absolute URL of another scheme stays
  // what it is (the fetcher refuses it), never rewritten onto the base's host.
  Url url;
  const bool has_base = url.set(CURLUPART_URL, std::string(base), kParseFlags);
  if (!url.set(CURLUPART_URL, h, kParseFlags)) return std::string(base);
  (void)has_base;
  std::string out = url.get(CURLUPART_URL);
  return out.empty() ? std::string(base) : out;
}

std::string canonical_url(std::string_view url) {
  Url u;
  if (!u.set(CURLUPART_URL, std::string(url), kParseFlags)) return std::string(url);
  const std::string scheme = ascii_lower(u.get(CURLUPART_SCHEME));
  if (scheme != "http" && scheme != "https") return std::string(url);
  u.set(CURLUPART_HOST, ascii_lower(u.get(CURLUPART_HOST)), 0);
  u.set(CURLUPART_FRAGMENT, "", 0);
  curl_url_set(u.u, CURLUPART_FRAGMENT, nullptr, 0);
  const std::string port = u.get(CURLUPART_PORT);
  if ((scheme == "http" && port == "80") || (scheme == "https" && port == "443")) {
    curl_url_set(u.u, CURLUPART_PORT, nullptr, 0);
  }
  const std::string query = u.get(CURLUPART_QUERY);
  if (!query.empty()) {
    std::string kept;
    std::size_t pos = 0;
    while (pos <= query.size()) {
      std::size_t end = query.find('&', pos);
      if (end == std::string::npos) end = query.size();
      const std::string_view param = std::string_view(query).substr(pos, end - pos);
      pos = end + 1;
      if (param.empty() || tracking_parameter(param.substr(0, param.find('=')))) continue;
      if (!kept.empty()) kept += '&';
      kept.append(param);
    }
    curl_url_set(u.u, CURLUPART_QUERY, kept.empty() ? nullptr : kept.c_str(), 0);
  }
  const std::string out = u.get(CURLUPART_URL);
  return out.empty() ? std::string(url) : out;
}

std::string url_scheme_of(std::string_view url) {
  Url u;
  if (!u.set(CURLUPART_URL, std::string(url), kParseFlags)) return {};
  return ascii_lower(u.get(CURLUPART_SCHEME));
}

std::string url_host(std::string_view url) {
  Url u;
  if (!u.set(CURLUPART_URL, std::string(url), kParseFlags)) return {};
  std::string host = ascii_lower(u.get(CURLUPART_HOST));
  if (host.starts_with("[") && host.ends_with("]")) host = host.substr(1, host.size() - 2);
  return host;
}

std::string url_source(std::string_view url) {
  std::string host = url_host(url);
  if (host.empty()) return {};
  // An outlet is its registrable domain (the Public Suffix List's eTLD+1): news.bbc.co.uk and
  // www.bbc.co.uk are one source. IP addresses and hosts the list does not know stay as they are.
  const bool ip = host.find(':') != std::string::npos ||
                  host.find_first_not_of("0123456789.") == std::string::npos;
  if (!ip) {
    if (const char* domain = psl_registrable_domain(psl_builtin(), host.c_str())) return domain;
  }
  if (host.starts_with("www.")) host.erase(0, 4);
  return host;
}

}  // namespace newsflow::extractors
