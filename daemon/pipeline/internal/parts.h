#pragma once

// Helpers the parts of `Pipeline` share (extraction, linked pages, judging): not for other
// modules.

#include <chrono>
#include <cstdio>
#include <string>

#include "daemon/pipeline/document.h"
#include "dedup/fingerprint.h"
#include "extractors/urls.h"

namespace newsflow::daemon::pipeline_internal {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Id of an input without one: 16 hex digits of the canonical URL's hash, so a page re-crawled
// under the same canonical URL keeps its key downstream.
inline std::string derived_id(const std::string& canonical_url) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx",
                static_cast<unsigned long long>(dedup::hash64(canonical_url)));
  return buf;
}

// A page's article id: the input's, else derived from its canonical URL.
inline std::string page_id(const std::string& canonical_url, const Input& input) {
  return !input.id.empty() ? input.id : derived_id(extractors::canonical_url(canonical_url));
}

}  // namespace newsflow::daemon::pipeline_internal
