#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "extractors/timestamp.h"

namespace newsflow::extractors {

struct ParsedPage;

/// What a date on a page says it is: when the page was published, or when it was last changed.
/// kDated: said to be the page's date without saying which ("Datum: 07.06.2020"), read as the
/// publication date less surely than kPublished.
enum class DateRole : std::uint8_t { kUnknown, kPublished, kModified, kDated };

/// How a date written with slashes and the year last (03/04/2020) is read when neither number
/// is above 12: day first (most of the world) or month first (the United States).
enum class SlashOrder : std::uint8_t { kDayFirst, kMonthFirst };

/// A day written in text.
struct TextDate {
  UnixSeconds day = 0;                 ///< midnight UTC of the day
  std::size_t offset = 0;              ///< where it starts in the text (bytes)
  std::size_t length = 0;              ///< its length (bytes)
  DateRole role = DateRole::kUnknown;  ///< from the words just before it ("Updated", "Publié le")
};

/// The days written in `text`, in text order, at most `max_dates`: numeric (2020-06-07,
/// 2020/06/07, 07.06.2020, 7. 6. 2020, 07/06/2020 by `order`), with month names and
/// abbreviations in English, German, French, Spanish, Portuguese, Italian, Dutch, the
/// Scandinavian languages, Polish, Czech, Russian, Ukrainian, Turkish, Finnish, Hungarian,
/// Indonesian, Greek and Arabic ("7. Juni 2020", "June 7th, 2020", "17 de marzo de 2020",
/// "7 июня 2020 г.", "2020. június 7.", "7 يونيو 2020"), and the Chinese, Japanese and Korean
/// forms (2020年6月7日, 2020년 6월 7일). Arabic-Indic digits count as digits. A day needs its
/// year: "June 7" alone is no date. Linear in the text.
std::vector<TextDate> find_text_dates(std::string_view text, SlashOrder order,
                                      std::size_t max_dates = 64);

/// The day a URL's path names (/2020/06/07/, /2020/6/7/, /2020-06-07-title, /20200607/, the
/// query's p=2020-06-07 not counted); nothing when the path gives no whole day.
std::optional<UnixSeconds> url_date(std::string_view url);

/// The slash order of a page: month first for English pages not of a country that writes the day
/// first (by the URL's top-level domain), day first otherwise.
SlashOrder slash_order(std::string_view lang, std::string_view url);

/// A date-bearing element met while walking the page: `<time>`, an element with
/// itemprop=datePublished/dateModified/dateCreated, `<abbr class=published title=...>`, or one
/// whose class or id names a date ("date", "time", "datum", "fecha", "published", "posted",
/// "dateline", ...).
struct DateMark {
  enum class Kind : std::uint8_t { kTime, kItemprop, kAbbr, kClass };
  Kind kind = Kind::kClass;
  DateRole role = DateRole::kUnknown;
  std::string value;  ///< its datetime, content or title attribute; empty when only its text
  /// Its visible words in `ParsedPage::words` (empty for hidden elements).
  std::uint32_t first_word = 0, end_word = 0;
};

/// Where a date came from (`extract --explain`).
enum class DateSource : std::uint8_t {
  kNone,
  kUrl,          ///< the URL's path
  kJsonLd,       ///< JSON-LD datePublished / dateModified
  kMeta,         ///< a meta tag (article:published_time, date, dc.date, ...)
  kItemprop,     ///< itemprop=datePublished / dateModified on an element
  kTime,         ///< a `<time datetime>` element
  kDateElement,  ///< the text of an element whose class names a date, or an abbr's title
  kHeaderText,   ///< a date written in the visible text around the headline
  kPageText,     ///< the day the page's visible text names most often
  kScriptData,   ///< a publication date in a script's data (a framework's page state)
};
std::string_view date_source_name(DateSource s);

/// A set of date sources, one bit each (`1 << DateSource`).
using DateSources = std::uint16_t;

/// Reads a comma-separated list of source names (`date_source_name`: "url,meta,header_text") into
/// `out`; false, with `out` unchanged, when a name is none of them.
bool parse_date_sources(std::string_view list, DateSources& out);

/// The evidence of one page for its dates, gathered by the page walk and the metadata.
struct DateEvidence {
  std::string_view url;
  /// Meta tags (lowercase name/property, content) in page order.
  const std::vector<std::pair<std::string, std::string>>* metas = nullptr;
  std::string json_ld_published;  ///< datePublished of the page's main JSON-LD object
  std::string json_ld_modified;   ///< its dateModified
  std::string script_published;   ///< `RawMetadata::script_published`
  const std::vector<DateMark>* marks = nullptr;
  const ParsedPage* page = nullptr;  ///< its words (the marks' and the headline's)
  /// Where the headline (first h1) starts, else where the article's text starts; SIZE_MAX when
  /// neither is known.
  std::size_t anchor_word = SIZE_MAX;
  /// Where the article's text ends (one past its last word), SIZE_MAX when not known: what
  /// follows it (an "Other news" list of dated links, comments) is no text near the headline.
  std::size_t article_end_word = SIZE_MAX;
  SlashOrder order = SlashOrder::kDayFirst;
  /// Dates after this (the fetch time, plus a day for time zones) are not the page's; nothing
  /// before 1995 is a web page's either.
  std::optional<UnixSeconds> not_after;
  /// Sources not read at all, as if the page gave nothing there: to measure what each is worth.
  DateSources disabled = 0;
};

/// A page's dates and where each came from.
struct PageDates {
  std::optional<UnixSeconds> published;
  std::optional<UnixSeconds> modified;
  DateSource published_from = DateSource::kNone;
  DateSource modified_from = DateSource::kNone;
  /// The offsets from UTC (seconds east) the dates were written in, 0 when unknown.
  int published_offset = 0;
  int modified_offset = 0;
  std::string published_detail;  ///< e.g. the meta name, for --explain
  std::string modified_detail;
  /// The candidates not chosen, for --explain: ("published_at" or "modified_at", their source and
  /// value, "meta:date 2021-01-01T00:00:00Z"), in the order they were read.
  std::vector<std::pair<std::string, std::string>> passed_over;
};

/// Chooses the publication and last-update dates, most explicit first, as htmldate does: the
/// URL's day, then what the page declares for machines (JSON-LD, the common meta names,
/// itemprop, `<time>` marked published), then what it shows (elements that name a date, then
/// dates written around the headline, nearest first; before the headline counts twice the
/// distance). Updates are kept apart: a date marked as an update never becomes `published`
/// while an original one is there, and `modified` is never before `published`.
PageDates resolve_dates(const DateEvidence& evidence);

}  // namespace newsflow::extractors
