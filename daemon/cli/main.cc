// newsflow: streaming news ingestion. `newsflow --help` lists the subcommands.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "config/config.h"
#include "daemon/cli/create_topics.h"
#include "daemon/cli/feed_cli.h"
#include "daemon/cli/redrive.h"
#include "daemon/cli/replay.h"
#include "daemon/cli/service.h"
#include "daemon/cli/train.h"
#include "daemon/cli/train_stories.h"
#include "daemon/kafka/kafka.h"
#include "daemon/ops/log.h"
#include "daemon/pipeline/card.h"
#include "daemon/pipeline/pipeline.h"
#include "daemon/pipeline/robots.h"
#include "daemon/version.h"
#include "extractors/charset.h"
#include "extractors/html.h"
#include "extractors/mss.h"
#include "extractors/page.h"
#include "extractors/text.h"
#include "extractors/timestamp.h"

namespace {

using namespace newsflow;

// Loads the configuration or prints every problem and returns nothing (exit 2).
std::optional<config::Config> load(const std::string& path) {
  const auto env = config::process_environment();
  auto c = path.empty() ? config::parse_config("", env) : config::load_config_file(path, env);
  if (!c) {
    for (const auto& p : c.error()) {
      std::fprintf(stderr, "config error: %s: %s\n", p.path.empty() ? "(file)" : p.path.c_str(),
                   p.message.c_str());
    }
    return std::nullopt;
  }
  return *c;
}

void setup_logging(const config::Config& c, const std::string& format_override) {
  const std::string& format = format_override.empty() ? c.log.format : format_override;
  log::configure(log::parse_level(c.log.level),
                 format == "json" ? log::Format::kJson : log::Format::kText);
}

std::string default_samples_path() {
  for (const std::string candidate : {"samples/pages.jsonl.gz", "../samples/pages.jsonl.gz"}) {
    if (access(candidate.c_str(), R_OK) == 0) return candidate;
  }
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    std::string dir(exe, static_cast<std::size_t>(n));
    dir = dir.substr(0, dir.rfind('/'));
    for (const std::string rel :
         {"/../samples/pages.jsonl.gz", "/../share/newsflow/samples/pages.jsonl.gz"}) {
      if (access((dir + rel).c_str(), R_OK) == 0) return dir + rel;
    }
  }
  return "samples/pages.jsonl.gz";
}

// `extract.model_file`: the extraction model it names, in place of the built-in one. False (with
// the reason on stderr) when it cannot be loaded.
bool load_model(config::Config& c) {
  static std::optional<extractors::MssModel> custom_model;
  if (c.extract_model_file.empty()) return true;
  std::ifstream in(c.extract_model_file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  auto m = extractors::MssModel::parse(text.str());
  if (!in || !m) {
    std::fprintf(stderr, "config error: extract.model_file: cannot load %s: %s\n",
                 c.extract_model_file.c_str(), in ? m.error().c_str() : "cannot read");
    return false;
  }
  custom_model = std::move(*m);
  c.extract.model = &*custom_model;
  return true;
}

// The line `replay` ends with: what came in and what it became (and, `stage_times`, where the
// time went).
void print_replay_summary(const daemon::ReplayStats& stats, bool stage_times) {
  std::string kinds;
  for (const auto& [k, n] : stats.by_dup_kind) kinds += " " + k + "=" + std::to_string(n);
  std::string reasons;
  for (const auto& [r, n] : stats.by_dlq_reason) reasons += " " + r + "=" + std::to_string(n);
  if (stage_times) {
    const double ordered = stats.read_seconds + stats.ordered_seconds;
    std::fprintf(stderr,
                 "replay: %zu threads; reading %.2f s, parsing and extracting %.2f s (summed "
                 "over the threads), judging and writing in order %.2f s: the ordered part "
                 "keeps up with extraction on up to %.1f threads\n",
                 stats.jobs, stats.read_seconds, stats.prepare_seconds, stats.ordered_seconds,
                 ordered > 0 ? (ordered + stats.prepare_seconds) / ordered : 0.0);
  }
  const std::string files =
      stats.files > 1 ? " from " + std::to_string(stats.files) + " files" : std::string();
  if (stats.warc) {
    std::string skips;
    for (const auto& [r, n] : stats.by_skip_reason) skips += " " + r + "=" + std::to_string(n);
    std::fprintf(stderr,
                 "replay: %zu WARC records%s -> %zu articles (%s ) + %zu dead letters (%s ) + "
                 "%zu skipped (%s ), %zu stories\n",
                 stats.lines, files.c_str(), stats.articles, kinds.c_str(), stats.dead_letters,
                 reasons.c_str(), stats.skipped, skips.c_str(), stats.stories);
    return;
  }
  std::fprintf(stderr,
               "replay: %zu lines%s -> %zu articles (%s ) + %zu dead letters (%s ), %zu "
               "stories\n",
               stats.lines, files.c_str(), stats.articles, kinds.c_str(), stats.dead_letters,
               reasons.c_str(), stats.stories);
}

// `extract --explain`: each block's features, score and verdict, then where each metadata
// field came from, and the candidates its picker passed over.
int explain_page(const config::Config& c, const std::string& bytes, const std::string& page_path,
                 const std::string& page_url) {
  auto decoded = extractors::decode_to_utf8(bytes, "");
  if (!decoded) return 1;
  auto page =
      extractors::parse_page(decoded->text, {.max_html_bytes = c.extract.max_html_bytes,
                                             .max_nesting_depth = c.extract.max_nesting_depth,
                                             .known_utf8 = true,
                                             .max_words = c.extract.max_page_words,
                                             .max_elements = c.extract.max_elements});
  if (!page) {
    std::fprintf(stderr, "extract: %s\n", page.error().detail.c_str());
    return 1;
  }
  const auto& model = c.extract.model ? *c.extract.model : extractors::MssModel::builtin();
  const auto kept = extractors::segment_mss(*page, model, c.extract.segment);
  const auto probabilities = model.probabilities(*page);
  std::printf("block\twords\tlink_words\tp_article\tkept\ttext\n");
  for (std::size_t i = 0; i < page->blocks.size(); ++i) {
    const auto& b = page->blocks[i];
    std::string text = extractors::render_words(*page, b.first_word, b.end_word);
    if (extractors::truncate_text(text, 80)) text += "...";  // at a character boundary
    std::printf("%zu\t%u\t%u\t%.3f\t%d\t%s\n", i, b.word_count(), b.link_words, probabilities[i],
                std::find(kept.begin(), kept.end(), i) != kept.end() ? 1 : 0, text.c_str());
  }
  // Then where each metadata field came from.
  const std::string url = page_url.empty() ? "file://" + page_path : page_url;
  auto article = extractors::extract_html(*decoded, url, c.extract);
  if (!article) return 0;
  std::printf("\nfield\tsource\tvalue\n");
  for (const auto& [field, source] : article->sources) {
    const std::string value = daemon::card_value(*article, field);
    std::printf("%s\t%s\t%s\n", field.c_str(), source.c_str(), value.c_str());
  }
  // And the candidates each field's picker passed over, as they were read.
  if (!article->passed_over.empty()) std::printf("\nfield\tpassed over (source value)\n");
  for (const auto& [field, candidate] : article->passed_over) {
    std::printf("%s\t%s\n", field.c_str(), candidate.c_str());
  }
  return 0;
}

// `extract`: one page's article JSON (or, `explain`, how it was found).
int run_extract(const config::Config& c, const std::string& page_path, const std::string& page_url,
                bool explain) {
  std::ifstream in(page_path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "extract: cannot read %s\n", page_path.c_str());
    return 1;
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  // The page moved out of the stream, not copied: one copy of the input less at its peak.
  if (explain) return explain_page(c, std::move(bytes).str(), page_path, page_url);
  daemon::Pipeline pipeline(c, nullptr);
  daemon::Input input;
  input.url = page_url.empty() ? "file://" + page_path : page_url;
  input.kind = daemon::BodyKind::kHtmlBytes;
  input.body = std::move(bytes).str();
  auto out = pipeline.process(input);
  if (!out) {
    std::fprintf(stderr, "extract: %s: %s\n", out.error().reason.c_str(),
                 out.error().detail.c_str());
    return 1;
  }
  for (const auto& o : *out) std::printf("%s\n", daemon::article_json(o).c_str());
  return 0;
}

// What the command line says: the options of every subcommand, and which one it names.
struct Cli {
  std::string config_path, log_format, role;
  CLI::App *run = nullptr, *demo = nullptr, *replay = nullptr, *extract = nullptr,
           *parse_feed = nullptr, *robots = nullptr, *check = nullptr, *broker = nullptr,
           *produce = nullptr, *redrive = nullptr, *create_topics = nullptr, *train = nullptr,
           *train_stories = nullptr;
  daemon::DemoOptions demo_opts;
  daemon::ReplayPaths paths;
  bool stage_times = false;
  std::string page_path, page_url;
  bool explain = false;
  std::string disabled_date_sources;  // hidden: to measure what each date source is worth
  daemon::ParseFeedOptions feed_opts;
  std::string robots_file, robots_agent = "newsflow";
  std::vector<std::string> robots_paths;
  bool robots_batch = false;
  std::string check_path;
  daemon::DevBrokerOptions broker_opts;
  daemon::ProduceOptions produce_opts;
  daemon::RedriveOptions redrive_opts;
  daemon::CreateTopicsOptions topics_opts;
  std::string redrive_since, redrive_until;
  daemon::TrainCommand train_cmd;
  bool skip_loso = false;
  daemon::TrainStoriesCommand stories_cmd;
};

// `run` and `demo`: the daemon.
void add_service_commands(CLI::App& app, Cli& cli) {
  std::string& config_path = cli.config_path;
  std::string& log_format = cli.log_format;
  auto* run =
      app.add_subcommand("run", "Run the daemon (embedded Kafka when kafka.brokers is empty)");
  run->add_option("--config", config_path, "YAML config file (default: defaults + NEWSFLOW_* env)");
  run->add_option("--log-format", log_format, "text or json")
      ->check(CLI::IsMember({"text", "json"}));
  std::string& role = cli.role;
  run->add_option("--role", role,
                  "all (default): the whole pipeline; extract: pages and feeds to extracted "
                  "articles, scaled out; dedup: extracted articles to verdicts and stories")
      ->check(CLI::IsMember({"all", "extract", "dedup"}));
  cli.run = run;
  daemon::DemoOptions& demo_opts = cli.demo_opts;
  demo_opts.samples = default_samples_path();
  auto* demo = app.add_subcommand(
      "demo", "Run the daemon on the embedded Kafka with the bundled sample pages, then report");
  demo->add_option("--config", config_path, "YAML config file");
  demo->add_option("--samples", demo_opts.samples, "replay JSONL(.gz) of pages")
      ->capture_default_str();
  demo->add_option("--feeds", demo_opts.feeds,
                   "replay JSONL(.gz) of feeds (default: beside the pages)");
  demo->add_option("--linger", demo_opts.linger_seconds,
                   "seconds to keep serving /metrics after the run");
  demo->add_option("--log-format", log_format, "text or json")
      ->check(CLI::IsMember({"text", "json"}));
  cli.demo = demo;
}

// `replay`: batch mode.
void add_replay_command(CLI::App& app, Cli& cli) {
  std::string& config_path = cli.config_path;
  daemon::ReplayPaths& paths = cli.paths;
  bool& stage_times = cli.stage_times;
  auto* replay =
      app.add_subcommand("replay", "Batch mode: JSONL or WARC pages in, article JSONL out");
  replay
      ->add_option("--input", paths.inputs,
                   "input JSONL or WARC (its HTML responses), plain or gzip; - for stdin; a "
                   "directory (its files in name order) or a glob; repeat for more, read in the "
                   "order given as one stream")
      ->required();
  paths.jobs = 0;
  replay->add_flag("--stage-times", stage_times,
                   "before the summary, where the time went: reading, parsing and extracting "
                   "(summed over the threads), judging and writing in input order");
  replay
      ->add_option("--jobs", paths.jobs,
                   "threads that read, parse and extract (judging stays in input order on one; "
                   "the output is the same for any number); 0: the machine's cores")
      ->capture_default_str();
  replay->add_option("--output", paths.output, "article JSONL; - for stdout")->required();
  replay->add_option("--dlq", paths.dlq,
                     "dead-letter JSONL (default: OUTPUT.dlq.jsonl, stderr for -)");
  replay->add_option("--stories", paths.stories,
                     "story JSONL: each story's state after every article, as published on "
                     "topics.stories");
  replay->add_option("--config", config_path, "YAML config file");
  replay->add_flag("--quiet", paths.quiet,
                   "no progress on stderr (a line redrawn in place on a terminal, else one every "
                   "5 s), only the summary");
  // Hidden: tests/bench/date_folds.py switches each date source off to measure what it is worth.
  replay->add_option("--disable-date-sources", cli.disabled_date_sources)->group("");
  cli.replay = replay;
}

// `extract`, `parse-feed`, `robots`, `check-config`: one document at a time, as the pipeline
// reads it.
void add_document_commands(CLI::App& app, Cli& cli) {
  std::string& config_path = cli.config_path;
  auto* extract = app.add_subcommand("extract", "Extract one HTML page and print its article JSON");
  extract->add_option("page", cli.page_path, "HTML file (raw bytes; charset detected)")->required();
  extract->add_option("--url", cli.page_url, "the page's URL")->capture_default_str();
  extract->add_option("--config", config_path, "YAML config file");
  extract->add_flag("--explain", cli.explain,
                    "print every block with its P(article) and whether MSS kept it, then where "
                    "each metadata field (dates, image, description, authors, ...) came from, as "
                    "TSV");
  extract->add_option("--disable-date-sources", cli.disabled_date_sources)->group("");
  cli.extract = extract;
  daemon::ParseFeedOptions& feed_opts = cli.feed_opts;
  auto* parse_feed = app.add_subcommand(
      "parse-feed", "Parse RSS/Atom/JSON feeds as the pipeline does and print one JSON line each");
  parse_feed->add_option("files", feed_opts.files, "feed documents (raw bytes; charset detected)");
  parse_feed->add_option("--url", feed_opts.url, "the feed's URL (for relative links)");
  parse_feed->add_option("--content-type", feed_opts.content_type,
                         "the Content-Type it was served with (may carry a charset)");
  parse_feed->add_flag("--batch", feed_opts.batch,
                       "read {\"path\",\"url\",\"content_type\"} JSON lines from stdin");
  cli.parse_feed = parse_feed;
  auto* robots = app.add_subcommand(
      "robots", "Read a robots.txt as the fetcher does (RFC 9309) and say which paths it allows");
  robots->add_option("file", cli.robots_file, "robots.txt file");
  robots->add_option("paths", cli.robots_paths, "paths or URLs to check (\"/a/b?c\")");
  robots->add_option("--agent", cli.robots_agent, "the crawler's product token")
      ->capture_default_str();
  robots->add_flag("--batch", cli.robots_batch,
                   "read {\"robots\": TEXT, \"paths\": [...]} JSON lines from stdin and print "
                   "{\"allowed\": [...], \"crawl_delay\": S} for each");
  cli.robots = robots;
  auto* check = app.add_subcommand("check-config", "Validate a config file; exit 1 on problems");
  check->add_option("file", cli.check_path, "YAML config file")->required();
  cli.check = check;
}

// `dev-broker`, `produce`, `redrive`: Kafka at hand.
void add_kafka_commands(CLI::App& app, Cli& cli) {
  std::string& config_path = cli.config_path;
  daemon::DevBrokerOptions& broker_opts = cli.broker_opts;
  auto* broker = app.add_subcommand(
      "dev-broker",
      "Host an in-process Kafka mock cluster until SIGTERM, for development with kcat and "
      "restarts of `newsflow run`.\nThe mock cluster keeps only about 5 MiB per partition and "
      "drops older messages, so topics get many partitions (64 by default: a few thousand pages).");
  broker->add_option("--brokers", broker_opts.brokers, "number of brokers")->capture_default_str();
  broker->add_option("--partitions", broker_opts.partitions, "partitions per topic")
      ->capture_default_str();
  broker
      ->add_option("--topics", broker_opts.topics,
                   "topics to create (default: the configured ones)")
      ->delimiter(',');
  broker->add_option("--bootstrap-file", broker_opts.bootstrap_file,
                     "write the bootstrap address to this file once ready");
  broker->add_option(
      "--control-file", broker_opts.control_file,
      "apply fault-injection commands as lines are appended to this file: `down ID`, `up ID` "
      "(ID -1: all brokers), `rtt ID MS`, `leader TOPIC PARTITION ID`, `errors API ERROR COUNT` "
      "(the next COUNT requests of API, e.g. Produce or OffsetCommit, fail with ERROR, e.g. "
      "NOT_LEADER_FOR_PARTITION or _TRANSPORT)");
  broker->add_option("--config", config_path, "YAML config file (for topic names)");
  cli.broker = broker;
  daemon::ProduceOptions& produce_opts = cli.produce_opts;
  auto* produce = app.add_subcommand("produce",
                                     "Send replay lines or WARC pages to kafka.brokers (pages and "
                                     "feeds topics) as a crawler would");
  produce->add_option("--input", produce_opts.input, "replay JSONL(.gz) or WARC(.gz)")->required();
  produce->add_option("--repeat", produce_opts.repeat, "copies of each line (new ids and URLs)")
      ->capture_default_str();
  produce
      ->add_option("--rate", produce_opts.rate,
                   "messages per second, each with a produced_at header (0: all at once)")
      ->check(CLI::NonNegativeNumber);
  produce->add_flag("--poison", produce_opts.poison, "also send three poison messages");
  produce->add_flag("--event-timestamps", produce_opts.event_timestamps,
                    "stamp each record with its event time (default: the time it is sent; "
                    "the topic's time retention counts from the stamp)");
  produce->add_flag("--quiet", produce_opts.quiet, "no progress on stderr");
  produce->add_option("--config", config_path, "YAML config file");
  cli.produce = produce;
  daemon::RedriveOptions& redrive_opts = cli.redrive_opts;
  auto* redrive = app.add_subcommand(
      "redrive",
      "Send dead letters that carry their input back to the topic they came from (after the "
      "cause is fixed)");
  redrive->add_option("--reason", redrive_opts.reasons,
                      "error_reason to take (repeat for several; default: every reason)");
  redrive->add_option("--since", cli.redrive_since,
                      "dead letters written at or after this time (RFC 3339 or Unix seconds)");
  redrive->add_option("--until", cli.redrive_until, "and before this time");
  redrive->add_option("--limit", redrive_opts.limit, "at most this many (0: all)");
  redrive->add_flag("--dry-run", redrive_opts.dry_run, "list what would be sent, send nothing");
  redrive->add_option("--config", config_path, "YAML config file");
  cli.redrive = redrive;
  daemon::CreateTopicsOptions& topics_opts = cli.topics_opts;
  auto* create_topics = app.add_subcommand(
      "create-topics",
      "Create the configured topics on kafka.brokers (the state changelog and the stories "
      "compacted, the others deleting by retention) and check every one");
  create_topics
      ->add_option("--partitions", topics_opts.partitions,
                   "partitions of each topic (the extracted topic twice as many, the dedup lease "
                   "one)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  create_topics
      ->add_option("--replication-factor", topics_opts.replication_factor,
                   "replicas of each partition (-1: the brokers' default.replication.factor)")
      ->capture_default_str();
  create_topics->add_flag("--check", topics_opts.check,
                          "create nothing: check that every topic exists, the changelog and "
                          "stories compacted; exit 1 if not");
  create_topics->add_option("--config", config_path, "YAML config file");
  cli.create_topics = create_topics;
}

// `train-extractor` and `train-stories`: the models.
void add_training_commands(CLI::App& app, Cli& cli) {
  std::string& config_path = cli.config_path;
  daemon::TrainCommand& train_cmd = cli.train_cmd;
  auto* train = app.add_subcommand(
      "train-extractor",
      "Train the MSS block classifier on labelled pages, report k-fold cross-validated AEB "
      "token-4-gram P/R/F1 and write the model");
  train
      ->add_option("--pages", train_cmd.pages,
                   "replay JSONL(.gz) with id, url, html (repeat for several labelled sets)")
      ->required()
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  train
      ->add_option("--truth", train_cmd.truth,
                   "JSONL(.gz) with id and articleBody, or with/without snippet lists (one per "
                   "--pages, same order)")
      ->required()
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  train->add_option("--out", train_cmd.out, "model file to write");
  train->add_option("--folds", train_cmd.folds, "k of k-fold cross-validation (0: none)")
      ->capture_default_str();
  train
      ->add_option("--fold-seed", train_cmd.fold_seed,
                   "shuffle pages into folds with this seed (0: by sorted id), for repeated CV")
      ->capture_default_str();
  train->add_option("--cv-output", train_cmd.cv_output,
                    "write the cross-validated predictions as replay output JSONL");
  train->add_flag("--skip-leave-one-set-out", cli.skip_loso,
                  "with several sets, do not also score each set by a model trained without it");
  train->add_option("--epochs", train_cmd.epochs, "SGD epochs")->capture_default_str();
  train->add_option("--learning-rate", train_cmd.learning_rate, "SGD step")->capture_default_str();
  train->add_option("--l2", train_cmd.l2, "L2 regularization (per occurrence of a feature)")
      ->capture_default_str();
  train->add_flag("!--no-average", train_cmd.average,
                  "keep the last SGD weights instead of averaging the second half's epochs");
  train->add_option("--config", config_path, "YAML config file (segmentation options)");
  cli.train = train;
  daemon::TrainStoriesCommand& stories_cmd = cli.stories_cmd;
  auto* train_stories = app.add_subcommand(
      "train-stories",
      "Fit the story model on labelled same-event and different-event pairs, report its recall "
      "cross-validated by event and write it as a config file");
  train_stories
      ->add_option("--input", stories_cmd.inputs, "replay JSONL(.gz) (repeat for several sets)")
      ->required()
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  train_stories
      ->add_option("--labels", stories_cmd.labels,
                   "JSON with story_pos, story_neg, optionally scored_pairs and dup_groups (one "
                   "per --input, same order)")
      ->required()
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  train_stories->add_option("--out", stories_cmd.out, "YAML config file to write");
  train_stories->add_option("--folds", stories_cmd.folds, "k of the cross-validation by event")
      ->capture_default_str()
      ->check(CLI::Range(2, 100));
  train_stories->add_option("--hold-out", stories_cmd.hold_out,
                            "train the written model without this fold's events");
  train_stories->add_option("--folds-output", stories_cmd.folds_output,
                            "write each labelled pair's fold as JSON");
  train_stories
      ->add_option("--merge-rate", stories_cmd.merge_rate,
                   "share of different-event pairs the stories merge, replayed at the written "
                   "similarity_threshold")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  train_stories->add_option("--l2", stories_cmd.l2, "L2 penalty")->capture_default_str();
  train_stories->add_option("--config", config_path, "YAML config file (story options)");
  cli.train_stories = train_stories;
}

// `check-config FILE`.
int check_config(const std::string& path) {
  auto c = load(path);
  if (!c) return 1;
  const auto problems = daemon::check_kafka_config(*c);
  for (const auto& p : problems) {
    std::fprintf(stderr, "config error: %s: %s\n", p.path.c_str(), p.message.c_str());
  }
  if (!problems.empty()) return 1;
  std::printf("%s: ok\n", path.c_str());
  return 0;
}

// `demo`: the sample pages (and the feeds beside them) on a port of its own.
int run_demo(config::Config& c, daemon::DemoOptions demo_opts) {
  // The demo must not collide with a daemon already serving the default port.
  if (c.http.listen == "127.0.0.1:9464" && !std::getenv("NEWSFLOW_HTTP__LISTEN")) {
    c.http.listen = "127.0.0.1:0";
  }
  if (demo_opts.feeds.empty()) {
    const auto slash = demo_opts.samples.rfind('/');
    const std::string dir =
        slash == std::string::npos ? "" : demo_opts.samples.substr(0, slash + 1);
    if (access((dir + "feeds.jsonl.gz").c_str(), R_OK) == 0)
      demo_opts.feeds = dir + "feeds.jsonl.gz";
  }
  return daemon::run_demo(c, demo_opts);
}

// `redrive` with its time bounds read.
int run_redrive(const config::Config& c, daemon::RedriveOptions opts, const std::string& since,
                const std::string& until) {
  auto time_of = [](const std::string& text, const char* what) -> std::optional<std::int64_t> {
    if (text.empty()) return std::nullopt;
    if (text.find_first_not_of("0123456789") == std::string::npos) return std::stoll(text);
    if (auto t = extractors::parse_iso8601(text)) return *t;
    std::fprintf(stderr, "redrive: %s is not RFC 3339 or Unix seconds: %s\n", what, text.c_str());
    std::exit(2);
  };
  opts.since = time_of(since, "--since");
  opts.until = time_of(until, "--until");
  return daemon::run_redrive(c, opts);
}

// The subcommand `cli` names, with its configuration loaded.
int dispatch(Cli& cli) {
  if (*cli.check) return check_config(cli.check_path);
  if (*cli.robots) {
    return daemon::run_robots(cli.robots_file, cli.robots_paths, cli.robots_agent,
                              cli.robots_batch);
  }
  auto c = load(cli.config_path);
  if (!c) return 2;
  if (!load_model(*c)) return 2;
  if (!extractors::parse_date_sources(cli.disabled_date_sources,
                                      c->extract.disabled_date_sources)) {
    std::fprintf(stderr, "--disable-date-sources: not a list of date sources: %s\n",
                 cli.disabled_date_sources.c_str());
    return 2;
  }
  if (!cli.role.empty()) c->role = *config::parse_role(cli.role);  // checked by the option
  if (c->role != config::Role::kAll && c->kafka.brokers.empty()) {
    std::fprintf(stderr,
                 "config error: role: '%s' shares the work with other processes through Kafka: "
                 "it needs kafka.brokers (an embedded cluster is private to one process)\n",
                 std::string(config::role_name(c->role)).c_str());
    return 2;
  }
  setup_logging(*c, cli.log_format);

  if (*cli.run) return daemon::run_service(*c);
  if (*cli.demo) return run_demo(*c, cli.demo_opts);
  if (*cli.broker) return daemon::run_dev_broker(*c, cli.broker_opts);
  if (*cli.parse_feed) return daemon::run_parse_feed(cli.feed_opts);
  if (*cli.train) {
    cli.train_cmd.leave_one_set_out = !cli.skip_loso;
    return daemon::run_train_extractor(*c, cli.train_cmd);
  }
  if (*cli.train_stories) return daemon::run_train_stories(*c, cli.stories_cmd);
  if (*cli.produce) return daemon::run_produce(*c, cli.produce_opts);
  if (*cli.create_topics) return daemon::run_create_topics(*c, cli.topics_opts);
  if (*cli.redrive) return run_redrive(*c, cli.redrive_opts, cli.redrive_since, cli.redrive_until);
  if (*cli.replay) {
    auto stats = daemon::run_replay(*c, cli.paths, nullptr);
    if (!stats) {
      std::fprintf(stderr, "replay: %s\n", stats.error().c_str());
      return 1;
    }
    print_replay_summary(*stats, cli.stage_times);
    return 0;
  }
  if (*cli.extract) return run_extract(*c, cli.page_path, cli.page_url, cli.explain);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  daemon::block_stop_signals();
  CLI::App app{"newsflow: streaming news ingestion: extract, deduplicate and group articles"};
  app.set_version_flag("--version", std::string("newsflow ") + kVersion);
  app.require_subcommand(1);
  Cli cli;
  add_service_commands(app, cli);
  add_replay_command(app, cli);
  add_document_commands(app, cli);
  add_kafka_commands(app, cli);
  add_training_commands(app, cli);
  CLI11_PARSE(app, argc, argv);
  return dispatch(cli);
}
