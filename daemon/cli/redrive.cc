#include "daemon/cli/redrive.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "daemon/kafka/kafka.h"
#include "daemon/kafka/message.h"
#include "daemon/pipeline/input.h"

namespace newsflow::daemon {
namespace {

using internal::header_of;
using internal::key_of;
using internal::message_headers;
using internal::payload;

// The headers a dead letter adds to its input's own (docs/contracts.md).
bool dead_letter_header(const std::string& name, const std::string& value) {
  return name == "error_reason" || name == "error_detail" || name == "source_topic" ||
         name == "source_partition" || name == "source_offset" ||
         name == "payload_truncated_from" ||
         (name == "schema" && value == "newsflow.dead-letter/1");
}

// Why a dead letter cannot be sent back as it is, or "" when it can.
std::string not_redrivable(const rd_kafka_message_t* m, const config::Config& config) {
  const std::string_view source = header_of(m, "source_topic");
  if (source.empty()) return "no_source_topic";
  // A linked page given up after its tries goes back to the retries, which try it again.
  const bool retries =
      !config.topics.fetch_retries.empty() && source == config.topics.fetch_retries;
  if (source != config.topics.pages && source != config.topics.feeds &&
      source != config.topics.extracted && !retries) {
    return "not_an_input_topic";
  }
  if (!header_of(m, "payload_truncated_from").empty()) return "payload_cut";
  // A feed item's record names the item; the feed it came from is not in it.
  const auto j = nlohmann::json::parse(payload(m), nullptr, false);
  if (j.is_object() && j.contains("kept_feed_text") && j.contains("feed_key")) {
    return "feed_item_record";
  }
  return "";
}

// Assigns every partition of `dlq` that holds records from its first, and notes in `end` where
// each ends now. False when its metadata cannot be read (said on stderr).
bool assign_to_end(rd_kafka_t* consumer, const std::string& dlq, std::map<int, std::int64_t>& end) {
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_topic_t* topic = rd_kafka_topic_new(consumer, dlq.c_str(), nullptr);
  const rd_kafka_resp_err_t me = rd_kafka_metadata(consumer, 0, topic, &md, 10000);
  rd_kafka_topic_destroy(topic);
  if (me != RD_KAFKA_RESP_ERR_NO_ERROR || md->topic_cnt != 1 || md->topics[0].err) {
    std::fprintf(stderr, "redrive: cannot read the metadata of %s: %s\n", dlq.c_str(),
                 rd_kafka_err2str(me              ? me
                                  : md->topic_cnt ? md->topics[0].err
                                                  : RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC));
    if (md) rd_kafka_metadata_destroy(md);
    return false;
  }
  rd_kafka_topic_partition_list_t* assignment = rd_kafka_topic_partition_list_new(1);
  for (int i = 0; i < md->topics[0].partition_cnt; ++i) {
    const int p = md->topics[0].partitions[i].id;
    std::int64_t low = 0, high = 0;
    if (rd_kafka_query_watermark_offsets(consumer, dlq.c_str(), p, &low, &high, 10000) !=
            RD_KAFKA_RESP_ERR_NO_ERROR ||
        high <= low) {
      continue;
    }
    end[p] = high;
    rd_kafka_topic_partition_list_add(assignment, dlq.c_str(), p)->offset = low;
  }
  rd_kafka_metadata_destroy(md);
  rd_kafka_assign(consumer, assignment);
  rd_kafka_topic_partition_list_destroy(assignment);
  return true;
}

// Sends the input a dead letter holds back to `target`, its own topic, with the input's own
// headers and `redriven_from`. False when it cannot be queued (said on stderr).
bool send_back(rd_kafka_t* producer, const rd_kafka_message_t* m, const std::string& target,
               const std::string& where) {
  Headers headers;
  for (auto& [name, value] : message_headers(m)) {
    if (!dead_letter_header(name, value)) headers.emplace_back(name, value);
  }
  headers.emplace_back("redriven_from", where);
  rd_kafka_headers_t* hdrs = rd_kafka_headers_new(headers.size());
  for (const auto& [name, value] : headers) {
    rd_kafka_header_add(hdrs, name.data(), static_cast<ssize_t>(name.size()), value.data(),
                        static_cast<ssize_t>(value.size()));
  }
  const std::string_view key = key_of(m), value = payload(m);
  const rd_kafka_resp_err_t pe = rd_kafka_producev(
      producer, RD_KAFKA_V_TOPIC(target.c_str()),
      RD_KAFKA_V_KEY(const_cast<char*>(key.data()), key.size()),
      RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_END);
  if (pe != RD_KAFKA_RESP_ERR_NO_ERROR) {
    rd_kafka_headers_destroy(hdrs);
    std::fprintf(stderr, "redrive: %s not sent: %s\n", where.c_str(), rd_kafka_err2str(pe));
    return false;
  }
  return true;
}

// Whether a dead letter is one the options ask for: written in their time span, for one of
// their reasons.
bool wanted(const rd_kafka_message_t* m, const std::string& reason, const RedriveOptions& options) {
  const std::int64_t written_ms = rd_kafka_message_timestamp(m, nullptr);
  const bool in_time = (!options.since || written_ms >= *options.since * 1000) &&
                       (!options.until || written_ms < *options.until * 1000);
  return in_time &&
         (options.reasons.empty() || std::find(options.reasons.begin(), options.reasons.end(),
                                               reason) != options.reasons.end());
}

// What a run did: the dead letters sent back (or that would be, on a dry run), those passed over
// by why.
struct RedriveCounts {
  std::size_t sent = 0;
  std::map<std::string, std::size_t> passed_over;
};

// One dead letter the options ask for: passed over (said on stdout with why), or sent back (or,
// on a dry run, said that it would be). False when it cannot be sent (said on stderr).
bool redrive_one(const rd_kafka_message_t* m, const std::string& reason,
                 const config::Config& config, const RedriveOptions& options, rd_kafka_t* producer,
                 RedriveCounts& counts) {
  const std::string where =
      config.topics.dlq + "/" + std::to_string(m->partition) + "@" + std::to_string(m->offset);
  const std::string source = std::string(header_of(m, "source_topic")) + "/" +
                             std::string(header_of(m, "source_partition")) + "@" +
                             std::string(header_of(m, "source_offset"));
  if (const std::string why = not_redrivable(m, config); !why.empty()) {
    ++counts.passed_over[why];
    std::printf("pass\t%s\t%s\t%s\t%s\n", why.c_str(), reason.c_str(), where.c_str(),
                source.c_str());
  } else if (options.dry_run) {
    ++counts.sent;
    std::printf("would\t%s\t%s\t%s\t%zu bytes\n", reason.c_str(), where.c_str(), source.c_str(),
                payload(m).size());
  } else {
    const std::string target(header_of(m, "source_topic"));
    if (!send_back(producer, m, target, where)) return false;
    ++counts.sent;
    std::printf("sent\t%s\t%s\t%s\n", reason.c_str(), where.c_str(), target.c_str());
  }
  return true;
}

// Problems with the Kafka configuration, on stderr: the exit code 2.
int report(const std::vector<config::Problem>& problems) {
  for (const auto& p : problems) {
    std::fprintf(stderr, "redrive: %s: %s\n", p.path.c_str(), p.message.c_str());
  }
  return 2;
}

// The producer that sends the inputs back: idempotent, every replica's acknowledgement. On a
// dry run none, its configuration checked all the same.
tl::expected<KafkaHandle, std::vector<config::Problem>> make_producer(const config::Config& config,
                                                                      bool dry_run) {
  auto pconf = make_kafka_conf(
      {{"bootstrap.servers", config.kafka.brokers},
       {"enable.idempotence", "true"},
       {"acks", "all"},
       {"message.max.bytes", std::to_string(config.extract.max_html_bytes + (1 << 20))},
       {"client.id", "newsflow-redrive"}},
      config.kafka.client, config.kafka.producer, "kafka.producer");
  if (!pconf) return tl::unexpected(pconf.error());
  if (dry_run) return KafkaHandle();
  char err[512];
  KafkaHandle producer(rd_kafka_new(RD_KAFKA_PRODUCER, pconf->get(), err, sizeof err));
  if (!producer) return tl::unexpected(std::vector<config::Problem>{{"kafka.producer", err}});
  pconf->release();
  return producer;
}

}  // namespace

int run_redrive(const config::Config& config, const RedriveOptions& options) {
  if (config.kafka.brokers.empty()) {
    std::fprintf(stderr, "redrive: set kafka.brokers (NEWSFLOW_KAFKA__BROKERS)\n");
    return 2;
  }
  auto cconf = make_kafka_conf({{"bootstrap.servers", config.kafka.brokers},
                                {"group.id", "newsflow-redrive"},
                                {"enable.auto.commit", "false"},
                                {"enable.partition.eof", "false"},
                                {"client.id", "newsflow-redrive"}},
                               config.kafka.client, config.kafka.consumer, "kafka.consumer");
  if (!cconf) return report(cconf.error());
  char err[512];
  KafkaHandle consumer(rd_kafka_new(RD_KAFKA_CONSUMER, cconf->get(), err, sizeof err));
  if (!consumer) return report({{"kafka.consumer", err}});
  cconf->release();
  rd_kafka_poll_set_consumer(consumer.get());

  // The dead letters there are now: each partition read up to its end as the run starts (what
  // a re-driven input gives again, if it fails again, is for a later run).
  const std::string& dlq = config.topics.dlq;
  std::map<int, std::int64_t> end;  // partition -> offset after its last record now
  if (!assign_to_end(consumer.get(), dlq, end)) return 1;

  auto made = make_producer(config, options.dry_run);
  if (!made) return report(made.error());
  KafkaHandle producer = std::move(*made);

  std::size_t matched = 0;
  RedriveCounts counts;
  int idle_polls = 0;
  while (!end.empty() && idle_polls < 30) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer.get(), 1000);
    if (!m) {
      ++idle_polls;
      continue;
    }
    idle_polls = 0;
    if (m->err) {
      if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        std::fprintf(stderr, "redrive: %s\n", rd_kafka_message_errstr(m));
      }
      rd_kafka_message_destroy(m);
      continue;
    }
    const auto e = end.find(m->partition);
    const bool last = e != end.end() && m->offset + 1 >= e->second;
    const std::string reason(header_of(m, "error_reason"));
    if (wanted(m, reason, options) && (options.limit == 0 || matched < options.limit)) {
      ++matched;
      if (!redrive_one(m, reason, config, options, producer.get(), counts)) {
        rd_kafka_message_destroy(m);
        return 1;
      }
    }
    if (last) end.erase(e);
    rd_kafka_message_destroy(m);
  }
  if (!end.empty()) {
    std::fprintf(stderr, "redrive: %zu partitions of %s not read to their end\n", end.size(),
                 dlq.c_str());
  }
  if (producer && rd_kafka_flush(producer.get(), 30000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    std::fprintf(stderr, "redrive: not every record was acknowledged in 30 s\n");
    return 1;
  }
  rd_kafka_consumer_close(consumer.get());
  std::fprintf(stderr, "redrive: %zu %s", counts.sent, options.dry_run ? "would be sent" : "sent");
  for (const auto& [why, n] : counts.passed_over)
    std::fprintf(stderr, ", %zu passed over (%s)", n, why.c_str());
  std::fprintf(stderr, "\n");
  return end.empty() ? 0 : 1;
}

}  // namespace newsflow::daemon
