// What a page declares and shows about itself: dates (every source kind, text dates in many
// languages), lead image, description, authors, section, tags, site name, paywall, consent walls.
// Every page here is written for the test.
#include "extractors/metadata.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "extractors/authors.h"
#include "extractors/dates.h"
#include "extractors/html.h"
#include "extractors/timestamp.h"

namespace newsflow::extractors {
namespace {

std::string day(std::optional<UnixSeconds> t) {
  return t ? format_rfc3339(*t).substr(0, 10) : std::string("none");
}

// The first date written in `text`, as YYYY-MM-DD ("none" when there is none).
std::string first_date(std::string_view text, SlashOrder order = SlashOrder::kDayFirst) {
  const auto found = find_text_dates(text, order, 4);
  return found.empty() ? std::string("none") : day(found.front().day);
}

TEST(TextDates, NumericForms) {
  EXPECT_EQ(first_date("Posted 2020-06-07 at noon"), "2020-06-07");
  EXPECT_EQ(first_date("2020/6/7"), "2020-06-07");
  EXPECT_EQ(first_date("Datum: 07.06.2020"), "2020-06-07");
  EXPECT_EQ(first_date("am 7. 6. 2020 um"), "2020-06-07");
  EXPECT_EQ(first_date("07-06-2020"), "2020-06-07");
  // Slashes with the year last: by the page's order unless a number says which is the day.
  EXPECT_EQ(first_date("06/07/2020", SlashOrder::kMonthFirst), "2020-06-07");
  EXPECT_EQ(first_date("07/06/2020", SlashOrder::kDayFirst), "2020-06-07");
  EXPECT_EQ(first_date("13/06/2020", SlashOrder::kMonthFirst), "2020-06-13");
  EXPECT_EQ(first_date("06/13/2020", SlashOrder::kDayFirst), "2020-06-13");
  // Not dates: version numbers, phone-like runs, impossible days, before the web, no year.
  EXPECT_EQ(first_date("version 1.2.3.2020"), "none");
  EXPECT_EQ(first_date("build 2020.06.07.1"), "none");
  EXPECT_EQ(first_date("31.02.2020"), "none");
  EXPECT_EQ(first_date("07.06.1989"), "none");
  EXPECT_EQ(first_date("on June 7 the minister said"), "none");
  // Two-digit years only in their strictest form: 28.09.19.
  EXPECT_EQ(first_date("Erstellt 28.09.19 12:44"), "2019-09-28");
  EXPECT_EQ(first_date("28.09.19."), "2019-09-28");
  EXPECT_EQ(first_date("Version 1.2.19"), "none");
  EXPECT_EQ(first_date("28.9.19"), "none");
  EXPECT_EQ(first_date("28. 09. 19"), "none");
  EXPECT_EQ(first_date("v28.09.19.4"), "none");
  EXPECT_EQ(first_date("am 07.06.89"), "none");  // before the web
}

TEST(TextDates, MonthNamesInTheLanguagesNewsflowReads) {
  EXPECT_EQ(first_date("June 7, 2020"), "2020-06-07");                  // English
  EXPECT_EQ(first_date("Jun. 7th 2020"), "2020-06-07");                 // English, abbreviated
  EXPECT_EQ(first_date("7 June 2020"), "2020-06-07");                   // British
  EXPECT_EQ(first_date("Sonntag, 7. Juni 2020"), "2020-06-07");         // German
  EXPECT_EQ(first_date("12. Januar 2022,"), "2022-01-12");              // German
  EXPECT_EQ(first_date("Publié le 29 juin 2019"), "2019-06-29");        // French
  EXPECT_EQ(first_date("1er mai 2020"), "2020-05-01");                  // French ordinal
  EXPECT_EQ(first_date("martes 17 de marzo de 2020"), "2020-03-17");    // Spanish
  EXPECT_EQ(first_date("7 giugno 2020"), "2020-06-07");                 // Italian
  EXPECT_EQ(first_date("7 de junho de 2020"), "2020-06-07");            // Portuguese
  EXPECT_EQ(first_date("7 juni 2020"), "2020-06-07");                   // Dutch, Swedish
  EXPECT_EQ(first_date("7 czerwca 2020"), "2020-06-07");                // Polish (genitive)
  EXPECT_EQ(first_date("7 června 2020"), "2020-06-07");                 // Czech
  EXPECT_EQ(first_date("7 июня 2020 г."), "2020-06-07");                // Russian
  EXPECT_EQ(first_date("7 ЧЕРВНЯ 2020"), "2020-06-07");                 // Ukrainian, capitals
  EXPECT_EQ(first_date("7 Haziran 2020"), "2020-06-07");                // Turkish
  EXPECT_EQ(first_date("7. kesäkuuta 2020"), "2020-06-07");             // Finnish
  EXPECT_EQ(first_date("2020. június 7."), "2020-06-07");               // Hungarian
  EXPECT_EQ(first_date("7 Ιουνίου 2020"), "2020-06-07");                // Greek
  EXPECT_EQ(first_date("7 يونيو 2020"), "2020-06-07");                  // Arabic
  EXPECT_EQ(first_date("الجمعة 24 نيسان / أبريل 2020"), "2020-04-24");  // Levant: both names
  EXPECT_EQ(first_date("٧ يونيو ٢٠٢٠"), "2020-06-07");                  // Arabic-Indic digits
  EXPECT_EQ(first_date("2020年6月7日 10:00"), "2020-06-07");            // Chinese, Japanese
  EXPECT_EQ(first_date("２０２０年６月７日"), "2020-06-07");            // fullwidth digits
  EXPECT_EQ(first_date("2020년 6월 7일"), "2020-06-07");                // Korean
}

TEST(TextDates, TheWordsBeforeADateSayWhichItIs) {
  const auto dates = find_text_dates(
      "Veröffentlicht am 07.06.2020 | Aktualisiert am 09.06.2020 | Datum: 10.06.2020",
      SlashOrder::kDayFirst);
  ASSERT_EQ(dates.size(), 3u);
  EXPECT_EQ(dates[0].role, DateRole::kPublished);
  EXPECT_EQ(dates[1].role, DateRole::kModified);
  EXPECT_EQ(dates[2].role, DateRole::kDated);
  const auto en =
      find_text_dates("Published June 3, 2020. Updated: June 4, 2020", SlashOrder::kMonthFirst);
  ASSERT_EQ(en.size(), 2u);
  EXPECT_EQ(en[0].role, DateRole::kPublished);
  EXPECT_EQ(en[1].role, DateRole::kModified);
}

TEST(TextDates, ALongTextIsReadAsAShortOneIs) {
  // Tokens are read a window at a time: dates and their role words on either side of each
  // window's edge are found as in a short text, at their offsets in the whole text.
  std::string text;
  std::vector<std::size_t> offsets;
  for (int i = 0; i < 3000; ++i) {
    text += i % 2 ? "word Published " : "x y Updated: ";
    offsets.push_back(text.size());
    text += "7 June 2020, and ";
  }
  const auto dates = find_text_dates(text, SlashOrder::kDayFirst, SIZE_MAX);
  ASSERT_EQ(dates.size(), 3000u);
  for (std::size_t i = 0; i < dates.size(); ++i) {
    EXPECT_EQ(dates[i].offset, offsets[i]) << i;
    EXPECT_EQ(dates[i].length, 11u) << i;
    EXPECT_EQ(dates[i].role, i % 2 ? DateRole::kPublished : DateRole::kModified) << i;
  }
}

// Inside a long glued run of numbers only its first token can start a date, and the run is read
// only at its ends: what comes before, at the start of and after the run is read as it is in a
// short text, at the same offsets.
TEST(TextDates, AGluedRunOfNumbersIsReadAtItsEnds) {
  std::string run;
  for (int i = 0; i < 2000; ++i) run += "28.09.2019.";
  std::string text = "Published 07.06.2020 " + run + " Updated 9 June 2020";
  auto dates = find_text_dates(text, SlashOrder::kDayFirst, 16);
  ASSERT_EQ(dates.size(), 2u);
  EXPECT_EQ(day(dates[0].day), "2020-06-07");
  EXPECT_EQ(dates[0].role, DateRole::kPublished);
  EXPECT_EQ(day(dates[1].day), "2020-06-09");
  EXPECT_EQ(dates[1].offset, text.size() - std::string("9 June 2020").size());
  EXPECT_EQ(dates[1].role, DateRole::kModified);
  // The run's first date is no date (the run goes on after it); a date at the start of a run of
  // other numbers is; a date right after the run, six tokens of it before, has no role word.
  EXPECT_EQ(find_text_dates(run, SlashOrder::kDayFirst, 16).size(), 0u);
  std::string dots;
  for (int i = 0; i < 2000; ++i) dots += "1.2.";
  dates = find_text_dates("am 7.6.2020 " + dots + "3 7 June 2020", SlashOrder::kDayFirst, 16);
  ASSERT_EQ(dates.size(), 2u);
  EXPECT_EQ(day(dates[0].day), "2020-06-07");
  EXPECT_EQ(dates[1].role, DateRole::kUnknown);
  EXPECT_EQ(dates[1].offset, 12 + dots.size() + 2);
}

// Glued runs of numbers (and of numbers and month names) offer a date's start at every token and
// make no date: 1 MB of each is scanned within a bound that holds under the sanitizers too
// (release: 0.001 s per MB for glued numbers, 0.03 for `a1.`), and the dotted run as a page's text
// and as a date element.
TEST(TextDates, GluedRunsAreScannedInLinearTime) {
  const auto seconds_of = [](auto&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  const auto megabyte_of = [](std::string_view piece) {
    std::string text;
    while (text.size() < (std::size_t{1} << 20)) text += piece;
    return text;
  };
  for (const std::string_view piece :
       {"28.09.2019.", "2019-09-28", "28/09/2019", "1.2.3.4.5.", "28.09.19.", "2019-09-28-",
        "2019.09.28.", "28Juni2019", "Juni28,2019", "a1.", "\u0661."}) {
    const std::string text = megabyte_of(piece);
    std::size_t found = 0;
    EXPECT_LT(seconds_of([&] { found = find_text_dates(text, SlashOrder::kDayFirst, 256).size(); }),
              2.0)
        << piece;
    EXPECT_LE(found, 1u) << piece;
  }
  const std::string dotted = megabyte_of("28.09.2019.");
  for (const std::string& html :
       {"<html><body><h1>Headline</h1><p>" + dotted + "</p></body></html>",
        "<html><body><h1>Headline</h1><span class=date>" + dotted +
            "</span><p>words</p></body></html>"}) {
    EXPECT_LT(seconds_of([&] { (void)extract_html(html, "https://n.test/a", {}); }), 2.0);
  }
}

TEST(UrlDates, PathsThatNameADay) {
  EXPECT_EQ(day(url_date("https://n.test/2020/06/07/a-title/")), "2020-06-07");
  EXPECT_EQ(day(url_date("https://n.test/2020/6/7/a-title")), "2020-06-07");
  EXPECT_EQ(day(url_date("https://n.test/news/2020-06-07-a-title")), "2020-06-07");
  EXPECT_EQ(day(url_date("https://n.test/story/20200607/a-title")), "2020-06-07");
  EXPECT_EQ(day(url_date("https://n.test/2020/06/a-title")), "none");  // no day
  EXPECT_EQ(day(url_date("https://n.test/id/123456789012")), "none");  // a long number
  EXPECT_EQ(day(url_date("https://2020-06-07.n.test/a")), "none");     // the host
  EXPECT_EQ(day(url_date("https://n.test/2020/13/40/a")), "none");     // no such day
  // A slug that begins with a number, after a year and a month in folders, is no day.
  EXPECT_EQ(day(url_date("https://n.test/2023/10/3-fragen-an-tina/")), "none");
  EXPECT_EQ(day(url_date("https://n.test/2019/05/10-tips-for-spring")), "none");
  EXPECT_EQ(day(url_date("https://n.test/2019/05/10tips")), "none");
  EXPECT_EQ(day(url_date("https://n.test/2019/05/10/10-tips")), "2019-05-10");
  EXPECT_EQ(day(url_date("https://n.test/2019/05/10.html")), "2019-05-10");
  EXPECT_EQ(day(url_date("https://n.test/2019-05-10-tips")), "2019-05-10");
}

// A page with the given head and body, extracted at `url`.
Article page(const std::string& head, const std::string& body,
             const std::string& url = "https://news.test/a/story",
             std::optional<UnixSeconds> fetched_at = std::nullopt) {
  const std::string text =
      "<p>The first paragraph of the story has quite a few words in it, enough to win the "
      "segmentation over everything else on the page.</p><p>The second paragraph continues the "
      "story with more plain words here, and says what happened next in the town.</p>";
  auto a = extract_html("<html><head>" + head + "</head><body>" + body + text + "</body></html>",
                        url, {}, fetched_at);
  EXPECT_TRUE(a) << (a ? "" : a.error().detail);
  return a ? *a : Article{};
}

std::string source_of(const Article& a, const std::string& field) {
  for (const auto& [f, s] : a.sources) {
    if (f == field) return s;
  }
  return "none";
}

TEST(PageDates, JsonLdVariants) {
  // @graph with a WebPage and the article; the article's dates win.
  Article a = page(
      "<script type='application/ld+json'>{\"@context\":\"https://schema.org\",\"@graph\":["
      "{\"@type\":\"WebPage\",\"datePublished\":\"2019-01-01\"},"
      "{\"@type\":[\"NewsArticle\"],\"datePublished\":\"2020-06-07T10:00:00+02:00\","
      "\"dateModified\":\"2020-06-08T09:00:00+02:00\"}]}</script>",
      "");
  EXPECT_EQ(day(a.published_at), "2020-06-07");
  EXPECT_EQ(day(a.modified_at), "2020-06-08");
  EXPECT_EQ(a.published_utc_offset, 7200);
  EXPECT_EQ(format_rfc3339(*a.published_at, a.published_utc_offset), "2020-06-07T10:00:00+02:00");
  EXPECT_EQ(source_of(a, "published_at"), "json_ld:datePublished");
  // A list of objects, and a date written as text.
  a = page(
      "<script type='application/ld+json'>[{\"@type\":\"Organization\",\"name\":\"N\"},"
      "{\"@type\":\"BlogPosting\",\"datePublished\":\"June 7, 2020\"}]</script>",
      "");
  EXPECT_EQ(day(a.published_at), "2020-06-07");
  // The local day is kept: 01:00 in India is the day before in UTC.
  a = page(
      "<script type='application/ld+json'>{\"@type\":\"NewsArticle\","
      "\"datePublished\":\"2020-10-03T01:00:00+05:30\"}</script>",
      "");
  EXPECT_EQ(format_rfc3339(*a.published_at, a.published_utc_offset), "2020-10-03T01:00:00+05:30");
  EXPECT_EQ(format_rfc3339(*a.published_at), "2020-10-02T19:30:00Z");
}

TEST(PageDates, MetaNamesSpecificBeforeGeneric) {
  Article a = page(
      "<meta name='date' content='2021-01-01'>"
      "<meta property='article:published_time' content='2020-06-07T08:00:00Z'>"
      "<meta property='article:modified_time' content='2020-06-09T08:00:00Z'>",
      "");
  EXPECT_EQ(day(a.published_at), "2020-06-07");
  EXPECT_EQ(day(a.modified_at), "2020-06-09");
  EXPECT_EQ(source_of(a, "published_at"), "meta:article:published_time");
  for (const char* name : {"parsely-pub-date", "sailthru.date", "citation_publication_date",
                           "dc.date.issued", "pubdate", "publishdate", "dcterms.date", "date"}) {
    a = page(std::string("<meta name='") + name + "' content='2020-06-07'>", "");
    EXPECT_EQ(day(a.published_at), "2020-06-07") << name;
  }
  // A generic name gives way to what the page says in so many words.
  a = page("<meta name='dc.date' content='2021-10-15'>",
           "<h1>Headline</h1><span>Erschienen am:</span><h2>13.10.2021</h2>");
  EXPECT_EQ(day(a.published_at), "2021-10-13");
  // RDFa on an element other than meta.
  a = page("", "<span property='schema:dateCreated' content='2022-01-28T12:45:46+00:00'></span>");
  EXPECT_EQ(day(a.published_at), "2022-01-28");
}

TEST(PageDates, TimeElementsAndItemprop) {
  Article a =
      page("", "<h1>Headline</h1><time datetime='2020-06-07T08:00:00Z' pubdate>7 June</time>");
  EXPECT_EQ(day(a.published_at), "2020-06-07");
  a = page("",
           "<h1>Headline</h1><span itemprop='datePublished' content='2020-06-07'>June 7</span>"
           "<span itemprop='dateModified' content='2020-06-10'></span>");
  EXPECT_EQ(day(a.published_at), "2020-06-07");
  EXPECT_EQ(day(a.modified_at), "2020-06-10");
  EXPECT_EQ(source_of(a, "published_at"), "itemprop");
  // What the reader is told beats a datetime of another day.
  a = page("",
           "<h1>Headline</h1><time datetime='2019-07-03T10:18:46Z'>Publié le 29 juin 2019</time>");
  EXPECT_EQ(day(a.published_at), "2019-06-29");
  // An abbr's title holds the full date.
  a = page("",
           "<h1>Headline</h1><abbr class='published' title='Sonntag, Dezember 16th, 2012, 7:05 "
           "pm'>16.12.</abbr>");
  EXPECT_EQ(day(a.published_at), "2012-12-16");
}

// A relative time shown, the date itself in an attribute of the element that names a date.
TEST(PageDates, AnAttributeHoldsTheDateOfARelativeTime) {
  Article a = page("",
                   "<h1>Headline</h1><span class='time-ago' title='2020-06-07T10:00:00Z'>vor 3 "
                   "Stunden</span>");
  EXPECT_EQ(day(a.published_at), "2020-06-07");
  EXPECT_EQ(source_of(a, "published_at"), "date_element:attribute");
}

// A framework's page state names the publication (htmldate searches the page for
// "datePublished" too): below anything the page shows near its headline.
TEST(PageDates, ScriptDataAfterWhatThePageShows) {
  Article a = page(
      "<script>window.__STATE__={\"review\":{\"publishedDate\":"
      "\"2016-11-04T20:37:27Z\",\"updatedDate\":\"2016-11-05T00:00:00Z\"}}</script>",
      "<h1>Headline</h1>");
  EXPECT_EQ(day(a.published_at), "2016-11-04");
  EXPECT_EQ(source_of(a, "published_at"), "script_data");
  // Inside a JSON string, and a creation when nothing says published.
  a = page(
      "<script>self.__next_f.push([1,\"{\\\"createdAt\\\":\\\"2022-01-31T15:58:43+01:00\\\"}\"])"
      "</script>",
      "<h1>Headline</h1>");
  EXPECT_EQ(day(a.published_at), "2022-01-31");
  // Not a key's tail, not a value without a year.
  a = page(
      "<script>var x={\"notdatePublished\":\"2010-01-01\",\"publishedAt\":\"soon\"}"
      "</script>",
      "<h1>Headline</h1>");
  EXPECT_EQ(day(a.published_at), "none");
  // A date shown under the headline wins.
  a = page("<script>var s={\"publishedAt\":\"2016-11-04T20:37:27Z\"}</script>",
           "<h1>Headline</h1><p>7. Juni 2020</p>");
  EXPECT_EQ(day(a.published_at), "2020-06-07");
}

TEST(PageDates, UrlDayFirst) {
  Article a = page("<meta property='article:published_time' content='2019-06-17T16:28:00Z'>", "",
                   "https://www.blog.test/home/2017/7/12/a-post");
  EXPECT_EQ(day(a.published_at), "2017-07-12");
  EXPECT_EQ(source_of(a, "published_at"), "url");
}

TEST(PageDates, DatesShownNearTheHeadline) {
  // A date element near the headline, not the dates of the "latest posts" list far below.
  std::string sidebar;
  for (int i = 0; i < 40; ++i) sidebar += "<p>filler words of a long sidebar here</p>";
  Article a = page("",
                   "<h1>Headline</h1><p class='entry-meta'><span class='entry-date'>"
                   "March 11, 2020</span></p>" +
                       sidebar + "<ul><li><span class='date'>January 2, 2020</span></li></ul>",
                   "https://rna.test/young-leaders/");
  EXPECT_EQ(day(a.published_at), "2020-03-11");
  EXPECT_EQ(source_of(a, "published_at"), "date_element");
  // Written in the text below the headline, in German, with its update.
  a = page("",
           "<h1>Headline</h1><p>Veröffentlicht am 7. Juni 2020, aktualisiert am 9. Juni 2020</p>",
           "https://de.test/artikel");
  EXPECT_EQ(day(a.published_at), "2020-06-07");
  EXPECT_EQ(day(a.modified_at), "2020-06-09");
  // Spanish, above the headline.
  a = page("", "<p>Ciudad de México / jueves 2 de abril de 2020</p><h1>Titular</h1>",
           "https://mx.test/nota");
  EXPECT_EQ(day(a.published_at), "2020-04-02");
}

TEST(PageDates, TheGenericDateNamingTheUpdatesDaySaysThePageWasPublishedAgain) {
  const std::string ld =
      "<script type='application/ld+json'>{\"@type\":\"Article\","
      "\"datePublished\":\"2019-03-02T08:00:00+01:00\","
      "\"dateModified\":\"2023-05-10T09:12:00+02:00\"}</script>";
  Article a = page("<meta name='date' content='2023-05-10T09:12:00+02:00'>" + ld, "");
  EXPECT_EQ(day(a.published_at), "2023-05-10");
  // The update's instant, with its zone (a generic date often has none).
  EXPECT_EQ(source_of(a, "published_at"), "json_ld:dateModified");
  EXPECT_EQ(format_rfc3339(*a.published_at, a.published_utc_offset), "2023-05-10T09:12:00+02:00");
  EXPECT_EQ(day(a.modified_at), "2023-05-10");
  // A generic date on another day, or none: the declared publication stands.
  a = page("<meta name='date' content='2021-01-01'>" + ld, "");
  EXPECT_EQ(day(a.published_at), "2019-03-02");
  a = page(ld, "");
  EXPECT_EQ(day(a.published_at), "2019-03-02");
  // An "update" before the publication is no update: nothing is taken from it.
  a = page(
      "<meta name='date' content='2019-10-18T20:00:25Z'><script type='application/ld+json'>"
      "{\"@type\":\"Article\",\"datePublished\":\"2019-10-19T03:00:00Z\","
      "\"dateModified\":\"2019-10-18T20:00:25Z\"}</script>",
      "");
  EXPECT_EQ(day(a.published_at), "2019-10-19");
}

TEST(PageDates, APublicationMetaConfirmedByTheGenericDateOverrulesJsonLd) {
  const std::string ld =
      "<script type='application/ld+json'>{\"@type\":\"NewsArticle\","
      "\"datePublished\":\"2022-01-04T08:29:00+01:00\"}</script>";
  Article a = page(
      "<meta property='article:published_time' content='2022-01-06T09:29:34+01:00'>"
      "<meta name='date' content='2022-01-06'>" +
          ld,
      "");
  EXPECT_EQ(day(a.published_at), "2022-01-06");
  EXPECT_EQ(source_of(a, "published_at"), "meta:article:published_time");
  // Without the generic date, JSON-LD comes first.
  a = page("<meta property='article:published_time' content='2022-01-06T09:29:34+01:00'>" + ld, "");
  EXPECT_EQ(day(a.published_at), "2022-01-04");
  // Less than a day apart, the two may be one instant's days in two time zones: no dispute.
  a = page(
      "<meta property='article:published_time' content='2022-01-03T20:00:00Z'>"
      "<meta name='date' content='2022-01-03T20:00:00Z'>" +
          ld,
      "");
  EXPECT_EQ(day(a.published_at), "2022-01-04");
}

TEST(PageDates, ADeclaredDayThePageNeverShowsGivesWayToTheDayItShowsThreeTimes) {
  const std::string meta = "<meta property='article:published_time' content='2022-01-15'>";
  const std::string shown =
      "<p><span class='date'>25.01.2022</span> Umwelt</p><h1>Schneeschuhwandern</h1>"
      "<p><time class='date' datetime='2022-01-25'>25.01.2022</time> Wer im Winter ...</p>";
  Article a = page(meta, shown);
  EXPECT_EQ(day(a.published_at), "2022-01-25");
  // A shown date that agrees with the declared one keeps it.
  a = page(meta, shown + "<p><span class='date'>15.01.2022</span></p>");
  EXPECT_EQ(day(a.published_at), "2022-01-15");
  // Shown once or twice, or two days shown as often: the declared date stands.
  a = page(meta, "<h1>Schneeschuhwandern</h1><p><span class='date'>25.01.2022</span></p>");
  EXPECT_EQ(day(a.published_at), "2022-01-15");
}

TEST(PageDates, NeverAfterTheFetchNorBeforeTheWeb) {
  const auto fetched = parse_iso8601("2021-01-01T00:00:00Z");
  Article a = page("<meta property='article:published_time' content='2030-01-01T00:00:00Z'>", "",
                   "https://n.test/a", fetched);
  EXPECT_EQ(day(a.published_at), "none");
  a = page("<meta property='article:published_time' content='1990-01-01T00:00:00Z'>", "");
  EXPECT_EQ(day(a.published_at), "none");
  // Only an update is known: it is the best guess of the publication day too.
  a = page("<meta property='article:modified_time' content='2020-06-09T08:00:00Z'>", "");
  EXPECT_EQ(day(a.published_at), "2020-06-09");
  // An update before the publication is no update.
  a = page(
      "<meta property='article:published_time' content='2020-06-09T08:00:00Z'>"
      "<meta property='article:modified_time' content='2020-06-01T08:00:00Z'>",
      "");
  EXPECT_EQ(day(a.modified_at), "none");
}

TEST(LeadImage, DeclaredElseTheArticlesFirstSizeableImage) {
  Article a = page(
      "<meta property='og:image' content='/img/lead.jpg'>"
      "<meta property='og:image:width' content='1200'>"
      "<meta property='og:image:height' content='630'>"
      "<meta property='og:image:alt' content='The harbour at dawn'>",
      "");
  ASSERT_TRUE(a.image);
  EXPECT_EQ(a.image->url, "https://news.test/img/lead.jpg");
  EXPECT_EQ(a.image->width, 1200);
  EXPECT_EQ(a.image->height, 630);
  EXPECT_EQ(a.image->caption, "The harbour at dawn");
  // JSON-LD: a list of ImageObjects.
  a = page(
      "<script type='application/ld+json'>{\"@type\":\"NewsArticle\",\"image\":[{\"@type\":"
      "\"ImageObject\",\"url\":\"https://cdn.test/a.jpg\",\"width\":800,\"height\":\"450\","
      "\"caption\":\"A caption\"}]}</script>",
      "");
  ASSERT_TRUE(a.image);
  EXPECT_EQ(a.image->url, "https://cdn.test/a.jpg");
  EXPECT_EQ(a.image->width, 800);
  EXPECT_EQ(a.image->height, 450);
  EXPECT_EQ(source_of(a, "image"), "json_ld");
  // Not declared: the first image of the article that is not an icon, lazy-loaded.
  a = page("",
           "<h1>Headline</h1><img src='/icons/share.png' width='16' height='16'>"
           "<img src='data:image/gif;base64,R0lGOD' data-src='/photos/p1.jpg' alt='A photo'>");
  ASSERT_TRUE(a.image);
  EXPECT_EQ(a.image->url, "https://news.test/photos/p1.jpg");
  EXPECT_EQ(a.image->caption, "A photo");
  EXPECT_EQ(source_of(a, "image"), "article_image");
  // Never a URL a browser would run or read locally.
  for (const char* bad : {"javascript:alert(1)", "data:image/png;base64,AAAA", "file:///etc/x"}) {
    a = page(std::string("<meta property='og:image' content='") + bad + "'>", "");
    EXPECT_FALSE(a.image) << bad;
  }
}

TEST(Description, DeclaredElseTheFirstSentences) {
  Article a = page("<meta name='description' content='What happened, in one line.'>", "");
  EXPECT_EQ(a.description, "What happened, in one line.");
  a = page("", "");
  EXPECT_TRUE(a.description.starts_with("The first paragraph of the story")) << a.description;
  EXPECT_LE(a.description.size(), 310u);
  std::string long_text;
  for (int i = 0; i < 40; ++i) long_text += "A sentence of the article that goes on. ";
  const std::string cut = cut_description(long_text, 300);
  EXPECT_TRUE(cut.ends_with("goes on.")) << cut;
  EXPECT_LE(cut.size(), 300u);
  const std::string words = cut_description(std::string(100, 'a') + " " + std::string(300, 'b'));
  EXPECT_TRUE(words.ends_with("\xE2\x80\xA6")) << words;
}

TEST(Authors, JsonLdMetaAndBylinesInSeveralLanguages) {
  Article a = page(
      "<script type='application/ld+json'>{\"@type\":\"NewsArticle\",\"author\":["
      "{\"@type\":\"Person\",\"name\":\"Jane Doe\"},{\"name\":\"John Roe\"},"
      "\"Ann Lee\"]}</script><meta name='author' content='Desk'>",
      "");
  EXPECT_EQ(a.authors, (std::vector<std::string>{"Jane Doe", "John Roe", "Ann Lee"}));
  EXPECT_EQ(source_of(a, "authors"), "json_ld");
  EXPECT_EQ(split_authors("By Jane Doe and John Roe"),
            (std::vector<std::string>{"Jane Doe", "John Roe"}));
  EXPECT_EQ(split_authors("Von Max Muster und Erika Mustermann"),
            (std::vector<std::string>{"Max Muster", "Erika Mustermann"}));
  EXPECT_EQ(split_authors("Por Ana García y Luis Pérez"),
            (std::vector<std::string>{"Ana García", "Luis Pérez"}));
  EXPECT_EQ(split_authors("Par Marie Curie et Pierre Curie"),
            (std::vector<std::string>{"Marie Curie", "Pierre Curie"}));
  EXPECT_EQ(split_authors("Di Mario Rossi e Luigi Bianchi"),
            (std::vector<std::string>{"Mario Rossi", "Luigi Bianchi"}));
  // Roles, dates, e-mail addresses and notes are not names; an apostrophe inside one is.
  EXPECT_EQ(split_authors("Jane Doe, Staff Writer"), (std::vector<std::string>{"Jane Doe"}));
  EXPECT_EQ(split_authors("By TOM KRISHER, AP Auto Writer"),
            (std::vector<std::string>{"TOM KRISHER", "AP Auto"}));
  EXPECT_EQ(split_authors("Jane Doe June 7, 2020 10:30"), (std::vector<std::string>{"Jane Doe"}));
  EXPECT_EQ(split_authors("Lüder Hoppe info@hoppe.test"),
            (std::vector<std::string>{"Lüder Hoppe"}));
  EXPECT_EQ(split_authors("Deutsche Welle (www.dw.com)"),
            (std::vector<std::string>{"Deutsche Welle"}));
  EXPECT_EQ(split_authors("Gavin O'Callaghan"), (std::vector<std::string>{"Gavin O'Callaghan"}));
  EXPECT_TRUE(split_authors("Staff").empty());
  EXPECT_TRUE(split_authors("https://n.test/authors/jane").empty());
  // A profile URL in article:author is no name; the byline element is read, line by line.
  a = page("<meta property='article:author' content='https://fb.test/jane'>",
           "<div class='byline'>By DANICA KIRKA and JILL LAWLESS<br>Associated Press</div>");
  // The agency on the byline's second line credits no person: it is the credit.
  EXPECT_EQ(a.authors, (std::vector<std::string>{"DANICA KIRKA", "JILL LAWLESS"}));
  EXPECT_EQ(a.credit, "Associated Press");
  EXPECT_EQ(source_of(a, "authors"), "byline_element");
}

TEST(Authors, JsonLdAuthorByIdInTheGraph) {
  Article a = page(
      "<script type='application/ld+json'>{\"@graph\":[{\"@type\":\"Article\",\"headline\":"
      "\"H\",\"author\":{\"@id\":\"#p1\"}},{\"@type\":\"Person\",\"@id\":\"#p1\","
      "\"name\":\"Kim Park\"}]}</script>",
      "");
  EXPECT_EQ(a.authors, (std::vector<std::string>{"Kim Park"}));
  EXPECT_EQ(a.byline, "Kim Park");
}

TEST(Dates, SourcesSwitchedOffByName) {
  DateSources set = 0;
  ASSERT_TRUE(parse_date_sources("url, meta", set));
  EXPECT_EQ(set, (1u << static_cast<unsigned>(DateSource::kUrl)) |
                     (1u << static_cast<unsigned>(DateSource::kMeta)));
  EXPECT_FALSE(parse_date_sources("url,nonsense", set));
  DateEvidence ev;
  ev.url = "https://n.test/2020/06/07/story";
  EXPECT_TRUE(resolve_dates(ev).published);
  ev.disabled = 1u << static_cast<unsigned>(DateSource::kUrl);
  EXPECT_FALSE(resolve_dates(ev).published);
}

TEST(Authors, CreditsThatNameNoPerson) {
  EXPECT_TRUE(is_news_agency("The Associated Press"));
  EXPECT_TRUE(is_news_agency("dpa"));
  EXPECT_TRUE(is_news_agency("AFP/dpa"));
  EXPECT_TRUE(is_news_agency("Agencia EFE"));
  EXPECT_FALSE(is_news_agency("Jane Doe"));
  EXPECT_FALSE(is_news_agency("APNews Weekly"));
  std::vector<std::string> names{"Jane Doe", "Reuters", "The Harbor Gazette"};
  EXPECT_EQ(take_credits(names, "Harbor Gazette"), "Reuters, The Harbor Gazette");
  EXPECT_EQ(names, (std::vector<std::string>{"Jane Doe"}));
  names = {"uncut-news.ch", "Jane Doe"};
  EXPECT_EQ(take_credits(names, ""), "uncut-news.ch");
  EXPECT_EQ(names, (std::vector<std::string>{"Jane Doe"}));
  // A personal blog named after its author: the name is a person's.
  names = {"Jane Doe"};
  EXPECT_EQ(take_credits(names, "Jane Doe"), "");
  EXPECT_EQ(names, (std::vector<std::string>{"Jane Doe"}));
  EXPECT_EQ(staff_credit("By Staff"), "Staff");
  EXPECT_EQ(staff_credit("Redaktion"), "Redaktion");
  EXPECT_EQ(staff_credit("The Newsroom"), "The Newsroom");
  EXPECT_EQ(staff_credit("Von Redaktion · 15. August 2022"), "Redaktion");
  EXPECT_EQ(staff_credit("By Jane Doe"), "");
}

TEST(Authors, AnOutletsImprintIsACreditAndItsAddressNoAuthor) {
  std::vector<std::string> names = split_authors("harbourgazette.test, Eastport, Newland");
  drop_imprint_address(names, "");
  EXPECT_EQ(names, (std::vector<std::string>{"harbourgazette.test"}));
  names = split_authors("Harbour Gazette, Eastport, Newland");
  drop_imprint_address(names, "Harbour Gazette");
  EXPECT_EQ(names, (std::vector<std::string>{"Harbour Gazette"}));
  // After a person's name, or after an agency, people stay.
  names = split_authors("Jane Doe, Eastport");
  drop_imprint_address(names, "");
  EXPECT_EQ(names, (std::vector<std::string>{"Jane Doe", "Eastport"}));
  names = split_authors("Reuters, Jane Doe");
  drop_imprint_address(names, "");
  EXPECT_EQ(names, (std::vector<std::string>{"Reuters", "Jane Doe"}));
  Article a = page("<meta name='author' content='harbourgazette.test, Eastport, Newland'>", "");
  EXPECT_TRUE(a.authors.empty());
  EXPECT_EQ(a.credit, "harbourgazette.test");
}

TEST(Authors, WordsThatAnnounceADateEndNoName) {
  EXPECT_EQ(split_authors("Jane Doe, Published 10:02 AM EST Nov 19, 2019"),
            (std::vector<std::string>{"Jane Doe"}));
  EXPECT_TRUE(split_authors("Veröffentlicht am 19.10.2019").empty());
  EXPECT_EQ(split_authors("Von Jana Muster, aktualisiert am 7. Juni 2020"),
            (std::vector<std::string>{"Jana Muster"}));
  // At a name's start they are part of it.
  EXPECT_EQ(split_authors("Le Monde"), (std::vector<std::string>{"Le Monde"}));
}

TEST(PageFacts, SectionTagsSiteNameAndPaywall) {
  Article a = page(
      "<meta property='article:section' content='Politics'>"
      "<meta property='article:tag' content='Elections'>"
      "<meta property='article:tag' content='Parliament'>"
      "<meta property='og:site_name' content='The News Test'>"
      "<script type='application/ld+json'>{\"@type\":\"NewsArticle\",\"isAccessibleForFree\":"
      "false,\"keywords\":\"ignored, since article:tag says\"}</script>",
      "");
  EXPECT_EQ(a.section, "Politics");
  EXPECT_EQ(a.tags, (std::vector<std::string>{"Elections", "Parliament"}));
  EXPECT_EQ(a.site_name, "The News Test");
  EXPECT_TRUE(a.paywalled);
  a = page(
      "<meta name='news_keywords' content='budget, taxes , Budget'>"
      "<script type='application/ld+json'>{\"@type\":\"NewsArticle\",\"articleSection\":"
      "[\"Economy\"],\"publisher\":{\"@type\":\"Organization\",\"name\":\"Daily Test\"},"
      "\"hasPart\":{\"@type\":\"WebPageElement\",\"isAccessibleForFree\":\"False\"}}</script>",
      "");
  EXPECT_EQ(a.section, "Economy");
  EXPECT_EQ(a.tags, (std::vector<std::string>{"budget", "taxes"}));
  EXPECT_EQ(a.site_name, "Daily Test");
  EXPECT_TRUE(a.paywalled);
  a = page("", "");
  EXPECT_FALSE(a.paywalled);
  EXPECT_TRUE(a.tags.empty());
}

// One picker per field: each says where its value came from and which candidates it passed
// over (`extract --explain`).
TEST(Card, EachFieldSaysItsSourceAndTheCandidatesItPassedOver) {
  Article a = page(
      "<title>The headline | Site</title><meta property='og:title' content='The headline'>"
      "<meta property='og:description' content='Short.'>"
      "<meta name='description' content='Another description.'>"
      "<meta name='date' content='2021-01-01'>"
      "<meta property='article:published_time' content='2020-06-07T08:00:00Z'>"
      "<meta name='author' content='John Roe'>"
      "<script type='application/ld+json'>{\"@type\":\"NewsArticle\","
      "\"author\":{\"name\":\"Jane Doe\"}}</script>",
      "<h1>The headline</h1>");
  EXPECT_EQ(source_of(a, "title"), "meta:og:title");
  EXPECT_EQ(source_of(a, "canonical_url"), "url");
  EXPECT_EQ(source_of(a, "byline"), "json_ld");
  EXPECT_EQ(source_of(a, "published_at"), "meta:article:published_time");
  EXPECT_EQ(source_of(a, "description"), "meta:og:description");
  EXPECT_EQ(source_of(a, "authors"), "json_ld");
  const auto passed = [&a](const std::string& field) {
    std::vector<std::string> out;
    for (const auto& [f, candidate] : a.passed_over) {
      if (f == field) out.push_back(candidate);
    }
    return out;
  };
  EXPECT_EQ(passed("title"),
            (std::vector<std::string>{"h1 The headline", "title The headline | Site"}));
  EXPECT_EQ(passed("published_at"), std::vector<std::string>{"meta:date 2021-01-01T00:00:00Z"});
  EXPECT_EQ(passed("description"),
            std::vector<std::string>{"meta:description Another description."});
  EXPECT_EQ(passed("authors"), std::vector<std::string>{"meta:author John Roe"});
}

TEST(ConsentWall, IsRecognisedInSeveralLanguagesAndArticlesAboutCookiesAreNot) {
  for (const char* wall :
       {"We use cookies and similar technologies to improve your experience. By clicking "
        "Accept all you consent to our use of cookies. Manage preferences",
        "Wir verwenden Cookies. Mit Klick auf Alle akzeptieren stimmen Sie der Verarbeitung zu. "
        "Einstellungen",
        "Nous utilisons des cookies. Tout accepter ou paramètres de consentement.",
        "Utilizamos cookies propias y de terceros. Aceptar o configuración."}) {
    EXPECT_TRUE(looks_like_consent_wall(wall)) << wall;
    auto a = extract_html(std::string("<html><body><div><p>") + wall + "</p></div></body></html>",
                          "https://n.test/a", {});
    ASSERT_FALSE(a) << wall;
    EXPECT_EQ(reason_name(a.error().reason), "consent_wall");
  }
  std::string article =
      "The European Court ruled on Tuesday that websites must ask before they set cookies. ";
  for (int i = 0; i < 30; ++i) {
    article +=
        "The judges said the regulator had been too lenient with the companies involved, "
        "and the ruling will change how sites across the union work. ";
  }
  article += "Readers will see more banners asking them to accept all cookies.";
  EXPECT_FALSE(looks_like_consent_wall(article));
}

}  // namespace
}  // namespace newsflow::extractors
