#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "extractors/internal/nesting_counter.h"
#include "extractors/page.h"
#include "extractors/text.h"

// What the parser never sees: scripts, styles and other invisible content stripped from a page
// before Gumbo parses it, with the attributes nothing reads, and the nesting counted as it goes.

namespace newsflow::extractors {

namespace {

using internal::NestingCounter;

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

bool is_tag_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

// The attributes anything downstream of the parse reads; the others (data-*, src, srcset, alt,
// title, onclick, ... a fifth of a typical page's bytes once scripts are gone) are dropped.
// They are: class, id, style, hidden, aria-hidden, itemprop, rel, href, lang, content, name,
// property, http-equiv, type, datetime, charset; told apart by first letter, as every attribute
// of the page asks.
bool is_read_attribute(std::string_view n) {
  if (n.empty()) return false;
  switch (n[0]) {
    case 'a':
      return n == "aria-hidden";
    case 'c':
      return n == "class" || n == "content" || n == "charset";
    case 'd':
      return n == "datetime";
    case 'h':
      return n == "href" || n == "hidden" || n == "http-equiv";
    case 'i':
      return n == "id" || n == "itemprop";
    case 'l':
      return n == "lang";
    case 'n':
      return n == "name";
    case 'p':
      return n == "property";
    case 'r':
      return n == "rel";
    case 's':
      return n == "style";
    case 't':
      return n == "type";
    default:
      return false;
  }
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
  // The name lowercased; one longer than any name asked about below is none of them.
  char tag_buf[8];
  const std::size_t tag_size = i - lt - 1;
  std::string_view tag;
  if (tag_size <= sizeof tag_buf) {
    for (std::size_t k = 0; k < tag_size; ++k) {
      const char c = html[lt + 1 + k];
      tag_buf[k] = c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c;
    }
    tag = std::string_view(tag_buf, tag_size);
  }
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

std::string strip_invisible(std::string_view html, Nesting* nesting_out, bool* recovered,
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
    // Every element handled by name below begins with one of these letters: most tags are
    // none of them, and are not compared with each.
    const char first = lt + 1 < html.size() ? static_cast<char>(html[lt + 1] | 0x20) : '\0';
    const bool named_here =
        first == 's' || first == 'n' || first == 't' || first == 'x' || first == 'i';
    std::string_view closer;
    for (const std::string_view tag :
         named_here ? std::span(kDroppedElements) : std::span<const std::string_view>()) {
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
      for (const std::string_view raw :
           named_here ? std::span(kTextElements) : std::span<const std::string_view>()) {
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
      for (const std::string_view raw :
           named_here ? std::span(kRawTextElements) : std::span<const std::string_view>()) {
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
        const std::size_t kept_from = out.size();
        if (const std::size_t after = copy_start_tag(html, lt, out);
            after != std::string_view::npos) {
          nesting.tag(html, lt + 1, false, std::string_view(out).substr(kept_from));
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
  if (nesting_out) *nesting_out = {nesting.max_depth(), nesting.work(), nesting.elements()};
  return out;
}

}  // namespace newsflow::extractors
