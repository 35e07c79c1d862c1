#include "extractors/html.h"

#include <gumbo.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "extractors/metadata.h"
#include "extractors/text.h"

namespace newsflow::extractors {
namespace {

// A word of visible text. `block` numbers the block-level box it sits in, so paragraphs can be
// rebuilt; `space_before` keeps "foo<b>bar</b>" as one word.
struct Word {
  std::string_view text;
  std::uint32_t block;
  bool space_before;
};

// One token of the flat sequence MSS-style methods score: a tag or a word.
struct Token {
  std::int32_t word;  // index into words, or -1 for a tag
};

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
      return true;
    default:
      return false;
  }
}

bool is_block(GumboTag tag) {
  switch (tag) {
    case GUMBO_TAG_P: case GUMBO_TAG_DIV: case GUMBO_TAG_BR: case GUMBO_TAG_LI:
    case GUMBO_TAG_UL: case GUMBO_TAG_OL: case GUMBO_TAG_DL: case GUMBO_TAG_DT:
    case GUMBO_TAG_DD: case GUMBO_TAG_H1: case GUMBO_TAG_H2: case GUMBO_TAG_H3:
    case GUMBO_TAG_H4: case GUMBO_TAG_H5: case GUMBO_TAG_H6: case GUMBO_TAG_TABLE:
    case GUMBO_TAG_TR: case GUMBO_TAG_TD: case GUMBO_TAG_TH: case GUMBO_TAG_SECTION:
    case GUMBO_TAG_ARTICLE: case GUMBO_TAG_ASIDE: case GUMBO_TAG_HEADER:
    case GUMBO_TAG_FOOTER: case GUMBO_TAG_NAV: case GUMBO_TAG_MAIN: case GUMBO_TAG_FIGURE:
    case GUMBO_TAG_FIGCAPTION: case GUMBO_TAG_BLOCKQUOTE: case GUMBO_TAG_PRE:
    case GUMBO_TAG_HR: case GUMBO_TAG_FORM: case GUMBO_TAG_ADDRESS: case GUMBO_TAG_BODY:
    case GUMBO_TAG_CAPTION: case GUMBO_TAG_FIELDSET: case GUMBO_TAG_DETAILS:
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

bool is_hidden(const GumboElement& el) {
  if (attr(el, "hidden") != nullptr) return true;
  if (const char* aria = attr(el, "aria-hidden"); aria && std::string_view(aria) == "true") {
    return true;
  }
  if (const char* style = attr(el, "style")) {
    std::string s = ascii_lower(style);
    std::erase(s, ' ');
    if (s.find("display:none") != std::string::npos ||
        s.find("visibility:hidden") != std::string::npos) {
      return true;
    }
  }
  return false;
}

// Concatenated text of a subtree (for <title>, <h1>, scripts).
std::string subtree_text(const GumboNode* node) {
  std::string out;
  std::vector<const GumboNode*> stack{node};
  while (!stack.empty()) {
    const GumboNode* n = stack.back();
    stack.pop_back();
    if (n->type == GUMBO_NODE_TEXT || n->type == GUMBO_NODE_WHITESPACE ||
        n->type == GUMBO_NODE_CDATA) {
      out += n->v.text.text;
    } else if (n->type == GUMBO_NODE_ELEMENT || n->type == GUMBO_NODE_TEMPLATE) {
      const GumboVector& children = n->v.element.children;
      for (unsigned i = children.length; i-- > 0;) {
        stack.push_back(static_cast<const GumboNode*>(children.data[i]));
      }
    }
  }
  return out;
}

void collect_head_metadata(const GumboElement& el, RawMetadata& raw) {
  switch (el.tag) {
    case GUMBO_TAG_META: {
      const char* key = attr(el, "property");
      if (!key) key = attr(el, "name");
      if (!key) key = attr(el, "itemprop");
      if (!key) key = attr(el, "http-equiv");
      const char* content = attr(el, "content");
      if (key && content) raw.metas.emplace_back(ascii_lower(key), collapse_whitespace(content));
      break;
    }
    case GUMBO_TAG_LINK: {
      const char* rel = attr(el, "rel");
      const char* href = attr(el, "href");
      if (rel && href && raw.canonical_href.empty() && ascii_lower(rel) == "canonical") {
        raw.canonical_href = href;
      }
      break;
    }
    default:
      break;
  }
}

// Walks the tree once (iteratively: hostile pages nest deeply) and produces the word and token
// streams plus the raw metadata.
void walk(const GumboNode* root, std::vector<Word>& words, std::vector<Token>& tokens,
          RawMetadata& raw) {
  struct Frame {
    const GumboNode* node;
    unsigned next_child;
    bool emit;  // contributes tokens (false inside skipped subtrees)
  };
  std::vector<Frame> stack{{root, 0, true}};
  std::uint32_t block = 0;
  bool pending_space = true;
  while (!stack.empty()) {
    Frame& f = stack.back();
    const GumboNode* node = f.node;
    if (node->type != GUMBO_NODE_ELEMENT && node->type != GUMBO_NODE_TEMPLATE) {
      stack.pop_back();
      continue;
    }
    const GumboElement& el = node->v.element;
    if (f.next_child == 0) {
      // Entering the element.
      collect_head_metadata(el, raw);
      if (el.tag == GUMBO_TAG_HTML) {
        if (const char* lang = attr(el, "lang")) raw.html_lang = lang;
      } else if (el.tag == GUMBO_TAG_TITLE && raw.title_tag.empty()) {
        raw.title_tag = collapse_whitespace(subtree_text(node));
      } else if (el.tag == GUMBO_TAG_H1 && raw.first_h1.empty()) {
        raw.first_h1 = collapse_whitespace(subtree_text(node));
      } else if (el.tag == GUMBO_TAG_TIME && raw.first_time.empty()) {
        if (const char* dt = attr(el, "datetime")) raw.first_time = dt;
      } else if (el.tag == GUMBO_TAG_SCRIPT) {
        if (const char* type = attr(el, "type");
            type && ascii_lower(type) == "application/ld+json") {
          raw.json_ld.push_back(subtree_text(node));
        }
      }
      if (f.emit && (is_skipped(el.tag) || is_hidden(el))) f.emit = false;
      if (f.emit) {
        tokens.push_back({-1});
        if (is_block(el.tag)) {
          ++block;
          pending_space = true;
        }
      }
    }
    if (f.next_child < el.children.length) {
      const auto* child = static_cast<const GumboNode*>(el.children.data[f.next_child++]);
      const bool emit = f.emit;
      if (child->type == GUMBO_NODE_ELEMENT || child->type == GUMBO_NODE_TEMPLATE) {
        stack.push_back({child, 0, emit});
      } else if (emit && (child->type == GUMBO_NODE_TEXT || child->type == GUMBO_NODE_CDATA ||
                          child->type == GUMBO_NODE_WHITESPACE)) {
        std::string_view text = child->v.text.text;
        std::size_t i = 0;
        while (i < text.size()) {
          if (const std::size_t w = whitespace_prefix(text.substr(i)); w > 0) {
            pending_space = true;
            i += w;
            continue;
          }
          std::size_t j = i;
          while (j < text.size() && whitespace_prefix(text.substr(j)) == 0) ++j;
          tokens.push_back({static_cast<std::int32_t>(words.size())});
          words.push_back({text.substr(i, j - i), block, pending_space});
          pending_space = false;
          i = j;
        }
      }
      continue;
    }
    // Leaving the element.
    if (f.emit) {
      tokens.push_back({-1});
      if (is_block(el.tag)) {
        ++block;
        pending_space = true;
      }
    }
    stack.pop_back();
  }
}

// An upper bound of the element nesting depth, from tags alone: Gumbo's tree building is
// quadratic in depth, so hostile pages nested tens of thousands deep are refused before parsing.
// Void elements and elements whose end tag may be omitted do not count.
std::size_t nesting_bound(std::string_view html) {
  static constexpr std::string_view kNotNesting[] = {
      "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
      "source", "track", "wbr", "p", "li", "dt", "dd", "option", "tr", "td", "th", "!"};
  std::size_t depth = 0, max_depth = 0;
  for (std::size_t i = html.find('<'); i != std::string_view::npos; i = html.find('<', i + 1)) {
    const bool closing = i + 1 < html.size() && html[i + 1] == '/';
    std::size_t start = i + 1 + (closing ? 1 : 0), end = start;
    while (end < html.size() && end - start < 10 &&
           ((html[end] >= 'a' && html[end] <= 'z') || (html[end] >= 'A' && html[end] <= 'Z') ||
            (html[end] >= '0' && html[end] <= '9'))) {
      ++end;
    }
    if (end == start) continue;
    const std::string name = ascii_lower(html.substr(start, end - start));
    if (std::find(std::begin(kNotNesting), std::end(kNotNesting), name) != std::end(kNotNesting)) {
      continue;
    }
    if (closing) {
      depth = depth > 0 ? depth - 1 : 0;
    } else {
      max_depth = std::max(max_depth, ++depth);
    }
  }
  return max_depth;
}

// Kadane's maximum-sum contiguous run; returns [begin, end) of the best run.
std::pair<std::size_t, std::size_t> max_subarray(const std::vector<double>& scores) {
  double best = 0, current = 0;
  std::size_t best_begin = 0, best_end = 0, begin = 0;
  for (std::size_t i = 0; i < scores.size(); ++i) {
    if (current <= 0) {
      current = 0;
      begin = i;
    }
    current += scores[i];
    if (current > best) {
      best = current;
      best_begin = begin;
      best_end = i + 1;
    }
  }
  return {best_begin, best_end};
}

std::string render(const std::vector<Word>& words, const std::vector<Token>& tokens,
                   std::size_t begin, std::size_t end) {
  std::string out;
  std::uint32_t block = 0;
  bool first = true;
  for (std::size_t t = begin; t < end; ++t) {
    if (tokens[t].word < 0) continue;
    const Word& w = words[static_cast<std::size_t>(tokens[t].word)];
    if (!first) {
      if (w.block != block) {
        out += "\n\n";
      } else if (w.space_before) {
        out += ' ';
      }
    }
    out.append(w.text);
    block = w.block;
    first = false;
  }
  return out;
}

}  // namespace

bool parse_extract_method(std::string_view name, ExtractMethod& out) {
  if (name == "finn") {
    out = ExtractMethod::kFinn;
    return true;
  }
  return false;
}

tl::expected<Article, ExtractError> extract_html(std::string_view html, std::string_view url,
                                                 const ExtractOptions& options) {
  if (html.size() > options.max_html_bytes) {
    return tl::unexpected(ExtractError{ExtractReason::kTooLarge,
                                       "document has " + std::to_string(html.size()) +
                                           " bytes, limit " +
                                           std::to_string(options.max_html_bytes)});
  }
  if (collapse_whitespace(html.substr(0, 4096)).empty() && collapse_whitespace(html).empty()) {
    return tl::unexpected(ExtractError{ExtractReason::kEmpty, "document is empty"});
  }
  if (looks_binary(html)) {
    return tl::unexpected(
        ExtractError{ExtractReason::kBinary, "document holds NUL bytes or control characters"});
  }
  if (!is_valid_utf8(html)) {
    return tl::unexpected(ExtractError{ExtractReason::kInvalidUtf8, "document is not UTF-8"});
  }
  if (const std::size_t depth = nesting_bound(html); depth > options.max_nesting_depth) {
    return tl::unexpected(ExtractError{
        ExtractReason::kParse, "elements nested " + std::to_string(depth) + " deep, limit " +
                                   std::to_string(options.max_nesting_depth)});
  }
  std::unique_ptr<GumboOutput, void (*)(GumboOutput*)> parsed(
      gumbo_parse_with_options(&kGumboDefaultOptions, html.data(), html.size()),
      [](GumboOutput* o) { gumbo_destroy_output(&kGumboDefaultOptions, o); });
  if (!parsed || !parsed->root) {
    return tl::unexpected(ExtractError{ExtractReason::kParse, "HTML parser returned no tree"});
  }
  std::vector<Word> words;
  std::vector<Token> tokens;
  RawMetadata raw;
  walk(parsed->root, words, tokens, raw);

  std::vector<double> scores(tokens.size());
  for (std::size_t i = 0; i < tokens.size(); ++i) scores[i] = tokens[i].word >= 0 ? 1.0 : -1.0;
  const auto [begin, end] = max_subarray(scores);

  Article article;
  article.url = std::string(url);
  article.text = render(words, tokens, begin, end);
  if (article.text.size() < options.min_text_chars) {
    return tl::unexpected(ExtractError{
        ExtractReason::kNoText, "no main text found among " + std::to_string(words.size()) +
                                    " visible words"});
  }
  PageMetadata meta = resolve_metadata(raw, url);
  article.title = std::move(meta.title);
  article.canonical_url = std::move(meta.canonical_url);
  article.source = std::move(meta.source);
  article.lang = std::move(meta.lang);
  article.published_at = meta.published_at;
  return article;
}

std::string_view reason_name(ExtractReason r) {
  switch (r) {
    case ExtractReason::kEmpty: return "empty_document";
    case ExtractReason::kTooLarge: return "too_large";
    case ExtractReason::kBinary: return "binary_content";
    case ExtractReason::kInvalidUtf8: return "invalid_utf8";
    case ExtractReason::kCharset: return "charset_error";
    case ExtractReason::kParse: return "parse_error";
    case ExtractReason::kNoText: return "no_text";
  }
  return "unknown";
}

}  // namespace newsflow::extractors
