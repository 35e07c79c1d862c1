#include "config/config.h"

#include <gtest/gtest.h>

#include "daemon/kafka/kafka.h"

namespace newsflow::config {
namespace {

std::string problems_text(const std::vector<Problem>& ps) {
  std::string s;
  for (const auto& p : ps) s += p.path + ": " + p.message + "\n";
  return s;
}

TEST(Config, EmptyTextGivesDefaults) {
  auto c = parse_config("", {});
  ASSERT_TRUE(c) << problems_text(c.error());
  EXPECT_EQ(c->kafka.brokers, "");
  EXPECT_EQ(c->kafka.group_id, "newsflow");
  EXPECT_EQ(c->topics.pages, "newsflow.pages");
  EXPECT_EQ(c->http.listen, "127.0.0.1:9464");
  EXPECT_EQ(c->window.window_seconds, 72 * 3600);
}

TEST(Config, ReadsYamlAndPassesKafkaPropertiesThrough) {
  auto c = parse_config(R"(
kafka:
  brokers: "k1:9092,k2:9092"
  consumer: {fetch.max.bytes: 1048576, session.timeout.ms: "30000"}
topics: {articles: out.articles}
window: {hours: 24}
extract: {method: finn, max_html_bytes: 2048}
)",
                        {});
  ASSERT_TRUE(c) << problems_text(c.error());
  EXPECT_EQ(c->kafka.brokers, "k1:9092,k2:9092");
  EXPECT_EQ(c->kafka.consumer.at("fetch.max.bytes"), "1048576");
  EXPECT_EQ(c->topics.articles, "out.articles");
  EXPECT_EQ(c->window.window_seconds, 24 * 3600);
  EXPECT_EQ(c->extract.max_html_bytes, 2048u);
}

TEST(Config, EnvironmentOverridesTheFile) {
  auto c = parse_config("kafka: {brokers: a:1}\n", {{"NEWSFLOW_KAFKA__BROKERS", "b:2"},
                                                    {"NEWSFLOW_WINDOW__HOURS", "12"},
                                                    {"NEWSFLOW_KAFKA__PRODUCER__LINGER_MS", "20"},
                                                    {"NEWSFLOW_UNRELATED", "x"},
                                                    {"PATH", "/bin"}});
  ASSERT_TRUE(c) << problems_text(c.error());
  EXPECT_EQ(c->kafka.brokers, "b:2");
  EXPECT_EQ(c->window.window_seconds, 12 * 3600);
  EXPECT_EQ(c->kafka.producer.at("linger.ms"), "20");
}

TEST(Config, RolesShareTheWorkThroughBrokers) {
  auto c = parse_config("role: extract\nkafka: {brokers: a:1}\n", {});
  ASSERT_TRUE(c) << problems_text(c.error());
  EXPECT_EQ(c->role, "extract");
  EXPECT_EQ(c->topics.extracted, "newsflow.extracted");
  auto env = parse_config("kafka: {brokers: a:1}\n", {{"NEWSFLOW_ROLE", "dedup"}});
  ASSERT_TRUE(env) << problems_text(env.error());
  EXPECT_EQ(env->role, "dedup");
  EXPECT_EQ(parse_config("", {})->role, "all");
  // An embedded cluster is private to its process: a role alone has no one to share with.
  auto alone = parse_config("role: dedup\n", {});
  ASSERT_FALSE(alone);
  EXPECT_NE(problems_text(alone.error()).find("role"), std::string::npos);
  EXPECT_FALSE(parse_config("role: judge\nkafka: {brokers: a:1}\n", {}));
}

TEST(Config, ReportsEveryProblemWithItsPath) {
  auto c = parse_config(
      R"(
kafka: {group_id: "", batch_max_ms: soon}
topics: {pagez: x}
http: {listen: "nohost"}
log: {format: xml}
window: {hours: -1}
extract: {method: magic}
dedup: {signature: minhash}
)",
      {{"NEWSFLOW_STORIES__MAX_LISTED", "lots"}, {"NEWSFLOW_STORIES__MERGE_THRESHOLD", "0.1"}});
  ASSERT_FALSE(c);
  const std::string text = problems_text(c.error());
  for (const char* expected :
       {"kafka.group_id: must not be empty", "kafka.batch_max_ms: must be an integer",
        "topics.pagez: unknown key", "http.listen: must be host:port",
        "log.format: must be one of text, json", "window.hours: must be between 1",
        "extract.method: must be one of mss, finn", "stories.max_listed: must be an integer",
        "dedup.signature: must be one of weighted, shingles",
        "stories.merge_threshold: must be 0 (never merge) or at least"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << "missing '" << expected << "' in\n"
                                                      << text;
  }
}

TEST(Config, InvalidYamlSaysWhere) {
  auto c = parse_config("kafka: [unclosed\n", {});
  ASSERT_FALSE(c);
  EXPECT_NE(c.error()[0].message.find("invalid YAML at line"), std::string::npos);
}

TEST(Config, LibrdkafkaRejectsUnknownPropertiesAtTheirPath) {
  auto c = parse_config(
      "kafka: {consumer: {no.such.property: 1}, producer: {acks: maybe},"
      " lease: {session.timeout.ms: soon}}",
      {});
  ASSERT_TRUE(c);
  const auto problems = daemon::check_kafka_config(*c);
  const std::string text = problems_text(problems);
  EXPECT_NE(text.find("kafka.consumer.no.such.property:"), std::string::npos) << text;
  EXPECT_NE(text.find("kafka.producer.acks:"), std::string::npos) << text;
  EXPECT_NE(text.find("kafka.lease.session.timeout.ms:"), std::string::npos) << text;
}

TEST(Config, ALeasedDedupRoleNeedsTheStateChangelogAndTheLeaseReadsFromTheEnvironment) {
  auto c = parse_config("role: dedup\nkafka: {brokers: 'b:9092'}\ntopics: {state: ''}", {});
  ASSERT_FALSE(c);
  EXPECT_NE(problems_text(c.error()).find("topics.dedup_lease needs topics.state"),
            std::string::npos)
      << problems_text(c.error());
  auto without_lease = parse_config(
      "role: dedup\nkafka: {brokers: 'b:9092'}\ntopics: {state: '', dedup_lease: ''}", {});
  EXPECT_TRUE(without_lease);
  auto env = parse_config("", {{"NEWSFLOW_KAFKA__LEASE__SESSION_TIMEOUT_MS", "3000"}});
  ASSERT_TRUE(env);
  EXPECT_EQ(env->kafka.lease.at("session.timeout.ms"), "3000");
}

}  // namespace
}  // namespace newsflow::config
