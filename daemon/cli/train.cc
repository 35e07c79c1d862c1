#include "daemon/cli/train.h"

#include <utf8proc.h>
#include <zlib.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <unordered_set>

#include "daemon/pipeline/input.h"
#include "extractors/charset.h"
#include "extractors/mss.h"
#include "extractors/page.h"
#include "extractors/text.h"

namespace newsflow::daemon {
namespace {

using extractors::collapse_whitespace;

bool is_word_codepoint(utf8proc_int32_t cp) {
  if (cp == '_') return true;
  switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      return true;
    default:
      return false;
  }
}

std::string join(const std::vector<std::string>& tokens, std::size_t from, std::size_t n) {
  std::string s;
  for (std::size_t i = from; i < from + n && i < tokens.size(); ++i) {
    if (i > from) s += '\x1f';
    s += tokens[i];
  }
  return s;
}

std::map<std::string, int> shingles(const std::vector<std::string>& tokens) {
  std::map<std::string, int> out;
  if (tokens.empty()) return out;
  const std::size_t n = 4;
  const std::size_t count = tokens.size() >= n ? tokens.size() - n + 1 : 1;
  for (std::size_t i = 0; i < count; ++i) ++out[join(tokens, i, n)];
  return out;
}

struct Scores {
  double precision = 0, recall = 0, f1 = 0;
};

Scores aeb_scores(const std::vector<ShingleCounts>& pages) {
  double p_sum = 0, r_sum = 0;
  std::size_t p_n = 0, r_n = 0;
  for (const auto& c : pages) {
    const bool perfect = c.fp == 0 && c.fn == 0;
    if (c.tp + c.fp > 0) {
      p_sum += perfect ? 1.0 : c.tp / (c.tp + c.fp);
      ++p_n;
    }
    if (c.tp + c.fn > 0) {
      r_sum += perfect ? 1.0 : c.tp / (c.tp + c.fn);
      ++r_n;
    }
  }
  Scores s;
  s.precision = p_n ? p_sum / p_n : 0;
  s.recall = r_n ? r_sum / r_n : 0;
  s.f1 = s.precision + s.recall > 0 ? 2 * s.precision * s.recall / (s.precision + s.recall) : 0;
  return s;
}

// The truth of a labelled page: the article body (AEB), or snippets that must and must not
// appear in the extracted text (the trafilatura benchmark).
struct Truth {
  std::string body;
  std::vector<std::string> with, without;
  bool snippets = false;
};

// A labelled page: its parse, the truth, and one label per block.
struct LabelledPage {
  std::string id;
  const Truth* truth;
  std::size_t set = 0;  // which --pages/--truth pair it came from
  extractors::ParsedPage page;
  std::vector<extractors::TrainingBlock> blocks;
};

float block_weight(const extractors::Block& block) {
  return static_cast<float>(std::sqrt(static_cast<double>(block.word_count())));
}

// A block is article text when at least half of its tokens lie in 3-grams (or, for blocks of
// one or two tokens, the whole block) that also occur in the truth.
std::vector<extractors::TrainingBlock> label_blocks(const extractors::ParsedPage& page,
                                                    const std::string& truth) {
  const auto truth_tokens = word_tokens(truth);
  std::unordered_set<std::string> grams[4];
  for (std::size_t n = 1; n <= 3; ++n) {
    for (std::size_t i = 0; i + n <= truth_tokens.size(); ++i)
      grams[n].insert(join(truth_tokens, i, n));
  }
  std::vector<extractors::TrainingBlock> out;
  for (std::size_t b = 0; b < page.blocks.size(); ++b) {
    const auto& block = page.blocks[b];
    const auto tokens =
        word_tokens(extractors::render_words(page, block.first_word, block.end_word));
    bool article = false;
    if (tokens.empty()) {
      out.push_back({block.features, false, 0.0f});  // context only
      continue;
    } else if (tokens.size() < 3) {
      article = grams[tokens.size()].count(join(tokens, 0, tokens.size())) > 0;
    } else {
      std::vector<bool> covered(tokens.size(), false);
      for (std::size_t i = 0; i + 3 <= tokens.size(); ++i) {
        if (grams[3].count(join(tokens, i, 3))) covered[i] = covered[i + 1] = covered[i + 2] = true;
      }
      const auto hits = std::count(covered.begin(), covered.end(), true);
      article = hits * 2 >= static_cast<std::ptrdiff_t>(tokens.size());
    }
    out.push_back({block.features, article, block_weight(block)});
  }
  return out;
}

// Snippet truth labels only the blocks a snippet lies in (or that lie in a snippet spanning
// several blocks): blocks holding a "with" snippet are article text, blocks holding a "without"
// snippet are not; the others (and blocks holding both) only give context.
std::vector<extractors::TrainingBlock> label_blocks_by_snippets(const extractors::ParsedPage& page,
                                                                const Truth& truth) {
  std::vector<std::string> with, without;
  for (const auto& s : truth.with) with.push_back(collapse_whitespace(s));
  for (const auto& s : truth.without) without.push_back(collapse_whitespace(s));
  const auto touches = [](const std::string& block, const std::vector<std::string>& snippets) {
    for (const auto& s : snippets) {
      if (s.empty()) continue;
      if (block.find(s) != std::string::npos) return true;
      if (block.size() >= 12 && s.find(block) != std::string::npos) return true;
    }
    return false;
  };
  std::vector<extractors::TrainingBlock> out;
  for (const auto& block : page.blocks) {
    const std::string text =
        collapse_whitespace(extractors::render_words(page, block.first_word, block.end_word));
    const bool positive = !text.empty() && touches(text, with);
    const bool negative = !text.empty() && touches(text, without);
    out.push_back({block.features, positive, positive != negative ? block_weight(block) : 0.0f});
  }
  return out;
}

// The snippet metric of ../shared/tools/eval_extraction.py: counts over all pages.
struct SnippetCounts {
  std::size_t tp = 0, fp = 0, fn = 0;
  void add(const Truth& truth, const std::string& predicted) {
    const std::string out = collapse_whitespace(predicted);
    for (const auto& s : truth.with) {
      (out.find(collapse_whitespace(s)) != std::string::npos ? tp : fn) += 1;
    }
    for (const auto& s : truth.without) {
      if (out.find(collapse_whitespace(s)) != std::string::npos) ++fp;
    }
  }
  // Snippet precision, recall and F1 over every page added.
  Scores scores() const {
    Scores s;
    s.precision = tp + fp ? double(tp) / double(tp + fp) : 0;
    s.recall = tp + fn ? double(tp) / double(tp + fn) : 0;
    s.f1 = 2 * tp + fp + fn ? 2.0 * double(tp) / double(2 * tp + fp + fn) : 0;
    return s;
  }
};

}  // namespace

std::vector<std::string> word_tokens(const std::string& text) {
  std::vector<std::string> out;
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  utf8proc_ssize_t left = static_cast<utf8proc_ssize_t>(text.size());
  std::string cur;
  while (left > 0) {
    utf8proc_int32_t cp;
    utf8proc_ssize_t len = utf8proc_iterate(p, left, &cp);
    if (len <= 0) {
      len = 1;
      cp = -1;
    }
    if (cp >= 0 && is_word_codepoint(cp)) {
      cur.append(reinterpret_cast<const char*>(p), static_cast<std::size_t>(len));
    } else if (!cur.empty()) {
      out.push_back(std::move(cur));
      cur.clear();
    }
    p += len;
    left -= len;
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

ShingleCounts aeb_page_counts(const std::string& truth, const std::string& predicted) {
  const auto a = shingles(word_tokens(truth));
  const auto b = shingles(word_tokens(predicted));
  ShingleCounts c;
  for (const auto& [k, n] : a) {
    const auto it = b.find(k);
    const int m = it == b.end() ? 0 : it->second;
    c.tp += std::min(n, m);
    c.fn += std::max(0, n - m);
  }
  for (const auto& [k, m] : b) {
    const auto it = a.find(k);
    c.fp += std::max(0, m - (it == a.end() ? 0 : it->second));
  }
  const double s = c.tp + c.fp + c.fn;
  if (s > 0) c.tp /= s, c.fp /= s, c.fn /= s;
  return c;
}

namespace {

// The truth of one set, by page id: an article body, or snippets with and without. The lines
// read.
std::size_t read_truth(const std::string& path, std::map<std::string, Truth>& truth, bool* ok) {
  std::size_t read = 0;
  *ok = read_lines(path, [&](std::string_view line) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || !j.contains("id") || !j["id"].is_string()) return;
    Truth t;
    if (j.contains("articleBody") && j["articleBody"].is_string()) {
      t.body = j["articleBody"].get<std::string>();
    } else if (j.contains("with") && j["with"].is_array() && j.contains("without") &&
               j["without"].is_array()) {
      t.snippets = true;
      for (const auto& s : j["with"]) {
        if (s.is_string()) t.with.push_back(s.get<std::string>());
      }
      for (const auto& s : j["without"]) {
        if (s.is_string()) t.without.push_back(s.get<std::string>());
      }
    } else {
      return;
    }
    truth[j["id"].get<std::string>()] = std::move(t);
    ++read;
  });
  return read;
}

// The pages of one set that have a truth, parsed and their blocks labelled, added to `pages`
// (pointing into `truth`). The pages added.
std::size_t read_labelled_pages(const config::Config& config, const std::string& path,
                                std::size_t set, const std::map<std::string, Truth>& truth,
                                std::vector<LabelledPage>& pages, bool* ok) {
  std::size_t labelled = 0;
  *ok = read_lines(path, [&](std::string_view line) {
    ParsedInput in = parse_replay_line(line);
    if (in.failure) return;
    const auto it = truth.find(in.input.id);
    if (it == truth.end()) return;
    std::string html = std::move(in.input.body);
    bool known_utf8 = false;
    if (in.input.kind == BodyKind::kHtmlBytes) {
      auto decoded = extractors::decode_to_utf8(html, in.input.content_type);
      if (!decoded) return;
      html = std::move(decoded->text);
      known_utf8 = true;
    } else if (in.input.kind != BodyKind::kHtmlText) {
      return;
    }
    auto page = extractors::parse_page(html, {.max_html_bytes = config.extract.max_html_bytes,
                                              .max_nesting_depth = config.extract.max_nesting_depth,
                                              .known_utf8 = known_utf8,
                                              .max_words = config.extract.max_page_words,
                                              .max_elements = config.extract.max_elements});
    if (!page) return;
    LabelledPage lp{in.input.id, &it->second, set, std::move(*page), {}};
    lp.blocks = lp.truth->snippets ? label_blocks_by_snippets(lp.page, *lp.truth)
                                   : label_blocks(lp.page, lp.truth->body);
    pages.push_back(std::move(lp));
    ++labelled;
  });
  return labelled;
}

// Every page scored by a model trained on the other folds: token-4-gram scores for pages with
// article bodies, snippet scores for the others; the texts to `command.cv_output` if named.
void cross_validate(const config::Config& config, const TrainCommand& command,
                    const std::vector<LabelledPage>& pages,
                    const extractors::TrainOptions& train_options, std::size_t snippet_pages) {
  std::vector<ShingleCounts> body_counts;
  SnippetCounts snippet_counts;
  std::ofstream cv_out;
  if (!command.cv_output.empty()) cv_out.open(command.cv_output);
  for (int fold = 0; fold < command.folds; ++fold) {
    std::vector<std::vector<extractors::TrainingBlock>> train_blocks;
    for (std::size_t i = 0; i < pages.size(); ++i) {
      if (static_cast<int>(i % command.folds) == fold) continue;
      train_blocks.push_back(pages[i].blocks);
    }
    const extractors::MssModel model = extractors::train_mss(train_blocks, train_options);
    for (std::size_t i = fold; i < pages.size(); i += command.folds) {
      const std::string text = extractors::render_blocks(
          pages[i].page, extractors::segment_mss(pages[i].page, model, config.extract.segment));
      if (pages[i].truth->snippets) {
        snippet_counts.add(*pages[i].truth, text);
      } else {
        body_counts.push_back(aeb_page_counts(pages[i].truth->body, text));
      }
      if (cv_out) cv_out << nlohmann::json{{"id", pages[i].id}, {"text", text}}.dump() << "\n";
    }
  }
  if (!body_counts.empty()) {
    const Scores s = aeb_scores(body_counts);
    std::printf(
        "%d-fold cross-validated MSS on %zu pages with article bodies: token-4-gram "
        "P %.4f  R %.4f  F1 %.4f\n",
        command.folds, body_counts.size(), s.precision, s.recall, s.f1);
  }
  if (snippet_pages > 0) {
    const Scores s = snippet_counts.scores();
    std::printf(
        "%d-fold cross-validated MSS on %zu pages with snippets: snippet "
        "P %.4f  R %.4f  F1 %.4f\n",
        command.folds, snippet_pages, s.precision, s.recall, s.f1);
  }
}

// Generalization to page families never seen: train on every set but one, score that one.
void leave_one_set_out(const config::Config& config, const TrainCommand& command,
                       const std::vector<LabelledPage>& pages,
                       const extractors::TrainOptions& train_options) {
  for (std::size_t held = 0; held < command.pages.size(); ++held) {
    std::vector<std::vector<extractors::TrainingBlock>> train_blocks;
    for (const auto& p : pages) {
      if (p.set != held) train_blocks.push_back(p.blocks);
    }
    const extractors::MssModel model = extractors::train_mss(train_blocks, train_options);
    std::vector<ShingleCounts> body_counts;
    SnippetCounts snippet_counts;
    std::size_t n = 0;
    for (const auto& p : pages) {
      if (p.set != held) continue;
      ++n;
      const std::string text = extractors::render_blocks(
          p.page, extractors::segment_mss(p.page, model, config.extract.segment));
      if (p.truth->snippets) {
        snippet_counts.add(*p.truth, text);
      } else {
        body_counts.push_back(aeb_page_counts(p.truth->body, text));
      }
    }
    if (!body_counts.empty()) {
      const Scores s = aeb_scores(body_counts);
      std::printf(
          "leave-one-set-out: trained without set %zu (%s), its %zu pages with article bodies: "
          "token-4-gram P %.4f  R %.4f  F1 %.4f\n",
          held + 1, command.truth[held].c_str(), n, s.precision, s.recall, s.f1);
    } else {
      const Scores sc = snippet_counts.scores();
      std::printf(
          "leave-one-set-out: trained without set %zu (%s), its %zu pages with snippets: snippet "
          "P %.4f  R %.4f  F1 %.4f\n",
          held + 1, command.truth[held].c_str(), n, sc.precision, sc.recall, sc.f1);
    }
  }
}

// The model trained on every page, written to `command.out`: false when it cannot be.
bool write_model(const TrainCommand& command, const std::vector<LabelledPage>& pages,
                 const extractors::TrainOptions& train_options) {
  std::vector<std::vector<extractors::TrainingBlock>> all;
  for (const auto& p : pages) all.push_back(p.blocks);
  const extractors::MssModel model = extractors::train_mss(all, train_options);
  std::ofstream out(command.out, std::ios::binary);
  out << model.serialize();
  if (!out) {
    std::fprintf(stderr, "train-extractor: cannot write %s\n", command.out.c_str());
    return false;
  }
  std::printf("model trained on all %zu pages written to %s\n", pages.size(), command.out.c_str());
  return true;
}

}  // namespace

int run_train_extractor(const config::Config& config, const TrainCommand& command) {
  if (command.pages.size() != command.truth.size()) {
    std::fprintf(stderr, "train-extractor: give one --truth per --pages (%zu pages, %zu truth)\n",
                 command.pages.size(), command.truth.size());
    return 1;
  }
  // One truth map per set (ids may repeat across sets); sized up front, so pages can point
  // into them.
  std::vector<std::map<std::string, Truth>> truths(command.pages.size());
  std::vector<LabelledPage> pages;
  for (std::size_t set = 0; set < command.pages.size(); ++set) {
    bool ok = false;
    if (read_truth(command.truth[set], truths[set], &ok) == 0 || !ok) {
      std::fprintf(stderr, "train-extractor: no truth read from %s\n", command.truth[set].c_str());
      return 1;
    }
    if (read_labelled_pages(config, command.pages[set], set, truths[set], pages, &ok) == 0 || !ok) {
      std::fprintf(stderr, "train-extractor: no labelled pages read from %s\n",
                   command.pages[set].c_str());
      return 1;
    }
  }
  std::sort(pages.begin(), pages.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  if (command.fold_seed != 0) {
    std::mt19937_64 rng(command.fold_seed);
    std::shuffle(pages.begin(), pages.end(), rng);
  }
  std::size_t positives = 0, labelled = 0, total = 0, snippet_pages = 0;
  for (const auto& p : pages) {
    snippet_pages += p.truth->snippets;
    for (const auto& b : p.blocks) positives += b.article, labelled += b.weight > 0, ++total;
  }
  std::fprintf(stderr,
               "train-extractor: %zu pages (%zu with article bodies, %zu with snippets), %zu "
               "blocks, %zu labelled (%zu article)\n",
               pages.size(), pages.size() - snippet_pages, snippet_pages, total, labelled,
               positives);

  extractors::TrainOptions train_options;
  train_options.epochs = command.epochs;
  train_options.learning_rate = command.learning_rate;
  train_options.l2 = command.l2;
  train_options.average = command.average;
  if (command.folds >= 2) cross_validate(config, command, pages, train_options, snippet_pages);
  if (command.leave_one_set_out && command.pages.size() >= 2) {
    leave_one_set_out(config, command, pages, train_options);
  }
  if (!command.out.empty() && !write_model(command, pages, train_options)) return 1;
  return 0;
}

}  // namespace newsflow::daemon
