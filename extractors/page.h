#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "extractors/error.h"
#include "extractors/metadata.h"
#include "tl/expected.hpp"

struct GumboInternalOutput;

namespace newsflow::extractors {

/// A word of visible text. `text` points into the `ParsedPage` that holds it.
struct Word {
  std::string_view text;
  std::uint32_t block;  ///< index into ParsedPage::blocks
  bool space_before;    ///< whitespace separated it from the previous word
  bool in_link;         ///< inside an <a href>
};

/// A block-level box of visible text (a paragraph, list item, table cell, heading, ...): the
/// unit MSS scores. Its words are `words[first_word, end_word)`.
struct Block {
  std::uint32_t first_word = 0;
  std::uint32_t end_word = 0;
  std::uint32_t link_words = 0;
  std::uint32_t word_count() const { return end_word - first_word; }
  /// Page-unique ids of the elements 1, 2 and 3 levels above the block's own block-level
  /// element (UINT32_MAX above the root): paragraphs of one article share them.
  std::uint32_t containers[3] = {UINT32_MAX, UINT32_MAX, UINT32_MAX};
  /// Inside an element whose class or id names comments (readers' comments, not the article).
  bool in_comments = false;
  std::vector<std::uint64_t> features;  ///< hashed features, filled by `compute_features`
};

/// A parsed page: its words in document order grouped into blocks, the flat tag/word token
/// sequence (for Finn's method) and the raw metadata. Owns the parse tree the words point into.
struct ParsedPage {
  ParsedPage();
  ParsedPage(ParsedPage&&) noexcept;
  ParsedPage& operator=(ParsedPage&&) noexcept;
  ~ParsedPage();

  std::vector<Word> words;
  std::vector<Block> blocks;
  std::vector<std::int32_t> tokens;  ///< word index, or -1 for a tag
  RawMetadata metadata;
  /// What was repaired to read the page: "control_characters_replaced" (stray NULs and C0
  /// controls), "unterminated_element_closed" (a title or raw-text element never closed),
  /// "words_beyond_limit_not_read" (more words than `ParseLimits::max_words`).
  std::vector<std::string> warnings;

  struct Tree;
  std::unique_ptr<Tree> tree;
};

/// Limits of `parse_page`.
struct ParseLimits {
  std::size_t max_html_bytes = 8 * 1024 * 1024;
  std::size_t max_nesting_depth = 5000;
  /// The caller has established that the input is UTF-8 (it is `decode_to_utf8`'s output): it
  /// is then checked for binary content only.
  bool known_utf8 = false;
  /// The parser's work bound: the element depth summed over the page's tags (`Nesting::work`).
  /// Gumbo's steps for one tag are bounded by the depth, so this keeps its time linear in the
  /// page; ordinary pages stay far below it (docs/operations.md, "Bounds on input").
  std::uint64_t max_nesting_work = 50'000'000;
  /// The words after this many are not read (warning "words_beyond_limit_not_read"): a word
  /// costs some 40 bytes to hold and score, and 8 MB of one-letter words are four million.
  std::size_t max_words = 200000;
  /// More elements fail with kParse before parsing: an element costs about 1 KB to hold as a
  /// node and a block, whatever few bytes it takes in the page.
  std::size_t max_elements = 100000;
};

/// Parses UTF-8 HTML with Gumbo and walks it once (iteratively) into words, blocks, tokens and
/// metadata, computing each block's hashed features. Script, style, noscript, template, hidden
/// elements and comments contribute no words. Fails for empty, binary, non-UTF-8, oversized or
/// hostilely nested input.
tl::expected<ParsedPage, ExtractError> parse_page(std::string_view html, const ParseLimits& limits);

/// The parse alone, as `parse_page` does it (invisible content stripped, then Gumbo building the
/// tree in a per-page arena), without the walk: benchmarks report it beside the whole
/// extraction. False when Gumbo returned no tree.
bool parse_tree_only(std::string_view html);

/// Removes what never becomes visible text before the tree is built: comments, script (except
/// JSON-LD, which carries metadata), style, svg and noscript elements whole, the attributes the
/// walk does not read, and all but the first character of each whitespace run between tags
/// (outside titles, text areas and JSON-LD). These are most of a typical news page's bytes, and
/// Gumbo's time is proportional to its input.
/// `nesting`, when given, receives the deepest element nesting of what is kept, counted as the
/// parser opens and closes elements (an end tag that closes nothing closes nothing; void
/// elements and p, li, dt, dd, option, tr, td, th not counted), and the depth summed over the tags.
/// `recovered`, when given, is set when an element that must be closed (title, textarea,
/// script, style, noscript, svg, xmp, noembed, noframes, iframe) never is and was closed at the
/// next tag, as lenient parsers (libxml2, NekoHTML) do.
/// `script_date`, when given, receives the first publication date a dropped script holds as
/// data (`"datePublished": "..."`, `"publishedAt"`, ...; "" when none).
struct Nesting {
  std::size_t max_depth = 0;
  std::uint64_t work = 0;
  std::size_t elements = 0;  ///< start tags kept
};
std::string strip_invisible(std::string_view html, Nesting* nesting = nullptr,
                            bool* recovered = nullptr, std::string* script_date = nullptr);

/// The text of words [first, last) with paragraphs (blocks) separated by "\n\n".
std::string render_words(const ParsedPage& page, std::size_t first, std::size_t last);

/// The text of the given blocks (ascending indices), separated by "\n\n".
std::string render_blocks(const ParsedPage& page, const std::vector<std::uint32_t>& blocks);

}  // namespace newsflow::extractors
