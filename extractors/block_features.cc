#include "extractors/internal/block_features.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "extractors/internal/hash.h"
#include "extractors/internal/stopwords.h"
#include "extractors/text.h"

namespace newsflow::extractors::internal {

namespace {

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
void add_lexical_key(Fnv1a& h, std::string_view word) {
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

}  // namespace

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
        static const Fnv1a kPrefix = Fnv1a().add("cw=");
        class_words.push_back(Fnv1a(kPrefix).add({word, std::min<std::size_t>(len, 20)}).value());
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

void compute_features(ParsedPage& page, const std::vector<BlockInfo>& infos,
                      const std::vector<std::uint64_t>& class_words, std::size_t first_h1_word,
                      std::uint32_t element_count) {
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
  static const std::uint64_t kBias = fnv1a("bias");
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

}  // namespace newsflow::extractors::internal
