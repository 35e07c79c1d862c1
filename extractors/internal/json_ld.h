#pragma once

// A page's JSON-LD: its bodies parsed within bounds (depth, length, long strings cut), the objects
// they hold, the one that describes the article, and the values the card reads from them.

#include <array>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "extractors/article.h"

namespace newsflow::extractors::internal {

/// The string value of the first `"key": "value"` in the JSON-LD bodies, found as text (JSON
/// escapes left as they are except \" and \/): good enough for headlines and dates, and it reads
/// bodies that do not parse.
std::string json_ld_string(const std::vector<std::string>& bodies, std::string_view key);

/// Appends the author names of `j` to `out`: "author" of the objects (and their @graph) as a
/// string, an object with "name", or a list of either; eight names at most. An object with only
/// an "@id" is the object of `objects` with that "@id" (Yoast's `{"@id": ".../#/schema/person/1"}`
/// in a @graph).
void json_ld_authors(const nlohmann::json& j, std::vector<std::string>& out, int depth,
                     const std::vector<const nlohmann::json*>* objects = nullptr);

/// A JSON-LD body parsed with its string literals over `max_string_bytes` emptied, or discarded
/// when it is too deep, too long or not JSON.
nlohmann::json parse_json_ld(std::string_view body, std::size_t max_string_bytes);

/// The page's JSON-LD bodies parsed, and every object of them: top-level ones, list members and
/// @graph members, in order (nested objects such as an author are not listed). The objects point
/// into the documents: nothing is copied, and the struct is not to be copied either.
struct JsonLd {
  std::vector<nlohmann::json> documents;
  std::vector<const nlohmann::json*> objects;
};
JsonLd read_json_ld(const std::vector<std::string>& bodies);

/// The object that describes the page's article: the first of an article type, else of a page
/// type with a date or headline, else the first with a datePublished; null when none.
const nlohmann::json* main_object(const std::vector<const nlohmann::json*>& objects);

/// The string (or first string of a list, or integer) under `key` of `o`, whitespace collapsed;
/// empty when there is none or `o` is null.
std::string string_of(const nlohmann::json* o, std::string_view key);

/// The first image of a JSON-LD "image" value: a URL, an ImageObject, or a list of either.
std::optional<LeadImage> json_ld_image(const nlohmann::json& v, int depth = 0);

}  // namespace newsflow::extractors::internal
