#include "daemon/cli/produce.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "daemon/cli/progress.h"
#include "daemon/cli/service.h"
#include "daemon/kafka/kafka.h"
#include "daemon/ops/log.h"
#include "daemon/pipeline/input.h"
#include "daemon/pipeline/input_file.h"
#include "daemon/pipeline/warc.h"

namespace newsflow::daemon {
namespace {

// A producer for replay files: each line becomes a message as a crawler or feed poller would
// send it (raw bytes, url/id/fetched_at headers; `text` lines as the JSON envelope); html and
// text lines go to the pages topic, feed lines to the feeds topic.
class ReplayProducer {
 public:
  ReplayProducer(const std::string& bootstrap, const config::Config& config) : config_(config) {
    // The same client properties as the daemon's producer (a managed Kafka's security).
    auto conf = make_kafka_conf({{"bootstrap.servers", bootstrap},
                                 {"message.max.bytes", "10000000"},
                                 {"enable.idempotence", "true"}},
                                config.kafka.client, config.kafka.producer, "kafka.producer");
    if (!conf) {
      for (const auto& p : conf.error()) {
        std::fprintf(stderr, "produce: %s: %s\n", p.path.c_str(), p.message.c_str());
      }
      return;
    }
    // Every record's fate: a broker can refuse one (over its message.max.bytes), and a count
    // of records queued would then claim inputs that never arrived.
    rd_kafka_conf_set_dr_msg_cb(conf->get(), &ReplayProducer::on_delivery);
    rd_kafka_conf_set_opaque(conf->get(), this);
    char err[512];
    producer_.reset(rd_kafka_new(RD_KAFKA_PRODUCER, conf->get(), err, sizeof err));
    if (!producer_) return;
    conf->release();
    know_topics({config.topics.pages, config.topics.feeds});
  }
  ReplayProducer(const ReplayProducer&) = delete;  // the delivery callback holds `this`
  ReplayProducer& operator=(const ReplayProducer&) = delete;
  bool ok() const { return producer_ != nullptr; }

  void send(const std::string& topic, const std::string& key, const std::string& value,
            const Headers& headers, std::int64_t timestamp_ms = 0) {
    while (true) {
      rd_kafka_headers_t* hdrs = rd_kafka_headers_new(headers.size());
      for (const auto& [n, v] : headers) {
        rd_kafka_header_add(hdrs, n.data(), -1, v.data(), static_cast<ssize_t>(v.size()));
      }
      const auto e = rd_kafka_producev(
          producer_.get(), RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_KEY(key.data(), key.size()),
          RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_HEADERS(hdrs),
          RD_KAFKA_V_TIMESTAMP(timestamp_ms),
          RD_KAFKA_V_OPAQUE(reinterpret_cast<void*>(static_cast<std::intptr_t>(now_us()))),
          RD_KAFKA_V_END);
      if (e == RD_KAFKA_RESP_ERR_NO_ERROR) {
        ++produced_;
        return;
      }
      rd_kafka_headers_destroy(hdrs);
      if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        note_failure(e);
        return;
      }
      rd_kafka_poll(producer_.get(), 100);
    }
  }

  /// Records stamped with their event time instead of the time they are sent.
  void stamp_event_times(bool on) { event_timestamps_ = on; }

  // Produces every line of `path`, or every page of a WARC or ARC file, `repeat` times (copies get
  // "-N" ids and "#N" URLs). Each (from, to) of `rewrites` is replaced in feed bodies.
  bool send_file(const std::string& path, int repeat,
                 const std::vector<std::pair<std::string, std::string>>& rewrites = {},
                 double rate = 0, ProgressLine::Mode progress_mode = ProgressLine::Mode::kOff) {
    auto file = InputFile::open(path);
    if (!file) return false;
    Sending sending{repeat, rewrites, rate, std::chrono::steady_clock::now()};
    ProgressLine progress(stderr, progress_mode, "produce", "inputs/s", (*file)->size(),
                          /*articles=*/false);
    ProgressCounts counts;
    auto tick = [&] {
      ++counts.inputs;
      counts.bytes = (*file)->raw_offset();
      progress.update(counts);
    };
    std::unique_ptr<ArchiveReader> archive;
    if (is_warc((*file)->peek(8))) {
      archive = std::make_unique<WarcReader>(**file, WarcOptions{config_.extract.max_html_bytes});
    } else if (is_arc((*file)->peek(11))) {
      archive = std::make_unique<ArcReader>(**file, WarcOptions{config_.extract.max_html_bytes});
    }
    if (archive) {
      // The pages a crawl recorded; what is not a page is counted, a broken record reported.
      warc_ = true;
      while (auto record = archive->next()) {
        ++warc_records_;
        take_record(*record, counts, progress, sending);
        tick();
      }
      return archive->error().empty();
    }
    return read_lines(**file, [&](std::string_view line) {
      ParsedInput p = parse_replay_line(line);
      if (p.failure) {
        ++counts.dead_letters;  // not sent: the line is not an input
      } else {
        send_input(p, line, sending);
      }
      tick();
    });
  }

  // For WARC input, as replay sums up: "N WARC records -> P pages + D dead letters ( reason=n
  // ... ) + S skipped ( reason=n ... )"; empty for replay lines.
  std::string warc_summary() const {
    if (!warc_) return "";
    auto counts = [](const std::map<std::string, std::size_t>& by) {
      std::size_t total = 0;
      std::string text;
      for (const auto& [r, n] : by) {
        total += n;
        text += " " + r + "=" + std::to_string(n);
      }
      return std::to_string(total) + " (" + text + " )";
    };
    return std::to_string(warc_records_) + " WARC records -> " + std::to_string(warc_pages_) +
           " pages + " + counts(warc_dead_letters_) + " dead letters + " + counts(warc_skipped_) +
           " skipped";
  }

  // Poison a real crawler produces too: each must end in the DLQ with its reason.
  void send_poison() {
    const std::string& pages = config_.topics.pages;
    send(pages, "junk", std::string("\x00\x01\x02\xff\xfe binary", 13),
         {{"url", "https://junk.example/bin"}});
    send(pages, "empty", "", {{"url", "https://junk.example/empty"}});
    send(pages, "nourl", "<html><body><p>no url header</p></body></html>", {});
  }

  /// Waits for every record's delivery report (up to a minute; what is still queued then counts
  /// as not delivered) and returns how many the brokers acknowledged.
  std::size_t flush() {
    if (rd_kafka_flush(producer_.get(), 60000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      const auto left = static_cast<std::size_t>(rd_kafka_outq_len(producer_.get()));
      failed_ += left;
      if (first_error_.empty()) first_error_ = "not acknowledged within 60 s";
      produced_ -= std::min(produced_, left);
    }
    return produced_ - std::min(produced_, delivery_failed_);
  }
  /// How long the records took from the call that queued them to the broker's acknowledgement,
  /// as "p50 X ms, p99 Y ms, max Z ms" (empty before any was acknowledged).
  std::string delivery_times() {
    if (delivered_ms_.empty()) return "";
    std::sort(delivered_ms_.begin(), delivered_ms_.end());
    const auto at = [&](double q) {
      return delivered_ms_[std::min(delivered_ms_.size() - 1,
                                    static_cast<std::size_t>(q * delivered_ms_.size()))];
    };
    char text[128];
    std::snprintf(text, sizeof text, "p50 %.0f ms, p99 %.0f ms, max %.0f ms", at(0.5), at(0.99),
                  delivered_ms_.back());
    return text;
  }
  /// Records not delivered (refused when queued, or failed after), and the first reason.
  std::size_t failed() const { return failed_; }
  const std::string& first_error() const { return first_error_; }

 private:
  // How one `send_file` sends: each input `repeat` times, feed bodies rewritten, paced at `rate`
  // messages a second from `start` (0: as fast as the brokers take them).
  struct Sending {
    int repeat;
    const std::vector<std::pair<std::string, std::string>>& rewrites;
    double rate;
    std::chrono::steady_clock::time_point start;
    std::size_t sent = 0;
  };

  // An archive's record: a page sent, what is not a page counted, a broken record reported.
  void take_record(WarcRecord& record, ProgressCounts& counts, ProgressLine& progress,
                   Sending& sending) {
    if (record.outcome == WarcRecord::Outcome::kSkipped) {
      ++warc_skipped_[record.skip_reason];
      ++counts.skipped;
    } else if (record.outcome == WarcRecord::Outcome::kDeadLetter) {
      const Failure& f = *record.parsed.failure;
      ++warc_dead_letters_[f.reason];
      ++counts.dead_letters;
      progress.clear();
      log::warn("warc_record_dropped",
                {{"reason", f.reason}, {"detail", f.detail}, {"url", record.parsed.input.url}});
    } else {
      ++warc_pages_;
      send_input(record.parsed, {}, sending);
    }
  }

  // The headers of copy `k` of an input sent to `url` (`envelope`: extracted text as the JSON
  // envelope).
  Headers input_headers(const Input& in, const std::string& url, int k, bool feed,
                        bool envelope) const {
    const std::string suffix = k == 0 ? "" : std::to_string(k);
    Headers headers{{"url", url}};
    if (!in.id.empty()) headers.emplace_back("id", k == 0 ? in.id : in.id + "-" + suffix);
    if (in.fetched_at) {
      headers.emplace_back("fetched_at", extractors::format_rfc3339(*in.fetched_at));
    }
    if (envelope) {
      headers.emplace_back("content_type", "application/json");
    } else if (!feed && in.kind != BodyKind::kHtmlBytes) {
      headers.emplace_back("content_type", "text/html; charset=utf-8");
    } else if (warc_ && !in.content_type.empty()) {
      headers.emplace_back("content_type", in.content_type);  // as it was served
    }
    if (in.published_at) {
      headers.emplace_back("published_at", extractors::format_rfc3339(*in.published_at));
    }
    return headers;
  }

  // `line` is the replay line `p` was parsed from (empty for a WARC record).
  void send_input(ParsedInput& p, std::string_view line, Sending& sending) {
    const bool feed = p.input.kind == BodyKind::kFeedText || p.input.kind == BodyKind::kFeedBytes;
    for (const auto& [from, to] : sending.rewrites) {
      if (!feed) break;
      for (auto at = p.input.body.find(from); at != std::string::npos;
           at = p.input.body.find(from, at + to.size())) {
        p.input.body.replace(at, from.size(), to);
      }
    }
    // Already extracted text (a news API's item, an upstream extractor's output) travels as the
    // JSON envelope, with its title, language and dates: as HTML it would lose them.
    const bool envelope = p.input.kind == BodyKind::kText && !line.empty();
    for (int k = 0; k < sending.repeat; ++k) {
      const std::string suffix = k == 0 ? "" : std::to_string(k);
      const std::string url = k == 0 ? p.input.url : p.input.url + "#" + suffix;
      Headers headers = input_headers(p.input, url, k, feed, envelope);
      if (sending.rate > 0) {
        // Paced: the n-th message goes at start + n / rate (the brokers' own pace permitting).
        std::this_thread::sleep_until(
            sending.start + std::chrono::microseconds(
                                static_cast<std::int64_t>(1e6 * sending.sent / sending.rate)));
        rd_kafka_poll(producer_.get(), 0);
        headers.emplace_back("produced_at",
                             std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                std::chrono::system_clock::now().time_since_epoch())
                                                .count()));
      }
      ++sending.sent;
      // The record's timestamp: the time it is sent (0), or with --event-timestamps its event
      // time, as an archive's crawler may stamp it (then the topic's time retention counts
      // from the event time, and deletes a backfill older than it).
      std::int64_t timestamp_ms = 0;
      if (event_timestamps_) {
        if (const auto t = p.input.published_at ? p.input.published_at : p.input.fetched_at) {
          timestamp_ms = *t * 1000;
        }
      }
      std::string value;
      if (envelope) {
        auto j = nlohmann::json::parse(line, nullptr, false);
        j["url"] = url;
        if (!p.input.id.empty()) j["id"] = k == 0 ? p.input.id : p.input.id + "-" + suffix;
        value = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      }
      send(feed ? config_.topics.feeds : config_.topics.pages, url, envelope ? value : p.input.body,
           headers, timestamp_ms);
    }
  }

  struct TopicDeleter {
    void operator()(rd_kafka_topic_t* t) const { rd_kafka_topic_destroy(t); }
  };

  bool event_timestamps_ = false;
  const config::Config& config_;
  KafkaHandle producer_;
  // The topics `know_topics` asked about, held while the producer lives (destroyed before it).
  std::vector<std::unique_ptr<rd_kafka_topic_t, TopicDeleter>> topics_;
  std::vector<float> delivered_ms_;  // each acknowledged record's time from queue to broker
  static std::int64_t now_us() {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  // Asks the brokers for the partitions of the topics it will write before the first record.
  // librdkafka learns a topic's partitions only when a record for it is queued, and holds that
  // record until the answer: about a second on a real broker. A paced stream's first feed then
  // reached the broker after pages queued half a second later, and a daemon reading both
  // topics judged it after them (tests/bench/kafka_broker_kills.sh, 4 verdicts of 3,002 apart
  // from replay in one run of three).
  void know_topics(const std::vector<std::string>& names) {
    for (const auto& name : names) {
      if (name.empty()) continue;
      rd_kafka_topic_t* t = rd_kafka_topic_new(producer_.get(), name.c_str(), nullptr);
      if (!t) continue;
      topics_.emplace_back(t);
      const rd_kafka_metadata_t* md = nullptr;
      // Unanswered (a broker down, a topic to be created on first use): the record waits then.
      if (rd_kafka_metadata(producer_.get(), 0, t, &md, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        rd_kafka_metadata_destroy(md);
      }
    }
  }
  static void on_delivery(rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
    auto* self = static_cast<ReplayProducer*>(opaque);
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      const auto queued = static_cast<std::int64_t>(reinterpret_cast<std::intptr_t>(m->_private));
      self->delivered_ms_.push_back(static_cast<float>(now_us() - queued) / 1000.0f);
      return;
    }
    ++self->delivery_failed_;
    self->note_failure(m->err);
  }
  void note_failure(rd_kafka_resp_err_t e) {
    ++failed_;
    if (first_error_.empty()) first_error_ = rd_kafka_err2str(e);
  }

  std::size_t produced_ = 0;         // queued
  std::size_t delivery_failed_ = 0;  // of those, failed after they were queued
  std::size_t failed_ = 0;
  std::string first_error_;
  bool warc_ = false;
  std::size_t warc_records_ = 0, warc_pages_ = 0;
  std::map<std::string, std::size_t> warc_skipped_, warc_dead_letters_;
};

}  // namespace

// The demo's input: the sample pages and feeds plus three poison messages.
std::size_t produce_samples(const std::string& bootstrap, const config::Config& config,
                            const std::string& path, const std::string& feeds_path,
                            const std::vector<std::pair<std::string, std::string>>& rewrites) {
  ReplayProducer producer(bootstrap, config);
  if (!producer.ok()) return 0;
  if (!producer.send_file(path, 1)) {
    log::error("samples_missing", {{"path", path}});
    return 0;
  }
  if (!feeds_path.empty()) producer.send_file(feeds_path, 1, rewrites);
  producer.send_poison();
  return producer.flush();
}

int run_produce(const config::Config& config, const ProduceOptions& options) {
  if (config.kafka.brokers.empty()) {
    std::fprintf(stderr,
                 "produce: set kafka.brokers (NEWSFLOW_KAFKA__BROKERS) to a running broker\n");
    return 2;
  }
  ReplayProducer producer(config.kafka.brokers, config);
  if (!producer.ok()) return 2;
  producer.stamp_event_times(options.event_timestamps);
  if (!producer.send_file(options.input, std::max(1, options.repeat), {}, options.rate,
                          ProgressLine::mode_for(stderr, options.quiet))) {
    std::fprintf(stderr, "produce: cannot read %s\n", options.input.c_str());
    return 1;
  }
  if (options.poison) producer.send_poison();
  const std::size_t n = producer.flush();
  std::printf("%zu\n", n);
  if (const std::string warc = producer.warc_summary(); !warc.empty()) {
    std::fprintf(stderr, "produce: %s, %zu messages\n", warc.c_str(), n);
  }
  // A paced stream stands for a crawler's: how late its records reached the brokers (a record
  // held longer than kafka's live slack may be judged after newer ones of other partitions).
  if (const std::string times = producer.delivery_times(); options.rate > 0 && !times.empty()) {
    std::fprintf(stderr, "produce: %zu messages acknowledged in %s\n", n, times.c_str());
  }
  if (producer.failed() > 0) {
    // The count printed is what the brokers took; the rest are not there to be consumed.
    std::fprintf(stderr, "produce: %zu messages not delivered (%s)\n", producer.failed(),
                 producer.first_error().c_str());
    return 1;
  }
  return 0;
}

}  // namespace newsflow::daemon
