#include "extractors/metadata.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "extractors/authors.h"
#include "extractors/internal/json_ld.h"
#include "extractors/page.h"
#include "extractors/text.h"
#include "extractors/urls.h"

namespace newsflow::extractors {
namespace {

using internal::json_ld_authors;
using internal::json_ld_image;
using internal::json_ld_string;
using internal::JsonLd;
using internal::main_object;
using internal::parse_json_ld;
using internal::read_json_ld;
using internal::string_of;

std::string_view find_meta(const RawMetadata& raw, std::string_view name) {
  for (const auto& [key, content] : raw.metas) {
    if (key == name && !content.empty()) return content;
  }
  return {};
}

// A reference that names a scheme other than http(s) (javascript:, data:, file:): never an
// image URL, however resolution would read it.
bool other_scheme(std::string_view ref) {
  const std::size_t colon = ref.find(':');
  if (colon == std::string_view::npos || ref.find_first_of("/?#") < colon) return false;
  const std::string scheme = ascii_lower(collapse_whitespace(ref.substr(0, colon)));
  return scheme != "http" && scheme != "https";
}

bool is_http_url(std::string_view url) {
  const std::string scheme = url_scheme_of(url);
  return (scheme == "http" || scheme == "https") && !url_host(url).empty();
}

// `resolve_metadata` with the page's JSON-LD objects already parsed (or null: parsed here).
PageMetadata resolve_basic(const RawMetadata& raw, std::string_view url,
                           const std::vector<const nlohmann::json*>* objects) {
  PageMetadata out;
  // Held here: a view of a temporary inside the list below would dangle.
  const std::string ld_headline = json_ld_string(raw.json_ld, "headline");
  for (std::string_view candidate :
       {find_meta(raw, "og:title"), std::string_view(ld_headline), std::string_view(raw.first_h1),
        find_meta(raw, "twitter:title"), std::string_view(raw.title_tag)}) {
    if (!candidate.empty()) {
      out.title = collapse_whitespace(candidate);
      break;
    }
  }
  std::string_view canonical = raw.canonical_href;
  if (canonical.empty()) canonical = find_meta(raw, "og:url");
  out.canonical_url = canonical.empty() ? std::string(url) : resolve_url(url, canonical);
  out.source = url_source(out.canonical_url);
  if (out.source.empty()) out.source = url_source(url);

  std::string lang = raw.html_lang;
  if (lang.empty()) lang = std::string(find_meta(raw, "content-language"));
  if (lang.empty()) lang = std::string(find_meta(raw, "og:locale"));
  lang = ascii_lower(collapse_whitespace(lang));
  if (lang.size() >= 2 && lang[0] >= 'a' && lang[0] <= 'z' && lang[1] >= 'a' && lang[1] <= 'z' &&
      (lang.size() == 2 || lang[2] == '-' || lang[2] == '_')) {
    out.lang = lang.substr(0, 2);
  }

  std::vector<std::string> names;
  if (objects) {
    // (A @graph member is listed and followed both: a name met twice is kept once below.)
    for (const nlohmann::json* o : *objects) {
      if (o->contains("author")) json_ld_authors(*o, names, 0);
    }
  } else {
    for (const auto& body : raw.json_ld) {
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
  for (std::string_view candidate :
       {std::string_view(ld_authors), find_meta(raw, "author"), find_meta(raw, "article:author"),
        find_meta(raw, "byl"), find_meta(raw, "parsely-author"), find_meta(raw, "sailthru.author"),
        find_meta(raw, "dc.creator"), find_meta(raw, "dcterms.creator"),
        std::string_view(raw.markup_byline)}) {
    if (std::string c = clean_byline(candidate); !c.empty()) {
      out.byline = std::move(c);
      break;
    }
  }

  // The page path (`resolve_metadata` with the page) chooses the dates itself: not read twice.
  if (objects) return out;
  const std::string ld_date = json_ld_string(raw.json_ld, "datePublished");
  for (std::string_view candidate :
       {find_meta(raw, "article:published_time"), std::string_view(ld_date),
        find_meta(raw, "datepublished"), find_meta(raw, "pubdate"), find_meta(raw, "publishdate"),
        find_meta(raw, "date"), find_meta(raw, "dc.date"), find_meta(raw, "og:published_time"),
        std::string_view(raw.first_time)}) {
    if (candidate.empty()) continue;
    if (auto t = parse_iso8601(candidate)) {
      out.published_at = t;
      break;
    }
  }
  return out;
}

}  // namespace

PageMetadata resolve_metadata(const RawMetadata& raw, std::string_view url) {
  return resolve_basic(raw, url, nullptr);
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
  const RawMetadata& raw = page.metadata;
  const JsonLd json_ld = read_json_ld(raw.json_ld);
  const std::vector<const nlohmann::json*>& objects = json_ld.objects;
  PageMetadata out = resolve_basic(raw, url, &objects);
  FieldSources& sources = out.sources;
  const nlohmann::json* main = main_object(objects);

  // The article's words, for the fallbacks.
  std::size_t article_first_word = SIZE_MAX, article_end_word = 0;
  if (context.article_blocks && !context.article_blocks->empty()) {
    article_first_word = page.blocks[context.article_blocks->front()].first_word;
    article_end_word = page.blocks[context.article_blocks->back()].end_word;
  }

  // Dates.
  DateEvidence ev;
  ev.url = url;
  ev.metas = &raw.metas;
  ev.json_ld_published = string_of(main, "datePublished");
  if (ev.json_ld_published.empty()) ev.json_ld_published = string_of(main, "dateCreated");
  ev.json_ld_modified = string_of(main, "dateModified");
  ev.script_published = raw.script_published;
  // JSON-LD that does not parse (a trailing comma, a raw newline in a string) still names its
  // dates: the first of each, read as text.
  if (!main) {
    ev.json_ld_published = json_ld_string(raw.json_ld, "datePublished");
    ev.json_ld_modified = json_ld_string(raw.json_ld, "dateModified");
  }
  ev.marks = &raw.date_marks;
  ev.page = &page;
  // The headline: the first h1, unless it stands far above the article (a site's logo in an h1),
  // else where the article's text starts.
  ev.anchor_word = raw.first_h1_word;
  if (ev.anchor_word == SIZE_MAX ||
      (article_first_word != SIZE_MAX && article_first_word > ev.anchor_word + 200)) {
    ev.anchor_word = article_first_word;
  }
  ev.order = slash_order(out.lang, url);
  ev.not_after = context.fetched_at;
  PageDates dates = resolve_dates(ev);
  if (!dates.published && !raw.canonical_href.empty()) {
    // A canonical URL on another path may name the day (syndicated copies).
    if (auto d = url_date(resolve_url(url, raw.canonical_href));
        d && (!context.fetched_at || *d <= *context.fetched_at + 86400)) {
      dates.published = d;
      dates.published_from = DateSource::kUrl;
      dates.published_detail = "canonical";
    }
  }
  out.published_at = dates.published;
  out.modified_at = dates.modified;
  out.published_utc_offset = dates.published_offset;
  out.modified_utc_offset = dates.modified_offset;
  const auto explain_date = [](DateSource s, const std::string& detail) {
    std::string v(date_source_name(s));
    if (!detail.empty()) v += ":" + detail;
    return v;
  };
  if (dates.published)
    sources.emplace_back("published_at",
                         explain_date(dates.published_from, dates.published_detail));
  if (dates.modified)
    sources.emplace_back("modified_at", explain_date(dates.modified_from, dates.modified_detail));

  // Lead image: declared, else the first sizeable image of the article.
  std::optional<LeadImage> image;
  std::string image_from;
  for (const char* name :
       {"og:image", "og:image:url", "og:image:secure_url", "twitter:image", "twitter:image:src"}) {
    if (const std::string_view v = find_meta(raw, name); !v.empty()) {
      image = LeadImage{std::string(v), 0, 0, {}};
      image_from = std::string("meta:") + name;
      break;
    }
  }
  if (image && image_from.starts_with("meta:og")) {
    int w = 0, h = 0;
    for (const auto& [key, content] : raw.metas) {
      if (key == "og:image:width" && !w) w = std::atoi(content.c_str());
      if (key == "og:image:height" && !h) h = std::atoi(content.c_str());
      if (key == "og:image:alt" && image->caption.empty()) image->caption = content;
    }
    image->width = std::clamp(w, 0, 100000);
    image->height = std::clamp(h, 0, 100000);
  }
  if (!image && main) {
    if (const auto v = main->find("image"); v != main->end()) {
      image = json_ld_image(*v);
      if (image) image_from = "json_ld";
    }
    if (!image) {
      if (const auto v = main->find("thumbnailUrl"); v != main->end()) {
        image = json_ld_image(*v);
        if (image) image_from = "json_ld:thumbnailUrl";
      }
    }
  }
  if (image) {
    if (other_scheme(image->url)) {
      image.reset();
    } else {
      image->url = resolve_url(url, image->url);
      if (!is_http_url(image->url)) image.reset();
    }
  }
  if (!image && article_first_word != SIZE_MAX) {
    // From the headline (or a little before the text) to the article's end.
    std::size_t from = article_first_word > 30 ? article_first_word - 30 : 0;
    if (raw.first_h1_word != SIZE_MAX && raw.first_h1_word < article_first_word &&
        article_first_word - raw.first_h1_word <= 200) {
      from = std::min(from, raw.first_h1_word);
    }
    for (const auto& img : raw.images) {
      if (img.word < from || img.word > article_end_word) continue;
      // Icons, avatars, spacers and tracking pixels declare themselves small.
      if ((img.width > 0 && img.width < 150) || (img.height > 0 && img.height < 100)) continue;
      const std::string lower = ascii_lower(img.src);
      if (lower.find(".svg") != std::string::npos || lower.find("pixel") != std::string::npos ||
          lower.find("spacer") != std::string::npos || lower.find("logo") != std::string::npos ||
          lower.find("avatar") != std::string::npos || lower.find("icon") != std::string::npos) {
        continue;
      }
      if (other_scheme(img.src)) continue;
      LeadImage candidate{resolve_url(url, img.src), img.width, img.height, img.alt};
      if (!is_http_url(candidate.url)) continue;
      image = std::move(candidate);
      image_from = "article_image";
      break;
    }
  }
  if (image) {
    if (image->caption.size() > 512) truncate_text(image->caption, 512);
    out.image = std::move(image);
    sources.emplace_back("image", image_from);
  }

  // Description: declared, else the article's first sentences.
  std::string description;
  std::string description_from;
  for (const char* name :
       {"og:description", "description", "twitter:description", "dc.description"}) {
    if (const std::string_view v = find_meta(raw, name); !v.empty()) {
      description = std::string(v);
      description_from = std::string("meta:") + name;
      break;
    }
  }
  if (description.empty()) {
    description = string_of(main, "description");
    if (!description.empty()) description_from = "json_ld";
  }
  if (description.empty() && !context.article_text.empty()) {
    description = std::string(context.article_text.substr(0, 4096));
    description_from = "article_text";
  }
  if (!description.empty()) {
    out.description = cut_description(description, 300);
    sources.emplace_back("description", description_from);
  }

  // Authors: JSON-LD's article author, the author metas, a byline element, a byline line that
  // opens the article.
  std::vector<std::string> names;
  std::string authors_from;
  bool declared = false;  // JSON-LD names the article's author (maybe only "Staff"): it is that
  if (main) {
    std::vector<std::string> ld;
    json_ld_authors(*main, ld, 0);
    declared = !ld.empty();
    for (const auto& n : ld) {
      for (auto& a : split_authors(n)) names.push_back(std::move(a));
    }
    if (!names.empty()) authors_from = "json_ld";
  }
  if (names.empty() && !declared) {
    std::vector<std::string> ld;
    for (const nlohmann::json* o : objects) json_ld_authors(*o, ld, 0);
    for (const auto& n : ld) {
      for (auto& a : split_authors(n)) names.push_back(std::move(a));
    }
    if (!names.empty()) authors_from = "json_ld";
  }
  if (names.empty() && !declared) {
    for (const char* name : {"author", "article:author", "byl", "parsely-author", "sailthru.author",
                             "dc.creator", "dcterms.creator", "citation_author"}) {
      for (const auto& [key, content] : raw.metas) {
        if (key != name) continue;
        for (auto& a : split_authors(content)) names.push_back(std::move(a));
      }
      if (!names.empty()) {
        authors_from = std::string("meta:") + name;
        break;
      }
    }
  }
  if (names.empty() && !declared && !raw.markup_byline.empty()) {
    names = split_authors(raw.markup_byline);
    if (!names.empty()) authors_from = "byline_element";
  }
  if (names.empty() && !declared && context.article_blocks) {
    // "By Jane Doe", "Von Max Muster": a short first or second paragraph that opens with it.
    for (std::size_t k = 0; k < context.article_blocks->size() && k < 2; ++k) {
      const Block& b = page.blocks[(*context.article_blocks)[k]];
      if (b.word_count() > 12) continue;
      const std::string line = render_words(page, b.first_word, b.end_word);
      const std::string lower = ascii_lower(line.substr(0, 12));
      bool opens = false;
      for (std::string_view prefix :
           {"by ", "von ", "par ", "por ", "door ", "di ", "av ", "przez ", "text: ", "autor: "}) {
        if (lower.starts_with(prefix)) opens = true;
      }
      if (!opens) continue;
      names = split_authors(line);
      if (!names.empty()) {
        authors_from = "byline_text";
        break;
      }
    }
  }
  if (names.size() > 20) names.resize(20);
  // Deduplicate across sources.
  std::vector<std::string> unique;
  for (auto& n : names) {
    const std::string lower = ascii_lower(n);
    if (std::none_of(unique.begin(), unique.end(),
                     [&lower](const std::string& u) { return ascii_lower(u) == lower; })) {
      unique.push_back(std::move(n));
    }
  }
  out.authors = std::move(unique);
  if (!out.authors.empty()) sources.emplace_back("authors", authors_from);

  // Section, tags, site name, paywall.
  for (const char* name : {"article:section", "parsely-section", "section", "sailthru.section"}) {
    if (const std::string_view v = find_meta(raw, name); !v.empty()) {
      out.section = std::string(v);
      sources.emplace_back("section", std::string("meta:") + name);
      break;
    }
  }
  if (out.section.empty()) {
    out.section = string_of(main, "articleSection");
    if (!out.section.empty()) sources.emplace_back("section", "json_ld");
  }
  if (out.section.size() > 200) truncate_text(out.section, 200);

  std::vector<std::string> tags;
  std::string tags_from;
  const auto add_tags = [&tags](std::string_view list, bool split) {
    std::size_t pos = 0;
    while (pos <= list.size() && tags.size() < 32) {
      std::size_t end = split ? list.find(',', pos) : std::string_view::npos;
      if (end == std::string_view::npos) end = list.size();
      std::string t = collapse_whitespace(list.substr(pos, end - pos));
      pos = end + 1;
      if (t.empty() || t.size() > 100) continue;
      const std::string lower = ascii_lower(t);
      if (std::none_of(tags.begin(), tags.end(),
                       [&lower](const std::string& u) { return ascii_lower(u) == lower; })) {
        tags.push_back(std::move(t));
      }
    }
  };
  for (const auto& [key, content] : raw.metas) {
    if (key == "article:tag") add_tags(content, false);
  }
  if (!tags.empty()) tags_from = "meta:article:tag";
  if (tags.empty() && main) {
    if (const auto k = main->find("keywords"); k != main->end()) {
      if (k->is_string()) add_tags(k->get_ref<const std::string&>(), true);
      if (k->is_array()) {
        for (const auto& v : *k) {
          if (v.is_string()) add_tags(v.get_ref<const std::string&>(), false);
        }
      }
      if (!tags.empty()) tags_from = "json_ld";
    }
  }
  for (const char* name : {"news_keywords", "keywords", "parsely-tags"}) {
    if (!tags.empty()) break;
    if (const std::string_view v = find_meta(raw, name); !v.empty()) {
      add_tags(v, true);
      if (!tags.empty()) tags_from = std::string("meta:") + name;
    }
  }
  out.tags = std::move(tags);
  if (!out.tags.empty()) sources.emplace_back("tags", tags_from);

  if (const std::string_view v = find_meta(raw, "og:site_name"); !v.empty()) {
    out.site_name = std::string(v);
    sources.emplace_back("site_name", "meta:og:site_name");
  } else if (main) {
    if (const auto p = main->find("publisher"); p != main->end() && p->is_object()) {
      out.site_name = string_of(&*p, "name");
      if (!out.site_name.empty()) sources.emplace_back("site_name", "json_ld:publisher");
    }
  }
  if (out.site_name.empty()) {
    if (const std::string_view v = find_meta(raw, "application-name"); !v.empty()) {
      out.site_name = std::string(v);
      sources.emplace_back("site_name", "meta:application-name");
    }
  }
  if (out.site_name.size() > 200) truncate_text(out.site_name, 200);

  const auto not_free = [](const nlohmann::json& o) {
    const auto v = o.find("isAccessibleForFree");
    if (v == o.end()) return false;
    if (v->is_boolean()) return !v->get<bool>();
    if (v->is_string()) {
      const std::string s = ascii_lower(v->get_ref<const std::string&>());
      return s == "false" || s == "no" || s == "0";
    }
    return false;
  };
  if (main) {
    out.paywalled = not_free(*main);
    if (!out.paywalled) {
      if (const auto part = main->find("hasPart"); part != main->end()) {
        if (part->is_object()) out.paywalled = not_free(*part);
        if (part->is_array())
          out.paywalled = std::any_of(
              part->begin(), part->end(),
              [&not_free](const nlohmann::json& p) { return p.is_object() && not_free(p); });
      }
    }
    if (out.paywalled) sources.emplace_back("paywalled", "json_ld:isAccessibleForFree");
  }
  return out;
}

}  // namespace newsflow::extractors
