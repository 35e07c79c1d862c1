#pragma once

// What the page walk knows of each block and element, and the block features the extraction
// model is trained on: the hashed names (`internal::fnv1a`) the committed model is keyed by.

#include <gumbo.h>

#include <bitset>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "extractors/page.h"

namespace newsflow::extractors::internal {

// The attributes the walk reads on every element, found in one pass (Gumbo lowercases
// attribute names).
struct Attrs {
  const char* cls = nullptr;
  const char* id = nullptr;
  const char* itemprop = nullptr;
  const char* style = nullptr;
  const char* aria_hidden = nullptr;
  const char* rel = nullptr;
  const char* content = nullptr;  // with property: RDFa metadata on any element
  const char* property = nullptr;
  bool hidden = false;
  bool href = false;
};

// Containers and class/id words whose presence above a block is a strong signal either way.
constexpr std::string_view kFlagNames[] = {
    // elements (and itemprop=articleBody)
    "article", "main", "nav", "footer", "header", "aside", "form", "li", "a", "blockquote",
    "figure", "table", "heading", "articlebody",
    // substrings of class and id words (the first five above count too)
    "comment", "related", "share", "social", "promo", "advert", "sidebar", "menu", "newsletter",
    "cookie", "caption", "byline", "author", "content", "story", "body", "breadcrumb", "tag",
    "meta", "date", "headline", "title", "teaser", "recommend", "more", "widget", "banner",
    "sponsor", "subscribe", "signup", "login", "copyright", "credit", "photo", "image", "gallery",
    "video", "text", "entry", "post", "lead", "summary", "intro", "popular", "trending", "card",
    "list", "hidden", "modal", "disclaimer", "bio", "rich", "prose"};
constexpr std::size_t kFirstClassOnlyFlag = 14;
using Flags = std::bitset<std::size(kFlagNames)>;

consteval std::size_t flag_index(std::string_view name) {
  for (std::size_t k = 0; k < std::size(kFlagNames); ++k) {
    if (kFlagNames[k] == name) return k;
  }
  throw "not a flag name";  // a compile error: consteval
}

// The flags an element itself contributes: its tag, itemprop=articleBody, and hint substrings
// of the first eight words (runs of three or more ASCII letters, lowercased) of its class and
// id attributes. Appends the hashed class-word features of all those words ("cw=" and the
// first 20 letters of the word) to `class_words`.
Flags own_flags(const GumboElement& el, const Attrs& a, std::vector<std::uint64_t>& class_words);

// What the walk knows about a block when its first word arrives, plus running counts.
struct BlockInfo {
  std::string_view tags[3];  // innermost element tags, innermost first (Gumbo's static names)
  Flags flags;               // containers it sits in: article, nav, footer, ...
  std::uint32_t chars = 0, punct = 0, stop = 0, digits = 0, caps = 0;
  bool ends_sentence = false;
  // [begin, end) of its class words (hashed "cw=" features) in the page's pool of them.
  std::uint32_t class_words_begin = 0, class_words_end = 0;
};

// How many of a block's nearest elements with a class or id lend it their class words.
constexpr int kClassWordLevels = 6;

// The hashed features of every block. Each is the FNV-1a hash of a name such as "wc=3" or
// "t01=p/div", built without allocating (the committed model is keyed by these hashes).
void compute_features(ParsedPage& page, const std::vector<BlockInfo>& infos,
                      const std::vector<std::uint64_t>& class_words, std::size_t first_h1_word,
                      std::uint32_t element_count);

}  // namespace newsflow::extractors::internal
