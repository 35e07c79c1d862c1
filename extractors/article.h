#pragma once

#include <optional>
#include <string>
#include <vector>

#include "extractors/timestamp.h"

namespace newsflow::extractors {

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
  std::optional<UnixSeconds> published_at;
  std::optional<UnixSeconds> fetched_at;
  /// What was repaired to read the page (`ParsedPage::warnings`); empty for a clean page.
  std::vector<std::string> warnings;
};

}  // namespace newsflow::extractors
