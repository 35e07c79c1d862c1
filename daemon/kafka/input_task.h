#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "daemon/pipeline/input.h"
#include "daemon/pipeline/pipeline.h"
#include "tl/expected.hpp"

typedef struct rd_kafka_message_s rd_kafka_message_t;

namespace newsflow::daemon {

class DeadLetters;
class ExtractedTopic;
class InjectedFaults;
class Metrics;
class RecordCollector;
class StateStore;
struct Progress;

/// One input of a batch on its way through: parsed and extracted (on the pool), judged (in
/// input order), its records serialized (on the pool) and queued (in input order).
struct Work {
  ParsedInput parsed;
  tl::expected<std::vector<Pipeline::Extracted>, Failure> prepared =
      tl::unexpected(Failure{Reason::kInternalError, "not prepared"});
  struct Records {
    std::string article, state, story;
  };
  /// Judged against the window, on their way to their stories (`InputTask::group`).
  std::vector<Pipeline::Judged> grouping;
  std::vector<Output> outputs;
  std::vector<Records> records;
  std::optional<Failure> failed;  // a dead letter instead: nothing of it is published
  bool judged = false;            // it has outputs to publish
};

/// What becomes of one input once extracted, per role: judged and published as articles, state
/// records and stories (`--role all` and `dedup`), or handed over to `topics.extracted`
/// (`--role extract`); or a dead letter. Every step catches what it throws: no input can
/// crash-loop the daemon. `parse` and `serialize` run on any thread; `group` in input order on
/// any one thread; the others in input order on the loop's.
class InputTask {
 public:
  InputTask(const config::Config& config, Metrics& metrics, Pipeline& pipeline,
            RecordCollector& collector, DeadLetters& dead_letters, StateStore& store,
            ExtractedTopic& extracted, InjectedFaults& faults, Progress& progress);

  /// The page or feed `msg` carries, with its headers (a feeds-topic HTML body is a feed).
  ParsedInput parse(rd_kafka_message_t* msg) const;
  /// Judges `msg` against the window (its articles go to `work.grouping`) or dead-letters it.
  void judge(rd_kafka_message_t* msg, Work& work);
  /// Then, in the same order (on any one thread, beside the next `judge`): its articles join
  /// their stories (`work.outputs`), or it is to be dead-lettered (`work.failed`).
  void group(Work& work);
  /// The records of `work.outputs` (`work.failed` if one cannot be written).
  void serialize(Work& work) const;
  /// Queues the records of a judged input.
  void publish(rd_kafka_message_t* msg, Work& work);
  /// `--role extract`: the input's articles to `topics.extracted` (dead letters as `publish`).
  void hand_over(rd_kafka_message_t* msg, Work& work);

 private:
  /// Dead-letters an input that failed (true: nothing else to do with it) and its feed items
  /// whose pages could not be fetched.
  bool dead_letters_of(rd_kafka_message_t* msg, Work& work);
  /// Dead-letters an input whose records cannot be sent (refused for good before, or an
  /// article larger than the producer sends) before it is judged.
  bool not_publishable(rd_kafka_message_t* msg, Work& work);

  const config::Config& config_;
  Metrics& metrics_;
  Pipeline& pipeline_;
  RecordCollector& collector_;
  DeadLetters& dead_letters_;
  StateStore& store_;
  ExtractedTopic& extracted_;
  InjectedFaults& faults_;
  Progress& progress_;
};

}  // namespace newsflow::daemon
