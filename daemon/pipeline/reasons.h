#pragma once

// Why an input became a dead letter: one list, from which the dead letters' reason (the
// `error_reason` header, replay's `reason`), the `reason` label of `newsflow_dlq_total`
// (pre-registered at zero, `Metrics::dead_letter_reasons`) and docs/contracts.md's table come
// (tests/unit/reasons_test.cc reads the table). A failure is made from a `Reason`, never from a
// string, so a typo cannot become a new reason and a new metric label. The WARC and ARC
// readers' own record reasons (docs/input-formats.md) are theirs, and pass as they are.
//
//     Failure f(Reason::kNoText, "no main text");
//     f.reason;  // "no_text"

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

#include "extractors/error.h"

namespace newsflow::daemon {

/// The daemon's dead-letter reasons, in the order of docs/contracts.md's table.
enum class Reason {
  kMissingUrl,
  kMissingBody,
  kAmbiguousBody,
  kInvalidJson,
  kInvalidField,
  kInvalidTimestamp,
  kInvalidBase64,
  kInvalidUtf8,
  kBinaryContent,
  kEmptyDocument,
  kTooLarge,
  kCharsetError,
  kParseError,
  kNoText,
  kConsentWall,
  kFeedNoItems,
  kFeedTooManyItems,
  kInternalError,
  kWorkerCrash,
  kInvalidExtracted,
  kFetchHttp4xx,
  kFetchHttp5xx,
  kFetchHttp429,
  kFetchTimeout,
  kFetchConnectError,
  kFetchDnsError,
  kFetchBlockedAddress,
  kFetchBlockedScheme,
  kFetchTooLarge,
  kFetchTooManyRedirects,
  kFetchNotHtml,
  kFetchDisallowed,
  kFetchDeferred,
  kFetchError,
  kInvalidUrl,
  kInvalidRetry,
  kOutputTooLarge,
  kOutputRefused,
  kEmptyLine,  ///< `replay` only: a blank line (its input is a file, not a topic)
};

/// A reason and its name (a metric label and the dead letters' reason: part of the contract).
struct ReasonName {
  Reason reason;
  std::string_view name;
  bool on_topics;  ///< given by the daemon too (its metric label is registered), not replay's alone
};

/// Every reason, in the enum's order.
extern const std::array<ReasonName, static_cast<std::size_t>(Reason::kEmptyLine) + 1> kReasons;

/// The reason's stable snake_case name, e.g. "fetch_http_5xx".
std::string_view reason_name(Reason r);
/// The reason of a name; nothing for one that is not a reason.
std::optional<Reason> reason_named(std::string_view name);
/// The extractors' reason (`extractors::ExtractReason`) as the daemon's: the same name.
Reason reason_of(extractors::ExtractReason r);
/// A failed fetch's reason: "fetch_" and the fetcher's outcome (`FetchResult::outcome`);
/// `kFetchError` for an outcome that names no reason.
Reason fetch_reason(std::string_view outcome);

}  // namespace newsflow::daemon
