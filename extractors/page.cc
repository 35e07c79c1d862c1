#include "extractors/page.h"

#include <gumbo.h>

#include <algorithm>
#include <array>
#include <bitset>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <memory>
#include <span>

#include "extractors/internal/hash.h"
#include "extractors/internal/stopwords.h"
#include "extractors/text.h"

namespace newsflow::extractors {

namespace {

// Gumbo's memory for one page: bump allocation from growing chunks, all released at once with
// the page. Gumbo makes many small allocations and frees (tokens, string buffers, vectors); with
// malloc they and the final tree walk of gumbo_destroy_output were a fifth of the parse.
class Arena {
 public:
  Arena() = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  ~Arena() {
    for (auto& chunk : chunks_) spare().give_back(std::move(chunk));
  }

  void* allocate(std::size_t size) {
    size = (size + 15) & ~std::size_t{15};
    if (size > left_) {
      Chunk chunk = spare().take(std::max(size, next_chunk_));
      next_chunk_ = std::min<std::size_t>(next_chunk_ * 2, std::size_t{4} << 20);
      cursor_ = chunk.bytes.get();
      left_ = chunk.size;
      chunks_.push_back(std::move(chunk));
    }
    void* p = cursor_;
    cursor_ += size;
    left_ -= size;
    return p;
  }
  static void* allocate(void* arena, std::size_t size) {
    return static_cast<Arena*>(arena)->allocate(size);
  }
  static void deallocate(void*, void*) {}

 private:
  struct Chunk {
    std::unique_ptr<std::byte[]> bytes;
    std::size_t size = 0;
  };
  // The chunks of the pages parsed before on this thread, kept for the next page: a fresh
  // multi-megabyte chunk for every page cost its page faults and the zeroing of its memory.
  class Spare {
   public:
    Chunk take(std::size_t at_least) {
      for (auto it = chunks_.begin(); it != chunks_.end(); ++it) {
        if (it->size >= at_least) {
          Chunk chunk = std::move(*it);
          chunks_.erase(it);
          bytes_ -= chunk.size;
          return chunk;
        }
      }
      return {std::make_unique_for_overwrite<std::byte[]>(at_least), at_least};
    }
    void give_back(Chunk chunk) {
      if (bytes_ + chunk.size > kMaxBytes) return;  // freed: a huge page does not pin memory
      bytes_ += chunk.size;
      chunks_.push_back(std::move(chunk));
    }

   private:
    static constexpr std::size_t kMaxBytes = std::size_t{16} << 20;
    std::vector<Chunk> chunks_;
    std::size_t bytes_ = 0;
  };
  static Spare& spare() {
    thread_local Spare spare;
    return spare;
  }

  std::vector<Chunk> chunks_;
  std::byte* cursor_ = nullptr;
  std::size_t left_ = 0;
  std::size_t next_chunk_ = 64 * 1024;
};

}  // namespace

struct ParsedPage::Tree {
  std::string source;  // what Gumbo parsed; the tree points into it
  Arena arena;         // holds the tree: freed with it, no gumbo_destroy_output needed
  GumboOutput* output = nullptr;
};

ParsedPage::ParsedPage() = default;
ParsedPage::ParsedPage(ParsedPage&&) noexcept = default;
ParsedPage& ParsedPage::operator=(ParsedPage&&) noexcept = default;
ParsedPage::~ParsedPage() = default;

namespace {

bool is_skipped(GumboTag tag) {
  switch (tag) {
    case GUMBO_TAG_SCRIPT:
    case GUMBO_TAG_STYLE:
    case GUMBO_TAG_NOSCRIPT:
    case GUMBO_TAG_TEMPLATE:
    case GUMBO_TAG_HEAD:
    case GUMBO_TAG_SVG:
    case GUMBO_TAG_MATH:
    case GUMBO_TAG_IFRAME:
    case GUMBO_TAG_OBJECT:
    case GUMBO_TAG_EMBED:
    case GUMBO_TAG_CANVAS:
    case GUMBO_TAG_SELECT:
    case GUMBO_TAG_OPTION:
    case GUMBO_TAG_TEXTAREA:
    case GUMBO_TAG_BUTTON:
    case GUMBO_TAG_INPUT:
    case GUMBO_TAG_RT:  // ruby annotations (furigana) and their fallback parentheses: a
    case GUMBO_TAG_RP:  // reading aid above the words, not words of the text
      return true;
    default:
      return false;
  }
}

bool is_block(GumboTag tag) {
  switch (tag) {
    case GUMBO_TAG_P:
    case GUMBO_TAG_DIV:
    case GUMBO_TAG_BR:
    case GUMBO_TAG_LI:
    case GUMBO_TAG_UL:
    case GUMBO_TAG_OL:
    case GUMBO_TAG_DL:
    case GUMBO_TAG_DT:
    case GUMBO_TAG_DD:
    case GUMBO_TAG_H1:
    case GUMBO_TAG_H2:
    case GUMBO_TAG_H3:
    case GUMBO_TAG_H4:
    case GUMBO_TAG_H5:
    case GUMBO_TAG_H6:
    case GUMBO_TAG_TABLE:
    case GUMBO_TAG_TR:
    case GUMBO_TAG_TD:
    case GUMBO_TAG_TH:
    case GUMBO_TAG_SECTION:
    case GUMBO_TAG_ARTICLE:
    case GUMBO_TAG_ASIDE:
    case GUMBO_TAG_HEADER:
    case GUMBO_TAG_FOOTER:
    case GUMBO_TAG_NAV:
    case GUMBO_TAG_MAIN:
    case GUMBO_TAG_FIGURE:
    case GUMBO_TAG_FIGCAPTION:
    case GUMBO_TAG_BLOCKQUOTE:
    case GUMBO_TAG_PRE:
    case GUMBO_TAG_HR:
    case GUMBO_TAG_FORM:
    case GUMBO_TAG_ADDRESS:
    case GUMBO_TAG_BODY:
    case GUMBO_TAG_CAPTION:
    case GUMBO_TAG_FIELDSET:
    case GUMBO_TAG_DETAILS:
    case GUMBO_TAG_SUMMARY:
      return true;
    default:
      return false;
  }
}

const char* attr(const GumboElement& el, const char* name) {
  const GumboAttribute* a = gumbo_get_attribute(&el.attributes, name);
  return a ? a->value : nullptr;
}

// The attributes the walk reads on every element, found in one pass (Gumbo lowercases
// attribute names).
struct Attrs {
  const char* cls = nullptr;
  const char* id = nullptr;
  const char* itemprop = nullptr;
  const char* style = nullptr;
  const char* aria_hidden = nullptr;
  const char* rel = nullptr;
  const char* content = nullptr;  // with property: RDFa metadata on any element
  const char* property = nullptr;
  bool hidden = false;
  bool href = false;
};

Attrs scan_attrs(const GumboElement& el) {
  Attrs a;
  for (unsigned i = 0; i < el.attributes.length; ++i) {
    const auto* at = static_cast<const GumboAttribute*>(el.attributes.data[i]);
    const char* name = at->name;
    // By first letter, then the whole name: this runs for every attribute of the page.
    switch (name[0]) {
      case 'c':
        if (!a.cls && std::strcmp(name, "class") == 0) {
          a.cls = at->value;
        } else if (!a.content && std::strcmp(name, "content") == 0) {
          a.content = at->value;
        }
        break;
      case 'p':
        if (!a.property && std::strcmp(name, "property") == 0) a.property = at->value;
        break;
      case 'i':
        if (!a.id && std::strcmp(name, "id") == 0) {
          a.id = at->value;
        } else if (!a.itemprop && std::strcmp(name, "itemprop") == 0) {
          a.itemprop = at->value;
        }
        break;
      case 's':
        if (!a.style && std::strcmp(name, "style") == 0) a.style = at->value;
        break;
      case 'a':
        if (!a.aria_hidden && std::strcmp(name, "aria-hidden") == 0) a.aria_hidden = at->value;
        break;
      case 'r':
        if (!a.rel && std::strcmp(name, "rel") == 0) a.rel = at->value;
        break;
      case 'h':
        if (std::strcmp(name, "hidden") == 0) {
          a.hidden = true;
        } else if (std::strcmp(name, "href") == 0) {
          a.href = true;
        }
        break;
      default:
        break;
    }
  }
  return a;
}

bool is_hidden(const Attrs& a) {
  if (a.hidden) return true;
  if (a.aria_hidden && std::string_view(a.aria_hidden) == "true") return true;
  if (const char* style = a.style) {
    // Lowercased without spaces into a small buffer (styles are short; a long one is cut).
    char buf[256];
    std::size_t n = 0;
    for (const char* p = style; *p && n < sizeof buf; ++p) {
      const char c = *p;
      if (c == ' ') continue;
      buf[n++] = c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c;
    }
    const std::string_view s(buf, n);
    if (s.find("display:none") != std::string_view::npos ||
        s.find("visibility:hidden") != std::string_view::npos) {
      return true;
    }
  }
  return false;
}

// The text under `node`. `lines`: a <br> or a block element parts lines with ", " (a byline's
// "A and B<br>Associated Press" is two names, not "BAssociated").
std::string subtree_text(const GumboNode* node, bool lines = false) {
  std::string out;
  std::vector<const GumboNode*> stack{node};
  while (!stack.empty()) {
    const GumboNode* n = stack.back();
    stack.pop_back();
    if (n->type == GUMBO_NODE_TEXT || n->type == GUMBO_NODE_WHITESPACE ||
        n->type == GUMBO_NODE_CDATA) {
      out += n->v.text.text;
    } else if (n->type == GUMBO_NODE_ELEMENT || n->type == GUMBO_NODE_TEMPLATE) {
      if (lines && n != node && (n->v.element.tag == GUMBO_TAG_BR || is_block(n->v.element.tag))) {
        out += ", ";
      }
      const GumboVector& children = n->v.element.children;
      for (unsigned i = children.length; i-- > 0;) {
        stack.push_back(static_cast<const GumboNode*>(children.data[i]));
      }
    }
  }
  return out;
}

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

// An element that names the article's authors: itemprop=author, <a rel=author>, or one of the
// first eight class or id words containing "byline" (`byline_word`, one of its hint flags).
bool is_byline_element(const GumboElement& el, const Attrs& a, bool byline_word) {
  if (a.itemprop && std::string_view(a.itemprop) == "author") return true;
  if (el.tag == GUMBO_TAG_A && a.rel && ascii_lower(a.rel) == "author") return true;
  return byline_word;
}

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

// Records the element as a date mark (`DateMark`) when it carries a date; returns its index in
// `raw.date_marks`, else -1. Its visible words are filled in when it closes.
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

// A declared image size ("640", "640px"); 0 when not a number.
int image_size(const char* v) {
  if (!v) return 0;
  int n = 0;
  for (const char* p = v; *p >= '0' && *p <= '9' && n < 100000; ++p) n = n * 10 + (*p - '0');
  return n;
}

// Records a visible <img> with its URL, alt text and declared size.
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

// Element nesting as the tags open and close, counted while the invisible content is stripped
// (so a '<' inside a script is no element): parse_page refuses hostile depth by it. Start tags of
// elements that cannot nest (void elements, and p, li, dt, dd, option, tr, td, th, which close
// themselves) do not count.
class NestingCounter {
 public:
  // The tag whose name starts at html[name_start] (after "<" or "</").
  void tag(std::string_view html, std::size_t name_start, bool closing) {
    static constexpr std::string_view kNotNesting[] = {
        "area",   "base",  "br",  "col", "embed", "hr", "img", "input",  "link", "meta", "param",
        "source", "track", "wbr", "p",   "li",    "dt", "dd",  "option", "tr",   "td",   "th"};
    char lower[10];
    std::size_t n = 0;
    for (std::size_t k = name_start; k < html.size() && n < sizeof lower; ++k, ++n) {
      const char c = html[k];
      if (c >= 'A' && c <= 'Z') {
        lower[n] = static_cast<char>(c - 'A' + 'a');
      } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
        lower[n] = c;
      } else {
        break;
      }
    }
    if (n == 0) return;
    const std::string_view name(lower, n);
    if (std::find(std::begin(kNotNesting), std::end(kNotNesting), name) != std::end(kNotNesting)) {
      return;
    }
    if (closing) {
      depth_ = depth_ > 0 ? depth_ - 1 : 0;
    } else {
      max_depth_ = std::max(max_depth_, ++depth_);
    }
  }
  std::size_t max_depth() const { return max_depth_; }

 private:
  std::size_t depth_ = 0, max_depth_ = 0;
};

// Case-insensitive search for an ASCII lowercase needle.
std::size_t find_ci(std::string_view hay, std::string_view needle, std::size_t from) {
  while (true) {
    const std::size_t i = hay.find('<', from);
    if (i == std::string_view::npos || i + needle.size() > hay.size())
      return std::string_view::npos;
    bool match = true;
    for (std::size_t k = 1; k < needle.size() && match; ++k) {
      char c = hay[i + k];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
      match = c == needle[k];
    }
    if (match) return i;
    from = i + 1;
  }
}

// Whether s holds `needle` ('<' and lowercase ASCII) at `at`, ASCII case ignored.
bool at_ci(std::string_view s, std::size_t at, std::string_view needle) {
  if (at + needle.size() > s.size()) return false;
  for (std::size_t k = 0; k < needle.size(); ++k) {
    char c = s[at + k];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    if (c != needle[k]) return false;
  }
  return true;
}

// Containers and class/id words whose presence above a block is a strong signal either way.
constexpr std::string_view kFlagNames[] = {
    // elements (and itemprop=articleBody)
    "article", "main", "nav", "footer", "header", "aside", "form", "li", "a", "blockquote",
    "figure", "table", "heading", "articlebody",
    // substrings of class and id words (the first five above count too)
    "comment", "related", "share", "social", "promo", "advert", "sidebar", "menu", "newsletter",
    "cookie", "caption", "byline", "author", "content", "story", "body", "breadcrumb", "tag",
    "meta", "date", "headline", "title", "teaser", "recommend", "more", "widget", "banner",
    "sponsor", "subscribe", "signup", "login", "copyright", "credit", "photo", "image", "gallery",
    "video", "text", "entry", "post", "lead", "summary", "intro", "popular", "trending", "card",
    "list", "hidden", "modal", "disclaimer", "bio", "rich", "prose"};
constexpr std::size_t kFirstClassOnlyFlag = 14;
using Flags = std::bitset<std::size(kFlagNames)>;

consteval std::size_t flag_index(std::string_view name) {
  for (std::size_t k = 0; k < std::size(kFlagNames); ++k) {
    if (kFlagNames[k] == name) return k;
  }
  throw "not a flag name";  // a compile error: consteval
}

// The flags an element itself contributes: its tag, itemprop=articleBody, and hint substrings
// of the first eight words (runs of three or more ASCII letters, lowercased) of its class and
// id attributes. Appends the hashed class-word features of all those words ("cw=" and the
// first 20 letters of the word) to `class_words`.
Flags own_flags(const GumboElement& el, const Attrs& a, std::vector<std::uint64_t>& class_words) {
  Flags f;
  switch (el.tag) {
    case GUMBO_TAG_ARTICLE:
      f.set(flag_index("article"));
      break;
    case GUMBO_TAG_MAIN:
      f.set(flag_index("main"));
      break;
    case GUMBO_TAG_NAV:
      f.set(flag_index("nav"));
      break;
    case GUMBO_TAG_FOOTER:
      f.set(flag_index("footer"));
      break;
    case GUMBO_TAG_HEADER:
      f.set(flag_index("header"));
      break;
    case GUMBO_TAG_ASIDE:
      f.set(flag_index("aside"));
      break;
    case GUMBO_TAG_FORM:
      f.set(flag_index("form"));
      break;
    case GUMBO_TAG_LI:
      f.set(flag_index("li"));
      break;
    case GUMBO_TAG_A:
      f.set(flag_index("a"));
      break;
    case GUMBO_TAG_BLOCKQUOTE:
      f.set(flag_index("blockquote"));
      break;
    case GUMBO_TAG_FIGURE:
      f.set(flag_index("figure"));
      break;
    case GUMBO_TAG_TABLE:
      f.set(flag_index("table"));
      break;
    case GUMBO_TAG_H1:
    case GUMBO_TAG_H2:
    case GUMBO_TAG_H3:
    case GUMBO_TAG_H4:
    case GUMBO_TAG_H5:
    case GUMBO_TAG_H6:
      f.set(flag_index("heading"));
      break;
    default:
      break;
  }
  if (a.itemprop && std::string_view(a.itemprop).find("articleBody") != std::string_view::npos) {
    f.set(flag_index("articlebody"));
  }
  // Class-only flag indices by their first two letters (every such name has three or more), so
  // most positions of a word are rejected by one table lookup.
  struct Candidates {
    std::uint8_t count = 0;
    std::uint8_t flag[7];
  };
  static const auto kByPrefix = [] {
    std::array<Candidates, 26 * 26> table{};
    for (std::size_t k = 0; k < std::size(kFlagNames); ++k) {
      if (k < kFirstClassOnlyFlag && k > 4) continue;  // element-only flags
      const std::string_view name = kFlagNames[k];
      Candidates& c = table[static_cast<std::size_t>((name[0] - 'a') * 26 + (name[1] - 'a'))];
      if (c.count < std::size(c.flag)) c.flag[c.count++] = static_cast<std::uint8_t>(k);
    }
    return table;
  }();
  char word[64];  // lowercase letters; longer runs are matched on their first 64
  std::size_t len = 0, seen = 0;
  int words = 0;
  auto match = [&]() {
    for (std::size_t i = 0; i + 3 <= len; ++i) {
      const Candidates& c =
          kByPrefix[static_cast<std::size_t>((word[i] - 'a') * 26 + (word[i + 1] - 'a'))];
      for (std::uint8_t m = 0; m < c.count; ++m) {
        const std::size_t k = c.flag[m];
        const std::string_view name = kFlagNames[k];
        if (name.size() > len - i) continue;
        std::size_t n = 2;  // the first two letters matched
        while (n < name.size() && word[i + n] == name[n]) ++n;
        if (n == name.size()) f.set(k);
      }
    }
  };
  for (const char* v : {a.cls, a.id}) {
    if (!v) continue;
    for (const char* p = v;; ++p) {
      const char c = *p;
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
        if (len < sizeof word) word[len++] = static_cast<char>(c | 0x20);
        ++seen;
        continue;
      }
      if (seen >= 3) {
        static const internal::Fnv1a kPrefix = internal::Fnv1a().add("cw=");
        class_words.push_back(
            internal::Fnv1a(kPrefix).add({word, std::min<std::size_t>(len, 20)}).value());
        if (words < 8) {
          ++words;
          match();
        }
      }
      len = seen = 0;
      if (!c) break;
    }
  }
  return f;
}

// What the walk knows about a block when its first word arrives, plus running counts.
struct BlockInfo {
  std::string_view tags[3];  // innermost element tags, innermost first (Gumbo's static names)
  Flags flags;               // containers it sits in: article, nav, footer, ...
  std::uint32_t chars = 0, punct = 0, stop = 0, digits = 0, caps = 0;
  bool ends_sentence = false;
  // [begin, end) of its class words (hashed "cw=" features) in the page's pool of them.
  std::uint32_t class_words_begin = 0, class_words_end = 0;
};

// How many of a block's nearest elements with a class or id lend it their class words.
constexpr int kClassWordLevels = 6;

int bucket_log2(std::uint32_t n) {
  int b = 0;
  while (n > 1 && b < 10) {
    n >>= 1;
    ++b;
  }
  return b;
}

// Hashes a word as a lexical feature: lowercased (ASCII), without the punctuation
// . , : ; ! ? " ( ) | anywhere in it.
void add_lexical_key(internal::Fnv1a& h, std::string_view word) {
  for (char c : word) {
    if (c == '.' || c == ',' || c == ':' || c == ';' || c == '!' || c == '?' || c == '"' ||
        c == '(' || c == ')' || c == '|') {
      continue;
    }
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    h.add(c);
  }
}

int bucket_ratio(double r, int steps) { return std::clamp(static_cast<int>(r * steps), 0, steps); }

// The hashed features of every block. Each is the FNV-1a hash of a name such as "wc=3" or
// "t01=p/div", built without allocating (the committed model is keyed by these hashes).
void compute_features(ParsedPage& page, const std::vector<BlockInfo>& infos,
                      const std::vector<std::uint64_t>& class_words, std::size_t first_h1_word,
                      std::uint32_t element_count) {
  using internal::Fnv1a;
  const std::size_t total_words = std::max<std::size_t>(1, page.words.size());
  // Rank of each block by length: the article's paragraphs are usually the page's longest.
  std::vector<std::uint32_t> lengths;
  lengths.reserve(page.blocks.size());
  for (const auto& b : page.blocks) lengths.push_back(b.word_count());
  std::sort(lengths.begin(), lengths.end(), std::greater<>());
  const std::uint32_t top3 =
      lengths.size() > 2 ? lengths[2] : (lengths.empty() ? 0 : lengths.back());
  const std::uint32_t top10 =
      lengths.size() > 9 ? lengths[9] : (lengths.empty() ? 0 : lengths.back());
  auto wc_bucket = [&](std::size_t i) { return bucket_log2(page.blocks[i].word_count()); };
  auto ld_bucket = [&](std::size_t i) {
    const Block& b = page.blocks[i];
    return bucket_ratio(b.word_count() ? double(b.link_words) / b.word_count() : 0, 4);
  };
  static const std::uint64_t kBias = internal::fnv1a("bias");
  // Readability's observation as features: the article's paragraphs are siblings in one
  // container that holds most of the page's prose. A block's prose words are its unlinked
  // words when it reads like text (five words or more, mostly unlinked).
  // Prose under each element as the blocks' parent, grandparent and great-grandparent.
  std::vector<std::uint32_t> prose_under_levels(std::size_t{3} * element_count);
  const auto prose_under = [&](int level, std::uint32_t id) -> std::uint32_t& {
    return prose_under_levels[std::size_t{3} * id + static_cast<std::size_t>(level)];
  };
  // Each hashed flag name once: flags are tested for every block.
  static const auto kInFlag = [] {
    std::array<std::uint64_t, std::size(kFlagNames)> h;
    for (std::size_t k = 0; k < h.size(); ++k) h[k] = Fnv1a().add("in=").add(kFlagNames[k]).value();
    return h;
  }();
  std::uint64_t prose_total = 0;
  auto prose = [&](const Block& b) -> std::uint32_t {
    const std::uint32_t wc = b.word_count();
    return wc >= 5 && b.link_words * 2 < wc ? wc - b.link_words : 0;
  };
  for (const Block& b : page.blocks) {
    const std::uint32_t p = prose(b);
    prose_total += p;
    for (int level = 0; level < 3; ++level) {
      if (b.containers[level] != UINT32_MAX) prose_under(level, b.containers[level]) += p;
    }
  }
  std::uint32_t best_parent = UINT32_MAX, best_parent_prose = 0;  // the parent with most prose
  for (const Block& b : page.blocks) {
    const std::uint32_t id = b.containers[0];
    if (id == UINT32_MAX) continue;
    const std::uint32_t p = prose_under(0, id);
    if (p > best_parent_prose || (p == best_parent_prose && id < best_parent)) {
      best_parent = id;
      best_parent_prose = p;
    }
  }
  for (std::size_t i = 0; i < page.blocks.size(); ++i) {
    Block& b = page.blocks[i];
    const BlockInfo& info = infos[i];
    const double words = std::max<std::uint32_t>(1, b.word_count());
    const int wc = wc_bucket(i);
    const int ld = ld_bucket(i);
    const int sw = bucket_ratio(info.stop / words, 5);
    auto& f = b.features;
    f.clear();
    f.reserve(96);
    auto named = [](std::string_view name, int value) {
      return Fnv1a().add(name).add_number(value).value();
    };
    f.push_back(kBias);
    // The class and id words of the elements around it: site-independent names ("rail",
    // "outbrain", "paywall", "wp-caption", "pullquote") beyond the fixed hints of the flags.
    f.insert(f.end(), class_words.begin() + info.class_words_begin,
             class_words.begin() + info.class_words_end);
    f.push_back(named("wc=", wc));
    f.push_back(named("ld=", ld));
    f.push_back(Fnv1a().add("ld&wc=").add_number(ld).add('&').add_number(wc).value());
    f.push_back(named("pu=", bucket_ratio(info.punct / words, 5)));
    f.push_back(named("sw=", sw));
    f.push_back(Fnv1a().add("sw&wc=").add_number(sw).add('&').add_number(wc).value());
    f.push_back(named("dg=", bucket_ratio(info.digits / std::max(1.0, double(info.chars)), 5)));
    f.push_back(named("cap=", bucket_ratio(info.caps / words, 4)));
    f.push_back(named("end=", info.ends_sentence ? 1 : 0));
    f.push_back(named("pos=", bucket_ratio(double(b.first_word) / total_words, 9)));
    f.push_back(Fnv1a()
                    .add("rank=")
                    .add(b.word_count() >= top3    ? "top3"
                         : b.word_count() >= top10 ? "top10"
                                                   : "rest")
                    .value());
    f.push_back(Fnv1a()
                    .add("h1=")
                    .add(first_h1_word == SIZE_MAX      ? "none"
                         : b.first_word < first_h1_word ? "before"
                                                        : "after")
                    .value());
    const auto& t = info.tags;
    f.push_back(Fnv1a().add("t0=").add(t[0]).value());
    f.push_back(Fnv1a().add("t1=").add(t[1]).value());
    f.push_back(Fnv1a().add("t01=").add(t[0]).add('/').add(t[1]).value());
    f.push_back(Fnv1a().add("t012=").add(t[0]).add('/').add(t[1]).add('/').add(t[2]).value());
    f.push_back(Fnv1a().add("t0&wc=").add(t[0]).add('&').add_number(wc).value());
    for (std::size_t k = info.flags._Find_first(); k < info.flags.size();
         k = info.flags._Find_next(k)) {
      f.push_back(kInFlag[k]);
    }
    // The share of the page's prose under the block's parent, grandparent and great-grandparent.
    {
      for (int level = 0; level < 3; ++level) {
        const Fnv1a name = Fnv1a().add('c').add_number(level + 1).add('=');
        const std::uint32_t id = b.containers[level];
        if (id == UINT32_MAX || prose_total == 0) {
          f.push_back(Fnv1a(name).add("none").value());
          continue;
        }
        const int share = bucket_ratio(double(prose_under(level, id)) / double(prose_total), 5);
        f.push_back(Fnv1a(name).add_number(share).value());
        if (level == 0) f.push_back(Fnv1a(name).add_number(share).add('&').add_number(wc).value());
      }
      f.push_back(
          Fnv1a().add("bestparent=").add(b.containers[0] == best_parent ? '1' : '0').value());
    }
    // Words outside links: a list item whose lead is a link still reads as prose.
    {
      const int ulw = bucket_log2(b.word_count() - b.link_words);
      f.push_back(Fnv1a().add("ulw=").add_number(ulw).value());
      f.push_back(
          Fnv1a().add("ulw&end=").add_number(ulw).add(info.ends_sentence ? "&1" : "&0").value());
    }
    for (const std::string_view side : {"-2", "-1", "1", "2"}) {
      const std::ptrdiff_t j =
          static_cast<std::ptrdiff_t>(i) + (side[0] == '-' ? -1 : 1) * (side.back() - '0');
      const Fnv1a prefix = Fnv1a().add("nb").add(side);
      if (j < 0 || j >= static_cast<std::ptrdiff_t>(page.blocks.size())) {
        f.push_back(Fnv1a(prefix).add("=none").value());
        continue;
      }
      const auto k = static_cast<std::size_t>(j);
      f.push_back(Fnv1a(prefix).add("wc=").add_number(wc_bucket(k)).value());
      f.push_back(Fnv1a(prefix).add("ld=").add_number(ld_bucket(k)).value());
      f.push_back(Fnv1a(prefix).add("t0=").add(infos[k].tags[0]).value());
    }
    // The words that open and close a block, and the whole text of a short one ("Advertisement",
    // "Read more", "Share this", "©"): boilerplate repeats its words across sites.
    if (b.word_count() > 0) {
      Fnv1a first = Fnv1a().add("fw=");
      add_lexical_key(first, page.words[b.first_word].text);
      f.push_back(first.value());
      Fnv1a last = Fnv1a().add("lw=");
      add_lexical_key(last, page.words[b.end_word - 1].text);
      f.push_back(last.value());
      // The block's first words as a bag: boilerplate has its own vocabulary ("subscribe",
      // "newsletter", "cookies", "advertisement", "follow", "©") in every position, and so has
      // prose. Forty words see all of most furniture and enough of a paragraph.
      constexpr std::uint32_t kBagWords = 40;
      static const Fnv1a kBagPrefix = Fnv1a().add("bw=");
      for (auto k = b.first_word; k < b.end_word && k < b.first_word + kBagWords; ++k) {
        Fnv1a word = kBagPrefix;
        add_lexical_key(word, page.words[k].text);
        f.push_back(word.value());
      }
      if (b.word_count() <= 4) {
        Fnv1a text = Fnv1a().add("txt=");
        for (auto k = b.first_word; k < b.end_word; ++k) {
          add_lexical_key(text, page.words[k].text);
          text.add(' ');
        }
        f.push_back(text.value());
      }
    }
  }
}

bool is_tag_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

// The attributes anything downstream of the parse reads; the others (data-*, src, srcset, alt,
// title, onclick, ... a fifth of a typical page's bytes once scripts are gone) are dropped.
bool is_read_attribute(std::string_view lower_name) {
  static constexpr std::string_view kRead[] = {
      "class", "id",      "style", "hidden",   "aria-hidden", "itemprop", "rel",      "href",
      "lang",  "content", "name",  "property", "http-equiv",  "type",     "datetime", "charset"};
  return std::find(std::begin(kRead), std::end(kRead), lower_name) != std::end(kRead);
}

// The attributes only some elements keep: an image's URL, text and size (the lead image), an
// abbr's title (blogs write the full date there), a time's pubdate flag.
bool is_read_attribute_of(std::string_view tag, std::string_view lower_name) {
  if (tag == "img") {
    return lower_name == "src" || lower_name == "data-src" || lower_name == "srcset" ||
           lower_name == "alt" || lower_name == "width" || lower_name == "height";
  }
  if (tag == "abbr") return lower_name == "title";
  if (tag == "time") return lower_name == "pubdate";
  return false;
}

// A quoted or bare attribute value that begins with an ISO 8601 day (2020-06-07...): the title
// of an element that shows "3 hours ago" holds the date itself.
bool is_iso_date_value(std::string_view v) {
  if (!v.empty() && (v.front() == '"' || v.front() == '\'')) v.remove_prefix(1);
  if (v.size() < 10) return false;
  for (std::size_t k = 0; k < 10; ++k) {
    const bool digit = v[k] >= '0' && v[k] <= '9';
    if ((k == 4 || k == 7) ? v[k] != '-' : !digit) return false;
  }
  return true;
}

// Copies the start tag at html[lt] ('<' and a letter) to `out` with only the attributes the walk
// reads: href keeps its value on <link> and <base> (the canonical URL) and elsewhere only says
// that the element is a link. Returns the position after the tag's '>', or npos when the tag
// does not close (the caller then copies the bytes as they are). Quoted values may hold '>'.
std::size_t copy_start_tag(std::string_view html, std::size_t lt, std::string& out) {
  const std::size_t n = html.size();
  std::size_t i = lt + 1;
  while (i < n && !is_tag_space(html[i]) && html[i] != '/' && html[i] != '>') ++i;
  const std::string tag = ascii_lower(html.substr(lt + 1, i - lt - 1));
  const bool keeps_href_value = tag == "link" || tag == "base";
  const std::size_t out_start = out.size();
  out.append(html.substr(lt, i - lt));
  while (i < n) {
    while (i < n && (is_tag_space(html[i]) || html[i] == '/')) ++i;
    if (i >= n) break;
    if (html[i] == '>') {
      out += '>';
      return i + 1;
    }
    const std::size_t name_start = i++;
    while (i < n && !is_tag_space(html[i]) && html[i] != '/' && html[i] != '>' && html[i] != '=') {
      ++i;
    }
    const std::string_view name = html.substr(name_start, i - name_start);
    std::size_t j = i;
    while (j < n && is_tag_space(html[j])) ++j;
    std::string_view value;
    bool has_value = false;
    if (j < n && html[j] == '=') {
      ++j;
      while (j < n && is_tag_space(html[j])) ++j;
      if (j < n && (html[j] == '"' || html[j] == '\'')) {
        const std::size_t close = html.find(html[j], j + 1);
        if (close == std::string_view::npos) break;
        value = html.substr(j, close + 1 - j);
        j = close + 1;
      } else {
        const std::size_t v = j;
        while (j < n && !is_tag_space(html[j]) && html[j] != '>') ++j;
        value = html.substr(v, j - v);
      }
      has_value = true;
      i = j;
    }
    if (name.size() > 16) continue;
    char lower[16];
    for (std::size_t k = 0; k < name.size(); ++k) {
      lower[k] = name[k] >= 'A' && name[k] <= 'Z' ? static_cast<char>(name[k] + 32) : name[k];
    }
    const std::string_view lower_name(lower, name.size());
    if (!is_read_attribute(lower_name) && !is_read_attribute_of(tag, lower_name) &&
        !(has_value && (lower_name == "title" || lower_name == "data-date") &&
          is_iso_date_value(value))) {
      continue;
    }
    out += ' ';
    out.append(name);
    if (has_value && lower_name == "srcset") {
      // Only its first candidate's URL is read: a srcset of ten widths is mostly bytes for Gumbo.
      std::string_view v = value;
      if (!v.empty() && (v.front() == '"' || v.front() == '\'')) v = v.substr(1, v.size() - 2);
      while (!v.empty() && is_tag_space(v.front())) v.remove_prefix(1);
      v = v.substr(0, std::min(v.find_first_of(" \t\n\r\f,\"'"), v.size()));
      out += "=\"";
      out.append(v);
      out += '"';
      continue;
    }
    if (has_value && (lower_name != "href" || keeps_href_value)) {
      out += '=';
      out.append(value);
    }
  }
  out.resize(out_start);
  return std::string_view::npos;
}

// Appends text (between tags) with each run of ASCII whitespace cut to its first character:
// the walk reads any run as one space, and Gumbo, which handles every character as a token of
// its own, had a seventh of a page's stripped bytes to read as indentation.
void append_text(std::string& out, std::string_view text) {
  std::size_t i = 0;
  const std::size_t n = text.size();
  while (i < n) {
    std::size_t j = i;
    while (j + 1 < n && !(is_tag_space(text[j]) && is_tag_space(text[j + 1]))) ++j;
    if (j + 1 >= n) break;
    out.append(text.substr(i, j + 1 - i));
    j += 2;
    while (j < n && is_tag_space(text[j])) ++j;
    i = j;
  }
  out.append(text.substr(i));
}

// The tags strip_invisible handles itself, as constants (braced lists of C strings were
// measured with strlen at every '<' of the page).
constexpr std::string_view kDroppedElements[] = {"<script", "<style", "<svg", "<noscript"};
constexpr std::string_view kFrameTags[] = {"frameset", "noframes", "frame"};
constexpr std::string_view kTextElements[] = {"<title", "<textarea"};
constexpr std::string_view kRawTextElements[] = {"<xmp", "<noembed", "<noframes", "<iframe"};

}  // namespace

// The first end tag `close` ("</title") at or after `from` that is one: its name must end there,
// as the tokenizer reads it ("</titlevalue" is another tag, and the title goes on).
std::size_t find_end_tag(std::string_view html, std::string_view close, std::size_t from) {
  for (std::size_t at = find_ci(html, close, from); at != std::string_view::npos;
       at = find_ci(html, close, at + 1)) {
    const std::size_t after = at + close.size();
    if (after >= html.size() || is_tag_space(html[after]) || html[after] == '>' ||
        html[after] == '/') {
      return at;
    }
  }
  return std::string_view::npos;
}

namespace {

// The forward searches of strip_invisible ("the next '>' at or after p", "the next </script at
// or after p"), each answer kept for the next question: p only grows, and an answer found from
// p holds for any later p up to it. Without it a crafted page that opens 50,000 scripts and
// closes none, or a megabyte of '<' with no '>', had every one searched to the page's end:
// quadratic (400 KB took 10 s). Now each search reads each byte about once.
class ForwardSearch {
 public:
  template <class Find>
  std::size_t next(std::size_t from, Find&& find) {
    if (!known_ || from < asked_ || (found_ != std::string_view::npos && found_ < from)) {
      found_ = find(from);
      asked_ = from;
      known_ = true;
    }
    return found_;
  }

 private:
  bool known_ = false;
  std::size_t asked_ = 0, found_ = std::string_view::npos;
};

class PageSearches {
 public:
  explicit PageSearches(std::string_view html) : html_(html) {}
  std::size_t gt(std::size_t from) {
    return gt_.next(from, [this](std::size_t f) { return html_.find('>', f); });
  }
  std::size_t lt(std::size_t from) {
    return lt_.next(from, [this](std::size_t f) { return html_.find('<', f); });
  }
  // `close` is one of the end tags below ("</script").
  std::size_t end_tag(std::string_view close, std::size_t from) {
    for (std::size_t k = 0; k < std::size(kCloses); ++k) {
      if (kCloses[k] == close) {
        return end_tags_[k].next(
            from, [this, close](std::size_t f) { return find_end_tag(html_, close, f); });
      }
    }
    return find_end_tag(html_, close, from);
  }

 private:
  static constexpr std::string_view kCloses[] = {"</script",   "</style",    "</svg", "</noscript",
                                                 "</title",    "</textarea", "</xmp", "</noembed",
                                                 "</noframes", "</iframe"};
  std::string_view html_;
  ForwardSearch gt_, lt_;
  ForwardSearch end_tags_[std::size(kCloses)];
};

}  // namespace

namespace {

// The first publication date a script holds as data: `"datePublished": "2020-06-07T..."` and
// the names frameworks give it, also inside a JSON string (`\"publishedAt\":\"...\"`). Only the
// first 256 KiB of a script are looked at.
std::string script_published(std::string_view text) {
  text = text.substr(0, std::size_t{256} << 10);
  std::size_t best = std::string_view::npos;
  std::string value;
  // The names of a publication first; then those of a creation, when none is there.
  const std::string_view published[] = {"datePublished", "publishedDate", "publishDate",
                                        "published_at",  "publishedAt",   "firstPublishedAt"};
  const std::string_view created[] = {"dateCreated", "createdAt", "created_at"};
  // Most scripts name neither: one search each rules them out.
  for (const auto& [probe, keys] :
       {std::pair{std::string_view("ublish"), std::span<const std::string_view>(published)},
        std::pair{std::string_view("reated"), std::span<const std::string_view>(created)}}) {
    if (!value.empty()) break;
    if (text.find(probe) == std::string_view::npos) continue;
    for (const std::string_view key : keys) {
      for (std::size_t at = text.find(key); at != std::string_view::npos && at < best;
           at = text.find(key, at + 1)) {
        // The key in quotes, a colon, the value in quotes (escaped or not) starting with a year.
        if (at == 0 || text[at - 1] != '"') continue;
        std::size_t i = at + key.size();
        const auto skip = [&](std::string_view chars) {
          while (i < text.size() && chars.find(text[i]) != std::string_view::npos) ++i;
        };
        if (i < text.size() && text[i] == '\\') ++i;  // \"key\": inside a JSON string
        if (i >= text.size() || text[i] != '"') continue;
        ++i;
        skip(" \t");
        if (i >= text.size() || text[i] != ':') continue;
        ++i;
        skip(" \t\\\"");
        std::size_t end = i;
        while (end < text.size() && end - i < 40 &&
               std::string_view("0123456789-:T+Z.").find(text[end]) != std::string_view::npos) {
          ++end;
        }
        if (end - i < 10 || text[i] < '1' || text[i] > '2') continue;
        best = at;
        value = std::string(text.substr(i, end - i));
        break;
      }
    }
  }
  return value;
}

}  // namespace

std::string strip_invisible(std::string_view html, std::size_t* max_nesting, bool* recovered,
                            std::string* script_date) {
  NestingCounter nesting;
  PageSearches search(html);
  std::string out;
  out.reserve(html.size());
  std::size_t pos = 0;
  // A frameset page shows its frames; what it says for readers without frames is in
  // <noframes>, which the spec parse keeps as raw text (markup and all). Read as a browser
  // without frames reads it: frameset, frame and noframes tags dropped, their content the body.
  const bool frames = find_ci(html, "<frameset", 0) != std::string_view::npos &&
                      find_ci(html, "<noframes", 0) != std::string_view::npos;
  while (pos < html.size()) {
    const std::size_t lt = html.find('<', pos);
    if (lt == std::string_view::npos) break;
    append_text(out, html.substr(pos, lt - pos));
    if (html.substr(lt, 4) == "<!--") {
      const std::size_t end = html.find("-->", lt + 4);
      pos = end == std::string_view::npos ? html.size() : end + 3;
      continue;
    }
    std::string_view closer;
    for (const std::string_view tag : kDroppedElements) {
      if (at_ci(html, lt, tag) && lt + tag.size() < html.size()) {
        const char next = html[lt + tag.size()];
        if (next == ' ' || next == '>' || next == '\t' || next == '\n' || next == '\r' ||
            next == '/') {
          closer = tag;
        }
        break;
      }
    }
    const std::size_t tag_end = search.gt(lt);
    if (closer.empty() || tag_end == std::string_view::npos) {
      const char next = lt + 1 < html.size() ? html[lt + 1] : '\0';
      const bool start_tag = (next >= 'a' && next <= 'z') || (next >= 'A' && next <= 'Z');
      if (frames && (start_tag || next == '/')) {
        const std::size_t at = lt + (next == '/' ? 2 : 1);
        bool dropped = false;
        for (const std::string_view name : kFrameTags) {
          const std::size_t after = at + name.size();
          if (after < html.size() && ascii_lower(html.substr(at, name.size())) == name &&
              (is_tag_space(html[after]) || html[after] == '>' || html[after] == '/')) {
            const std::size_t gt = search.gt(lt);
            pos = gt == std::string_view::npos ? html.size() : gt + 1;
            dropped = true;
            break;
          }
        }
        if (dropped) continue;
      }
      // Titles and text areas hold text, not tags: copied as they are up to their end tag. One
      // that is never closed would swallow the rest of the page (the spec parse reads it all as
      // its text): as lenient parsers do, it is closed at the next tag.
      for (const std::string_view raw : kTextElements) {
        if (start_tag && at_ci(html, lt, raw) && lt + raw.size() < html.size() &&
            (is_tag_space(html[lt + raw.size()]) || html[lt + raw.size()] == '>')) {
          const std::string close = "</" + std::string(raw.substr(1));
          const std::size_t end = search.end_tag(close, lt + 1);
          nesting.tag(html, lt + 1, false);
          if (end != std::string_view::npos) {
            out.append(html.substr(lt, end - lt));
            pos = end;
          } else {
            const std::size_t open_end = search.gt(lt);
            const std::size_t next_tag = open_end == std::string_view::npos
                                             ? std::string_view::npos
                                             : search.lt(open_end + 1);
            const std::size_t stop = next_tag == std::string_view::npos ? html.size() : next_tag;
            out.append(html.substr(lt, stop - lt));
            out.append(close).append(">");
            if (recovered && stop < html.size()) *recovered = true;
            pos = stop;
          }
          break;
        }
      }
      if (pos > lt) continue;
      // Raw-text elements whose content the spec parse never shows: never closed, they too would
      // swallow the page, so they are closed right after their start tag.
      for (const std::string_view raw : kRawTextElements) {
        if (start_tag && at_ci(html, lt, raw) && lt + raw.size() < html.size() &&
            (is_tag_space(html[lt + raw.size()]) || html[lt + raw.size()] == '>') &&
            search.end_tag("</" + std::string(raw.substr(1)), lt + 1) == std::string_view::npos) {
          const std::size_t open_end = search.gt(lt);
          if (open_end == std::string_view::npos) break;
          out.append(html.substr(lt, open_end + 1 - lt));
          out.append("</").append(raw.substr(1)).append(">");
          if (recovered) *recovered = true;
          pos = open_end + 1;
          break;
        }
      }
      if (pos > lt) continue;
      // A start tag with no '>' after it cannot close: not read to the page's end again.
      if (start_tag && tag_end != std::string_view::npos) {
        if (const std::size_t after = copy_start_tag(html, lt, out);
            after != std::string_view::npos) {
          nesting.tag(html, lt + 1, false);
          pos = after;
          continue;
        }
      } else if (next == '/') {
        nesting.tag(html, lt + 2, true);
      }
      out += '<';
      pos = lt + 1;
      continue;
    }
    nesting.tag(html, lt + 1, false);
    const std::string_view open_tag = html.substr(lt, tag_end + 1 - lt);
    const std::string close = "</" + std::string(closer.substr(1));
    const std::size_t end = search.end_tag(close, tag_end + 1);
    std::size_t content_end = end;
    if (end == std::string_view::npos) {
      // Never closed: what follows up to the next tag is its content, the rest is the page (a
      // lenient parser's reading; the spec parse would hide the whole rest).
      const std::size_t next_tag = search.lt(tag_end + 1);
      content_end = next_tag == std::string_view::npos ? html.size() : next_tag;
      if (recovered && next_tag != std::string_view::npos) *recovered = true;
    }
    const bool keep =
        closer == "<script" && ascii_lower(open_tag).find("ld+json") != std::string::npos;
    if (!keep) {
      // Nothing of it is read but a publication date a script holds as data: the element goes
      // whole (an empty one was still a node, and its tags a tenth of what Gumbo read).
      if (script_date && script_date->empty() && closer == "<script") {
        *script_date = script_published(html.substr(tag_end + 1, content_end - tag_end - 1));
      }
      if (end == std::string_view::npos) {
        pos = content_end;
      } else {
        nesting.tag(html, end + 2, true);
        const std::size_t gt = search.gt(end);
        pos = gt == std::string_view::npos ? html.size() : gt + 1;
      }
      continue;
    }
    out.append(open_tag);
    out.append(html.substr(tag_end + 1, content_end - tag_end - 1));
    if (end == std::string_view::npos) out.append(close).append(">");
    pos = content_end;
  }
  if (pos < html.size()) append_text(out, html.substr(pos));
  if (max_nesting) *max_nesting = nesting.max_depth();
  return out;
}

namespace {

GumboOutput* parse_into(ParsedPage::Tree& tree) {
  GumboOptions options = kGumboDefaultOptions;
  options.allocator = &Arena::allocate;
  options.deallocator = &Arena::deallocate;
  options.userdata = &tree.arena;
  options.max_errors = 0;  // errors are not read: not recording them bounds a borked page's memory
  return gumbo_parse_with_options(&options, tree.source.data(), tree.source.size());
}

}  // namespace

bool parse_tree_only(std::string_view html) {
  ParsedPage::Tree tree;
  std::size_t depth = 0;  // counted as parse_page does
  tree.source = strip_invisible(html, &depth);
  tree.output = parse_into(tree);
  return tree.output && tree.output->root;
}

tl::expected<ParsedPage, ExtractError> parse_page(std::string_view html,
                                                  const ParseLimits& limits) {
  if (html.size() > limits.max_html_bytes) {
    return tl::unexpected(ExtractError{
        ExtractReason::kTooLarge, "document has " + std::to_string(html.size()) + " bytes, limit " +
                                      std::to_string(limits.max_html_bytes)});
  }
  if (is_blank(html)) {
    return tl::unexpected(ExtractError{ExtractReason::kEmpty, "document is empty"});
  }
  if (looks_binary(html)) {
    return tl::unexpected(
        ExtractError{ExtractReason::kBinary,
                     "binary data bytes in the first 1,445 bytes (WHATWG MIME sniffing)"});
  }
  if (!limits.known_utf8 && !is_valid_utf8(html)) {
    return tl::unexpected(ExtractError{ExtractReason::kInvalidUtf8, "document is not UTF-8"});
  }
  ParsedPage page;
  // A stray NUL or control character further on: replaced as a browser shows the page.
  std::string cleaned;
  if (has_controls(html)) {
    cleaned = replace_controls(html);
    html = cleaned;
    page.warnings.emplace_back("control_characters_replaced");
  }
  page.tree = std::make_unique<ParsedPage::Tree>();
  std::size_t depth = 0;
  bool recovered = false;
  std::string script_date;
  page.tree->source = strip_invisible(html, &depth, &recovered, &script_date);
  if (recovered) page.warnings.emplace_back("unterminated_element_closed");
  if (depth > limits.max_nesting_depth) {
    return tl::unexpected(ExtractError{
        ExtractReason::kParse, "elements nested " + std::to_string(depth) + " deep, limit " +
                                   std::to_string(limits.max_nesting_depth)});
  }
  page.tree->output = parse_into(*page.tree);
  if (!page.tree->output || !page.tree->output->root) {
    return tl::unexpected(ExtractError{ExtractReason::kParse, "HTML parser returned no tree"});
  }

  struct Frame {
    const GumboNode* node;
    unsigned next_child;
    bool emit;
    Flags flags;  // own flags OR'ed with the parent's
    Attrs attrs;  // read only while `emit`
    std::uint32_t id = 0;
    // Its class words in `class_word_pool` (while `emit`); whether it has a class or id at all.
    std::uint32_t words_begin = 0, words_end = 0;
    bool classed = false;
    bool byline_word = false;     // a class or id word of its own contains "byline"
    std::int32_t date_mark = -1;  // its index in raw.date_marks
  };
  std::vector<std::uint64_t> class_word_pool;    // of every emitted element, in walk order
  std::vector<std::uint64_t> block_class_words;  // of every block: sorted, distinct
  std::array<std::uint32_t, kClassWordLevels> last_classed_ids{};
  std::size_t last_classed_count = SIZE_MAX;
  // A pushed frame's own flags (OR'ed with its parent's) and class words.
  auto add_own = [&class_word_pool](auto& frame, const Flags& parent) {
    frame.classed = frame.attrs.cls || frame.attrs.id;
    frame.words_begin = static_cast<std::uint32_t>(class_word_pool.size());
    const Flags own = own_flags(frame.node->v.element, frame.attrs, class_word_pool);
    frame.byline_word = own.test(flag_index("byline"));
    frame.flags = parent | own;
    frame.words_end = static_cast<std::uint32_t>(class_word_pool.size());
  };
  std::uint32_t next_element_id = 0;
  std::vector<Frame> stack{{page.tree->output->root,
                            0,
                            true,
                            {},
                            scan_attrs(page.tree->output->root->v.element),
                            next_element_id++}};
  add_own(stack.back(), Flags{});
  stack.back().flags = {};  // the root's own flags are not used
  std::vector<BlockInfo> infos;
  RawMetadata& raw = page.metadata;
  raw.script_published = std::move(script_date);
  std::uint32_t box = 0;  // block-level box counter (changes at every boundary)
  std::uint32_t current_box = UINT32_MAX;
  bool pending_space = true;
  int link_depth = 0;
  std::size_t first_h1_word = SIZE_MAX;
  int h1_depth = 0;

  auto open_block = [&]() {
    Block b;
    b.first_word = b.end_word = static_cast<std::uint32_t>(page.words.size());
    page.blocks.push_back(b);
    BlockInfo info;
    int level = 0;
    for (auto it = stack.rbegin(); it != stack.rend() && level < 3; ++it, ++level) {
      info.tags[level] = gumbo_normalized_tagname(it->node->v.element.tag);
    }
    info.flags = stack.back().flags;
    // The nearest classed elements; blocks under the same ones (paragraphs of one container)
    // share the previous block's class words.
    std::array<std::uint32_t, kClassWordLevels> classed_ids;
    std::array<const Frame*, kClassWordLevels> classed_frames;
    std::size_t classed = 0;
    for (auto it = stack.rbegin(); it != stack.rend() && classed < kClassWordLevels; ++it) {
      if (!it->classed) continue;
      classed_frames[classed] = &*it;
      classed_ids[classed++] = it->id;
    }
    if (classed == last_classed_count &&
        std::equal(classed_ids.begin(), classed_ids.begin() + classed, last_classed_ids.begin()) &&
        !infos.empty()) {
      info.class_words_begin = infos.back().class_words_begin;
      info.class_words_end = infos.back().class_words_end;
    } else {
      info.class_words_begin = static_cast<std::uint32_t>(block_class_words.size());
      for (std::size_t k = 0; k < classed; ++k) {
        block_class_words.insert(block_class_words.end(),
                                 class_word_pool.begin() + classed_frames[k]->words_begin,
                                 class_word_pool.begin() + classed_frames[k]->words_end);
      }
      const auto first = block_class_words.begin() + info.class_words_begin;
      std::sort(first, block_class_words.end());
      block_class_words.erase(std::unique(first, block_class_words.end()), block_class_words.end());
      info.class_words_end = static_cast<std::uint32_t>(block_class_words.size());
      last_classed_ids = classed_ids;
      last_classed_count = classed;
    }
    page.blocks.back().in_comments = info.flags.test(flag_index("comment"));
    infos.push_back(std::move(info));
    // The block's own block-level element, then the containers above it.
    std::size_t own = stack.size() - 1;
    while (own > 0 && !is_block(stack[own].node->v.element.tag)) --own;
    for (std::size_t up = 0; up < 3 && up < own; ++up) {
      page.blocks.back().containers[up] = stack[own - 1 - up].id;
    }
  };

  while (!stack.empty()) {
    Frame& f = stack.back();
    const GumboNode* node = f.node;
    if (node->type != GUMBO_NODE_ELEMENT && node->type != GUMBO_NODE_TEMPLATE) {
      stack.pop_back();
      continue;
    }
    const GumboElement& el = node->v.element;
    if (f.next_child == 0) {
      if (el.tag == GUMBO_TAG_META || el.tag == GUMBO_TAG_LINK) {
        collect_head_metadata(el, raw);
      } else if (f.emit && f.attrs.content && f.attrs.property && raw.metas.size() < 1024) {
        // RDFa on other elements (<span property="schema:dateCreated" content="...">) says
        // what a meta tag would. (itemprop dates are date marks, read where they stand.)
        raw.metas.emplace_back(ascii_lower(f.attrs.property), collapse_whitespace(f.attrs.content));
      }
      if (el.tag == GUMBO_TAG_HTML) {
        if (const char* lang = attr(el, "lang")) raw.html_lang = lang;
      } else if (el.tag == GUMBO_TAG_TITLE && raw.title_tag.empty()) {
        raw.title_tag = collapse_whitespace(subtree_text(node));
      } else if (el.tag == GUMBO_TAG_H1 && raw.first_h1.empty()) {
        raw.first_h1 = collapse_whitespace(subtree_text(node));
      } else if (raw.markup_byline.empty() && f.emit &&
                 is_byline_element(el, f.attrs, f.byline_word)) {
        raw.markup_byline = collapse_whitespace(subtree_text(node, /*lines=*/true));
        while (!raw.markup_byline.empty() &&
               (raw.markup_byline.front() == ',' || raw.markup_byline.front() == ' ')) {
          raw.markup_byline.erase(0, 1);
        }
        if (raw.markup_byline.size() > 200) raw.markup_byline.clear();
      }
      // Not the dates of readers' comments, nor of quoted or embedded posts.
      if (!f.flags.test(flag_index("comment")) && !f.flags.test(flag_index("blockquote"))) {
        f.date_mark = collect_date_mark(el, f.emit, f.attrs, raw, page.words.size());
      }
      if (el.tag == GUMBO_TAG_IMG && f.emit) collect_image(el, raw, page.words.size());
      if (el.tag == GUMBO_TAG_TIME && raw.first_time.empty()) {
        if (const char* dt = attr(el, "datetime")) raw.first_time = dt;
      } else if (el.tag == GUMBO_TAG_SCRIPT) {
        if (const char* type = attr(el, "type");
            type && ascii_lower(type) == "application/ld+json") {
          raw.json_ld.push_back(subtree_text(node));
        }
      }
      if (f.emit && (is_skipped(el.tag) || is_hidden(f.attrs))) f.emit = false;
      if (f.emit) {
        page.tokens.push_back(-1);
        if (is_block(el.tag)) {
          ++box;
          pending_space = true;
        }
        if (el.tag == GUMBO_TAG_A && f.attrs.href) ++link_depth;
        if (el.tag == GUMBO_TAG_H1) ++h1_depth;
      }
    }
    if (f.next_child < el.children.length) {
      const auto* child = static_cast<const GumboNode*>(el.children.data[f.next_child++]);
      const bool emit = f.emit;
      if (child->type == GUMBO_NODE_ELEMENT || child->type == GUMBO_NODE_TEMPLATE) {
        if (emit) {
          const Attrs attrs = scan_attrs(child->v.element);
          const Flags parent = f.flags;
          stack.push_back({child, 0, emit, {}, attrs, next_element_id++});
          add_own(stack.back(), parent);
        } else {
          stack.push_back({child, 0, emit, f.flags, {}, next_element_id++});
        }
      } else if (emit && (child->type == GUMBO_NODE_TEXT || child->type == GUMBO_NODE_CDATA ||
                          child->type == GUMBO_NODE_WHITESPACE)) {
        const std::string_view text = child->v.text.text;
        std::size_t i = 0;
        while (i < text.size()) {
          const auto c0 = static_cast<unsigned char>(text[i]);
          if (c0 == ' ' || c0 == '\n') {  // most spaces, without the Unicode check
            pending_space = true;
            ++i;
            continue;
          }
          if (c0 <= 0x20 || c0 >= 0x7F) {
            if (const std::size_t w = whitespace_prefix(text.substr(i)); w > 0) {
              pending_space = true;
              i += w;
              continue;
            }
          }
          // The word runs to the next space; punctuation and digits are counted on the way.
          // Printable ASCII is never a space: only other bytes need the Unicode check.
          std::size_t j = i;
          std::uint32_t punct = 0, digits = 0;
          while (j < text.size()) {
            const auto c = static_cast<unsigned char>(text[j]);
            if (c > 0x20 && c < 0x7F) {
              punct += c == '.' || c == ',' || c == ';' || c == ':' || c == '!' || c == '?';
              digits += c >= '0' && c <= '9';
              ++j;
            } else if (ideograph_or_kana(text, j)) {
              // Chinese and Japanese put no spaces between words: every two characters count as
              // a word (about the length of a Chinese word; rendered without a space), so a
              // paragraph weighs by its length as a spaced one does.
              if (j == i) {
                j += 3;
                if (ideograph_or_kana(text, j)) j += 3;
              }
              break;
            } else if (whitespace_prefix(text.substr(j)) == 0) {
              ++j;
            } else {
              break;
            }
          }
          if (current_box != box) {
            current_box = box;
            open_block();
          }
          const std::string_view word = text.substr(i, j - i);
          if (h1_depth > 0 && first_h1_word == SIZE_MAX) first_h1_word = page.words.size();
          Block& b = page.blocks.back();
          BlockInfo& info = infos.back();
          const auto index = static_cast<std::uint32_t>(page.blocks.size() - 1);
          page.tokens.push_back(static_cast<std::int32_t>(page.words.size()));
          page.words.push_back({word, index, pending_space, link_depth > 0});
          ++b.end_word;
          if (link_depth > 0) ++b.link_words;
          info.chars += static_cast<std::uint32_t>(word.size());
          info.punct += punct;
          info.digits += digits;
          if (word[0] >= 'A' && word[0] <= 'Z') ++info.caps;
          // Stopwords are short: lowercase into a small buffer, without trailing . and ,
          std::string_view bare = word;
          while (!bare.empty() && (bare.back() == '.' || bare.back() == ',')) bare.remove_suffix(1);
          if (char lower[8]; bare.size() <= 5) {  // no stopword is longer
            for (std::size_t k = 0; k < bare.size(); ++k) {
              const char c = bare[k];
              lower[k] = c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c;
            }
            if (internal::is_stopword({lower, bare.size()})) ++info.stop;
          }
          const char last = word.back();
          info.ends_sentence = last == '.' || last == '!' || last == '?' || last == '"' ||
                               word.ends_with("\xE3\x80\x82") || word.ends_with("\xE2\x80\x9D");
          pending_space = false;
          i = j;
        }
      }
      continue;
    }
    if (f.emit) {
      page.tokens.push_back(-1);
      if (is_block(el.tag)) {
        ++box;
        pending_space = true;
      }
      if (el.tag == GUMBO_TAG_A && f.attrs.href) --link_depth;
      if (el.tag == GUMBO_TAG_H1) --h1_depth;
    }
    if (f.date_mark >= 0) {
      raw.date_marks[static_cast<std::size_t>(f.date_mark)].end_word =
          static_cast<std::uint32_t>(page.words.size());
    }
    stack.pop_back();
  }
  raw.first_h1_word = first_h1_word;
  compute_features(page, infos, block_class_words, first_h1_word, next_element_id);
  return page;
}

std::string render_words(const ParsedPage& page, std::size_t first, std::size_t last) {
  std::string out;
  std::uint32_t block = 0;
  for (std::size_t i = first; i < last && i < page.words.size(); ++i) {
    const Word& w = page.words[i];
    if (i != first) {
      if (w.block != block) {
        out += "\n\n";
      } else if (w.space_before) {
        out += ' ';
      }
    }
    out.append(w.text);
    block = w.block;
  }
  return out;
}

std::string render_blocks(const ParsedPage& page, const std::vector<std::uint32_t>& blocks) {
  std::string out;
  for (const std::uint32_t b : blocks) {
    if (!out.empty()) out += "\n\n";
    const Block& block = page.blocks[b];
    out += render_words(page, block.first_word, block.end_word);
  }
  return out;
}

}  // namespace newsflow::extractors
