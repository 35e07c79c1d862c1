#include "config/config.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

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
  EXPECT_EQ(c->role, Role::kExtract);
  EXPECT_EQ(c->topics.extracted, "newsflow.extracted");
  auto env = parse_config("kafka: {brokers: a:1}\n", {{"NEWSFLOW_ROLE", "dedup"}});
  ASSERT_TRUE(env) << problems_text(env.error());
  EXPECT_EQ(env->role, Role::kDedup);
  EXPECT_EQ(parse_config("", {})->role, Role::kAll);
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
window: {hours: -1, max_articles: 16777216}
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
        "window.max_articles: must be between 0 and 16777215",
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

// One row of a reference table in docs/configuration.md: the first code span of the key, default
// and environment variable cells.
struct ReferenceRow {
  std::string key;
  std::string default_value;
  std::string env;
  int line = 0;
};

std::string first_code_span(std::string_view cell) {
  const auto open = cell.find('`');
  if (open == std::string_view::npos) return "";
  const auto close = cell.find('`', open + 1);
  if (close == std::string_view::npos) return "";
  return std::string(cell.substr(open + 1, close - open - 1));
}

constexpr std::string_view kReferenceHeader =
    "| key | default | environment variable | what it does |";

// The rows of every table under the header kReferenceHeader, by key.
std::map<std::string, ReferenceRow> reference_rows(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::map<std::string, ReferenceRow> rows;
  std::string line;
  bool in_table = false;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line == kReferenceHeader) {
      in_table = true;
      continue;
    }
    if (!line.starts_with("|")) in_table = false;
    if (!in_table || line.starts_with("|---")) continue;
    std::vector<std::string> cells;
    std::size_t pos = 1;
    for (int i = 0; i < 3; ++i) {
      const auto bar = line.find('|', pos);
      if (bar == std::string::npos) break;
      cells.push_back(line.substr(pos, bar - pos));
      pos = bar + 1;
    }
    EXPECT_EQ(cells.size(), 3u) << path << ":" << number << ": not a reference row: " << line;
    if (cells.size() != 3) continue;
    ReferenceRow row{first_code_span(cells[0]), first_code_span(cells[1]),
                     first_code_span(cells[2]), number};
    EXPECT_FALSE(rows.count(row.key)) << path << ":" << number << ": " << row.key << " twice";
    rows[row.key] = row;
  }
  return rows;
}

// Defaults compare as numbers when both are numbers (`1.0` in the docs is the parser's `1`).
bool same_default(const std::string& documented, const std::string& parsed) {
  if (documented == parsed) return true;
  char* end_a = nullptr;
  char* end_b = nullptr;
  const double a = std::strtod(documented.c_str(), &end_a);
  const double b = std::strtod(parsed.c_str(), &end_b);
  return !documented.empty() && !parsed.empty() && *end_a == '\0' && *end_b == '\0' && a == b;
}

TEST(StoryModel, TheCompiledDefaultsAreTheCommittedModel) {
  // dedup/model/story_model.yaml is what `newsflow train-stories` wrote; StoryOptions' defaults
  // must be its numbers (a retrained model updates both).
  auto trained =
      load_config_file(std::string(NEWSFLOW_SOURCE_DIR) + "/dedup/model/story_model.yaml", {});
  ASSERT_TRUE(trained);
  const dedup::StoryOptions compiled;
  EXPECT_DOUBLE_EQ(trained->stories.similarity_threshold, compiled.similarity_threshold);
  EXPECT_DOUBLE_EQ(trained->stories.merge_threshold, compiled.merge_threshold);
  EXPECT_DOUBLE_EQ(trained->stories.model.bias, compiled.model.bias);
  EXPECT_DOUBLE_EQ(trained->stories.model.cosine, compiled.model.cosine);
  EXPECT_DOUBLE_EQ(trained->stories.model.containment, compiled.model.containment);
}

const std::string kReference = std::string(NEWSFLOW_SOURCE_DIR) + "/docs/configuration.md";

TEST(ConfigReference, ListsEveryKeyWithItsEnvironmentVariableAndDefault) {
  const auto rows = reference_rows(kReference);
  const auto keys = known_keys();
  ASSERT_GT(keys.size(), 80u);  // the parser reads every key even from an empty file
  for (const auto& k : keys) {
    const auto row = rows.find(k.path);
    if (row == rows.end()) {
      ADD_FAILURE() << k.path << " (" << k.env << ", default " << k.default_value << ") is not in "
                    << kReference;
      continue;
    }
    EXPECT_EQ(row->second.env, k.env) << kReference << ":" << row->second.line << ": " << k.path;
    EXPECT_TRUE(same_default(row->second.default_value, k.default_value))
        << kReference << ":" << row->second.line << ": " << k.path << " documents default `"
        << row->second.default_value << "`, the parser's is `" << k.default_value << "`";
  }
}

TEST(ConfigReference, ListsNoKeyTheParserDoesNotRead) {
  std::set<std::string> known;
  for (const auto& k : known_keys()) {
    EXPECT_TRUE(known.insert(k.path).second) << k.path << " read twice";
  }
  for (const auto& [key, row] : reference_rows(kReference)) {
    EXPECT_TRUE(known.count(key)) << kReference << ":" << row.line << ": `" << key
                                  << "` is not a key the parser reads";
  }
}

// The environment variable of each key sets that key: its default given through the
// environment parses without a problem (a name the parser did not map would be an unknown key).
TEST(ConfigReference, EachEnvironmentVariableSetsItsKey) {
  for (const auto& k : known_keys()) {
    const auto c = parse_config("", {{k.env, k.default_value}});
    EXPECT_TRUE(c) << k.env << "=" << k.default_value << ": "
                   << (c ? "" : problems_text(c.error()));
  }
  EXPECT_EQ(env_variable("kafka.batch_max_ms"), "NEWSFLOW_KAFKA__BATCH_MAX_MS");
  EXPECT_EQ(env_variable("role"), "NEWSFLOW_ROLE");
  const auto c = parse_config("", {{env_variable("fetch.host_delay_ms"), "40"}});
  ASSERT_TRUE(c) << problems_text(c.error());
  EXPECT_EQ(c->fetch.host_delay_ms, 40);
}

}  // namespace
}  // namespace newsflow::config
