#pragma once

// People's names from what a page prints or declares of its authors: bylines cleaned and split
// into names in the languages newsflow reads, roles and desks dropped.

#include <string>
#include <string_view>
#include <vector>

namespace newsflow::extractors {

/// Names of authors from a byline or a meta value: "By Jane Doe and John Roe", "Von A und B",
/// "Por A y B", "A, B & C"; drops dates, e-mail addresses, URLs, "Staff", agencies' suffixes
/// ("| Reuters" stays a name of its own) and anything too long to be names.
std::vector<std::string> split_authors(std::string_view text);

/// A byline as printed ("By Jane Doe and John Roe | Reuters") cleaned to names
/// ("Jane Doe, John Roe | Reuters" keeps what follows); empty for URLs and over-long text.
std::string clean_byline(std::string_view text);

}  // namespace newsflow::extractors
