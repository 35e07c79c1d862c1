#include "extractors/metadata.h"

#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <nlohmann/json.hpp>

#include "extractors/authors.h"
#include "extractors/internal/json_ld.h"
#include "extractors/internal/pickers.h"
#include "extractors/page.h"
#include "extractors/text.h"
#include "extractors/urls.h"

namespace newsflow::extractors {
namespace internal {

std::string_view find_meta(const RawMetadata& raw, std::string_view name) {
  for (const auto& [key, content] : raw.metas) {
    if (key == name && !content.empty()) return content;
  }
  return {};
}

// Notes a candidate a picker did not take, for --explain (long values cut).
void pass_over(FieldSources& passed, std::string_view field, std::string_view from,
               std::string_view value) {
  std::string v = collapse_whitespace(value);
  if (truncate_text(v, 100)) v += "...";
  passed.emplace_back(std::string(field), std::string(from) + " " + v);
}

// The first of `candidates` (source, value) that has a value; the later ones that have one are
// passed over.
Picked<std::string> first_of(
    std::string_view field,
    std::initializer_list<std::pair<std::string_view, std::string_view>> candidates,
    FieldSources& passed) {
  Picked<std::string> out;
  for (const auto& [from, value] : candidates) {
    if (value.empty()) continue;
    if (out.from.empty()) {
      out = {std::string(value), std::string(from)};
    } else {
      pass_over(passed, field, from, value);
    }
  }
  return out;
}

}  // namespace internal

namespace {

using internal::find_meta;
using internal::first_of;
using internal::json_ld_authors;
using internal::json_ld_string;
using internal::JsonLd;
using internal::main_object;
using internal::PageFacts;
using internal::parse_json_ld;
using internal::pass_over;
using internal::pick_authors;
using internal::pick_description;
using internal::pick_image;
using internal::pick_paywalled;
using internal::pick_section;
using internal::pick_site_name;
using internal::pick_tags;
using internal::Picked;
using internal::read_json_ld;
using internal::string_of;

// The headline: og:title, JSON-LD headline, the first h1, twitter:title, <title>.
Picked<std::string> pick_title(const PageFacts& f, FieldSources& passed) {
  const std::string ld_headline = json_ld_string(f.raw.json_ld, "headline");
  auto out = first_of("title",
                      {{"meta:og:title", find_meta(f.raw, "og:title")},
                       {"json_ld:headline", ld_headline},
                       {"h1", f.raw.first_h1},
                       {"meta:twitter:title", find_meta(f.raw, "twitter:title")},
                       {"title", f.raw.title_tag}},
                      passed);
  out.value = collapse_whitespace(out.value);
  return out;
}

// The canonical URL: the canonical link, og:url, else the page's URL.
Picked<std::string> pick_canonical_url(const PageFacts& f, FieldSources& passed) {
  auto out = first_of(
      "canonical_url",
      {{"link:canonical", f.raw.canonical_href}, {"meta:og:url", find_meta(f.raw, "og:url")}},
      passed);
  if (out.from.empty()) return {std::string(f.url), "url"};
  out.value = resolve_url(f.url, out.value);
  return out;
}

// The declared language, as ISO 639-1: <html lang>, content-language, og:locale.
Picked<std::string> pick_lang(const PageFacts& f, FieldSources& passed) {
  auto out = first_of("lang",
                      {{"html:lang", f.raw.html_lang},
                       {"meta:content-language", find_meta(f.raw, "content-language")},
                       {"meta:og:locale", find_meta(f.raw, "og:locale")}},
                      passed);
  const std::string lang = ascii_lower(collapse_whitespace(out.value));
  if (lang.size() >= 2 && lang[0] >= 'a' && lang[0] <= 'z' && lang[1] >= 'a' && lang[1] <= 'z' &&
      (lang.size() == 2 || lang[2] == '-' || lang[2] == '_')) {
    return {lang.substr(0, 2), out.from};
  }
  return {};
}

// The byline as printed: JSON-LD's author names, the author metas, an author or byline element.
Picked<std::string> pick_byline(const PageFacts& f) {
  std::vector<std::string> names;
  if (f.objects) {
    // (A @graph member is listed and followed both: a name met twice is kept once below.)
    for (const nlohmann::json* o : *f.objects) {
      if (o->contains("author")) json_ld_authors(*o, names, 0, f.objects);
    }
  } else {
    for (const auto& body : f.raw.json_ld) {
      if (body.find("\"author\"") == std::string::npos) continue;
      const auto j = parse_json_ld(body, 1024);
      if (!j.is_discarded()) json_ld_authors(j, names, 0);
    }
  }
  std::string ld_authors;
  for (const auto& n : names) {
    const std::string c = clean_byline(n);
    if (c.empty() || ld_authors.find(c) != std::string::npos) continue;
    if (!ld_authors.empty()) ld_authors += ", ";
    ld_authors += c;
  }
  const RawMetadata& raw = f.raw;
  for (const auto& [from, candidate] :
       std::initializer_list<std::pair<const char*, std::string_view>>{
           {"json_ld", ld_authors},
           {"meta:author", find_meta(raw, "author")},
           {"meta:article:author", find_meta(raw, "article:author")},
           {"meta:byl", find_meta(raw, "byl")},
           {"meta:parsely-author", find_meta(raw, "parsely-author")},
           {"meta:sailthru.author", find_meta(raw, "sailthru.author")},
           {"meta:dc.creator", find_meta(raw, "dc.creator")},
           {"meta:dcterms.creator", find_meta(raw, "dcterms.creator")},
           {"byline_element", raw.markup_byline}}) {
    if (std::string c = clean_byline(candidate); !c.empty()) return {std::move(c), from};
  }
  return {};
}

// The publication date without the page (`resolve_metadata` of the raw metadata): the first
// ISO 8601 date of the article metas, JSON-LD datePublished, <time datetime>.
std::optional<UnixSeconds> pick_raw_published(const RawMetadata& raw) {
  const std::string ld_date = json_ld_string(raw.json_ld, "datePublished");
  for (std::string_view candidate :
       {find_meta(raw, "article:published_time"), std::string_view(ld_date),
        find_meta(raw, "datepublished"), find_meta(raw, "pubdate"), find_meta(raw, "publishdate"),
        find_meta(raw, "date"), find_meta(raw, "dc.date"), find_meta(raw, "og:published_time"),
        std::string_view(raw.first_time)}) {
    if (candidate.empty()) continue;
    if (auto t = parse_iso8601(candidate)) return t;
  }
  return std::nullopt;
}

// A picked value into its field of the card, with its source; a field no source gave is left
// as it is.
template <class T, class Field>
void keep(PageMetadata& out, std::string_view field, Picked<T> picked, Field& into) {
  if (picked.from.empty()) return;
  into = std::move(picked.value);
  out.sources.emplace_back(std::string(field), std::move(picked.from));
}

// Title, canonical URL, source, language and byline: what both paths read.
PageMetadata resolve_basic(const PageFacts& f) {
  PageMetadata out;
  keep(out, "title", pick_title(f, out.passed_over), out.title);
  keep(out, "canonical_url", pick_canonical_url(f, out.passed_over), out.canonical_url);
  out.source = url_source(out.canonical_url);
  if (out.source.empty()) out.source = url_source(f.url);
  keep(out, "lang", pick_lang(f, out.passed_over), out.lang);
  keep(out, "byline", pick_byline(f), out.byline);
  return out;
}

// The dates (`resolve_dates`), else the day a canonical URL on another path names (syndicated
// copies).
PageDates pick_dates(const PageFacts& f, std::string_view lang) {
  const RawMetadata& raw = f.raw;
  DateEvidence ev;
  ev.url = f.url;
  ev.metas = &raw.metas;
  ev.json_ld_published = string_of(f.main, "datePublished");
  if (ev.json_ld_published.empty()) ev.json_ld_published = string_of(f.main, "dateCreated");
  ev.json_ld_modified = string_of(f.main, "dateModified");
  ev.script_published = raw.script_published;
  // JSON-LD that does not parse (a trailing comma, a raw newline in a string) still names its
  // dates: the first of each, read as text.
  if (!f.main) {
    ev.json_ld_published = json_ld_string(raw.json_ld, "datePublished");
    ev.json_ld_modified = json_ld_string(raw.json_ld, "dateModified");
  }
  ev.marks = &raw.date_marks;
  ev.page = f.page;
  // The headline: the first h1, unless it stands far above the article (a site's logo in an h1),
  // else where the article's text starts.
  ev.anchor_word = raw.first_h1_word;
  if (ev.anchor_word == SIZE_MAX ||
      (f.article_first_word != SIZE_MAX && f.article_first_word > ev.anchor_word + 200)) {
    ev.anchor_word = f.article_first_word;
  }
  if (f.article_first_word != SIZE_MAX) ev.article_end_word = f.article_end_word;
  ev.order = slash_order(lang, f.url);
  ev.not_after = f.context->fetched_at;
  ev.disabled = f.context->disabled_date_sources;
  PageDates dates = resolve_dates(ev);
  if (!dates.published && !raw.canonical_href.empty() &&
      !(ev.disabled & (1u << static_cast<unsigned>(DateSource::kUrl)))) {
    if (auto d = url_date(resolve_url(f.url, raw.canonical_href));
        d && (!ev.not_after || *d <= *ev.not_after + 86400)) {
      dates.published = d;
      dates.published_from = DateSource::kUrl;
      dates.published_detail = "canonical";
    }
  }
  return dates;
}

// Whether `byline` names one of `authors`: compared by their letters and digits (ASCII lowercase;
// other bytes as they are), so quotes and punctuation the names lost do not count.
bool names_any(std::string_view byline, const std::vector<std::string>& authors) {
  const auto letters = [](std::string_view s) {
    std::string out;
    for (char c : ascii_lower(s)) {
      if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
          static_cast<unsigned char>(c) >= 0x80) {
        out += c;
      }
    }
    return out;
  };
  const std::string in = letters(byline);
  return std::any_of(authors.begin(), authors.end(), [&](const std::string& a) {
    const std::string name = letters(a);
    return !name.empty() && in.find(name) != std::string::npos;
  });
}

// Where `field` came from, as `sources` says.
std::string source_of(const FieldSources& sources, std::string_view field) {
  for (const auto& [name, from] : sources) {
    if (name == field) return from;
  }
  return {};
}

std::string explain_date(DateSource s, const std::string& detail) {
  std::string v(date_source_name(s));
  if (!detail.empty()) v += ":" + detail;
  return v;
}

// The dates into the card, with their sources and the candidates passed over.
void keep_dates(PageMetadata& out, PageDates dates) {
  out.published_at = dates.published;
  out.modified_at = dates.modified;
  out.published_utc_offset = dates.published_offset;
  out.modified_utc_offset = dates.modified_offset;
  if (dates.published) {
    out.sources.emplace_back("published_at",
                             explain_date(dates.published_from, dates.published_detail));
  }
  if (dates.modified) {
    out.sources.emplace_back("modified_at",
                             explain_date(dates.modified_from, dates.modified_detail));
  }
  for (auto& p : dates.passed_over) out.passed_over.push_back(std::move(p));
}

}  // namespace

PageMetadata resolve_metadata(const RawMetadata& raw, std::string_view url) {
  PageMetadata out = resolve_basic(PageFacts{.raw = raw, .url = url});
  out.published_at = pick_raw_published(raw);
  return out;
}

std::string cut_description(std::string_view text, std::size_t max_chars) {
  std::string s = collapse_whitespace(text);
  // Characters, not bytes: count UTF-8 lead bytes.
  std::size_t chars = 0, cut = s.size();
  for (std::size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;
    if (chars == max_chars) {
      cut = i;
      break;
    }
    ++chars;
  }
  if (cut == s.size()) return s;
  const std::string_view head = std::string_view(s).substr(0, cut);
  // The last sentence end inside, if it keeps more than half.
  std::size_t best = std::string_view::npos;
  for (std::string_view end : {". ", "! ", "? ", "。", "！", "？"}) {
    const std::size_t p = head.rfind(end);
    if (p != std::string_view::npos && (best == std::string_view::npos || p > best)) best = p;
  }
  if (best != std::string_view::npos && best > cut / 2) {
    const std::size_t keep =
        head[best] == '.' || head[best] == '!' || head[best] == '?' ? best + 1 : best + 3;
    return std::string(head.substr(0, keep));
  }
  std::size_t space = head.rfind(' ');
  if (space == std::string_view::npos || space < cut / 2) space = cut;
  std::string out(head.substr(0, space));
  while (!out.empty() && (out.back() == ',' || out.back() == ';' || out.back() == ':'))
    out.pop_back();
  return out + "\xE2\x80\xA6";  // …
}

PageMetadata resolve_metadata(const ParsedPage& page, std::string_view url,
                              const MetadataContext& context) {
  const JsonLd json_ld = read_json_ld(page.metadata.json_ld);
  PageFacts f{page.metadata, url, &json_ld.objects, main_object(json_ld.objects), &page, &context};
  if (context.article_blocks && !context.article_blocks->empty()) {
    f.article_first_word = page.blocks[context.article_blocks->front()].first_word;
    f.article_end_word = page.blocks[context.article_blocks->back()].end_word;
  }
  PageMetadata out = resolve_basic(f);
  FieldSources& passed = out.passed_over;
  keep_dates(out, pick_dates(f, out.lang));
  keep(out, "image", pick_image(f, passed), out.image);
  keep(out, "description", pick_description(f, passed), out.description);
  keep(out, "site_name", pick_site_name(f, passed), out.site_name);
  Picked<std::string> credit;
  keep(out, "authors", pick_authors(f, out.site_name, passed, credit), out.authors);
  keep(out, "credit", std::move(credit), out.credit);
  // No byline declared, or one that names none of the authors ("Staff" in JSON-LD, the names in
  // the byline element): the authors found are it.
  if (!out.authors.empty() && !names_any(out.byline, out.authors)) {
    std::string byline;
    for (const auto& a : out.authors) byline += (byline.empty() ? "" : ", ") + a;
    if (!out.byline.empty())
      pass_over(passed, "byline", source_of(out.sources, "byline"), out.byline);
    std::erase_if(out.sources, [](const auto& s) { return s.first == "byline"; });
    out.byline = std::move(byline);
    out.sources.emplace_back("byline", source_of(out.sources, "authors"));
  }
  keep(out, "section", pick_section(f, passed), out.section);
  keep(out, "tags", pick_tags(f), out.tags);
  keep(out, "paywalled", pick_paywalled(f), out.paywalled);
  return out;
}

}  // namespace newsflow::extractors
