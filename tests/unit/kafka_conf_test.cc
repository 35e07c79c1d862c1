#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include "config/config.h"
#include "daemon/kafka/kafka.h"

namespace newsflow::daemon {
namespace {

TEST(GroupInstanceId, AutoIsTheHostAndTheRole) {
  EXPECT_EQ(group_instance_id("auto", "extract", "newsflow-extract-7d9f-x2"),
            "newsflow-extract-7d9f-x2-extract");
  EXPECT_EQ(group_instance_id("auto", "all", "ingest01.example.org"), "ingest01.example.org-all");
}

TEST(GroupInstanceId, CharactersKafkaRejectsBecomeDashes) {
  EXPECT_EQ(group_instance_id("auto", "dedup", "host name:1"), "host-name-1-dedup");
}

TEST(GroupInstanceId, NoneOrEmptyIsDynamicMembership) {
  EXPECT_EQ(group_instance_id("none", "all", "h"), "");
  EXPECT_EQ(group_instance_id("", "all", "h"), "");
}

TEST(GroupInstanceId, AnythingElseIsTakenAsItIs) {
  EXPECT_EQ(group_instance_id("nf-0", "all", "h"), "nf-0");
}

TEST(GroupInstanceId, NoHostNameStillGivesAnId) {
  EXPECT_EQ(group_instance_id("auto", "all", ""), "newsflow-all");
}

std::string property(const KafkaConf& conf, const char* name) {
  char value[512];
  std::size_t size = sizeof value;
  if (rd_kafka_conf_get(conf.get(), name, value, &size) != RD_KAFKA_CONF_OK) return "?";
  return value;
}

// A managed Kafka's security is said once, under kafka.client, and reaches every client: over
// newsflow's defaults, under each client's own section.
TEST(KafkaClientProperties, ApplyToEveryClientUnderItsOwnSection) {
  const std::map<std::string, std::string> shared{{"security.protocol", "sasl_ssl"},
                                                  {"sasl.mechanisms", "PLAIN"},
                                                  {"sasl.username", "newsflow"},
                                                  {"sasl.password", "secret"},
                                                  {"client.id", "shared"}};
  auto conf = make_kafka_conf({{"client.id", "newsflow"}, {"acks", "all"}}, shared,
                              {{"client.id", "own"}}, "kafka.producer");
  ASSERT_TRUE(conf);
  EXPECT_EQ(property(*conf, "security.protocol"), "sasl_ssl");
  EXPECT_EQ(property(*conf, "sasl.username"), "newsflow");
  EXPECT_EQ(property(*conf, "client.id"), "own");  // the section wins
  auto defaults_only = make_kafka_conf({{"client.id", "newsflow"}}, shared, {}, "kafka.lease");
  ASSERT_TRUE(defaults_only);
  EXPECT_EQ(property(*defaults_only, "client.id"), "shared");  // over the defaults
  // A property librdkafka refuses is named where it was written.
  auto bad =
      make_kafka_conf({}, {{"no.such.property", "1"}}, {{"also.not.one", "1"}}, "kafka.consumer");
  ASSERT_FALSE(bad);
  ASSERT_EQ(bad.error().size(), 2u);
  EXPECT_EQ(bad.error()[0].path, "kafka.client.no.such.property");
  EXPECT_EQ(bad.error()[1].path, "kafka.consumer.also.not.one");
  config::Config c;
  c.kafka.client = {{"no.such.property", "1"}};
  const auto problems = check_kafka_config(c);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].path, "kafka.client.no.such.property");
}

TEST(KafkaClientProperties, ComeFromTheFileAndTheEnvironment) {
  // A password from a Kubernetes Secret arrives as an environment variable.
  const auto c = config::parse_config(
      "kafka:\n  client:\n    security.protocol: sasl_ssl\n    sasl.mechanisms: SCRAM-SHA-512\n",
      {{"NEWSFLOW_KAFKA__CLIENT__SASL_PASSWORD", "from-a-secret"}});
  ASSERT_TRUE(c) << c.error().front().path << ": " << c.error().front().message;
  EXPECT_EQ(c->kafka.client.at("security.protocol"), "sasl_ssl");
  EXPECT_EQ(c->kafka.client.at("sasl.mechanisms"), "SCRAM-SHA-512");
  EXPECT_EQ(c->kafka.client.at("sasl.password"), "from-a-secret");
}

}  // namespace
}  // namespace newsflow::daemon
