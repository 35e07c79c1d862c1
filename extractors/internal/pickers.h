#pragma once

// The article card's fields, one picker each: what every picker reads of a page (`PageFacts`),
// what it returns (the value and its source), and the pickers of the fields the page shows
// beyond its title and dates (card_fields.cc); `resolve_metadata` (metadata.cc) lists them.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "extractors/metadata.h"

namespace newsflow::extractors::internal {

/// What every picker reads of one page: its metadata, its URL, its JSON-LD objects (null on the
// path without the page, which parses only what the byline needs) and the article's words.
struct PageFacts {
  const RawMetadata& raw;
  std::string_view url;
  const std::vector<const nlohmann::json*>* objects = nullptr;
  const nlohmann::json* main = nullptr;  // the object that describes the article
  const ParsedPage* page = nullptr;
  const MetadataContext* context = nullptr;
  std::size_t article_first_word = SIZE_MAX, article_end_word = 0;
};

/// A field's value and where it came from; `from` is empty when no source gave one.
template <class T>
struct Picked {
  T value{};
  std::string from;
};

/// The first meta tag of `name` with a value, else empty.
std::string_view find_meta(const RawMetadata& raw, std::string_view name);

/// Notes a candidate a picker did not take, for --explain (long values cut).
void pass_over(FieldSources& passed, std::string_view field, std::string_view from,
               std::string_view value);

/// The first of `candidates` (source, value) that has a value; the later ones that have one are
/// passed over.
Picked<std::string> first_of(
    std::string_view field,
    std::initializer_list<std::pair<std::string_view, std::string_view>> candidates,
    FieldSources& passed);

/// The lead image: og:image (with its declared size and alt), twitter:image, JSON-LD image or
/// thumbnailUrl, else the article's first sizeable image.
Picked<std::optional<LeadImage>> pick_image(const PageFacts& f, FieldSources& passed);

/// The description: og:description, meta description, twitter:description, dc.description,
/// JSON-LD description, else the article's first sentences; cut to about 300 characters.
Picked<std::string> pick_description(const PageFacts& f, FieldSources& passed);

/// The authors as names: JSON-LD's article author (when it names a person, it is that), another
/// JSON-LD object's, the author metas, a byline element, a byline line that opens the article. At
/// most 20, each once. Agencies, the site's own name
/// (`site_name`) and bylines of roles only ("Staff") credit no person: they go to `credit`.
Picked<std::vector<std::string>> pick_authors(const PageFacts& f, std::string_view site_name,
                                              FieldSources& passed, Picked<std::string>& credit);

/// The section: article:section, parsely-section, section, sailthru.section, JSON-LD
/// articleSection.
Picked<std::string> pick_section(const PageFacts& f, FieldSources& passed);

/// Tags: article:tag metas, JSON-LD keywords, news_keywords, keywords, parsely-tags; at most 32,
/// each once.
Picked<std::vector<std::string>> pick_tags(const PageFacts& f);

/// The site's name: og:site_name, JSON-LD publisher's name, application-name.
Picked<std::string> pick_site_name(const PageFacts& f, FieldSources& passed);

/// Whether JSON-LD says the article is not free to read (isAccessibleForFree: false, on it or on
/// a part of it).
Picked<bool> pick_paywalled(const PageFacts& f);

}  // namespace newsflow::extractors::internal
