#pragma once

// What the page walk asks of an element: whether its subtree is skipped (scripts, forms, ...),
// whether it is block-level, whether it is hidden; its attributes; the text under it.

#include <gumbo.h>

#include <string>

#include "extractors/internal/block_features.h"

namespace newsflow::extractors::internal {

/// Elements whose subtree holds no text of the page (scripts, styles, forms, embeds, ruby
/// annotations).
inline bool is_skipped(GumboTag tag) {
  switch (tag) {
    case GUMBO_TAG_SCRIPT:
    case GUMBO_TAG_STYLE:
    case GUMBO_TAG_NOSCRIPT:
    case GUMBO_TAG_TEMPLATE:
    case GUMBO_TAG_HEAD:
    case GUMBO_TAG_SVG:
    case GUMBO_TAG_MATH:
    case GUMBO_TAG_IFRAME:
    case GUMBO_TAG_OBJECT:
    case GUMBO_TAG_EMBED:
    case GUMBO_TAG_CANVAS:
    case GUMBO_TAG_SELECT:
    case GUMBO_TAG_OPTION:
    case GUMBO_TAG_TEXTAREA:
    case GUMBO_TAG_BUTTON:
    case GUMBO_TAG_INPUT:
    case GUMBO_TAG_RT:  // ruby annotations (furigana) and their fallback parentheses: a
    case GUMBO_TAG_RP:  // reading aid above the words, not words of the text
      return true;
    default:
      return false;
  }
}

/// Block-level elements: each begins a new block of text.
inline bool is_block(GumboTag tag) {
  switch (tag) {
    case GUMBO_TAG_P:
    case GUMBO_TAG_DIV:
    case GUMBO_TAG_BR:
    case GUMBO_TAG_LI:
    case GUMBO_TAG_UL:
    case GUMBO_TAG_OL:
    case GUMBO_TAG_DL:
    case GUMBO_TAG_DT:
    case GUMBO_TAG_DD:
    case GUMBO_TAG_H1:
    case GUMBO_TAG_H2:
    case GUMBO_TAG_H3:
    case GUMBO_TAG_H4:
    case GUMBO_TAG_H5:
    case GUMBO_TAG_H6:
    case GUMBO_TAG_TABLE:
    case GUMBO_TAG_TR:
    case GUMBO_TAG_TD:
    case GUMBO_TAG_TH:
    case GUMBO_TAG_SECTION:
    case GUMBO_TAG_ARTICLE:
    case GUMBO_TAG_ASIDE:
    case GUMBO_TAG_HEADER:
    case GUMBO_TAG_FOOTER:
    case GUMBO_TAG_NAV:
    case GUMBO_TAG_MAIN:
    case GUMBO_TAG_FIGURE:
    case GUMBO_TAG_FIGCAPTION:
    case GUMBO_TAG_BLOCKQUOTE:
    case GUMBO_TAG_PRE:
    case GUMBO_TAG_HR:
    case GUMBO_TAG_FORM:
    case GUMBO_TAG_ADDRESS:
    case GUMBO_TAG_BODY:
    case GUMBO_TAG_CAPTION:
    case GUMBO_TAG_FIELDSET:
    case GUMBO_TAG_DETAILS:
    case GUMBO_TAG_SUMMARY:
      return true;
    default:
      return false;
  }
}

/// The value of `el`'s attribute `name`, or null.
const char* attr(const GumboElement& el, const char* name);

/// The attributes the walk reads of an element, in one pass over them.
Attrs scan_attrs(const GumboElement& el);

/// Hidden by an attribute (`hidden`, `aria-hidden=true`) or by an inline style
/// (`display:none`, `visibility:hidden`).
bool is_hidden(const Attrs& a);

/// The text under `node`. `lines`: a <br> or a block element parts lines with ", " (a byline's
/// "A and B<br>Associated Press" is two names, not "BAssociated").
std::string subtree_text(const GumboNode* node, bool lines = false);

}  // namespace newsflow::extractors::internal
