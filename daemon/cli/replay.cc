#include "daemon/cli/replay.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "daemon/cli/progress.h"
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

}  // namespace

tl::expected<ReplayStats, std::string> run_replay(const config::Config& config,
                                                  const ReplayPaths& paths, Metrics* metrics) {
  auto in = InputFile::open(paths.input);
  if (!in) return tl::unexpected("cannot open input " + in.error());

  File out = open_output(paths.output);
  if (!out) return tl::unexpected("cannot open output " + paths.output);
  std::string dlq_path = paths.dlq;
  if (dlq_path.empty()) dlq_path = paths.output == "-" ? "" : paths.output + ".dlq.jsonl";
  File dlq = dlq_path.empty() ? File(stderr) : open_output(dlq_path);
  if (!dlq) return tl::unexpected("cannot open dead-letter file " + dlq_path);
  File stories = paths.stories.empty() ? File() : open_output(paths.stories);
  if (!paths.stories.empty() && !stories) {
    return tl::unexpected("cannot open stories output " + paths.stories);
  }

  Pipeline pipeline(config, metrics);
  std::unique_ptr<Fetcher> fetcher;
  if (config.fetch.enabled) {
    auto f = Fetcher::create(config.fetch, metrics);
    if (!f) return tl::unexpected(f.error());
    fetcher = std::move(*f);
  }
  ReplayStats stats;
  ProgressLine progress(stderr, ProgressLine::mode_for(stderr, paths.quiet), "replay", "pages/s",
                        (*in)->size());
  ProgressCounts counts;
  // Articles on the terminal the progress line is drawn on: the line makes way for each.
  const bool out_beside_progress = out.get() == stdout && ::isatty(STDOUT_FILENO);
  auto tick = [&] {
    counts.inputs = stats.lines;
    counts.bytes = (*in)->raw_offset();
    counts.articles = stats.articles;
    counts.dead_letters = stats.dead_letters;
    counts.skipped = stats.skipped;
    progress.update(counts);
  };
  // A line holds the document plus JSON escaping; allow generous room over the HTML limit.
  const std::size_t max_line = config.extract.max_html_bytes * 2 + (1 << 20);
  // Where the WARC record being processed starts (none for replay lines).
  std::optional<std::uint64_t> record_offset;
  // `feed_item`: the record is about one item of a feed line whose page could not be had, in
  // addition to the line's own outcome.
  auto dead_letter = [&](const Input& input, const Failure& failure, bool feed_item = false) {
    nlohmann::ordered_json j;
    j["input_line"] = stats.lines;
    if (record_offset) j["input_offset"] = *record_offset;
    if (feed_item) j["feed_item"] = true;
    j["id"] = input.id.empty() ? nlohmann::json(nullptr) : nlohmann::json(input.id);
    j["url"] = input.url.empty() ? nlohmann::json(nullptr) : nlohmann::json(input.url);
    j["reason"] = failure.reason;
    j["detail"] = failure.detail;
    ++stats.dead_letters;
    ++stats.by_dlq_reason[failure.reason];
    if (dlq.get() == stderr) progress.clear();
    if (metrics) metrics->dead_letter(failure.reason);
    return write_line(dlq.get(), j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  };
  // One input through the pipeline: its articles to OUT, or its failure to the DLQ. False when
  // a file cannot be written.
  auto process = [&](const ParsedInput& parsed) {
    if (parsed.failure) return dead_letter(parsed.input, *parsed.failure);
    auto prepared = pipeline.prepare(parsed.input);
    if (!prepared) return dead_letter(parsed.input, prepared.error());
    bool ok = true;
    if (fetcher) {
      std::vector<Pipeline::Extracted*> items;
      for (auto& e : *prepared) items.push_back(&e);
      pipeline.resolve_links(items, *fetcher);
      // A page that could not be had: its own DLQ line (the item keeps its teaser text in OUT
      // when it has one).
      for (const auto& e : *prepared) {
        if (!e.fetch_failure) continue;
        Input item;
        item.id = e.article.id;
        item.url = e.fetch_url;
        ok = dead_letter(item, *e.fetch_failure, true) && ok;
      }
    }
    const auto outputs = pipeline.commit(std::move(*prepared), parsed.input);
    pipeline.confirm_links();
    if (out_beside_progress && !outputs.empty()) progress.clear();
    for (const Output& o : outputs) {
      ok = ok && write_line(out.get(), article_json(o));
      if (stories) ok = ok && write_line(stories.get(), story_json(o.story));
      if (paths.observe) paths.observe(o);
      ++stats.articles;
      if (o.verdict.kind != dedup::DupKind::kUnique) ++counts.duplicates;
      const std::string kind(dedup::dup_kind_name(o.verdict.kind));
      ++stats.by_dup_kind[kind];
      if (metrics) metrics->article(kind, o.article.language);
    }
    return ok;
  };
  auto write_error = [] {
    return tl::unexpected("cannot write output: " + std::string(std::strerror(errno)));
  };

  if (is_warc((*in)->peek(8))) {
    // WARC: one record at a time; records that are not pages are counted and skipped.
    stats.warc = true;
    WarcReader reader(**in, {config.extract.max_html_bytes});
    while (auto record = reader.next()) {
      ++stats.lines;
      if (metrics) metrics->consumed("replay", 0);
      record_offset = record->offset;
      if (record->outcome == WarcRecord::Outcome::kSkipped) {
        ++stats.skipped;
        ++stats.by_skip_reason[record->skip_reason];
      } else if (!process(record->parsed)) {
        return write_error();
      }
      tick();
    }
    if (!reader.error().empty()) {
      return tl::unexpected("input " + paths.input + ": " + reader.error() + ", after record " +
                            std::to_string(stats.lines));
    }
  } else {
    LineReader reader(**in, max_line);
    std::string line;
    bool too_long = false;
    while (reader.next(line, too_long)) {
      ++stats.lines;
      if (metrics) metrics->consumed("replay", 0);
      bool ok = true;
      if (too_long) {
        ok = dead_letter(
            {}, {"too_large", "line is longer than " + std::to_string(max_line) + " bytes"});
      } else if (extractors::is_blank(line)) {
        ok = dead_letter({}, {"empty_line", "line is blank"});
      } else {
        ok = process(parse_replay_line(line));
      }
      if (!ok) return write_error();
      tick();
    }
    if (reader.failed()) {
      return tl::unexpected("input " + paths.input + ": " + (*in)->error() + ", after line " +
                            std::to_string(stats.lines));
    }
  }
  if (std::fflush(out.get()) != 0 || std::fflush(dlq.get()) != 0 ||
      (stories && std::fflush(stories.get()) != 0)) {
    return tl::unexpected(std::string("cannot flush output"));
  }
  stats.stories = pipeline.stories().size();
  return stats;
}

}  // namespace newsflow::daemon
