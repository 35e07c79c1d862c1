#pragma once

#include <string>
#include <string_view>

#include "extractors/article.h"

namespace newsflow::daemon {

/// The fields of the article card, in the order `extract --explain` and the card's golden cases
/// list them.
inline constexpr std::string_view kCardFields[] = {
    "title",   "canonical_url", "lang",        "byline",   "authors",
    "credit",  "published_at",  "modified_at", "image",    "description",
    "section", "tags",          "site_name",   "paywalled"};

/// One card field's value as text: dates in RFC 3339 with the offset the page wrote them in,
/// lists joined by "; ", the image as its URL (with its size and caption when `detailed`).
/// Empty for a field the article has no value for. Pure; thread-safe.
std::string card_value(const extractors::Article& article, std::string_view field,
                       bool detailed = false);

/// Where `field` came from (`Article::sources`), empty when no source gave it.
std::string card_source(const extractors::Article& article, std::string_view field);

/// The whole card, one line per field of `kCardFields`: `field<TAB>source<TAB>value`, `-` as the
/// source of a field no source gave (what the card's golden cases hold).
std::string card_table(const extractors::Article& article);

}  // namespace newsflow::daemon
