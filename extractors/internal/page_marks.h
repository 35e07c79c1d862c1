#pragma once

// The metadata the page walk reads where it stands (`RawMetadata`): meta and link tags, the
// byline's element, elements that carry a date, images. `resolve_metadata` and `resolve_dates`
// make the article's fields of them.

#include <gumbo.h>

#include <cstddef>
#include <cstdint>

#include "extractors/internal/block_features.h"
#include "extractors/metadata.h"

namespace newsflow::extractors::internal {

/// A <meta> (its key and content) or a canonical <link>.
void collect_head_metadata(const GumboElement& el, RawMetadata& raw);

/// An element that names the article's authors: itemprop=author, <a rel=author>, or one of the
/// first eight class or id words containing "byline" (`byline_word`, one of its hint flags).
bool is_byline_element(const GumboElement& el, const Attrs& a, bool byline_word);

/// Records the element as a date mark (`DateMark`) when it carries a date; returns its index in
/// `raw.date_marks`, else -1. Its visible words (from `word` on) are filled in when it closes.
/// `a` is read only when `emit` (the element is visible).
std::int32_t collect_date_mark(const GumboElement& el, bool emit, const Attrs& a, RawMetadata& raw,
                               std::size_t word);

/// Records a visible <img> with its URL, alt text and declared size; `word`: where it stands.
void collect_image(const GumboElement& el, RawMetadata& raw, std::size_t word);

}  // namespace newsflow::extractors::internal
