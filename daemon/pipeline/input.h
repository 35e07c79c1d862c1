#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/pipeline/document.h"
#include "extractors/text.h"

namespace newsflow::daemon {

/// An input as parsed from the wire: the document, or why it cannot be one. `input.id` and
/// `input.url` are filled as far as they could be read, for the dead-letter record.
struct ParsedInput {
  Input input;
  std::optional<Failure> failure;
};

/// Parses one replay line (docs/contracts.md, "Replay files"): a JSON object with `url`, optional
/// `id`, `fetched_at`, `published_at`, `content_type`, and exactly one of `html`, `html_b64`,
/// `text`
/// (+ optional `title`), `feed`, `feed_b64`.
ParsedInput parse_replay_line(std::string_view line);

/// Kafka message headers as (name, value) pairs.
using Headers = std::vector<std::pair<std::string, std::string>>;

/// Parses a message of the pages topic: raw HTML bytes with a `url` header (or the JSON
/// envelope when the `content_type` header is application/json). `timestamp` is the message
/// timestamp in seconds (0 if none), the default for `fetched_at`. A raw page's input borrows
/// `value` (`Input::payload`): keep it alive while the input is prepared.
ParsedInput parse_page_message(std::string_view value, const Headers& headers,
                               std::int64_t timestamp);

/// Calls `fn` with every line (without its newline) of a plain or gzip file ("-": stdin).
/// Returns false when the file cannot be opened or is corrupt.
bool read_lines(const std::string& path, const std::function<void(std::string_view)>& fn);

class InputFile;
/// The same over a file already open (its first bytes perhaps peeked at); false when it is
/// corrupt.
bool read_lines(InputFile& file, const std::function<void(std::string_view)>& fn);

using extractors::base64_decode;

}  // namespace newsflow::daemon
