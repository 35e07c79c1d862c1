#include "extractors/internal/page_marks.h"

#include <string>
#include <string_view>

#include "extractors/internal/page_nodes.h"
#include "extractors/text.h"

namespace newsflow::extractors::internal {

namespace {

// Lowercase copy of at most 256 bytes of an attribute value.
std::string lower_prefix(const char* v) {
  std::string out;
  for (const char* p = v; *p && out.size() < 256; ++p) {
    out += *p >= 'A' && *p <= 'Z' ? static_cast<char>(*p + 32) : *p;
  }
  return out;
}

// What a class or id says of the date in its element: whether it names a date at all ("date",
// "datum", "data", "time", "publish", "posted", "byline", "meta", "fecha", "zeit", "tarih"),
// and as which (published or updated). One pass, no copy: this runs for every class and id.
bool starts_ci(const char* p, std::string_view lower_word) {
  for (const char c : lower_word) {
    if (*p == '\0' || (*p | 0x20) != c) return false;
    ++p;
  }
  return true;
}
bool names_date(const char* v) {
  for (const char* p = v; p && *p; ++p) {
    switch (*p | 0x20) {  // ASCII letters lowercased (others never match)
      case 'd':
        if (starts_ci(p, "dat")) return true;
        break;
      case 't':
        if (starts_ci(p, "time") || starts_ci(p, "tarih")) return true;
        break;
      case 'p':
        if (starts_ci(p, "publish") || starts_ci(p, "posted")) return true;
        break;
      case 'b':
        if (starts_ci(p, "byline")) return true;
        break;
      case 'm':
        if (starts_ci(p, "meta")) return true;
        break;
      case 'f':
        if (starts_ci(p, "fecha")) return true;
        break;
      case 'z':
        if (starts_ci(p, "zeit")) return true;
        break;
      default:
        break;
    }
  }
  return false;
}
bool names_date(const char* cls, const char* id) { return names_date(cls) || names_date(id); }
DateRole role_of(std::string_view lower) {
  for (std::string_view w : {"modif", "updat", "aktualis", "lastmod", "edited"}) {
    if (lower.find(w) != std::string_view::npos) return DateRole::kModified;
  }
  for (std::string_view w : {"publish", "posted", "created", "pubdate", "erschienen", "issued"}) {
    if (lower.find(w) != std::string_view::npos) return DateRole::kPublished;
  }
  return DateRole::kUnknown;
}

// A declared image size ("640", "640px"); 0 when not a number.
int image_size(const char* v) {
  if (!v) return 0;
  int n = 0;
  for (const char* p = v; *p >= '0' && *p <= '9' && n < 100000; ++p) n = n * 10 + (*p - '0');
  return n;
}

}  // namespace

void collect_head_metadata(const GumboElement& el, RawMetadata& raw) {
  if (el.tag == GUMBO_TAG_META) {
    const char* key = attr(el, "property");
    if (!key) key = attr(el, "name");
    if (!key) key = attr(el, "itemprop");
    if (!key) key = attr(el, "http-equiv");
    const char* content = attr(el, "content");
    if (key && content) raw.metas.emplace_back(ascii_lower(key), collapse_whitespace(content));
  } else if (el.tag == GUMBO_TAG_LINK) {
    const char* rel = attr(el, "rel");
    const char* href = attr(el, "href");
    if (rel && href && raw.canonical_href.empty() && ascii_lower(rel) == "canonical") {
      raw.canonical_href = href;
    }
  }
}

bool is_byline_element(const GumboElement& el, const Attrs& a, bool byline_word) {
  if (a.itemprop && std::string_view(a.itemprop) == "author") return true;
  if (el.tag == GUMBO_TAG_A && a.rel && ascii_lower(a.rel) == "author") return true;
  return byline_word;
}

std::int32_t collect_date_mark(const GumboElement& el, bool emit, const Attrs& a, RawMetadata& raw,
                               std::size_t word) {
  if (raw.date_marks.size() >= RawMetadata::kMaxMarks) return -1;
  const char* itemprop = emit ? a.itemprop : attr(el, "itemprop");
  const char* cls = emit ? a.cls : attr(el, "class");
  const char* id = emit ? a.id : attr(el, "id");
  // Most elements carry no date: ruled out without a copy.
  if (el.tag != GUMBO_TAG_TIME && el.tag != GUMBO_TAG_ABBR && !itemprop &&
      !(emit && names_date(cls, id))) {
    return -1;
  }
  DateMark m;
  m.first_word = m.end_word = static_cast<std::uint32_t>(word);
  const std::string prop = itemprop ? lower_prefix(itemprop) : std::string();
  const bool date_prop = prop == "datepublished" || prop == "datecreated" || prop == "datemodified";
  std::string names;
  if (cls) names = lower_prefix(cls);
  if (id) names += ' ' + lower_prefix(id);
  if (el.tag == GUMBO_TAG_TIME) {
    m.kind = DateMark::Kind::kTime;
    if (const char* dt = attr(el, "datetime")) m.value = dt;
    m.role = date_prop ? role_of(prop) : role_of(names);
    if (attr(el, "pubdate") && m.role == DateRole::kUnknown) m.role = DateRole::kPublished;
  } else if (date_prop) {
    m.kind = DateMark::Kind::kItemprop;
    m.role = role_of(prop);
    if (const char* v = attr(el, "content")) {
      m.value = v;
    } else if (const char* dt = attr(el, "datetime")) {
      m.value = dt;
    } else if (const char* title = el.tag == GUMBO_TAG_ABBR ? attr(el, "title") : nullptr) {
      m.value = title;  // <abbr itemprop=datePublished title="2017-09-09T10:52:00+02:00">
    }
  } else if (el.tag == GUMBO_TAG_ABBR && attr(el, "title") && !names.empty() &&
             role_of(names) != DateRole::kUnknown) {
    m.kind = DateMark::Kind::kAbbr;
    m.role = role_of(names);
    m.value = attr(el, "title");
  } else if (emit && names_date(cls, id)) {
    m.kind = DateMark::Kind::kClass;
    m.role = role_of(names);
    // A relative time shown ("vor 3 Stunden") with the date in an attribute.
    for (const char* name : {"datetime", "title", "content", "data-date"}) {
      if (const char* v = attr(el, name); v && *v >= '0' && *v <= '9') {
        m.value = v;
        break;
      }
    }
  } else {
    return -1;
  }
  if (m.value.size() > 256) m.value.resize(256);
  raw.date_marks.push_back(std::move(m));
  return static_cast<std::int32_t>(raw.date_marks.size() - 1);
}

void collect_image(const GumboElement& el, RawMetadata& raw, std::size_t word) {
  if (raw.images.size() >= RawMetadata::kMaxMarks) return;
  RawMetadata::Image img;
  const char* src = attr(el, "src");
  // Lazy loading puts a placeholder (often a data: URI) in src and the image in data-src.
  if (const char* lazy = attr(el, "data-src");
      lazy && (!src || std::string_view(src).starts_with("data:"))) {
    src = lazy;
  }
  if (src && *src && !std::string_view(src).starts_with("data:")) {
    img.src = src;
  } else if (const char* srcset = attr(el, "srcset")) {
    std::string_view set = srcset;
    while (!set.empty() && (set.front() == ' ' || set.front() == '\n')) set.remove_prefix(1);
    img.src = std::string(set.substr(0, set.find_first_of(" ,\n")));
  }
  if (img.src.empty() || img.src.size() > 2048) return;
  if (const char* alt = attr(el, "alt")) img.alt = collapse_whitespace(alt);
  if (img.alt.size() > 512) img.alt.resize(512);
  img.width = image_size(attr(el, "width"));
  img.height = image_size(attr(el, "height"));
  img.word = static_cast<std::uint32_t>(word);
  raw.images.push_back(std::move(img));
}

}  // namespace newsflow::extractors::internal
