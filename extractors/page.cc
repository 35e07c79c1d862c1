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

#include "extractors/internal/block_features.h"
#include "extractors/internal/gumbo_arena.h"
#include "extractors/internal/hash.h"
#include "extractors/internal/stopwords.h"
#include "extractors/text.h"

namespace newsflow::extractors {

using internal::Attrs;
using internal::BlockInfo;
using internal::compute_features;
using internal::flag_index;
using internal::Flags;
using internal::kClassWordLevels;
using internal::own_flags;

struct ParsedPage::Tree {
  std::string source;     // what Gumbo parsed; the tree points into it
  internal::Arena arena;  // holds the tree: freed with it, no gumbo_destroy_output needed
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

}  // namespace

namespace {

GumboOutput* parse_into(ParsedPage::Tree& tree) {
  GumboOptions options = kGumboDefaultOptions;
  options.allocator = &internal::Arena::allocate;
  options.deallocator = &internal::Arena::deallocate;
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
