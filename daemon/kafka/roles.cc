#include "daemon/kafka/roles.h"

// Each role's answers, one type per role; `role_of` picks the type.

namespace newsflow::daemon {

std::string Role::consumer_group(const config::KafkaConfig& kafka) const {
  return kafka.group_id + "-" + std::string(name());
}

namespace {

// The changelog where it is configured: every role reads it (an extractor for the links
// published), so it must keep every article's latest record.
std::vector<std::pair<std::string, std::string>> changelog(const config::TopicsConfig& topics) {
  if (topics.state.empty()) return {};
  return {{"topics.state", topics.state}};
}

// `--role extract`: extracts pages and feeds, fetches the pages feed items link to, and hands
// the articles over to `topics.extracted` for the dedup role to judge, with watermarks that say
// how far each input partition has come. No window, no stories, no snapshots.
class Extractor final : public Role {
 public:
  std::string_view name() const override { return config::role_name(config::Role::kExtract); }
  std::vector<std::string> input_topics(const config::TopicsConfig& topics) const override {
    return {topics.pages, topics.feeds};
  }
  bool reads_extracted() const override { return false; }
  bool judges() const override { return false; }
  bool leased() const override { return false; }
  std::vector<std::string> output_topics(const config::TopicsConfig& topics) const override {
    return {topics.extracted};
  }
  TopicNeeds topic_needs(const config::TopicsConfig& topics) const override {
    return {.compacted = changelog(topics), .produced = {topics.dlq, topics.extracted}};
  }
};

// `--role all`: the whole pipeline in one consumer group of `kafka.group_id`, pages and feeds
// extracted, judged and published with their stories and state records; it restores and
// snapshots the judging state.
class Judge : public Role {
 public:
  std::string_view name() const override { return config::role_name(config::Role::kAll); }
  std::string consumer_group(const config::KafkaConfig& kafka) const override {
    return kafka.group_id;
  }
  std::vector<std::string> input_topics(const config::TopicsConfig& topics) const override {
    return {topics.pages, topics.feeds};
  }
  bool reads_extracted() const override { return false; }
  bool judges() const final { return true; }
  bool leased() const override { return false; }
  std::vector<std::string> output_topics(const config::TopicsConfig& topics) const final {
    return {topics.articles, topics.stories};
  }
  TopicNeeds topic_needs(const config::TopicsConfig& topics) const final {
    TopicNeeds needs{.compacted = changelog(topics),
                     .produced = {topics.dlq, topics.articles, topics.stories, topics.state}};
    needs.compacted.emplace_back("topics.stories", topics.stories);
    return needs;
  }
};

// `--role dedup` without a lease (run exactly one): judges as `all` does, but what the
// extractors handed over, subscribed to `topics.extracted` in a group of its own.
class DedupJudge : public Judge {
 public:
  std::string_view name() const final { return config::role_name(config::Role::kDedup); }
  std::string consumer_group(const config::KafkaConfig& kafka) const final {
    return Role::consumer_group(kafka);
  }
  std::vector<std::string> input_topics(const config::TopicsConfig& topics) const final {
    return {topics.extracted};
  }
  bool reads_extracted() const final { return true; }
};

// `--role dedup` with `topics.dedup_lease`: the process that holds the lease judges (every
// extracted partition assigned by hand); the others are hot standbys tailing the changelog,
// one of which takes over when the owner goes.
class StandbyJudge final : public DedupJudge {
 public:
  bool leased() const override { return true; }
};

}  // namespace

const Role& role_of(const config::Config& config) {
  static const Extractor kExtractor;
  static const Judge kJudge;
  static const DedupJudge kDedupJudge;
  static const StandbyJudge kStandbyJudge;
  switch (config.role) {
    case config::Role::kExtract:
      return kExtractor;
    case config::Role::kDedup:
      if (config.topics.dedup_lease.empty()) return kDedupJudge;
      return kStandbyJudge;
    case config::Role::kAll:
      break;
  }
  return kJudge;
}

}  // namespace newsflow::daemon
