#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config.h"

namespace newsflow::daemon {

/// What a role's start checks of the topics (`check_compacted_topics`).
struct TopicNeeds {
  /// The compacted topics it relies on, each with its configuration key (`topics.state`).
  std::vector<std::pair<std::string, std::string>> compacted;
  /// Every topic its producer writes, dead letters included (an unset one is empty).
  std::vector<std::string> produced;
};

/// What a process does in its role, answered in one place per role (roles.cc: the extractor,
/// the judge of `--role all`, the dedup judge and the leased dedup judge that is a standby until
/// it holds the lease), so that no Kafka part asks which role it is in: each asks its role what
/// to read, what to do with an input, what to write and what state to keep.
///
/// ```
/// const Role& role = role_of(config);
/// consumer.subscribe(role.input_topics(config.topics));
/// if (role.judges()) judge(input); else hand_over(input);
/// ```
///
/// The roles hold no state: `role_of` hands out shared constant instances (thread-safe).
class Role {
 public:
  virtual ~Role() = default;

  /// "all", "extract" or "dedup", as configured: the metric label, the log field and the suffix
  /// of its consumer group, static member id and crash notes.
  virtual std::string_view name() const = 0;

  // What it reads.

  /// The group of its input consumer. Each role is a group of its own (the extractors share the
  /// input partitions, the dedup processes the extracted ones); `all` keeps `kafka.group_id`.
  virtual std::string consumer_group(const config::KafkaConfig& kafka) const;
  /// The topics it consumes.
  virtual std::vector<std::string> input_topics(const config::TopicsConfig& topics) const = 0;
  /// True: its inputs are an extractor's records (`topics.extracted`), extracted already and
  /// ordered by the time their header carries; a partition's end means nothing until the
  /// extractor's watermark says how far it has come, and an input handed over again is known by
  /// the handover ledger. False: pages and feeds, which it extracts itself (fetching what feed
  /// items link to, and trying failed pages again later).
  virtual bool reads_extracted() const = 0;

  // What it does with an input, and the state it keeps.

  /// True: it judges its articles against the window, groups them into stories and publishes
  /// them with their state records, so it restores and snapshots the judging state. False: it
  /// hands them over to `topics.extracted` with watermarks and holds no window (it learns only
  /// the links published, from the changelog).
  virtual bool judges() const = 0;
  /// True: it takes its partitions through the dedup lease, a hot standby until it holds it. It
  /// then joins no consumer group with its input consumer, initializes transactions only when it
  /// takes over (doing so fences the owner), and its restore and changelog tail leave the
  /// owner's records of inputs not committed yet to be applied once they are.
  virtual bool leased() const = 0;

  // What it writes.

  /// The topics its records go to, dead letters and the state changelog aside.
  virtual std::vector<std::string> output_topics(const config::TopicsConfig& topics) const = 0;
  /// The compacted topics it relies on and the topics its producer writes.
  virtual TopicNeeds topic_needs(const config::TopicsConfig& topics) const = 0;
};

/// The role `config` runs in: `role`, and for the dedup role whether `topics.dedup_lease` is
/// set. The one place that picks a role's type.
const Role& role_of(const config::Config& config);

}  // namespace newsflow::daemon
