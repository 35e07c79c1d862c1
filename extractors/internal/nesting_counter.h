#pragma once

// How deep Gumbo's tree builder will nest a page's elements, and how much work that is, counted
// from the tags alone while strip_invisible copies the page (strip.cc).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace newsflow::extractors::internal {

// The elements open as Gumbo's tree builder has them, followed closely enough to bound its work:
// counted while the invisible content is stripped (so a '<' inside a script is no element), and
// parse_page refuses a page by its depth or by its work. An end tag closes only an element it
// really reaches (one that closes nothing, as "</x>" after "<i>", closes nothing; an end tag of
// an ordinary element stops at a block, as "</span>" in "<span><div></span>"); a formatting
// element closed by another's end tag stays counted until its own end tag, since the parser opens
// it again where text follows (at most three alike, as the parser keeps them); elements that
// close themselves or cannot nest (void elements, p, li, dt, dd, option, tr, td, th; html, head
// and body, which the parser opens itself) are not counted. The count errs high, not low.
// The work is the depth summed over the tags: the parser's steps for one tag (finding what an
// end tag closes, the scope checks, reopening formatting elements) are bounded by the depth.
class NestingCounter {
 public:
  // The tag whose name starts at html[name_start] (after "<" or "</"). `start_tag`: the start
  // tag as it is kept (its attributes tell formatting elements apart), or empty.
  void tag(std::string_view html, std::size_t name_start, bool closing,
           std::string_view start_tag = {}) {
    std::size_t end = name_start;
    while (end < html.size() && end - name_start < kMaxName && !is_name_end(html[end])) ++end;
    if (end == name_start) return;
    char lower[kMaxName];
    std::size_t n = 0;
    for (std::size_t k = name_start; k < end; ++k, ++n) {
      const char c = html[k];
      lower[n] = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    }
    const std::string_view name = canonical(std::string_view(lower, n));
    work_ += depth() + 1;
    if (!closing) ++elements_;
    const std::uint8_t kind = kind_of(name);
    if (kind & kNotCounted) return;
    if (closing) {
      close(name, kind);
    } else {
      open(name, kind, start_tag);
    }
  }
  std::size_t max_depth() const { return max_depth_; }
  std::uint64_t work() const { return work_; }
  std::size_t elements() const { return elements_; }

 private:
  static constexpr std::size_t kMaxName = 64;
  // Past this many open elements the page is refused anyway: the count stops using memory.
  static constexpr std::size_t kMaxTracked = 1 << 16;

  struct Open {
    std::uint64_t name;
    std::uint64_t formatting;  // a formatting element's start tag, hashed; else 0
    bool special;
  };

  static bool is_name_end(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '/' || c == '>';
  }
  // What the lists below say of a name, as bits.
  enum Kind : std::uint8_t {
    kNotCounted = 1,
    kFormatting = 2,
    kSpecial = 4,  // the parser's special elements: an end tag of an ordinary element does not
                   // close through them
    kScopeBoundary = 8,  // where the end tag of a block stops looking ("has an element in scope")
  };
  // The kinds of a (lowercase, canonical) name: every tag of the page asks, so the lists are
  // looked up once, in a table by first letter, not scanned one by one.
  static std::uint8_t kind_of(std::string_view name) {
    struct Entry {
      std::string_view name;
      std::uint8_t kind;
    };
    static const auto kByLetter = [] {
      std::array<std::vector<Entry>, 26> table;
      const auto add = [&](std::span<const std::string_view> names, std::uint8_t kind) {
        for (const std::string_view n : names) {
          auto& list = table[static_cast<std::size_t>(n[0] - 'a')];
          const auto it =
              std::find_if(list.begin(), list.end(), [&](const Entry& e) { return e.name == n; });
          if (it == list.end()) {
            list.push_back({n, kind});
          } else {
            it->kind |= kind;
          }
        }
      };
      add(kNotCountedNames, kNotCounted);
      add(kFormattingNames, kFormatting);
      add(kSpecialNames, kSpecial);
      add(kScopeBoundaryNames, kScopeBoundary);
      return table;
    }();
    if (name.empty() || name[0] < 'a' || name[0] > 'z') return 0;
    for (const Entry& e : kByLetter[static_cast<std::size_t>(name[0] - 'a')]) {
      if (e.name == name) return e.kind;
    }
    return 0;
  }
  static constexpr std::string_view kNotCountedNames[] = {
      "area",  "base",   "br",     "col", "embed",  "hr",       "img",     "input", "link", "meta",
      "param", "source", "track",  "wbr", "keygen", "basefont", "bgsound", "frame", "p",    "li",
      "dt",    "dd",     "option", "tr",  "td",     "th",       "html",    "head",  "body"};
  static constexpr std::string_view kFormattingNames[] = {
      "a",    "b", "big",   "code",   "em",     "font", "i",
      "nobr", "s", "small", "strike", "strong", "tt",   "u"};
  static constexpr std::string_view kSpecialNames[] = {
      "address",    "applet",   "article", "aside",   "blockquote", "button", "caption",
      "center",     "colgroup", "details", "dir",     "div",        "dl",     "fieldset",
      "figcaption", "figure",   "footer",  "form",    "h*",         "header", "hgroup",
      "iframe",     "listing",  "main",    "marquee", "menu",       "nav",    "noembed",
      "noframes",   "noscript", "object",  "ol",      "plaintext",  "pre",    "script",
      "search",     "section",  "select",  "style",   "summary",    "table",  "tbody",
      "template",   "textarea", "tfoot",   "thead",   "title",      "ul",     "xmp"};
  static constexpr std::string_view kScopeBoundaryNames[] = {"applet", "caption", "marquee",
                                                             "object", "table",   "template"};
  static std::uint64_t hash(std::string_view s) {
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a
    for (const char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    return h;
  }
  // h1 to h6 are one name: the end tag of any heading closes the open one.
  static std::string_view canonical(std::string_view name) {
    const bool heading = name.size() == 2 && name[0] == 'h' && name[1] >= '1' && name[1] <= '6';
    return heading ? std::string_view("h*") : name;
  }

  std::size_t depth() const { return open_.size() + reopened_; }

  // The topmost open element named `name` that its end tag reaches, if any.
  std::optional<std::size_t> reachable(std::uint64_t name, bool special) const {
    const auto it = positions_.find(name);
    if (it == positions_.end() || it->second.empty()) return std::nullopt;
    const std::size_t at = it->second.back();
    const auto& stops = special ? boundaries_ : specials_;
    if (!stops.empty() && stops.back() > at) return std::nullopt;
    return at;
  }

  // Closes the elements from the top down to `at`, that one included.
  void pop_to(std::size_t at) {
    while (open_.size() > at) {
      const Open o = open_.back();
      open_.pop_back();
      positions_[o.name].pop_back();
      if (o.special) specials_.pop_back();
      if (!boundaries_.empty() && boundaries_.back() == open_.size()) boundaries_.pop_back();
      if (open_.size() > at && o.formatting != 0 && reopened_by_tag_[o.formatting] < 3) {
        ++reopened_by_tag_[o.formatting];
        reopened_by_name_[o.name].push_back(o.formatting);
        ++reopened_;
      }
    }
  }

  void open(std::string_view name, std::uint8_t kind, std::string_view start_tag) {
    const std::uint64_t h = hash(name);
    const bool special = kind & kSpecial;
    // Start tags that close an open element of their kind first: a heading right in a heading,
    // a link in a link, a nobr in a nobr, a button in a button.
    if (name == "h*") {
      if (!open_.empty() && open_.back().name == h) pop_to(open_.size() - 1);
    } else if (name == "a" || name == "nobr" || name == "button") {
      if (const auto at = reachable(h, special)) pop_to(*at);
    }
    if (open_.size() >= kMaxTracked) {
      max_depth_ = std::max(max_depth_, depth() + 1);
      return;
    }
    const std::uint64_t formatting =
        kind & kFormatting ? hash(start_tag.empty() ? name : start_tag) | 1 : 0;
    positions_[h].push_back(open_.size());
    if (special) specials_.push_back(open_.size());
    if (kind & kScopeBoundary) boundaries_.push_back(open_.size());
    open_.push_back({h, formatting, special});
    max_depth_ = std::max(max_depth_, depth());
  }

  void close(std::string_view name, std::uint8_t kind) {
    const std::uint64_t h = hash(name);
    if (const auto at = reachable(h, kind & kSpecial)) {
      pop_to(*at);
      return;
    }
    // Not open: a formatting element the parser would have opened again is forgotten.
    const auto r = reopened_by_name_.find(h);
    if (r == reopened_by_name_.end() || r->second.empty()) return;
    --reopened_by_tag_[r->second.back()];
    r->second.pop_back();
    --reopened_;
  }

  std::vector<Open> open_;
  std::unordered_map<std::uint64_t, std::vector<std::size_t>> positions_;
  std::vector<std::size_t> specials_, boundaries_;
  std::unordered_map<std::uint64_t, int> reopened_by_tag_;
  std::unordered_map<std::uint64_t, std::vector<std::uint64_t>> reopened_by_name_;
  std::size_t reopened_ = 0;
  std::size_t max_depth_ = 0;
  std::uint64_t work_ = 0;
  std::size_t elements_ = 0;
};

}  // namespace newsflow::extractors::internal
