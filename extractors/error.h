#pragma once

#include <string>
#include <string_view>

namespace newsflow::extractors {

/// Why a document yields no article. Each value is a metric label and a dead-letter reason, so
/// the names returned by `reason_name` are part of the data contract.
enum class ExtractReason {
  kEmpty,        ///< no bytes, or only whitespace
  kTooLarge,     ///< over the configured maximum size
  kBinary,       ///< NUL bytes or mostly control characters
  kInvalidUtf8,  ///< text that must be UTF-8 is not
  kCharset,      ///< the bytes could not be converted to UTF-8
  kParse,        ///< the parser gave up on the document
  kNoText,       ///< parsed, but no main text was found
  kConsentWall,  ///< the main text is a cookie or consent wall, not the article
};

/// Stable snake_case name of a reason, e.g. "binary_content".
std::string_view reason_name(ExtractReason r);

/// A per-document failure: the reason and a human-readable detail.
struct ExtractError {
  ExtractReason reason;
  std::string detail;
};

}  // namespace newsflow::extractors
