#include "extractors/internal/page_walk.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "extractors/internal/block_features.h"
#include "extractors/internal/page_marks.h"
#include "extractors/internal/page_nodes.h"
#include "extractors/internal/stopwords.h"
#include "extractors/text.h"

namespace newsflow::extractors::internal {

namespace {

class PageWalk {
 public:
  PageWalk(ParsedPage& page, std::size_t max_words)
      : page_(page), raw_(page.metadata), max_words_(max_words) {}

  void run(const GumboNode* root);

 private:
  // An element on the walk's stack.
  struct Frame {
    const GumboNode* node;
    unsigned next_child;
    bool emit;    // its subtree is visible
    Flags flags;  // own flags OR'ed with the parent's
    Attrs attrs;  // read only while `emit`
    std::uint32_t id = 0;
    // Its class words in `class_word_pool_` (while `emit`); whether it has a class or id at all.
    std::uint32_t words_begin = 0, words_end = 0;
    bool classed = false;
    bool byline_word = false;     // a class or id word of its own contains "byline"
    std::int32_t date_mark = -1;  // its index in raw_.date_marks
  };

  // Pushes the frame of `node`, a child of `parent` (the root: none).
  void push(const GumboNode* node, const Frame* parent);
  // A pushed frame's own flags (OR'ed with its parent's) and class words.
  void add_own(Frame& frame, const Flags& parent);
  // An element's first visit: the metadata it carries; whether its subtree is visible; the
  // boundary it opens.
  void enter(Frame& f);
  // After its last child: the boundary it closes; the end of its date mark.
  void leave(Frame& f);
  // The words of a visible text node.
  void add_text(std::string_view text);
  // One word of the current block (opened here at the first word after a boundary), with the
  // punctuation and digits it holds.
  void add_word(std::string_view word, std::uint32_t punct, std::uint32_t digits);
  // A new block: its tags, flags, class words and containers.
  void open_block();

  ParsedPage& page_;
  RawMetadata& raw_;
  const std::size_t max_words_;
  bool words_cut_ = false;  // a word past max_words_ was met
  std::vector<Frame> stack_;
  std::uint32_t next_element_id_ = 0;
  std::vector<BlockInfo> infos_;
  std::vector<std::uint64_t> class_word_pool_;    // of every emitted element, in walk order
  std::vector<std::uint64_t> block_class_words_;  // of every block: sorted, distinct
  std::array<std::uint32_t, kClassWordLevels> last_classed_ids_{};
  std::size_t last_classed_count_ = SIZE_MAX;
  std::uint32_t box_ = 0;  // block-level box counter (changes at every boundary)
  std::uint32_t current_box_ = UINT32_MAX;
  bool pending_space_ = true;
  int link_depth_ = 0;
  std::size_t first_h1_word_ = SIZE_MAX;
  int h1_depth_ = 0;
};

void PageWalk::run(const GumboNode* root) {
  push(root, nullptr);
  stack_.back().flags = {};  // the root's own flags are not used
  while (!stack_.empty()) {
    Frame& f = stack_.back();
    const GumboNode* node = f.node;
    if (node->type != GUMBO_NODE_ELEMENT && node->type != GUMBO_NODE_TEMPLATE) {
      stack_.pop_back();
      continue;
    }
    const GumboElement& el = node->v.element;
    if (f.next_child == 0) enter(f);
    if (f.next_child < el.children.length) {
      const auto* child = static_cast<const GumboNode*>(el.children.data[f.next_child++]);
      if (child->type == GUMBO_NODE_ELEMENT || child->type == GUMBO_NODE_TEMPLATE) {
        push(child, &f);  // `f` is not used after: the push may move it
      } else if (f.emit && (child->type == GUMBO_NODE_TEXT || child->type == GUMBO_NODE_CDATA ||
                            child->type == GUMBO_NODE_WHITESPACE)) {
        add_text(child->v.text.text);
      }
      continue;
    }
    leave(f);
    stack_.pop_back();
  }
  raw_.first_h1_word = first_h1_word_;
  if (words_cut_) page_.warnings.emplace_back("words_beyond_limit_not_read");
  compute_features(page_, infos_, block_class_words_, first_h1_word_, next_element_id_);
}

void PageWalk::push(const GumboNode* node, const Frame* parent) {
  const bool emit = !parent || parent->emit;
  const Flags flags = parent ? parent->flags : Flags{};
  if (emit) {
    stack_.push_back({node, 0, true, {}, scan_attrs(node->v.element), next_element_id_++});
    add_own(stack_.back(), flags);
  } else {
    stack_.push_back({node, 0, false, flags, {}, next_element_id_++});
  }
}

void PageWalk::add_own(Frame& frame, const Flags& parent) {
  frame.classed = frame.attrs.cls || frame.attrs.id;
  frame.words_begin = static_cast<std::uint32_t>(class_word_pool_.size());
  const Flags own = own_flags(frame.node->v.element, frame.attrs, class_word_pool_);
  frame.byline_word = own.test(flag_index("byline"));
  frame.flags = parent | own;
  frame.words_end = static_cast<std::uint32_t>(class_word_pool_.size());
}

void PageWalk::enter(Frame& f) {
  const GumboNode* node = f.node;
  const GumboElement& el = node->v.element;
  if (el.tag == GUMBO_TAG_META || el.tag == GUMBO_TAG_LINK) {
    collect_head_metadata(el, raw_);
  } else if (f.emit && f.attrs.content && f.attrs.property && raw_.metas.size() < 1024) {
    // RDFa on other elements (<span property="schema:dateCreated" content="...">) says
    // what a meta tag would. (itemprop dates are date marks, read where they stand.)
    raw_.metas.emplace_back(ascii_lower(f.attrs.property), collapse_whitespace(f.attrs.content));
  }
  if (el.tag == GUMBO_TAG_HTML) {
    if (const char* lang = attr(el, "lang")) raw_.html_lang = lang;
  } else if (el.tag == GUMBO_TAG_TITLE && raw_.title_tag.empty()) {
    raw_.title_tag = collapse_whitespace(subtree_text(node));
  } else if (el.tag == GUMBO_TAG_H1 && raw_.first_h1.empty()) {
    raw_.first_h1 = collapse_whitespace(subtree_text(node));
  } else if (raw_.markup_byline.empty() && f.emit &&
             is_byline_element(el, f.attrs, f.byline_word)) {
    raw_.markup_byline = collapse_whitespace(subtree_text(node, /*lines=*/true));
    while (!raw_.markup_byline.empty() &&
           (raw_.markup_byline.front() == ',' || raw_.markup_byline.front() == ' ')) {
      raw_.markup_byline.erase(0, 1);
    }
    if (raw_.markup_byline.size() > 200) raw_.markup_byline.clear();
  }
  // Not the dates of readers' comments, nor of quoted or embedded posts.
  if (!f.flags.test(flag_index("comment")) && !f.flags.test(flag_index("blockquote"))) {
    f.date_mark = collect_date_mark(el, f.emit, f.attrs, raw_, page_.words.size());
  }
  if (el.tag == GUMBO_TAG_IMG && f.emit) collect_image(el, raw_, page_.words.size());
  if (el.tag == GUMBO_TAG_TIME && raw_.first_time.empty()) {
    if (const char* dt = attr(el, "datetime")) raw_.first_time = dt;
  } else if (el.tag == GUMBO_TAG_SCRIPT) {
    if (const char* type = attr(el, "type"); type && ascii_lower(type) == "application/ld+json") {
      raw_.json_ld.push_back(subtree_text(node));
    }
  }
  if (f.emit && (is_skipped(el.tag) || is_hidden(f.attrs))) f.emit = false;
  if (f.emit) {
    page_.tokens.push_back(-1);
    if (is_block(el.tag)) {
      ++box_;
      pending_space_ = true;
    }
    if (el.tag == GUMBO_TAG_A && f.attrs.href) ++link_depth_;
    if (el.tag == GUMBO_TAG_H1) ++h1_depth_;
  }
}

void PageWalk::leave(Frame& f) {
  const GumboElement& el = f.node->v.element;
  if (f.emit) {
    page_.tokens.push_back(-1);
    if (is_block(el.tag)) {
      ++box_;
      pending_space_ = true;
    }
    if (el.tag == GUMBO_TAG_A && f.attrs.href) --link_depth_;
    if (el.tag == GUMBO_TAG_H1) --h1_depth_;
  }
  if (f.date_mark >= 0) {
    raw_.date_marks[static_cast<std::size_t>(f.date_mark)].end_word =
        static_cast<std::uint32_t>(page_.words.size());
  }
}

void PageWalk::add_text(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    if (page_.words.size() >= max_words_) {
      // Whitespace alone would add nothing: only a word past the bound is one not read.
      words_cut_ = words_cut_ || !is_blank(text.substr(i));
      return;
    }
    const auto c0 = static_cast<unsigned char>(text[i]);
    if (c0 == ' ' || c0 == '\n') {  // most spaces, without the Unicode check
      pending_space_ = true;
      ++i;
      continue;
    }
    if (c0 <= 0x20 || c0 >= 0x7F) {
      if (const std::size_t w = whitespace_prefix(text.substr(i)); w > 0) {
        pending_space_ = true;
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
    add_word(text.substr(i, j - i), punct, digits);
    i = j;
  }
}

void PageWalk::add_word(std::string_view word, std::uint32_t punct, std::uint32_t digits) {
  if (current_box_ != box_) {
    current_box_ = box_;
    open_block();
  }
  if (h1_depth_ > 0 && first_h1_word_ == SIZE_MAX) first_h1_word_ = page_.words.size();
  Block& b = page_.blocks.back();
  BlockInfo& info = infos_.back();
  const auto index = static_cast<std::uint32_t>(page_.blocks.size() - 1);
  page_.tokens.push_back(static_cast<std::int32_t>(page_.words.size()));
  page_.words.push_back({word, index, pending_space_, link_depth_ > 0});
  ++b.end_word;
  if (link_depth_ > 0) ++b.link_words;
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
    if (is_stopword({lower, bare.size()})) ++info.stop;
  }
  const char last = word.back();
  info.ends_sentence = last == '.' || last == '!' || last == '?' || last == '"' ||
                       word.ends_with("\xE3\x80\x82") || word.ends_with("\xE2\x80\x9D");
  pending_space_ = false;
}

void PageWalk::open_block() {
  Block b;
  b.first_word = b.end_word = static_cast<std::uint32_t>(page_.words.size());
  page_.blocks.push_back(b);
  BlockInfo info;
  int level = 0;
  for (auto it = stack_.rbegin(); it != stack_.rend() && level < 3; ++it, ++level) {
    info.tags[level] = gumbo_normalized_tagname(it->node->v.element.tag);
  }
  info.flags = stack_.back().flags;
  // The nearest classed elements; blocks under the same ones (paragraphs of one container)
  // share the previous block's class words.
  std::array<std::uint32_t, kClassWordLevels> classed_ids;
  std::array<const Frame*, kClassWordLevels> classed_frames;
  std::size_t classed = 0;
  for (auto it = stack_.rbegin(); it != stack_.rend() && classed < kClassWordLevels; ++it) {
    if (!it->classed) continue;
    classed_frames[classed] = &*it;
    classed_ids[classed++] = it->id;
  }
  if (classed == last_classed_count_ &&
      std::equal(classed_ids.begin(), classed_ids.begin() + classed, last_classed_ids_.begin()) &&
      !infos_.empty()) {
    info.class_words_begin = infos_.back().class_words_begin;
    info.class_words_end = infos_.back().class_words_end;
  } else {
    info.class_words_begin = static_cast<std::uint32_t>(block_class_words_.size());
    for (std::size_t k = 0; k < classed; ++k) {
      block_class_words_.insert(block_class_words_.end(),
                                class_word_pool_.begin() + classed_frames[k]->words_begin,
                                class_word_pool_.begin() + classed_frames[k]->words_end);
    }
    const auto first = block_class_words_.begin() + info.class_words_begin;
    std::sort(first, block_class_words_.end());
    block_class_words_.erase(std::unique(first, block_class_words_.end()),
                             block_class_words_.end());
    info.class_words_end = static_cast<std::uint32_t>(block_class_words_.size());
    last_classed_ids_ = classed_ids;
    last_classed_count_ = classed;
  }
  page_.blocks.back().in_comments = info.flags.test(flag_index("comment"));
  infos_.push_back(std::move(info));
  // The block's own block-level element, then the containers above it.
  std::size_t own = stack_.size() - 1;
  while (own > 0 && !is_block(stack_[own].node->v.element.tag)) --own;
  for (std::size_t up = 0; up < 3 && up < own; ++up) {
    page_.blocks.back().containers[up] = stack_[own - 1 - up].id;
  }
}

}  // namespace

void walk_page(const GumboNode* root, ParsedPage& page, std::size_t max_words) {
  PageWalk(page, max_words).run(root);
}

}  // namespace newsflow::extractors::internal
