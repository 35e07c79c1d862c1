#include "extractors/internal/page_nodes.h"

#include <cstring>
#include <string_view>
#include <vector>

namespace newsflow::extractors::internal {

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

std::string subtree_text(const GumboNode* node, bool lines) {
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

}  // namespace newsflow::extractors::internal
