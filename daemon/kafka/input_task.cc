#include "daemon/kafka/input_task.h"

// One input from its extraction to its records: parsed, judged (or handed over), serialized and
// queued, or dead-lettered.

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <utility>

#include "daemon/kafka/changelog_tail.h"
#include "daemon/kafka/dead_letters.h"
#include "daemon/kafka/extracted_topic.h"
#include "daemon/kafka/faults.h"
#include "daemon/kafka/loop_status.h"
#include "daemon/kafka/message.h"
#include "daemon/kafka/record_collector.h"
#include "daemon/kafka/state_store.h"
#include "daemon/ops/metrics.h"
#include "dedup/state.h"

namespace newsflow::daemon {

using namespace internal;

InputTask::InputTask(const config::Config& config, Metrics& metrics, Pipeline& pipeline,
                     RecordCollector& collector, DeadLetters& dead_letters, StateStore& store,
                     ExtractedTopic& extracted, InjectedFaults& faults, Progress& progress)
    : config_(config),
      metrics_(metrics),
      pipeline_(pipeline),
      collector_(collector),
      dead_letters_(dead_letters),
      store_(store),
      extracted_(extracted),
      faults_(faults),
      progress_(progress) {}

ParsedInput InputTask::parse(rd_kafka_message_t* msg) const {
  rd_kafka_timestamp_type_t ts_type;
  const std::int64_t ts_ms = rd_kafka_message_timestamp(msg, &ts_type);
  ParsedInput parsed =
      parse_page_message(payload(msg), message_headers(msg), ts_ms > 0 ? ts_ms / 1000 : 0);
  if (config_.topics.feeds == rd_kafka_topic_name(msg->rkt) &&
      parsed.input.kind == BodyKind::kHtmlBytes) {
    parsed.input.kind = BodyKind::kFeedBytes;
  }
  return parsed;
}

bool InputTask::dead_letters_of(rd_kafka_message_t* msg, Work& work) {
  if (work.parsed.failure) {
    dead_letters_.input(msg, *work.parsed.failure);
    return true;
  }
  if (!work.prepared) {
    dead_letters_.input(msg, work.prepared.error());
    return true;
  }
  for (const auto& item : *work.prepared) {
    if (!item.fetch_failure) continue;
    // Tried again later when time may cure it; else a dead letter now.
    dead_letters_.item(msg, item, work.parsed.input);
  }
  return false;
}

void InputTask::judge(rd_kafka_message_t* msg, Work& work) {
  // One try/catch per message: no input can crash-loop the daemon.
  try {
    if (dead_letters_of(msg, work)) return;
    if (not_publishable(msg, work)) return;
    // An input judged before, handed over again (the dedup role): its articles are out already.
    // Known when its copy was read only if its first was judged and published by then; here,
    // judged in order, every copy is known: judged again, an article whose story has gone from
    // the book since (an old article, handed over long after) would join another story, and
    // the stories would depend on when the copy was read.
    if (config_.role == config::Role::kDedup) {
      if (const auto s = parse_position(header_of(msg, kSourceHeader));
          s && store_.ledger().repeat(*s, msg->partition, msg->offset, key_of(msg))) {
        metrics_.handed_over_again();
        return;
      }
    }
    work.grouping = pipeline_.judge(std::move(*work.prepared), work.parsed.input);
    work.judged = true;
  } catch (const std::exception& e) {
    dead_letters_.input(msg, {Reason::kInternalError, e.what()});
  }
}

bool InputTask::not_publishable(rd_kafka_message_t* msg, Work& work) {
  // A record of it the cluster refused for good when its batch was judged before: what that
  // judging left of it goes with it.
  std::optional<Failure> refused = collector_.take_refused(msg);
  if (refused) {
    for (const auto& e : *work.prepared) {
      pipeline_.forget(Pipeline::article_id(e, work.parsed.input));
    }
  }
  // An article whose text alone is more than the producer may send: a dead letter before it
  // is judged, so no later article is found a duplicate of an article never published.
  for (const auto& e : *work.prepared) {
    if (refused) break;
    if (e.skip) continue;
    refused = collector_.too_large("article", Pipeline::article_id(e, work.parsed.input),
                                   e.article.text.size() + e.article.title.size());
  }
  if (!refused) return false;
  dead_letters_.input(msg, *refused);
  return true;
}

void InputTask::group(Work& work) {
  if (!work.judged) return;
  try {
    work.outputs = pipeline_.group(std::move(work.grouping));
  } catch (const std::exception& e) {
    work.failed = Failure{Reason::kInternalError, e.what()};  // dead-lettered by `publish`
  }
}

void InputTask::serialize(Work& work) const {
  if (!work.judged) return;
  try {
    work.records.reserve(work.outputs.size());
    for (const Output& o : work.outputs) {
      work.records.push_back({article_json(o),
                              config_.topics.state.empty() ? "" : dedup::encode_state(o.state),
                              story_json(o.story)});
      // A record the producer may not send is refused before anything of the input is: the
      // input ends as one dead letter, and its batch goes on.
      const Work::Records& r = work.records.back();
      for (const auto& [what, bytes] :
           {std::pair{"article", r.article.size()}, std::pair{"state", r.state.size()},
            std::pair{"story", r.story.size()}}) {
        if (auto refused = collector_.too_large(what, o.article.id, bytes)) {
          work.failed = std::move(refused);
          return;
        }
      }
    }
  } catch (const std::exception& e) {
    work.failed = Failure{Reason::kInternalError, e.what()};
  }
}

void InputTask::publish(rd_kafka_message_t* msg, Work& work) {
  if (!work.judged) return;  // dead-lettered while judged
  if (auto refused = collector_.take_refused(msg)) work.failed = std::move(refused);
  if (work.failed) {
    // Judged, never published: later articles must not find it.
    for (const Output& o : work.outputs) pipeline_.forget(o.article.id);
    dead_letters_.input(msg, *work.failed);
    return;
  }
  // An extracted record's input (the dedup role): judged, it is a repeat when handed over again.
  const std::string_view source =
      config_.role == config::Role::kDedup ? header_of(msg, kSourceHeader) : std::string_view();
  if (const auto s = parse_position(source); s && !work.outputs.empty()) {
    store_.note_judged(*s, msg->partition, msg->offset, key_of(msg));
  }
  for (std::size_t k = 0; k < work.outputs.size(); ++k) {
    const Output& o = work.outputs[k];
    Work::Records& r = work.records[k];
    const std::string kind(dedup::dup_kind_name(o.verdict.kind));
    collector_.produce(config_.topics.articles, o.article.id, r.article,
                       {{"schema", "newsflow.article/1"}});
    const bool lose_state = faults_.loses_state(payload(msg));
    if (!config_.topics.state.empty() && !lose_state) {
      std::vector<std::pair<std::string, std::string>> headers{
          {"schema", "newsflow.state/3"},
          {kInputHeader, input_header(rd_kafka_topic_name(msg->rkt), msg->partition, msg->offset)}};
      if (!source.empty()) headers.emplace_back(kSourceHeader, std::string(source));
      collector_.produce(config_.topics.state, o.article.id, r.state, headers);
      store_.note_record(o.state.seq, o.article.id);
      metrics_.state_written();
    }
    collector_.produce(config_.topics.stories, o.story.story_id, r.story,
                       {{"schema", "newsflow.story/1"}});
    // A merged story is gone: a tombstone, so compaction drops it.
    for (const auto& gone : o.story.merged_from)
      collector_.produce(config_.topics.stories, gone, {}, {}, true);
    metrics_.article(kind, o.article.language);
    ++progress_.articles;
    if (o.verdict.kind != dedup::DupKind::kUnique) ++progress_.duplicates;
  }
  progress_.stories = pipeline_.stories().size();
}

void InputTask::hand_over(rd_kafka_message_t* msg, Work& work) {
  try {
    if (dead_letters_of(msg, work)) return;
    // Each input partition to an extracted partition of its own, stamped with the time the
    // input is ordered by, so the dedup role merges them as `--role all` merges the inputs.
    const std::int32_t partition =
        extracted_.partition_of(rd_kafka_topic_name(msg->rkt), msg->partition);
    // The input it came from: the dedup role knows an input handed over again by the next
    // owner of its partition.
    const std::string source =
        input_header(rd_kafka_topic_name(msg->rkt), msg->partition, msg->offset);
    std::vector<std::pair<std::string, std::string>> records;  // id, extracted record
    for (const auto& e : pipeline_.hand_over(std::move(*work.prepared), work.parsed.input)) {
      records.emplace_back(Pipeline::article_id(e, work.parsed.input),
                           extracted_json(e, work.parsed.input));
    }
    // A record the producer may not send, or one the cluster refused for good when the batch
    // was judged before: the input ends as one dead letter, and its batch goes on.
    std::optional<Failure> refused = collector_.take_refused(msg);
    for (const auto& [id, record] : records) {
      if (!refused) refused = collector_.too_large("extracted", id, record.size());
    }
    if (refused) {
      dead_letters_.input(msg, *refused);
      return;
    }
    for (const auto& [id, record] : records) {
      extracted_.produce(partition, id, record, source, order_time(msg) * 1000);
      ++progress_.articles;
    }
  } catch (const std::exception& e) {
    dead_letters_.input(msg, {Reason::kInternalError, e.what()});
  }
}

}  // namespace newsflow::daemon
