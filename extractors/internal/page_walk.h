#pragma once

// The walk over the tree Gumbo made of a page: what `parse_page` does once the page is parsed.

#include <gumbo.h>

#include "extractors/page.h"

namespace newsflow::extractors::internal {

/// Walks the tree under `root` depth first, in document order, with a stack of its own (a deep
/// tree costs no call stack): the visible words go to `page.words` and their places to
/// `page.tokens`, grouped into a block at every block-level element (`page.blocks`, with the
/// features the block model scores); the metadata elements carry, visible or not, to
/// `page.metadata`. Skipped and hidden subtrees give no words. The words after the first
/// `max_words` are not read, with the warning "words_beyond_limit_not_read" (the metadata after
/// them still is).
void walk_page(const GumboNode* root, ParsedPage& page, std::size_t max_words);

}  // namespace newsflow::extractors::internal
