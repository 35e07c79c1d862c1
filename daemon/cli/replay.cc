#include "daemon/cli/replay.h"

#include <glob.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "daemon/cli/progress.h"
#include "daemon/kafka/worker_pool.h"
#include "daemon/ops/crash_scope.h"
#include "daemon/ops/log.h"
#include "daemon/ops/metrics.h"
#include "daemon/pipeline/fetcher.h"
#include "daemon/pipeline/input.h"
#include "daemon/pipeline/input_file.h"
#include "daemon/pipeline/pipeline.h"
#include "daemon/pipeline/warc.h"
#include "extractors/text.h"

namespace newsflow::daemon {
namespace {

// Reads lines from a plain or gzip file. Lines longer than `max_line` are reported as truncated
// rather than held in memory whole.
class LineReader {
 public:
  LineReader(InputFile& file, std::size_t max_line) : file_(file), max_line_(max_line) {}

  // Returns false at end of input. `too_long` is set when the line was cut at max_line.
  bool next(std::string& line, bool& too_long) {
    line.clear();
    too_long = false;
    while (true) {
      if (pos_ == len_) {
        const std::ptrdiff_t n = file_.read(buf_, sizeof buf_);
        if (n <= 0) return !line.empty() || too_long;
        pos_ = 0;
        len_ = static_cast<std::size_t>(n);
      }
      const char* start = buf_ + pos_;
      const void* nl = std::memchr(start, '\n', len_ - pos_);
      const std::size_t take = nl ? static_cast<const char*>(nl) - start : len_ - pos_;
      if (!too_long) {
        if (line.size() + take > max_line_) {
          too_long = true;
          line.append(start, std::min(take, max_line_ - line.size()));
        } else {
          line.append(start, take);
        }
      }
      pos_ += take;
      if (nl) {
        ++pos_;
        return true;
      }
    }
  }

  bool failed() const { return !file_.error().empty(); }

 private:
  InputFile& file_;
  std::size_t max_line_;
  char buf_[1 << 16];
  std::size_t pos_ = 0, len_ = 0;
};

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f && f != stdout && f != stderr) std::fclose(f);
  }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

File open_output(const std::string& path) {
  if (path == "-") return File(stdout);
  return File(std::fopen(path.c_str(), "wb"));
}

bool write_line(std::FILE* f, const std::string& line) {
  return std::fwrite(line.data(), 1, line.size(), f) == line.size() && std::fputc('\n', f) != EOF;
}

// One input on its way: read (on the reading thread), parsed and extracted (on any), then
// judged and written (in input order, on the calling thread).
struct Item {
  std::size_t file = 0;                    // index into the files read
  std::size_t line = 0;                    // its line (or WARC record) number in its file
  std::optional<std::uint64_t> offset;     // a WARC record's offset in its file
  std::string raw;                         // a replay line still to parse
  ParsedInput parsed;                      // the input, or why it is none
  std::optional<std::string> skip_reason;  // a WARC record that is not a page
  std::optional<tl::expected<std::vector<Pipeline::Extracted>, Failure>> prepared;
};

// Reads the files in order into batches of items: lines (parsed later, off this thread) or
// WARC records (parsed as they are read).
class ItemReader {
 public:
  ItemReader(const std::vector<std::string>& files, std::size_t max_line, std::size_t max_html)
      : files_(files), max_line_(max_line), max_html_(max_html) {}

  // Opens every file first: a missing one fails the run before anything is written, and the
  // progress line knows the total size.
  tl::expected<std::optional<std::uint64_t>, std::string> open_all() {
    std::optional<std::uint64_t> total = 0;
    for (const std::string& path : files_) {
      auto in = InputFile::open(path);
      if (!in) return tl::unexpected("cannot open input " + in.error());
      if (total && (*in)->size()) {
        *total += *(*in)->size();
      } else {
        total.reset();
      }
      opened_.push_back(std::move(*in));
    }
    return total;
  }

  // Up to `max_items` items or about `max_bytes` of them; false at the end of all files. An
  // error reading a file ends the run (`error()`).
  bool fill(std::vector<Item>& batch, std::size_t max_items, std::size_t max_bytes,
            ReplayStats& stats) {
    std::size_t bytes = 0;
    // A slow input (a pipe fed as a crawl goes) is not held back to fill a batch: what came
    // within 100 ms goes on.
    const auto started = std::chrono::steady_clock::now();
    while (batch.size() < max_items && bytes < max_bytes) {
      if (!batch.empty() &&
          std::chrono::steady_clock::now() - started > std::chrono::milliseconds(100)) {
        break;
      }
      if (file_ >= opened_.size()) return false;
      InputFile& in = *opened_[file_];
      if (!started_) {
        started_ = true;
        line_ = 0;
        if (is_warc(in.peek(8))) {
          stats.warc = true;
          archive_ = std::make_unique<WarcReader>(in, WarcOptions{max_html_});
        } else if (is_arc(in.peek(11))) {
          stats.warc = true;
          archive_ = std::make_unique<ArcReader>(in, WarcOptions{max_html_});
        } else {
          lines_ = std::make_unique<LineReader>(in, max_line_);
        }
        ++stats.files;
      }
      Item item;
      item.file = file_;
      if (archive_) {
        auto record = archive_->next();
        if (!record) {
          if (const std::string& e = archive_->error(); !e.empty()) {
            error_ =
                "input " + files_[file_] + ": " + e + ", after record " + std::to_string(line_);
            return false;
          }
          next_file();
          continue;
        }
        item.line = ++line_;
        item.offset = record->offset;
        if (record->outcome == WarcRecord::Outcome::kSkipped) {
          item.skip_reason = std::move(record->skip_reason);
        } else {
          item.parsed = std::move(record->parsed);
        }
        bytes += item.parsed.input.body.size();
      } else {
        bool too_long = false;
        if (!lines_->next(text_, too_long)) {
          if (lines_->failed()) {
            error_ = "input " + files_[file_] + ": " + in.error() + ", after line " +
                     std::to_string(line_);
            return false;
          }
          next_file();
          continue;
        }
        item.line = ++line_;
        if (too_long) {
          item.parsed.failure = Failure{
              Reason::kTooLarge, "line is longer than " + std::to_string(max_line_) + " bytes"};
        } else if (extractors::is_blank(text_)) {
          item.parsed.failure = Failure{Reason::kEmptyLine, "line is blank"};
        } else {
          item.raw = std::move(text_);
          text_.clear();
          bytes += item.raw.size();
        }
      }
      batch.push_back(std::move(item));
    }
    return true;
  }

  // Bytes of the files consumed so far (compressed bytes for gzip).
  std::uint64_t consumed() const {
    std::uint64_t n = done_bytes_;
    if (file_ < opened_.size()) n += opened_[file_]->raw_offset();
    return n;
  }
  const std::string& error() const { return error_; }
  const std::string& path(std::size_t file) const { return files_[file]; }

 private:
  void next_file() {
    done_bytes_ += opened_[file_]->raw_offset();
    archive_.reset();
    lines_.reset();
    opened_[file_].reset();  // closed: a long list of files holds one open at a time
    ++file_;
    started_ = false;
  }

  const std::vector<std::string>& files_;
  std::size_t max_line_, max_html_;
  std::vector<std::unique_ptr<InputFile>> opened_;
  std::size_t file_ = 0;
  bool started_ = false;
  std::size_t line_ = 0;
  std::unique_ptr<ArchiveReader> archive_;  // a WARC or ARC file's
  std::unique_ptr<LineReader> lines_;
  std::string text_;
  std::uint64_t done_bytes_ = 0;
  std::string error_;
};

}  // namespace

tl::expected<std::vector<std::string>, std::string> expand_inputs(
    const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const std::string& given : inputs) {
    if (given == "-") {
      out.push_back(given);
      continue;
    }
    std::error_code ec;
    if (fs::is_directory(given, ec)) {
      std::vector<std::string> names;
      for (const auto& entry : fs::directory_iterator(given, ec)) {
        const std::string name = entry.path().filename().string();
        if (name.starts_with(".") || !entry.is_regular_file(ec)) continue;
        names.push_back(entry.path().string());
      }
      if (ec) return tl::unexpected("cannot list " + given + ": " + ec.message());
      std::sort(names.begin(), names.end());
      out.insert(out.end(), names.begin(), names.end());
    } else if (given.find_first_of("*?[") != std::string::npos && !fs::exists(given, ec)) {
      glob_t matches{};
      const int rc = ::glob(given.c_str(), GLOB_ERR, nullptr, &matches);
      if (rc == 0) {
        for (std::size_t i = 0; i < matches.gl_pathc; ++i) out.emplace_back(matches.gl_pathv[i]);
      }
      ::globfree(&matches);
      if (rc == GLOB_NOMATCH) return tl::unexpected("no file matches " + given);
      if (rc != 0) return tl::unexpected("cannot read the files of " + given);
    } else {
      out.push_back(given);  // opened later: a missing file says so then
    }
  }
  if (out.empty()) return tl::unexpected(std::string("no input files"));
  return out;
}

namespace {

// The files replay writes: the articles, the dead letters (stderr when none is named and the
// articles go to stdout), the stories (none unless named).
struct ReplayOutputs {
  File out, dlq, stories;
};

tl::expected<ReplayOutputs, std::string> open_outputs(const ReplayPaths& paths) {
  ReplayOutputs o;
  o.out = open_output(paths.output);
  if (!o.out) return tl::unexpected("cannot open output " + paths.output);
  std::string dlq_path = paths.dlq;
  if (dlq_path.empty()) dlq_path = paths.output == "-" ? "" : paths.output + ".dlq.jsonl";
  o.dlq = dlq_path.empty() ? File(stderr) : open_output(dlq_path);
  if (!o.dlq) return tl::unexpected("cannot open dead-letter file " + dlq_path);
  o.stories = paths.stories.empty() ? File() : open_output(paths.stories);
  if (!paths.stories.empty() && !o.stories) {
    return tl::unexpected("cannot open stories output " + paths.stories);
  }
  return o;
}

using Clock = std::chrono::steady_clock;

std::uint64_t ns_since(Clock::time_point t0) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
}

// One replay: the items read, each parsed and extracted on any thread (`prepare`), then judged
// and written in input order on the calling thread (`commit`), with the progress line and the
// counts. Not thread-safe but for `prepare`.
class ReplayRun {
 public:
  ReplayRun(const config::Config& config, const ReplayPaths& paths, Metrics* metrics,
            const std::vector<std::string>& files, ItemReader& reader,
            std::optional<std::uint64_t> total, ReplayOutputs outputs)
      : config_(config),
        paths_(paths),
        metrics_(metrics),
        files_(files),
        reader_(reader),
        o_(std::move(outputs)),
        pipeline_(config, metrics),
        progress_(stderr, ProgressLine::mode_for(stderr, paths.quiet), "replay", "pages/s", total),
        // Articles on the terminal the progress line is drawn on: the line makes way for each.
        out_beside_progress_(o_.out.get() == stdout && ::isatty(STDOUT_FILENO)),
        several_files_(files.size() > 1) {}

  tl::expected<void, std::string> start_fetcher();
  tl::expected<ReplayStats, std::string> go();

 private:
  void tick();
  bool dead_letter(const Item& item, const Input& input, const Failure& failure,
                   bool feed_item = false);
  std::string where(const Item& item) const;
  void prepare(Item& item);
  bool commit(Item& item);
  bool commit_pages(Item& item, std::vector<Pipeline::Extracted>& prepared);
  bool fill(std::vector<Item>& batch, std::size_t max_items, std::size_t max_bytes);
  bool run_on_this_thread();
  bool run_on_pool(std::size_t jobs);

  const config::Config& config_;
  const ReplayPaths& paths_;
  Metrics* metrics_;
  const std::vector<std::string>& files_;
  ItemReader& reader_;
  ReplayOutputs o_;
  Pipeline pipeline_;
  std::unique_ptr<Fetcher> fetcher_;
  ReplayStats stats_;
  ProgressLine progress_;
  ProgressCounts counts_;
  const bool out_beside_progress_;
  const bool several_files_;
  // Where the time goes, for --stage-times (nanoseconds; parsing and extraction summed over
  // the threads).
  std::atomic<std::uint64_t> prepare_ns_{0};
  std::uint64_t ordered_ns_ = 0, read_ns_ = 0;
};

tl::expected<void, std::string> ReplayRun::start_fetcher() {
  if (config_.fetch.enabled) {
    auto f = Fetcher::create(config_.fetch, metrics_);
    if (!f) return tl::unexpected(f.error());
    fetcher_ = std::move(*f);
  }
  return {};
}

void ReplayRun::tick() {
  counts_.inputs = stats_.lines;
  counts_.bytes = reader_.consumed();
  counts_.articles = stats_.articles;
  counts_.dead_letters = stats_.dead_letters;
  counts_.skipped = stats_.skipped;
  progress_.update(counts_);
}

// `feed_item`: the record is about one item of a feed line whose page could not be had, in
// addition to the line's own outcome.
bool ReplayRun::dead_letter(const Item& item, const Input& input, const Failure& failure,
                            bool feed_item) {
  nlohmann::ordered_json j;
  if (several_files_) j["input_file"] = reader_.path(item.file);
  j["input_line"] = item.line;
  if (item.offset) j["input_offset"] = *item.offset;
  if (feed_item) j["feed_item"] = true;
  j["id"] = input.id.empty() ? nlohmann::json(nullptr) : nlohmann::json(input.id);
  j["url"] = input.url.empty() ? nlohmann::json(nullptr) : nlohmann::json(input.url);
  j["reason"] = failure.reason;
  j["detail"] = failure.detail;
  ++stats_.dead_letters;
  ++stats_.by_dlq_reason[failure.reason];
  if (o_.dlq.get() == stderr) progress_.clear();
  if (metrics_) metrics_->dead_letter(failure.reason);
  return write_line(o_.dlq.get(), j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

// The input a fatal signal names (on stderr): "FILE line N".
std::string ReplayRun::where(const Item& item) const {
  return files_[item.file] + (item.offset ? " record at offset " + std::to_string(*item.offset)
                                          : " line " + std::to_string(item.line));
}

// What depends on no state: parsing the line and extracting its articles (any thread).
void ReplayRun::prepare(Item& item) {
  const CrashScope scope(where(item));
  const auto t0 = Clock::now();
  if (!item.raw.empty()) {
    item.parsed = parse_replay_line(item.raw);
    std::string().swap(item.raw);
  }
  if (!item.skip_reason && !item.parsed.failure) {
    item.prepared = pipeline_.prepare(item.parsed.input);
  }
  prepare_ns_.fetch_add(ns_since(t0), std::memory_order_relaxed);
}

// Then, in input order: fetching the links of feed items (the seen-links state), judging,
// writing. False when a file cannot be written.
bool ReplayRun::commit(Item& item) {
  const CrashScope scope(where(item));
  const auto t0 = Clock::now();
  ++stats_.lines;
  if (metrics_) metrics_->consumed("replay", 0);
  bool ok = true;
  if (item.skip_reason) {
    ++stats_.skipped;
    ++stats_.by_skip_reason[*item.skip_reason];
  } else if (item.parsed.failure) {
    ok = dead_letter(item, item.parsed.input, *item.parsed.failure);
  } else if (!*item.prepared) {
    ok = dead_letter(item, item.parsed.input, item.prepared->error());
  } else {
    ok = commit_pages(item, **item.prepared);
  }
  item = Item{};  // its memory goes back now, not with the batch
  tick();
  ordered_ns_ += ns_since(t0);
  return ok;
}

bool ReplayRun::commit_pages(Item& item, std::vector<Pipeline::Extracted>& prepared) {
  bool ok = true;
  if (fetcher_) {
    std::vector<Pipeline::Extracted*> items;
    for (auto& e : prepared) items.push_back(&e);
    pipeline_.resolve_links(items, *fetcher_);
    // A page that could not be had: its own DLQ line (the item keeps its teaser text in
    // OUT when it has one).
    for (const auto& e : prepared) {
      if (!e.fetch_failure) continue;
      Input feed_item;
      feed_item.id = e.article.id;
      feed_item.url = e.fetch_url;
      ok = dead_letter(item, feed_item, *e.fetch_failure, true) && ok;
    }
  }
  const auto outputs = pipeline_.commit(std::move(prepared), item.parsed.input);
  pipeline_.confirm_links();
  if (out_beside_progress_ && !outputs.empty()) progress_.clear();
  for (const Output& o : outputs) {
    ok = ok && write_line(o_.out.get(), article_json(o));
    if (o_.stories) ok = ok && write_line(o_.stories.get(), story_json(o.story));
    if (paths_.observe) paths_.observe(o);
    ++stats_.articles;
    if (o.verdict.kind != dedup::DupKind::kUnique) ++counts_.duplicates;
    const std::string kind(dedup::dup_kind_name(o.verdict.kind));
    ++stats_.by_dup_kind[kind];
    if (metrics_) metrics_->article(kind, o.article.language);
  }
  return ok;
}

bool ReplayRun::fill(std::vector<Item>& batch, std::size_t max_items, std::size_t max_bytes) {
  const auto t0 = Clock::now();
  const bool more = reader_.fill(batch, max_items, max_bytes, stats_);
  read_ns_ += ns_since(t0);
  return more;
}

// A batch is bounded in bytes so memory does not grow with the input.
constexpr std::size_t kBatchBytes = 64 << 20;

// Everything on this thread, one input at a time. False when a file cannot be written.
bool ReplayRun::run_on_this_thread() {
  std::vector<Item> current;
  while (fill(current, 1, kBatchBytes)) {
    for (Item& item : current) {
      prepare(item);
      if (!commit(item)) return false;
    }
    current.clear();
  }
  for (Item& item : current) {  // the last one read before the end
    prepare(item);
    if (!commit(item)) return false;
  }
  return true;
}

// The pool extracts batch k+1 while this thread judges and writes batch k, then reads batch k+2
// (and helps extract what no worker has taken yet while it waits). A batch is what one thread
// reads while the others extract the batch before: big enough to keep every thread busy.
bool ReplayRun::run_on_pool(std::size_t jobs) {
  const std::size_t batch_items = 16 * jobs;
  std::vector<Item> current, next;
  WorkerPool pool(jobs - 1);
  bool more = fill(current, batch_items, kBatchBytes);
  pool.start(current.size(), [&](std::size_t i) { prepare(current[i]); });
  while (!current.empty()) {
    if (more) more = fill(next, batch_items, kBatchBytes);
    pool.wait();
    std::swap(current, next);  // `next` is the extracted batch now
    if (!current.empty()) {
      pool.start(current.size(), [this, &current](std::size_t i) { prepare(current[i]); });
    }
    for (Item& item : next) {
      if (!commit(item)) {
        pool.wait();
        return false;
      }
    }
    next.clear();
  }
  pool.wait();
  return true;
}

tl::expected<ReplayStats, std::string> ReplayRun::go() {
  install_crash_handler("");
  std::size_t jobs = paths_.jobs;
  if (jobs == 0) jobs = std::max(1u, std::thread::hardware_concurrency());
  if (!(jobs == 1 ? run_on_this_thread() : run_on_pool(jobs))) {
    return tl::unexpected("cannot write output: " + std::string(std::strerror(errno)));
  }
  if (!reader_.error().empty()) return tl::unexpected(reader_.error());
  if (std::fflush(o_.out.get()) != 0 || std::fflush(o_.dlq.get()) != 0 ||
      (o_.stories && std::fflush(o_.stories.get()) != 0)) {
    return tl::unexpected(std::string("cannot flush output"));
  }
  stats_.stories = pipeline_.stories().size();
  stats_.jobs = jobs;
  stats_.read_seconds = static_cast<double>(read_ns_) / 1e9;
  stats_.prepare_seconds = static_cast<double>(prepare_ns_.load()) / 1e9;
  stats_.ordered_seconds = static_cast<double>(ordered_ns_) / 1e9;
  return stats_;
}

}  // namespace

tl::expected<ReplayStats, std::string> run_replay(const config::Config& config,
                                                  const ReplayPaths& paths, Metrics* metrics) {
  auto files = expand_inputs(paths.inputs);
  if (!files) return tl::unexpected(files.error());
  // A line holds the document plus JSON escaping; allow generous room over the HTML limit.
  const std::size_t max_line = config.extract.max_html_bytes * 2 + (1 << 20);
  ItemReader reader(*files, max_line, config.extract.max_html_bytes);
  auto total = reader.open_all();
  if (!total) return tl::unexpected(total.error());
  auto outputs = open_outputs(paths);
  if (!outputs) return tl::unexpected(outputs.error());
  ReplayRun run(config, paths, metrics, *files, reader, *total, std::move(*outputs));
  if (auto started = run.start_fetcher(); !started) return tl::unexpected(started.error());
  return run.go();
}

}  // namespace newsflow::daemon
