#include "extractors/feed.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <deque>
#include <nlohmann/json.hpp>
#include <pugixml.hpp>
#include <tuple>
#include <unordered_map>

#include "extractors/internal/json_feed.h"
#include "extractors/page.h"
#include "extractors/text.h"
#include "extractors/urls.h"

namespace newsflow::extractors {
namespace {

std::string trim(std::string_view s) { return collapse_whitespace(s); }

// Local name of an element: "content:encoded" -> "encoded" with prefix "content".
std::string_view local_name(const pugi::xml_node& n) {
  std::string_view name = n.name();
  const auto colon = name.find(':');
  return colon == std::string_view::npos ? name : name.substr(colon + 1);
}
std::string_view prefix(const pugi::xml_node& n) {
  std::string_view name = n.name();
  const auto colon = name.find(':');
  return colon == std::string_view::npos ? std::string_view() : name.substr(0, colon);
}

// The first child with this local name (and prefix when given).
pugi::xml_node child(const pugi::xml_node& n, std::string_view local, std::string_view pfx = "*") {
  for (pugi::xml_node c = n.first_child(); c; c = c.next_sibling()) {
    if (c.type() != pugi::node_element || local_name(c) != local) continue;
    if (pfx == "*" || prefix(c) == pfx) return c;
  }
  return {};
}

// Text content of an element: text and CDATA children, and for Atom type="xhtml" the markup.
std::string node_text(const pugi::xml_node& n) {
  std::string out;
  for (pugi::xml_node c = n.first_child(); c; c = c.next_sibling()) {
    if (c.type() == pugi::node_pcdata || c.type() == pugi::node_cdata) out += c.value();
  }
  return out;
}

struct XmlWriter : pugi::xml_writer {
  std::string out;
  void write(const void* data, size_t size) override {
    out.append(static_cast<const char*>(data), size);
  }
};

std::string inner_xml(const pugi::xml_node& n) {
  XmlWriter w;
  for (pugi::xml_node c = n.first_child(); c; c = c.next_sibling()) {
    c.print(w, "", pugi::format_raw);
  }
  return w.out;
}

std::string strip(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

bool has_element_child(const pugi::xml_node& n) {
  for (pugi::xml_node c = n.first_child(); c; c = c.next_sibling()) {
    if (c.type() == pugi::node_element) return true;
  }
  return false;
}

// All text under an element, in document order (markup that should have been escaped).
std::string descendant_text(const pugi::xml_node& n) {
  std::string out;
  for (pugi::xml_node c = n.first_child(); c; c = c.next_sibling()) {
    if (c.type() == pugi::node_pcdata || c.type() == pugi::node_cdata) {
      out += c.value();
    } else if (c.type() == pugi::node_element) {
      out += descendant_text(c);
    }
  }
  return out;
}

// An RSS HTML field: escaped or CDATA HTML as given; raw markup (unescaped HTML elements
// inside the field, which strict RSS forbids but feeds do) kept as markup.
std::string rss_html(const pugi::xml_node& n) {
  if (!n) return {};
  return has_element_child(n) ? inner_xml(n) : node_text(n);
}

// Atom text constructs: type text | html | xhtml | a MIME type (base64 when not text).
std::string atom_html(const pugi::xml_node& n) {
  if (!n) return {};
  const std::string type = ascii_lower(n.attribute("type").value());
  const std::string mode = ascii_lower(n.attribute("mode").value());
  if (type == "xhtml" || type == "application/xhtml+xml") return inner_xml(n);
  if (mode == "xml") return inner_xml(n);
  // Escaped HTML wrapped in an element anyway (a TypePad habit): the text is the HTML.
  const std::string text = has_element_child(n) ? descendant_text(n) : node_text(n);
  if (mode == "base64" ||
      (!type.empty() && type != "text" && type != "html" && type != "text/html" &&
       type != "text/plain" && type.find("xml") == std::string::npos)) {
    if (auto decoded = base64_decode(text)) return *decoded;
  }
  return text;
}

// Each element's xml:base (the innermost wins; relative bases resolve against the outer ones),
// resolved once per element and kept: asked afresh for every entry, the root's attributes were
// read once per entry, and a root of 100,000 attributes over 100,000 entries took minutes.
class XmlBases {
 public:
  explicit XmlBases(std::string_view feed_url) : feed_url_(feed_url) {}

  const std::string& of(pugi::xml_node n) {
    // The chain up to the first element already resolved, walked without recursion.
    std::vector<pugi::xml_node> chain;
    const std::string* base = &feed_url_;
    for (; n; n = n.parent()) {
      if (const auto it = resolved_.find(n.internal_object()); it != resolved_.end()) {
        base = it->second;
        break;
      }
      chain.push_back(n);
    }
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      if (const pugi::xml_attribute a = it->attribute("xml:base")) {
        base = &owned_.emplace_back(resolve_url(*base, a.value()));
      }
      resolved_.emplace(it->internal_object(), base);
    }
    return *base;
  }

 private:
  std::string feed_url_;
  std::deque<std::string> owned_;  // the bases elements declare, resolved
  std::unordered_map<const void*, const std::string*> resolved_;
};

std::optional<UnixSeconds> date_of(const pugi::xml_node& n) {
  if (!n) return std::nullopt;
  return parse_date(node_text(n));
}

FeedItem read_item(const pugi::xml_node& item, bool atom, XmlBases& bases) {
  FeedItem it;
  const std::string base = bases.of(item);
  if (atom) {
    it.id = trim(node_text(child(item, "id")));
    it.title = html_fragment_text(atom_html(child(item, "title")));
    for (pugi::xml_node l = item.first_child(); l; l = l.next_sibling()) {
      if (local_name(l) != "link") continue;
      const std::string rel = l.attribute("rel").value();
      const std::string_view href = l.attribute("href").value();
      if ((rel.empty() || rel == "alternate") && !href.empty() && it.link.empty()) {
        it.link = resolve_url(bases.of(l), href);
        continue;
      }
      if (rel == "enclosure") {
        it.enclosures.push_back(
            {resolve_url(base, l.attribute("href").value()), l.attribute("type").value()});
      }
    }
    it.author = trim(node_text(child(child(item, "author"), "name")));
    const std::string email = trim(node_text(child(child(item, "author"), "email")));
    if (!email.empty()) it.author = it.author.empty() ? email : it.author + " (" + email + ")";
    it.summary_html = atom_html(child(item, "summary"));
    it.content_html = atom_html(child(item, "content"));
    it.published = date_of(child(item, "published"));
    if (!it.published) it.published = date_of(child(item, "issued"));
    it.updated = date_of(child(item, "updated"));
    if (!it.updated) it.updated = date_of(child(item, "modified"));
    for (pugi::xml_node c = item.first_child(); c; c = c.next_sibling()) {
      if (local_name(c) == "category" && c.attribute("term"))
        it.categories.push_back(c.attribute("term").value());
    }
  } else {
    it.id = trim(node_text(child(item, "guid")));
    it.title = html_fragment_text(node_text(child(item, "title")));
    std::string link = trim(node_text(child(item, "link", "")));
    if (link.empty()) link = trim(item.attribute("rdf:about").value());
    if (link.empty() &&
        ascii_lower(child(item, "guid").attribute("isPermaLink").value()) != "false") {
      link = it.id;
    }
    if (!link.empty()) it.link = resolve_url(base, link);
    it.author = trim(node_text(child(item, "author")));
    if (it.author.empty()) it.author = trim(node_text(child(item, "creator")));
    it.summary_html = rss_html(child(item, "description"));
    if (it.summary_html.empty()) it.summary_html = rss_html(child(item, "summary", "itunes"));
    it.content_html = rss_html(child(item, "encoded"));
    // Other full-content carriers: <xhtml:body> and <fullitem>.
    if (it.content_html.empty()) {
      const pugi::xml_node body = child(item, "body");
      if (body && (prefix(body) != "" || std::string_view(body.attribute("xmlns").value()) ==
                                             "http://www.w3.org/1999/xhtml")) {
        it.content_html = strip(inner_xml(body));
      }
    }
    if (it.content_html.empty()) it.content_html = node_text(child(item, "fullitem"));
    it.published = date_of(child(item, "pubDate"));
    if (!it.published) it.published = date_of(child(item, "date"));
    if (!it.published) it.published = date_of(child(item, "issued"));
    if (!it.published) it.published = date_of(child(item, "created"));
    it.updated = date_of(child(item, "modified"));
    if (!it.updated) it.updated = date_of(child(item, "updated"));
    for (pugi::xml_node c = item.first_child(); c; c = c.next_sibling()) {
      if (local_name(c) == "category") it.categories.push_back(trim(node_text(c)));
      if (local_name(c) == "subject") it.categories.push_back(trim(node_text(c)));
      if (local_name(c) == "enclosure" || (prefix(c) == "media" && local_name(c) == "content")) {
        if (c.attribute("url")) {
          it.enclosures.push_back(
              {resolve_url(base, c.attribute("url").value()), c.attribute("type").value()});
        }
      }
    }
  }
  return it;
}

// A CDF channel: TITLE and ABSTRACT children, HREF and LASTMOD attributes; items are ITEM
// elements, also inside nested channels (walked with a work list: nesting is the document's
// to choose, the stack is not). The first channels with a title and a link name the feed.
void read_cdf_channel(const pugi::xml_node& root, XmlBases& bases, Feed& feed) {
  const auto text_of = [](const pugi::xml_node& n, std::string_view name) {
    for (pugi::xml_node c = n.first_child(); c; c = c.next_sibling()) {
      if (local_name(c) == name) return node_text(c);
    }
    return std::string();
  };
  std::vector<pugi::xml_node> channels{root};
  for (std::size_t next = 0; next < channels.size(); ++next) {
    const pugi::xml_node channel = channels[next];
    if (feed.title.empty()) feed.title = html_fragment_text(text_of(channel, "TITLE"));
    if (feed.link.empty() && channel.attribute("HREF")) {
      feed.link = resolve_url(bases.of(channel), channel.attribute("HREF").value());
    }
    for (pugi::xml_node c = channel.first_child(); c; c = c.next_sibling()) {
      if (local_name(c) == "CHANNEL") {
        channels.push_back(c);
        continue;
      }
      if (local_name(c) != "ITEM") continue;
      FeedItem it;
      if (const char* href = c.attribute("HREF").value(); *href) {
        it.link = resolve_url(bases.of(c), href);
      }
      it.id = it.link;
      it.title = html_fragment_text(text_of(c, "TITLE"));
      it.summary_html = text_of(c, "ABSTRACT");
      if (const char* lastmod = c.attribute("LASTMOD").value(); *lastmod) {
        it.updated = parse_date(lastmod);
      }
      feed.items.push_back(std::move(it));
    }
  }
}

constexpr std::size_t kMaxFeedDepth = 1000;

// The depth of the deepest node under `root`, walked without recursion.
std::size_t tree_depth(const pugi::xml_node& root) {
  std::size_t depth = 0, max_depth = 0;
  pugi::xml_node n = root.first_child();
  if (n) depth = 1;
  while (n) {
    max_depth = std::max(max_depth, depth);
    if (const pugi::xml_node c = n.first_child()) {
      n = c;
      ++depth;
      continue;
    }
    while (n != root && !n.next_sibling()) {
      n = n.parent();
      --depth;
    }
    if (n == root) break;
    n = n.next_sibling();
  }
  return max_depth;
}

// A language tag as BCP 47 writes it: "en_US" -> "en-US".
std::string language_tag(std::string_view s) {
  std::string out(s);
  std::replace(out.begin(), out.end(), '_', '-');
  return out;
}

// Items of a parsed document, whatever its dialect.
bool read_document(const pugi::xml_document& doc, std::string_view feed_url, Feed& feed) {
  const pugi::xml_node root = doc.document_element();
  if (!root) return false;
  const std::string_view root_name = local_name(root);
  XmlBases bases(feed_url);
  if (root_name == "feed") {  // Atom
    feed.title = html_fragment_text(atom_html(child(root, "title")));
    for (pugi::xml_node l = root.first_child(); l; l = l.next_sibling()) {
      if (local_name(l) == "link" &&
          (std::string_view(l.attribute("rel").value()).empty() ||
           std::string_view(l.attribute("rel").value()) == "alternate")) {
        feed.link = resolve_url(bases.of(l), l.attribute("href").value());
        break;
      }
    }
    feed.language = language_tag(root.attribute("xml:lang").value());
    for (pugi::xml_node e = root.first_child(); e; e = e.next_sibling()) {
      if (local_name(e) == "entry") feed.items.push_back(read_item(e, true, bases));
    }
    return true;
  }
  if (root_name == "rss" || root_name == "RDF" || root_name == "channel") {
    const pugi::xml_node channel = root_name == "channel" ? root : child(root, "channel");
    feed.title = html_fragment_text(node_text(child(channel, "title")));
    const std::string link = trim(node_text(child(channel, "link", "")));
    if (!link.empty()) feed.link = resolve_url(feed_url, link);
    feed.language = language_tag(trim(node_text(child(channel, "language"))));
    if (feed.language.empty()) feed.language = language_tag(root.attribute("xml:lang").value());
    // RSS 2.0 items live in the channel, RSS 1.0 items beside it.
    for (const pugi::xml_node parent : {channel, root}) {
      if (!parent) continue;
      for (pugi::xml_node e = parent.first_child(); e; e = e.next_sibling()) {
        if (local_name(e) == "item") feed.items.push_back(read_item(e, false, bases));
      }
      if (root_name == "channel") break;
    }
    return true;
  }
  if (root_name == "CHANNEL") {  // Microsoft CDF (1997): upper-case elements, links in HREF
    read_cdf_channel(root, bases, feed);
    return true;
  }
  return false;
}

}  // namespace

std::string html_fragment_text(std::string_view html) {
  if (html.find('<') == std::string_view::npos && html.find('&') == std::string_view::npos) {
    // Plain text: fold ASCII whitespace only; a no-break space is content here.
    std::string out;
    bool space = false;
    for (const char c : html) {
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
        space = !out.empty();
        continue;
      }
      if (space) out += ' ';
      space = false;
      out += c;
    }
    return out;
  }
  auto page = parse_page(html, {});
  if (!page) return collapse_whitespace(html);
  std::vector<std::uint32_t> all(page->blocks.size());
  for (std::uint32_t i = 0; i < all.size(); ++i) all[i] = i;
  return render_blocks(*page, all);
}

tl::expected<Feed, ExtractError> parse_feed(std::string_view xml, std::string_view feed_url) {
  if (collapse_whitespace(xml.substr(0, 4096)).empty() && collapse_whitespace(xml).empty()) {
    return tl::unexpected(ExtractError{ExtractReason::kEmpty, "feed is empty"});
  }
  if (looks_binary(xml)) {
    return tl::unexpected(
        ExtractError{ExtractReason::kBinary,
                     "binary data bytes in the first 1,445 bytes (WHATWG MIME sniffing)"});
  }
  // A stray NUL or control character further on is not XML but is no reason to lose the feed:
  // replaced as for pages (NUL by U+FFFD, the others by a space).
  std::string cleaned;
  if (has_controls(xml)) {
    cleaned = replace_controls(xml);
    xml = cleaned;
  }
  if (!is_valid_utf8(xml)) {
    return tl::unexpected(ExtractError{ExtractReason::kInvalidUtf8, "feed is not UTF-8"});
  }
  const std::size_t first = xml.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && xml[first] == '{')
    return internal::parse_json_feed(xml, feed_url);
  const std::string text = xml_escape_html_entities(xml);
  Feed feed;
  pugi::xml_document doc;
  // No DOCTYPE processing: pugixml never expands external or recursive entities.
  const unsigned options = pugi::parse_default & ~pugi::parse_eol;
  const pugi::xml_parse_result result =
      doc.load_buffer(text.data(), text.size(), options, pugi::encoding_utf8);
  // Text constructs are read recursively (and real feeds nest a few dozen levels at most): a
  // hostile document nested deeper is refused before anything walks it.
  if (const std::size_t depth = tree_depth(doc); depth > kMaxFeedDepth) {
    return tl::unexpected(
        ExtractError{ExtractReason::kParse, "elements nested " + std::to_string(depth) +
                                                " deep, limit " + std::to_string(kMaxFeedDepth)});
  }
  if (result && read_document(doc, feed_url, feed)) return feed;
  // pugixml keeps the tree it built before an error: a truncated feed still has its head and
  // its complete items.
  const bool partial = !result && read_document(doc, feed_url, feed);
  const std::string partial_warning = std::string("ill-formed XML (") + result.description() +
                                      " at offset " + std::to_string(result.offset) + "): read " +
                                      std::to_string(feed.items.size()) + " items before it";
  if (partial && !feed.items.empty()) {
    feed.warnings.push_back(partial_warning);
    return feed;
  }
  // A feed head without items: the items may still be readable one by one below.
  Feed head = partial ? std::move(feed) : Feed{};
  feed = Feed{};

  // Lenient path: parse each item or entry on its own and keep those that are well-formed.
  const std::string reason =
      result ? "root element is not rss, RDF or feed" : std::string(result.description());
  std::size_t found = 0;
  for (const auto& [open, close, atom] :
       {std::tuple{"<item", "</item>", false}, std::tuple{"<entry", "</entry>", true}}) {
    std::size_t pos = 0;
    while ((pos = text.find(open, pos)) != std::string::npos) {
      const char next =
          pos + std::strlen(open) < text.size() ? text[pos + std::strlen(open)] : '\0';
      if (next != '>' && next != ' ' && next != '\n' && next != '\t' && next != '\r') {
        pos += 1;
        continue;
      }
      const std::size_t end = text.find(close, pos);
      if (end == std::string::npos) break;
      ++found;
      pugi::xml_document one;
      if (one.load_buffer(text.data() + pos, end + std::strlen(close) - pos, options,
                          pugi::encoding_utf8) &&
          tree_depth(one) <= kMaxFeedDepth) {
        XmlBases bases(feed_url);
        feed.items.push_back(read_item(one.document_element(), atom, bases));
      }
      pos = end;
    }
  }
  if (feed.items.empty() && partial) {
    head.warnings.push_back(partial_warning);
    return head;
  }
  if (feed.items.empty()) {
    return tl::unexpected(ExtractError{
        ExtractReason::kParse,
        "not a readable feed: " + reason + " at offset " + std::to_string(result.offset)});
  }
  feed.warnings.push_back("ill-formed XML (" + reason + "): recovered " +
                          std::to_string(feed.items.size()) + " of " + std::to_string(found) +
                          " items");
  return feed;
}

}  // namespace newsflow::extractors
