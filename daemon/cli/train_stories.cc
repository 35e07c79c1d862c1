#include "daemon/cli/train_stories.h"

#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <utility>

#include "daemon/cli/replay.h"
#include "daemon/pipeline/pipeline.h"
#include "dedup/stories.h"

namespace newsflow::daemon {
namespace {

// An article as the story book saw it.
struct Seen {
  std::size_t order = 0;
  std::int64_t event_time = 0;
  std::string language;
  dedup::StoryBook::Terms terms;
};

// A labelled pair's features when its later article arrived.
struct Sample {
  std::array<double, 2> x{};  // cosine, containment
  int y = 0;
  int fold = 0;
  std::string language;
  std::string key;      // "id id", as labelled
  std::size_t set = 0;  // which --input
};

// A logistic regression of a bias and two features, by Newton's method with an L2 penalty on
// the weights (not the bias). `use` picks the features fitted (the others stay 0).
std::array<double, 3> fit(const std::vector<const Sample*>& data, double l2,
                          std::array<bool, 2> use) {
  std::array<double, 3> w{0, 0, 0};  // bias, cosine, containment
  const double n = static_cast<double>(std::max<std::size_t>(1, data.size()));
  for (int iter = 0; iter < 50; ++iter) {
    double g[3] = {0, 0, 0}, h[3][3] = {{0}};
    for (const Sample* s : data) {
      const double v[3] = {1, s->x[0], s->x[1]};
      const double z = w[0] + w[1] * v[1] + w[2] * v[2];
      const double p = 1 / (1 + std::exp(-z));
      for (int i = 0; i < 3; ++i) {
        g[i] += (p - s->y) * v[i] / n;
        for (int j = 0; j < 3; ++j) h[i][j] += p * (1 - p) * v[i] * v[j] / n;
      }
    }
    for (int i = 1; i < 3; ++i) {
      g[i] += l2 * w[i];
      h[i][i] += l2;
    }
    // Features not used: fixed at 0 (their row and column out of the system).
    for (int i = 1; i < 3; ++i) {
      if (use[i - 1]) continue;
      g[i] = 0;
      for (int j = 0; j < 3; ++j) h[i][j] = h[j][i] = 0;
      h[i][i] = 1;
    }
    // Solve h d = g (3x3, Gaussian elimination with partial pivoting).
    double a[3][4];
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) a[i][j] = h[i][j];
      a[i][3] = g[i];
    }
    for (int c = 0; c < 3; ++c) {
      int pivot = c;
      for (int r = c + 1; r < 3; ++r) {
        if (std::abs(a[r][c]) > std::abs(a[pivot][c])) pivot = r;
      }
      std::swap(a[c], a[pivot]);
      if (std::abs(a[c][c]) < 1e-12) return w;
      for (int r = 0; r < 3; ++r) {
        if (r == c) continue;
        const double f = a[r][c] / a[c][c];
        for (int k = c; k < 4; ++k) a[r][k] -= f * a[c][k];
      }
    }
    double step = 0;
    for (int i = 0; i < 3; ++i) {
      const double d = a[i][3] / a[i][i];
      w[static_cast<std::size_t>(i)] -= d;
      step = std::max(step, std::abs(d));
    }
    if (step < 1e-9) break;
  }
  return w;
}

double probability(const std::array<double, 3>& w, const Sample& s) {
  dedup::StoryFeatures f;
  f.cosine = s.x[0];
  f.containment = s.x[1];
  return f.probability({w[0], w[1], w[2]});
}

// The probability that merges at most `rate` of the negatives (scores) and the share of
// positives at or above it.
struct Cut {
  double threshold = 1;
  double recall = 0;
  std::size_t merged = 0;
};
Cut cut_at(const std::vector<std::pair<double, int>>& scored, double rate) {
  std::vector<double> neg, pos;
  for (const auto& [p, y] : scored) (y ? pos : neg).push_back(p);
  std::sort(neg.rbegin(), neg.rend());
  Cut c;
  const auto allowed = static_cast<std::size_t>(std::floor(rate * static_cast<double>(neg.size())));
  // Just above the first negative that may not be merged.
  c.threshold = allowed < neg.size() ? std::nextafter(neg[allowed], 2.0) : 0.0;
  c.merged = static_cast<std::size_t>(
      std::count_if(neg.begin(), neg.end(), [&](double p) { return p >= c.threshold; }));
  const auto hits =
      std::count_if(pos.begin(), pos.end(), [&](double p) { return p >= c.threshold; });
  c.recall = pos.empty() ? 0 : static_cast<double>(hits) / static_cast<double>(pos.size());
  return c;
}

std::string primary(std::string_view language) {
  return std::string(language.substr(0, language.find('-')));
}

// Union-find over article ids: an event is what labelled pairs and copies connect.
struct Events {
  std::unordered_map<std::string, std::string> parent;
  std::string find(const std::string& x) {
    parent.try_emplace(x, x);
    std::string root = x;
    while (parent[root] != root) root = parent[root];
    for (std::string at = x; parent[at] != root;) at = std::exchange(parent[at], root);
    return root;
  }
  void join(const std::string& a, const std::string& b) {
    const std::string ra = find(a), rb = find(b);
    if (ra != rb) parent[std::max(ra, rb)] = std::min(ra, rb);
  }
};

// How the labelled pairs came out online: in one story or not, pooled and per language
// (same-event pairs, in one story, different-event pairs, merged).
struct Online {
  std::size_t pos = 0, together = 0, neg = 0, merged = 0;
  std::map<std::string, std::array<std::size_t, 4>> by_language;
};

// The streams replayed with model `w` at `threshold` (merging at `merge_cut` or above): how the
// pairs outside the held-out fold came out, in one story or not.
std::optional<Online> replay_online(const config::Config& config,
                                    const TrainStoriesCommand& command,
                                    const std::vector<Sample>& samples,
                                    const std::array<double, 3>& w, double threshold,
                                    double merge_cut) {
  config::Config c = config;
  c.stories.model = {w[0], w[1], w[2]};
  c.stories.similarity_threshold = threshold;
  c.stories.merge_threshold = std::max(merge_cut, threshold);
  Online o;
  for (std::size_t set = 0; set < command.inputs.size(); ++set) {
    std::unordered_map<std::string, std::string> story;
    ReplayPaths paths;
    paths.inputs = {command.inputs[set]};
    paths.output = "/dev/null";
    paths.dlq = "/dev/null";
    paths.quiet = true;
    paths.observe = [&](const Output& out) { story.emplace(out.article.id, out.story_id); };
    if (const auto stats = run_replay(c, paths, nullptr); !stats) {
      std::fprintf(stderr, "train-stories: %s\n", stats.error().c_str());
      return std::nullopt;
    }
    for (const Sample& s : samples) {
      if (s.set != set || s.fold == command.hold_out) continue;
      const std::size_t space = s.key.find(' ');
      const auto a = story.find(s.key.substr(0, space)), b = story.find(s.key.substr(space + 1));
      const bool same = a != story.end() && b != story.end() && a->second == b->second;
      auto& row = o.by_language[s.language];
      if (s.y) {
        ++o.pos;
        o.together += same;
        ++row[0];
        row[1] += same;
      } else {
        ++o.neg;
        o.merged += same;
        ++row[2];
        row[3] += same;
      }
    }
  }
  return o;
}

// `--folds-output` (each pair's fold) and `--out` (the model and thresholds as configuration).
// 0, or the exit code.
int write_outputs(const TrainStoriesCommand& command, const std::vector<Sample>& samples,
                  const std::array<double, 3>& w, double similarity, double merging) {
  if (!command.folds_output.empty()) {
    nlohmann::json j = nlohmann::json::object();
    for (const Sample& s : samples) j[s.key] = s.fold;
    std::ofstream f(command.folds_output);
    f << j.dump(1) << "\n";
    if (!f) {
      std::fprintf(stderr, "train-stories: cannot write %s\n", command.folds_output.c_str());
      return 1;
    }
  }
  if (!command.out.empty()) {
    std::ostringstream y;
    y.precision(4);
    y << std::fixed;
    y << "# Written by newsflow train-stories (dedup/model/README.md): a logistic model of an\n"
         "# article and a story reporting one event, from their TF-IDF cosine and containment.\n"
         "stories:\n"
      << "  similarity_threshold: " << similarity << "\n"
      << "  merge_threshold: " << merging << "\n"
      << "  model:\n"
      << "    bias: " << w[0] << "\n"
      << "    cosine: " << w[1] << "\n"
      << "    containment: " << w[2] << "\n";
    std::ofstream f(command.out);
    f << y.str();
    if (!f) {
      std::fprintf(stderr, "train-stories: cannot write %s\n", command.out.c_str());
      return 1;
    }
  }
  return 0;
}

// The labelled pairs of a labels file (1 same event, 0 different events), and the events that
// same-event pairs and copies connect. False when it cannot be read (said on stderr).
bool read_labels(const std::string& path, std::map<std::pair<std::string, std::string>, int>& pairs,
                 Events& events) {
  std::ifstream lf(path);
  nlohmann::json labels = nlohmann::json::parse(lf, nullptr, false);
  if (!lf || labels.is_discarded() || !labels.is_object()) {
    std::fprintf(stderr, "train-stories: cannot read labels %s\n", path.c_str());
    return false;
  }
  auto label = [&](const nlohmann::json& list, int y) {
    if (!list.is_array()) return;
    for (const auto& p : list) {
      if (!p.is_array() || p.size() < 2 || !p[0].is_string() || !p[1].is_string()) continue;
      pairs.emplace(std::pair{p[0].get<std::string>(), p[1].get<std::string>()}, y);
    }
  };
  label(labels.value("story_pos", nlohmann::json::array()), 1);
  label(labels.value("story_neg", nlohmann::json::array()), 0);
  // Graded pairs: clearly one event (<= 1.5) or clearly not (>= 3.5); the middle is left out.
  for (const auto& p : labels.value("scored_pairs", nlohmann::json::array())) {
    if (!p.is_array() || p.size() < 3 || !p[0].is_string() || !p[1].is_string() ||
        !p[2].is_number()) {
      continue;
    }
    const double overall = p[2].get<double>();
    if (overall > 1.5 && overall < 3.5) continue;
    pairs.emplace(std::pair{p[0].get<std::string>(), p[1].get<std::string>()},
                  overall <= 1.5 ? 1 : 0);
  }
  // Events: what same-event pairs and copies connect (a different-event pair joins nothing;
  // it goes to the fold of its later article's event).
  for (const auto& [p, y] : pairs) {
    if (y == 1) events.join(p.first, p.second);
  }
  for (const auto& g : labels.value("dup_groups", nlohmann::json::array())) {
    for (std::size_t i = 1; g.is_array() && i < g.size(); ++i) {
      if (g[0].is_string() && g[i].is_string()) {
        events.join(g[0].get<std::string>(), g[i].get<std::string>());
      }
    }
  }
  return true;
}

// The articles of a stream replayed as the daemon judges it, in the order they come: each one's
// event time, language and story terms. False when it cannot be replayed (said on stderr).
bool observe_stream(const config::Config& config, const std::string& input,
                    std::unordered_map<std::string, Seen>& seen, std::vector<std::string>& order) {
  ReplayPaths paths;
  paths.inputs = {input};
  paths.output = "/dev/null";
  paths.dlq = "/dev/null";
  paths.quiet = true;
  paths.observe = [&](const Output& o) {
    Seen s;
    s.order = order.size();
    s.event_time = o.event_time;
    s.language = primary(o.article.language);
    s.terms = dedup::StoryBook::Terms(o.state.story_terms.begin(), o.state.story_terms.end());
    if (seen.emplace(o.article.id, std::move(s)).second) order.push_back(o.article.id);
  };
  const auto stats = run_replay(config, paths, nullptr);
  if (!stats) {
    std::fprintf(stderr, "train-stories: %s\n", stats.error().c_str());
    return false;
  }
  return true;
}

// The labelled pairs of input `set` as samples (into `samples`): the stream replayed as the
// daemon judges it, each pair's features as the story book has them when its later article
// arrives, its fold by event. 0, or the exit code.
int add_samples(const config::Config& config, const TrainStoriesCommand& command, std::size_t set,
                int folds, std::vector<Sample>& samples) {
  // The labelled pairs: 1 same event, 0 different events.
  std::map<std::pair<std::string, std::string>, int> pairs;
  Events events;
  if (!read_labels(command.labels[set], pairs, events)) return 1;
  std::unordered_map<std::string, Seen> seen;
  std::vector<std::string> order;
  if (!observe_stream(config, command.inputs[set], seen, order)) return 1;
  // The pairs each article closes (it arrives after the other one).
  std::unordered_map<std::string, std::vector<std::pair<std::string, int>>> closes;
  std::size_t missing = 0;
  for (const auto& [p, y] : pairs) {
    const auto a = seen.find(p.first), b = seen.find(p.second);
    if (a == seen.end() || b == seen.end()) {
      ++missing;
      continue;
    }
    const bool a_later = a->second.order > b->second.order;
    closes[a_later ? p.first : p.second].emplace_back(a_later ? p.second : p.first, y);
  }
  // The document frequencies as the story book has them when each article arrives.
  dedup::StoryBook book(config.stories);
  for (const std::string& id : order) {
    const Seen& later = seen[id];
    book.count_terms(later.terms, later.event_time, later.language);
    const auto it = closes.find(id);
    if (it == closes.end()) continue;
    for (const auto& [other_id, y] : it->second) {
      const Seen& earlier = seen[other_id];
      const double hours = static_cast<double>(later.event_time - earlier.event_time) / 3600;
      const dedup::StoryFeatures f =
          book.features(later.terms, earlier.terms, hours, later.language);
      Sample s;
      s.x = {f.cosine, f.containment};
      s.y = y;
      s.language = earlier.language.empty() ? later.language : earlier.language;
      const std::string root = events.find(id);
      s.fold = static_cast<int>(XXH3_64bits(root.data(), root.size()) %
                                static_cast<std::uint64_t>(folds));
      s.key = std::min(id, other_id) + " " + std::max(id, other_id);
      s.set = set;
      samples.push_back(std::move(s));
    }
  }
  std::fprintf(stderr, "train-stories: %s: %zu articles, %zu labelled pairs (%zu not found)\n",
               command.inputs[set].c_str(), order.size(), pairs.size(), missing);
  return 0;
}

// A model fitted on some of the features, and the cross-validated scores it gave.
struct Variant {
  const char* name;
  std::array<bool, 2> use;
  std::vector<std::pair<double, int>> scored;
  std::vector<std::pair<double, int>> scored_kept;  // outside the held-out fold
  std::map<std::string, std::vector<std::pair<double, int>>> by_language;
};

// Cross-validation by event: each fold scored by models fitted on the others.
std::vector<Variant> cross_validate(const std::vector<Sample>& samples, int folds,
                                    const TrainStoriesCommand& command) {
  std::vector<Variant> variants = {{"cosine alone", {true, false}, {}, {}, {}},
                                   {"cosine + containment", {true, true}, {}, {}, {}}};
  for (Variant& v : variants) {
    for (int k = 0; k < folds; ++k) {
      std::vector<const Sample*> train;
      for (const Sample& s : samples) {
        if (s.fold != k) train.push_back(&s);
      }
      const auto w = fit(train, command.l2, v.use);
      for (const Sample& s : samples) {
        if (s.fold != k) continue;
        const double p = probability(w, s);
        v.scored.emplace_back(p, s.y);
        if (s.fold != command.hold_out) v.scored_kept.emplace_back(p, s.y);
        v.by_language[s.language].emplace_back(p, s.y);
      }
    }
  }
  return variants;
}

// The variants' recall at a few merge rates, as a table.
void print_variants(const std::vector<Variant>& variants, std::size_t samples,
                    std::size_t positives, int folds) {
  std::printf("%zu labelled pairs (%zu same event), %d folds by event\n\n", samples, positives,
              folds);
  std::printf(
      "| model | same-event recall at 1%% / 2%% / 3%% / 5%% of different events merged |\n");
  std::printf("|---|---|\n");
  for (const Variant& v : variants) {
    std::printf("| %s |", v.name);
    for (const double rate : {0.01, 0.02, 0.03, 0.05}) {
      std::printf(" %.3f", cut_at(v.scored, rate).recall);
    }
    std::printf(" |\n");
  }
}

// Per language, the pairs on either side of the pooled pairwise cut `join`.
void print_pairwise_by_language(const Variant& chosen, const Cut& join,
                                const TrainStoriesCommand& command) {
  std::printf("\nper language at the pooled pairwise %.1f%% cut (probability %.4f):\n\n",
              command.merge_rate * 100, join.threshold);
  std::printf("| language | same-event pairs | recall | different-event pairs | merged |\n");
  std::printf("|---|---|---|---|---|\n");
  for (const auto& [language, scored] : chosen.by_language) {
    std::size_t pos = 0, hit = 0, neg = 0, merged = 0;
    for (const auto& [p, y] : scored) {
      if (y) {
        ++pos;
        hit += p >= join.threshold;
      } else {
        ++neg;
        merged += p >= join.threshold;
      }
    }
    std::printf("| %s | %zu | %.2f | %zu | %zu |\n", language.empty() ? "?" : language.c_str(), pos,
                pos ? static_cast<double>(hit) / static_cast<double>(pos) : 0.0, neg, merged);
  }
}

// The thresholds written (four decimals), so the one written is the one measured.
double written(double t) { return std::ceil(t * 1e4) / 1e4; }

// The similarity threshold chosen online, with what the streams gave at it.
struct OnlineChoice {
  double similarity = 1;
  Online at;
  std::size_t allowed = 0;  // the different-event pairs that may merge
};

// The written thresholds are chosen online: the story book compares an article with a story's
// terms (many articles' worth), not with one article, and a story that took one wrong report
// takes the next more easily, so a cut on pairs merges more online than it did on the pairs,
// most where the pairs are few and the gap between the kinds wide. The model replays the
// streams at each threshold tried; the lowest whose stories merge at most `merge_rate` of the
// different-event pairs outside the held-out fold is written (merges are near monotone in
// it: a bisection).
std::optional<OnlineChoice> choose_online(const config::Config& config,
                                          const TrainStoriesCommand& command,
                                          const std::vector<Sample>& samples,
                                          const std::array<double, 3>& w, double merge_cut) {
  const auto online = [&](double threshold) {
    return replay_online(config, command, samples, w, threshold, merge_cut);
  };
  double low = 0, high = 1;
  std::optional<Online> at_high = online(high);
  if (!at_high) return std::nullopt;
  const auto allowed =
      static_cast<std::size_t>(std::floor(command.merge_rate * static_cast<double>(at_high->neg)));
  while (high - low > 2e-4) {
    const double mid = written((low + high) / 2);
    if (mid >= high) break;
    std::optional<Online> o = online(mid);
    if (!o) return std::nullopt;
    if (o->merged <= allowed) {
      high = mid;
      at_high = std::move(o);
    } else {
      low = mid;
    }
  }
  return OnlineChoice{high, std::move(*at_high), allowed};
}

// What the streams gave at the chosen threshold, overall and per language.
void print_online(const OnlineChoice& choice) {
  const double similarity = choice.similarity;
  const Online* at_high = &choice.at;
  const std::size_t allowed = choice.allowed;
  std::printf(
      "\nonline at similarity_threshold %.4f (the streams replayed, pairs outside the "
      "held-out fold): same-event pairs in one story %zu/%zu (%.2f), different-event "
      "pairs merged %zu/%zu (%.1f%%; at most %zu asked)\n\n",
      similarity, at_high->together, at_high->pos,
      at_high->pos ? static_cast<double>(at_high->together) / static_cast<double>(at_high->pos)
                   : 0.0,
      at_high->merged, at_high->neg,
      at_high->neg
          ? 100.0 * static_cast<double>(at_high->merged) / static_cast<double>(at_high->neg)
          : 0.0,
      allowed);
  std::printf("| language | same-event pairs | in one story | different-event pairs | merged |\n");
  std::printf("|---|---|---|---|---|\n");
  for (const auto& [language, row] : at_high->by_language) {
    std::printf("| %s | %zu | %.2f | %zu | %zu |\n", language.empty() ? "?" : language.c_str(),
                row[0], row[0] ? static_cast<double>(row[1]) / static_cast<double>(row[0]) : 0.0,
                row[2], row[3]);
  }
}

}  // namespace

int run_train_stories(const config::Config& config, const TrainStoriesCommand& command) {
  if (command.inputs.empty() || command.inputs.size() != command.labels.size()) {
    std::fprintf(stderr, "train-stories: give one --labels per --input\n");
    return 2;
  }
  const int folds = std::max(2, command.folds);
  std::vector<Sample> samples;
  for (std::size_t set = 0; set < command.inputs.size(); ++set) {
    if (const int failed = add_samples(config, command, set, folds, samples)) return failed;
  }
  std::size_t positives = 0;
  for (const Sample& s : samples) positives += static_cast<std::size_t>(s.y);
  if (positives == 0 || positives == samples.size()) {
    std::fprintf(stderr, "train-stories: needs pairs of both kinds\n");
    return 1;
  }

  const std::vector<Variant> variants = cross_validate(samples, folds, command);
  print_variants(variants, samples.size(), positives, folds);
  const Variant& chosen = variants.back();
  // The pairwise cuts, from the cross-validated scores outside the held-out fold (that fold's
  // online figures must not have chosen them).
  const Cut join = cut_at(chosen.scored_kept, command.merge_rate);
  const Cut merge = cut_at(chosen.scored_kept, command.merge_rate / 2);
  print_pairwise_by_language(chosen, join, command);

  std::vector<const Sample*> train;
  for (const Sample& s : samples) {
    if (s.fold != command.hold_out) train.push_back(&s);
  }
  const auto w = fit(train, command.l2, chosen.use);

  const double merge_cut = written(merge.threshold);
  const auto choice = choose_online(config, command, samples, w, merge_cut);
  if (!choice) return 1;
  const double similarity = choice->similarity;
  const double merging = std::max(merge_cut, similarity);
  print_online(*choice);
  std::printf(
      "\nmodel (%s): bias %.4f, cosine %.4f, containment %.4f; similarity_threshold %.4f, "
      "merge_threshold %.4f\n",
      command.hold_out >= 0 ? ("fold " + std::to_string(command.hold_out) + " held out").c_str()
                            : "all folds",
      w[0], w[1], w[2], similarity, merging);
  return write_outputs(command, samples, w, similarity, merging);
}

}  // namespace newsflow::daemon
