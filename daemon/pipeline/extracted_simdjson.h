#pragma once

#include <optional>
#include <string_view>
#include <utility>

#include "daemon/pipeline/document.h"

namespace newsflow::daemon {

/// `parse_extracted`'s fast path (the fields of `record_fields.h`): an extractor's record read with
/// simdjson's DOM parser, several times faster than nlohmann's (the dedup role reads one per
/// article). Nothing for a record it does not read exactly as `parse_extracted`'s general path
/// would: one it refuses, a repeated key (nlohmann keeps the last, simdjson finds the first), a
/// required field missing or of another type, an integer beyond int64, no text. The general path
/// then decides, and names the problem.
std::optional<std::pair<Extracted, Input>> read_extracted_fast(std::string_view json);

}  // namespace newsflow::daemon
