#include "extractors/page.h"

#include <gumbo.h>

// A page from its bytes to its words and blocks: the checks that refuse it, the strip of what a
// browser never shows (strip.cc), Gumbo's parse into an arena, and the walk (page_walk.cc) that
// collects its words, blocks and metadata; the block features are block_features.cc's.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "extractors/internal/gumbo_arena.h"
#include "extractors/internal/page_walk.h"
#include "extractors/text.h"

namespace newsflow::extractors {

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
  tree.source = strip_invisible(html);
  tree.output = parse_into(tree);
  return tree.output && tree.output->root;
}

namespace {

// Why `html` is refused before it is parsed, if it is: too large, blank, binary, not UTF-8.
std::optional<ExtractError> refusal(std::string_view html, const ParseLimits& limits) {
  if (html.size() > limits.max_html_bytes) {
    return ExtractError{ExtractReason::kTooLarge, "document has " + std::to_string(html.size()) +
                                                      " bytes, limit " +
                                                      std::to_string(limits.max_html_bytes)};
  }
  if (is_blank(html)) return ExtractError{ExtractReason::kEmpty, "document is empty"};
  if (looks_binary(html)) {
    return ExtractError{ExtractReason::kBinary,
                        "binary data bytes in the first 1,445 bytes (WHATWG MIME sniffing)"};
  }
  if (!limits.known_utf8 && !is_valid_utf8(html)) {
    return ExtractError{ExtractReason::kInvalidUtf8, "document is not UTF-8"};
  }
  return std::nullopt;
}

}  // namespace

tl::expected<ParsedPage, ExtractError> parse_page(std::string_view html,
                                                  const ParseLimits& limits) {
  if (auto refused = refusal(html, limits)) return tl::unexpected(std::move(*refused));
  ParsedPage page;
  // A stray NUL or control character further on: replaced as a browser shows the page.
  std::string cleaned;
  if (has_controls(html)) {
    cleaned = replace_controls(html);
    html = cleaned;
    page.warnings.emplace_back("control_characters_replaced");
  }
  page.tree = std::make_unique<ParsedPage::Tree>();
  Nesting nesting;
  bool recovered = false;
  std::string script_date;
  page.tree->source = strip_invisible(html, &nesting, &recovered, &script_date);
  if (recovered) page.warnings.emplace_back("unterminated_element_closed");
  if (nesting.max_depth > limits.max_nesting_depth) {
    return tl::unexpected(ExtractError{
        ExtractReason::kParse, "elements nested " + std::to_string(nesting.max_depth) +
                                   " deep, limit " + std::to_string(limits.max_nesting_depth)});
  }
  if (nesting.elements > limits.max_elements) {
    return tl::unexpected(
        ExtractError{ExtractReason::kParse, std::to_string(nesting.elements) + " elements, limit " +
                                                std::to_string(limits.max_elements)});
  }
  // Gumbo's steps for a tag grow with the depth: a page of many tags deep down (stray end tags
  // under thousands of open elements) would take it minutes.
  if (nesting.work > limits.max_nesting_work) {
    return tl::unexpected(ExtractError{
        ExtractReason::kParse,
        "markup too deeply nested to parse in bounded time: " + std::to_string(nesting.work) +
            " element-depth steps, limit " + std::to_string(limits.max_nesting_work)});
  }
  page.tree->output = parse_into(*page.tree);
  if (!page.tree->output || !page.tree->output->root) {
    return tl::unexpected(ExtractError{ExtractReason::kParse, "HTML parser returned no tree"});
  }

  page.metadata.script_published = std::move(script_date);
  internal::walk_page(page.tree->output->root, page, limits.max_words);
  return page;
}

namespace {

// render_words appending to `out`: render_blocks builds the text without a copy of each block's.
void append_words(const ParsedPage& page, std::size_t first, std::size_t last, std::string& out) {
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
}

}  // namespace

std::string render_words(const ParsedPage& page, std::size_t first, std::size_t last) {
  std::string out;
  append_words(page, first, last, out);
  return out;
}

std::string render_blocks(const ParsedPage& page, const std::vector<std::uint32_t>& blocks) {
  std::string out;
  for (const std::uint32_t b : blocks) {
    if (!out.empty()) out += "\n\n";
    const Block& block = page.blocks[b];
    append_words(page, block.first_word, block.end_word, out);
  }
  return out;
}

}  // namespace newsflow::extractors
