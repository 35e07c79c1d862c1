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

/// Whether `name` is a news agency's ("AP", "Associated Press", "Reuters", "dpa", "AFP/dpa",
/// "Agencia EFE", ...), not a person's.
bool is_news_agency(std::string_view name);

/// Takes the names of `names` that credit no person out of it: news agencies, names written as a
/// web address ("uncut-news.ch"), and the site's own name (`site_name`) unless that reads as a
/// person's (a personal blog named after its author).
/// Returns them joined by ", " (empty when none); the people stay in `names`, in order.
std::string take_credits(std::vector<std::string>& names, std::string_view site_name);

/// An outlet's imprint given as its author ("hessenschau.de, Frankfurt, Germany", "SPIEGEL
/// ONLINE, Hamburg, Germany"): when the first of the names one value gave credits no person (as
/// `take_credits` reads it), the names after it that do not read as a person's are its address,
/// and are dropped from `names`.
void drop_imprint_address(std::vector<std::string>& names, std::string_view site_name);

/// The credit of a byline that names roles and no one ("Staff", "By Staff", "Redaktion", "The
/// Newsroom"), as written without its "By"; empty for anything else.
std::string staff_credit(std::string_view byline);

/// A byline as printed ("By Jane Doe and John Roe | Reuters") cleaned to names
/// ("Jane Doe, John Roe | Reuters" keeps what follows); empty for URLs and over-long text.
std::string clean_byline(std::string_view text);

}  // namespace newsflow::extractors
