#include "daemon/kafka/roles.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace newsflow::daemon {
namespace {

using Strings = std::vector<std::string>;
using Keyed = std::vector<std::pair<std::string, std::string>>;

config::Config config_of(config::Role role, std::string dedup_lease = "lease") {
  config::Config c;
  c.role = role;
  c.kafka.group_id = "g";
  c.topics.pages = "pages";
  c.topics.feeds = "feeds";
  c.topics.articles = "articles";
  c.topics.stories = "stories";
  c.topics.dlq = "dlq";
  c.topics.state = "state";
  c.topics.extracted = "extracted";
  c.topics.dedup_lease = std::move(dedup_lease);
  return c;
}

TEST(Roles, TheExtractorHandsPagesAndFeedsOverAndHoldsNoWindow) {
  const config::Config c = config_of(config::Role::kExtract);
  const Role& role = role_of(c);
  EXPECT_EQ(role.name(), "extract");
  EXPECT_EQ(role.consumer_group(c.kafka), "g-extract");
  EXPECT_EQ(role.input_topics(c.topics), (Strings{"pages", "feeds"}));
  EXPECT_FALSE(role.reads_extracted());
  EXPECT_FALSE(role.judges());
  EXPECT_FALSE(role.leased());  // a lease is the dedup role's only
  EXPECT_EQ(role.output_topics(c.topics), (Strings{"extracted"}));
  const TopicNeeds needs = role.topic_needs(c.topics);
  EXPECT_EQ(needs.compacted, (Keyed{{"topics.state", "state"}}));  // it learns links from it
  EXPECT_EQ(needs.produced, (Strings{"dlq", "extracted"}));
}

TEST(Roles, AllJudgesItsOwnInputsInTheGroupItself) {
  const config::Config c = config_of(config::Role::kAll);
  const Role& role = role_of(c);
  EXPECT_EQ(role.name(), "all");
  EXPECT_EQ(role.consumer_group(c.kafka), "g");
  EXPECT_EQ(role.input_topics(c.topics), (Strings{"pages", "feeds"}));
  EXPECT_FALSE(role.reads_extracted());
  EXPECT_TRUE(role.judges());
  EXPECT_FALSE(role.leased());
  EXPECT_EQ(role.output_topics(c.topics), (Strings{"articles", "stories"}));
  const TopicNeeds needs = role.topic_needs(c.topics);
  EXPECT_EQ(needs.compacted, (Keyed{{"topics.state", "state"}, {"topics.stories", "stories"}}));
  EXPECT_EQ(needs.produced, (Strings{"dlq", "articles", "stories", "state"}));
}

TEST(Roles, TheDedupRoleJudgesWhatExtractorsHandedOverUnderTheLeaseWhenOneIsSet) {
  for (const std::string lease : {"lease", ""}) {
    const config::Config c = config_of(config::Role::kDedup, lease);
    const Role& role = role_of(c);
    EXPECT_EQ(role.name(), "dedup");
    EXPECT_EQ(role.consumer_group(c.kafka), "g-dedup");
    EXPECT_EQ(role.input_topics(c.topics), (Strings{"extracted"}));
    EXPECT_TRUE(role.reads_extracted());
    EXPECT_TRUE(role.judges());
    // With a lease one process judges and the others are standbys; without, it subscribes.
    EXPECT_EQ(role.leased(), !lease.empty()) << lease;
    EXPECT_EQ(role.output_topics(c.topics), (Strings{"articles", "stories"}));
    EXPECT_EQ(role.topic_needs(c.topics).produced,
              (Strings{"dlq", "articles", "stories", "state"}));
  }
}

TEST(Roles, NoChangelogIsNoCompactedChangelogToCheck) {
  config::Config c = config_of(config::Role::kExtract);
  c.topics.state.clear();
  EXPECT_TRUE(role_of(c).topic_needs(c.topics).compacted.empty());
  c.role = config::Role::kAll;
  EXPECT_EQ(role_of(c).topic_needs(c.topics).compacted, (Keyed{{"topics.stories", "stories"}}));
  // An unset topic stays in the list as an empty name: the check skips it.
  EXPECT_EQ(role_of(c).topic_needs(c.topics).produced, (Strings{"dlq", "articles", "stories", ""}));
}

TEST(Roles, TheRoleOfAConfigIsPickedOnceAndShared) {
  const config::Config a = config_of(config::Role::kDedup), b = config_of(config::Role::kDedup);
  EXPECT_EQ(&role_of(a), &role_of(b));
  EXPECT_NE(&role_of(a), &role_of(config_of(config::Role::kDedup, "")));
}

}  // namespace
}  // namespace newsflow::daemon
