#pragma once

#include <string>
#include <vector>

namespace newsflow::daemon {

/// What `newsflow parse-feed` reads.
struct ParseFeedOptions {
  std::vector<std::string> files;  ///< raw feed documents (any charset)
  std::string url;                 ///< the feed's URL (relative links resolve against it)
  std::string content_type;        ///< the HTTP Content-Type it was served with, if any
  /// Read `{"path":..., "url":..., "content_type":...}` lines from stdin instead of `files`.
  bool batch = false;
};

/// Parses feeds as the pipeline does (charset detection, then the RSS/Atom/JSON Feed parser)
/// and prints one JSON line per document: the feed's fields and its entries, `bozo` when the
/// document was read only in part, or the reason it could not be read. Returns 0 when every
/// document parsed.
int run_parse_feed(const ParseFeedOptions& options);

}  // namespace newsflow::daemon
