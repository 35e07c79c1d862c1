#include "daemon/pipeline/reasons.h"

#include <string>

namespace newsflow::daemon {

const std::array<ReasonName, static_cast<std::size_t>(Reason::kEmptyLine) + 1> kReasons{{
    {Reason::kMissingUrl, "missing_url", true},
    {Reason::kMissingBody, "missing_body", true},
    {Reason::kAmbiguousBody, "ambiguous_body", true},
    {Reason::kInvalidJson, "invalid_json", true},
    {Reason::kInvalidField, "invalid_field", true},
    {Reason::kInvalidTimestamp, "invalid_timestamp", true},
    {Reason::kInvalidBase64, "invalid_base64", true},
    {Reason::kInvalidUtf8, "invalid_utf8", true},
    {Reason::kBinaryContent, "binary_content", true},
    {Reason::kEmptyDocument, "empty_document", true},
    {Reason::kTooLarge, "too_large", true},
    {Reason::kCharsetError, "charset_error", true},
    {Reason::kParseError, "parse_error", true},
    {Reason::kNoText, "no_text", true},
    {Reason::kConsentWall, "consent_wall", true},
    {Reason::kFeedNoItems, "feed_no_items", true},
    {Reason::kFeedTooManyItems, "feed_too_many_items", true},
    {Reason::kInternalError, "internal_error", true},
    {Reason::kWorkerCrash, "worker_crash", true},
    {Reason::kInvalidExtracted, "invalid_extracted", true},
    {Reason::kFetchHttp4xx, "fetch_http_4xx", true},
    {Reason::kFetchHttp5xx, "fetch_http_5xx", true},
    {Reason::kFetchHttp429, "fetch_http_429", true},
    {Reason::kFetchTimeout, "fetch_timeout", true},
    {Reason::kFetchConnectError, "fetch_connect_error", true},
    {Reason::kFetchDnsError, "fetch_dns_error", true},
    {Reason::kFetchBlockedAddress, "fetch_blocked_address", true},
    {Reason::kFetchBlockedScheme, "fetch_blocked_scheme", true},
    {Reason::kFetchTooLarge, "fetch_too_large", true},
    {Reason::kFetchTooManyRedirects, "fetch_too_many_redirects", true},
    {Reason::kFetchNotHtml, "fetch_not_html", true},
    {Reason::kFetchDisallowed, "fetch_disallowed", true},
    {Reason::kFetchDeferred, "fetch_deferred", true},
    {Reason::kFetchError, "fetch_error", true},
    {Reason::kInvalidUrl, "invalid_url", true},
    {Reason::kInvalidRetry, "invalid_retry", true},
    {Reason::kOutputTooLarge, "output_too_large", true},
    {Reason::kOutputRefused, "output_refused", true},
    {Reason::kEmptyLine, "empty_line", false},
}};

std::string_view reason_name(Reason r) { return kReasons[static_cast<std::size_t>(r)].name; }

std::optional<Reason> reason_named(std::string_view name) {
  for (const ReasonName& r : kReasons) {
    if (r.name == name) return r.reason;
  }
  return std::nullopt;
}

Reason reason_of(extractors::ExtractReason r) {
  return reason_named(extractors::reason_name(r)).value_or(Reason::kInternalError);
}

Reason fetch_reason(std::string_view outcome) {
  return reason_named("fetch_" + std::string(outcome)).value_or(Reason::kFetchError);
}

}  // namespace newsflow::daemon
