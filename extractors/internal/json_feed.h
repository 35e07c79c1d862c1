#pragma once

// JSON Feed 1.x (jsonfeed.org), read for `parse_feed` when a document opens with '{'.

#include <string_view>

#include "extractors/error.h"
#include "extractors/feed.h"
#include "tl/expected.hpp"

namespace newsflow::extractors::internal {

/// The items of a JSON Feed, links resolved against `feed_url`; kParse when it nests too deep,
/// does not parse or has no items array.
tl::expected<Feed, ExtractError> parse_json_feed(std::string_view text, std::string_view feed_url);

}  // namespace newsflow::extractors::internal
