#include <algorithm>
#include <cstdlib>

#include "extractors/authors.h"
#include "extractors/internal/json_ld.h"
#include "extractors/internal/pickers.h"
#include "extractors/page.h"
#include "extractors/text.h"
#include "extractors/urls.h"

// The pickers of the card's image, description, authors, section, tags, site name and paywall
// flag (internal/pickers.h).

namespace newsflow::extractors::internal {
namespace {

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

// A declared image URL kept only when it resolves to an absolute http(s) URL.
std::optional<LeadImage> usable(std::optional<LeadImage> image, std::string_view url) {
  if (!image || other_scheme(image->url)) return std::nullopt;
  image->url = resolve_url(url, image->url);
  if (!is_http_url(image->url)) return std::nullopt;
  return image;
}

// The first sizeable image from the headline (or a little before the text) to the article's end.
Picked<std::optional<LeadImage>> article_image(const PageFacts& f) {
  if (f.article_first_word == SIZE_MAX) return {};
  std::size_t from = f.article_first_word > 30 ? f.article_first_word - 30 : 0;
  if (f.raw.first_h1_word != SIZE_MAX && f.raw.first_h1_word < f.article_first_word &&
      f.article_first_word - f.raw.first_h1_word <= 200) {
    from = std::min(from, f.raw.first_h1_word);
  }
  for (const auto& img : f.raw.images) {
    if (img.word < from || img.word > f.article_end_word) continue;
    // Icons, avatars, spacers and tracking pixels declare themselves small.
    if ((img.width > 0 && img.width < 150) || (img.height > 0 && img.height < 100)) continue;
    const std::string lower = ascii_lower(img.src);
    if (lower.find(".svg") != std::string::npos || lower.find("pixel") != std::string::npos ||
        lower.find("spacer") != std::string::npos || lower.find("logo") != std::string::npos ||
        lower.find("avatar") != std::string::npos || lower.find("icon") != std::string::npos) {
      continue;
    }
    if (other_scheme(img.src)) continue;
    LeadImage candidate{resolve_url(f.url, img.src), img.width, img.height, img.alt};
    if (!is_http_url(candidate.url)) continue;
    return {std::move(candidate), "article_image"};
  }
  return {};
}

// with it: its text, when it names someone or credits the staff.
std::string byline_line(const PageFacts& f) {
  const auto* blocks = f.context->article_blocks;
  for (std::size_t k = 0; blocks && k < blocks->size() && k < 2; ++k) {
    const Block& b = f.page->blocks[(*blocks)[k]];
    if (b.word_count() > 12) continue;
    std::string line = render_words(*f.page, b.first_word, b.end_word);
    const std::string lower = ascii_lower(line.substr(0, 12));
    bool opens = false;
    for (std::string_view prefix :
         {"by ", "von ", "par ", "por ", "door ", "di ", "av ", "przez ", "text: ", "autor: "}) {
      if (lower.starts_with(prefix)) opens = true;
    }
    if (!opens) continue;
    if (!split_authors(line).empty() || !staff_credit(line).empty()) return line;
  }
  return {};
}

// The article's text from its first paragraph that reads as a sentence: the headline, a byline
// and a dateline at its head ("By Staff", "3 hours ago · Updated 20 minutes ago"), short lines
// with no sentence's end, are no description. At most three are passed over: the whole text
// when the fourth is no sentence either (a list, a table of results).
std::string_view opening_sentences(std::string_view text) {
  for (std::size_t at = 0, skipped = 0; at < text.size() && skipped < 4; ++skipped) {
    std::size_t end = text.find("\n\n", at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view para = text.substr(at, end - at);
    while (!para.empty() && (para.back() == ' ' || para.back() == '\n')) para.remove_suffix(1);
    const bool sentence_end =
        !para.empty() && (para.back() == '.' || para.back() == '!' || para.back() == '?' ||
                          para.ends_with("\xE3\x80\x82") || para.ends_with("\xEF\xBC\x81") ||
                          para.ends_with("\xEF\xBC\x9F") || para.back() == '"' ||
                          para.ends_with("\xE2\x80\x9D") || para.ends_with("\xC2\xBB"));
    if (sentence_end || count_words(para) > 20) return text.substr(at);
    at = end + 2;
  }
  return text;
}

}  // namespace

// The lead image: og:image (with its declared size and alt), twitter:image, JSON-LD image or
// thumbnailUrl, else the article's first sizeable image.
Picked<std::optional<LeadImage>> pick_image(const PageFacts& f, FieldSources& passed) {
  Picked<std::optional<LeadImage>> out;
  for (const char* name :
       {"og:image", "og:image:url", "og:image:secure_url", "twitter:image", "twitter:image:src"}) {
    const std::string_view v = find_meta(f.raw, name);
    if (v.empty()) continue;
    if (out.value) {
      pass_over(passed, "image", std::string("meta:") + name, v);
      continue;
    }
    out = {LeadImage{std::string(v), 0, 0, {}}, std::string("meta:") + name};
  }
  if (out.value && out.from.starts_with("meta:og")) {
    int w = 0, h = 0;
    for (const auto& [key, content] : f.raw.metas) {
      if (key == "og:image:width" && !w) w = std::atoi(content.c_str());
      if (key == "og:image:height" && !h) h = std::atoi(content.c_str());
      if (key == "og:image:alt" && out.value->caption.empty()) out.value->caption = content;
    }
    out.value->width = std::clamp(w, 0, 100000);
    out.value->height = std::clamp(h, 0, 100000);
  }
  if (!out.value && f.main) {
    for (const char* key : {"image", "thumbnailUrl"}) {
      if (const auto v = f.main->find(key); v != f.main->end()) {
        out.value = json_ld_image(*v);
        if (out.value) {
          out.from = key == std::string_view("image") ? "json_ld" : "json_ld:thumbnailUrl";
          break;
        }
      }
    }
  }
  out.value = usable(std::move(out.value), f.url);
  if (!out.value) {
    if (!out.from.empty()) pass_over(passed, "image", out.from, "(not an http(s) URL)");
    out = article_image(f);
  }
  if (out.value && out.value->caption.size() > 512) truncate_text(out.value->caption, 512);
  return out;
}

// The description: og:description, meta description, twitter:description, dc.description,
// JSON-LD description, else the article's first sentences; cut to about 300 characters.
Picked<std::string> pick_description(const PageFacts& f, FieldSources& passed) {
  const std::string ld = string_of(f.main, "description");
  auto out = first_of("description",
                      {{"meta:og:description", find_meta(f.raw, "og:description")},
                       {"meta:description", find_meta(f.raw, "description")},
                       {"meta:twitter:description", find_meta(f.raw, "twitter:description")},
                       {"meta:dc.description", find_meta(f.raw, "dc.description")},
                       {"json_ld", ld}},
                      passed);
  if (out.from.empty() && !f.context->article_text.empty()) {
    out = {std::string(opening_sentences(f.context->article_text).substr(0, 4096)), "article_text"};
  }
  if (!out.from.empty()) out.value = cut_description(out.value, 300);
  return out;
}

// The authors as names: JSON-LD's article author (when it names a person, it is that), another
// JSON-LD object's, the author metas, a byline element, a byline line that opens the article. At
// most 20, each once. Agencies, the site's own name and bylines of roles only ("Staff") credit no
// person: they go to `credit` (the first source's).
Picked<std::vector<std::string>> pick_authors(const PageFacts& f, std::string_view site_name,
                                              FieldSources& passed, Picked<std::string>& credit) {
  std::vector<std::string> names;
  std::string from;
  // One source's values: its people kept, what credits no one noted.
  const auto take = [&](const std::vector<std::string>& values, std::string_view source) {
    std::vector<std::string> people;
    for (const auto& v : values) {
      if (credit.value.empty()) {
        if (std::string staff = staff_credit(v); !staff.empty()) credit = {staff, {}};
      }
      std::vector<std::string> parts = split_authors(v);
      drop_imprint_address(parts, site_name);
      for (auto& a : parts) people.push_back(std::move(a));
    }
    if (std::string c = take_credits(people, site_name); !c.empty() && credit.value.empty()) {
      credit.value = std::move(c);
    }
    if (!credit.value.empty() && credit.from.empty()) credit.from = source;
    for (auto& p : people) names.push_back(std::move(p));
    if (!names.empty() && from.empty()) from = source;
  };
  if (f.main) {
    std::vector<std::string> ld;
    json_ld_authors(*f.main, ld, 0, f.objects);
    take(ld, "json_ld");
  }
  if (names.empty()) {
    std::vector<std::string> ld;
    for (const nlohmann::json* o : *f.objects) json_ld_authors(*o, ld, 0, f.objects);
    take(ld, "json_ld");
  }
  for (const char* name : {"author", "article:author", "byl", "parsely-author", "sailthru.author",
                           "dc.creator", "dcterms.creator", "citation_author"}) {
    const bool open = names.empty();
    std::vector<std::string> values;
    for (const auto& [key, content] : f.raw.metas) {
      if (key != name || content.empty()) continue;
      if (open) {
        values.push_back(content);
      } else {
        pass_over(passed, "authors", std::string("meta:") + name, content);
      }
    }
    if (open) take(values, std::string("meta:") + name);
  }
  if (names.empty() && !f.raw.markup_byline.empty()) {
    take({f.raw.markup_byline}, "byline_element");
  } else if (!f.raw.markup_byline.empty()) {
    pass_over(passed, "authors", "byline_element", f.raw.markup_byline);
  }
  if (names.empty()) {
    if (std::string line = byline_line(f); !line.empty()) take({line}, "byline_text");
  }
  if (names.size() > 20) names.resize(20);
  Picked<std::vector<std::string>> out;
  for (auto& n : names) {  // each once across sources
    const std::string lower = ascii_lower(n);
    if (std::none_of(out.value.begin(), out.value.end(),
                     [&lower](const std::string& u) { return ascii_lower(u) == lower; })) {
      out.value.push_back(std::move(n));
    }
  }
  if (!out.value.empty()) out.from = std::move(from);
  if (credit.value.size() > 200) truncate_text(credit.value, 200);
  return out;
}

// The section: article:section, parsely-section, section, sailthru.section, JSON-LD
// articleSection.
Picked<std::string> pick_section(const PageFacts& f, FieldSources& passed) {
  const std::string ld = string_of(f.main, "articleSection");
  auto out = first_of("section",
                      {{"meta:article:section", find_meta(f.raw, "article:section")},
                       {"meta:parsely-section", find_meta(f.raw, "parsely-section")},
                       {"meta:section", find_meta(f.raw, "section")},
                       {"meta:sailthru.section", find_meta(f.raw, "sailthru.section")},
                       {"json_ld", ld}},
                      passed);
  if (out.value.size() > 200) truncate_text(out.value, 200);
  return out;
}

// Tags: article:tag metas, JSON-LD keywords, news_keywords, keywords, parsely-tags; at most 32,
// each once.
Picked<std::vector<std::string>> pick_tags(const PageFacts& f) {
  Picked<std::vector<std::string>> out;
  std::vector<std::string>& tags = out.value;
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
  for (const auto& [key, content] : f.raw.metas) {
    if (key == "article:tag") add_tags(content, false);
  }
  if (!tags.empty()) out.from = "meta:article:tag";
  if (tags.empty() && f.main) {
    if (const auto k = f.main->find("keywords"); k != f.main->end()) {
      if (k->is_string()) add_tags(k->get_ref<const std::string&>(), true);
      if (k->is_array()) {
        for (const auto& v : *k) {
          if (v.is_string()) add_tags(v.get_ref<const std::string&>(), false);
        }
      }
      if (!tags.empty()) out.from = "json_ld";
    }
  }
  for (const char* name : {"news_keywords", "keywords", "parsely-tags"}) {
    if (!tags.empty()) break;
    if (const std::string_view v = find_meta(f.raw, name); !v.empty()) {
      add_tags(v, true);
      if (!tags.empty()) out.from = std::string("meta:") + name;
    }
  }
  return out;
}

// The site's name: og:site_name, JSON-LD publisher's name, application-name.
Picked<std::string> pick_site_name(const PageFacts& f, FieldSources& passed) {
  std::string publisher;
  if (f.main) {
    if (const auto p = f.main->find("publisher"); p != f.main->end() && p->is_object()) {
      publisher = string_of(&*p, "name");
    }
  }
  auto out = first_of("site_name",
                      {{"meta:og:site_name", find_meta(f.raw, "og:site_name")},
                       {"json_ld:publisher", publisher},
                       {"meta:application-name", find_meta(f.raw, "application-name")}},
                      passed);
  if (out.value.size() > 200) truncate_text(out.value, 200);
  return out;
}

// Whether JSON-LD says the article is not free to read (isAccessibleForFree: false, on it or on
// a part of it).
Picked<bool> pick_paywalled(const PageFacts& f) {
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
  if (!f.main) return {};
  bool paywalled = not_free(*f.main);
  if (!paywalled) {
    if (const auto part = f.main->find("hasPart"); part != f.main->end()) {
      if (part->is_object()) paywalled = not_free(*part);
      if (part->is_array()) {
        paywalled = std::any_of(part->begin(), part->end(), [&not_free](const nlohmann::json& p) {
          return p.is_object() && not_free(p);
        });
      }
    }
  }
  if (!paywalled) return {};
  return {true, "json_ld:isAccessibleForFree"};
}

}  // namespace newsflow::extractors::internal
