#pragma once

// The records the pipeline writes and reads (docs/contracts.md): the article and story JSON of
// the output topics, and the extracted record an extractor hands the judging role. The
// extracted record's fields are listed once (`record_fields.h`) for its writer and both its
// readers: this file's general one and the fast one (`extracted_simdjson.h`).

#include <string>
#include <string_view>
#include <utility>

#include "daemon/pipeline/document.h"
#include "dedup/stories.h"
#include "tl/expected.hpp"

namespace newsflow::daemon {

/// Serializes an output article as the article JSON of docs/contracts.md (one line).
std::string article_json(const Output& out);

/// Serializes a story as the story JSON of docs/contracts.md (one line).
std::string story_json(const dedup::Story& story);

/// The record an extractor (`--role extract`) hands the dedup role on `topics.extracted`: the
/// extracted article and what of its input `Pipeline::commit` reads (deploy/schemas/
/// extracted.schema.json). `commit` of the decoded pair judges exactly as it would have judged
/// the original.
std::string extracted_json(const Extracted& extracted, const Input& input);

/// Reads an `extracted_json` record; the reason when it is not one.
tl::expected<std::pair<Extracted, Input>, std::string> parse_extracted(std::string_view json);
/// `parse_extracted` without its fast path (`read_extracted_fast`, simdjson): nlohmann's reading,
/// which names what is wrong. The fast path gives what this gives, or leaves the record to it.
tl::expected<std::pair<Extracted, Input>, std::string> parse_extracted_general(
    std::string_view json);

}  // namespace newsflow::daemon
