#include "config/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

extern char** environ;

namespace newsflow::config {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::vector<std::string> split(std::string_view s, std::string_view sep) {
  std::vector<std::string> parts;
  std::size_t pos = 0;
  while (true) {
    const auto next = s.find(sep, pos);
    parts.emplace_back(s.substr(pos, next == std::string_view::npos ? s.npos : next - pos));
    if (next == std::string_view::npos) break;
    pos = next + sep.size();
  }
  return parts;
}

std::string number_text(double value) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(value);
}

// Walks one mapping, remembering which keys were read so the rest can be reported as unknown.
// With `keys` set, every key read is also noted there with the value it held before (its
// default, when the text is empty): that is how `known_keys` lists them.
class Section {
 public:
  Section(YAML::Node node, std::string path, std::vector<Problem>& problems,
          std::vector<KeyInfo>* keys = nullptr)
      : node_(std::move(node)), path_(std::move(path)), problems_(problems), keys_(keys) {
    if (node_ && !node_.IsNull() && !node_.IsMap()) {
      problem("", "must be a mapping");
      node_ = YAML::Node();
    }
  }

  ~Section() {
    if (!node_ || !node_.IsMap()) return;
    for (const auto& kv : node_) {
      const std::string key = kv.first.as<std::string>("");
      if (!read_.count(key)) problem(key, "unknown key");
    }
  }

  Section section(const std::string& key) {
    read_.insert(key);
    YAML::Node child;
    if (node_ && node_.IsMap() && node_[key]) child = node_[key];
    return Section(child, join(key), problems_, keys_);
  }

  void string(const std::string& key, std::string& out) {
    note(key, out.empty() ? "\"\"" : out);
    if (const auto v = get(key)) {
      if (!v->IsScalar()) return problem(key, "must be a string");
      out = v->Scalar();
    }
  }

  void boolean(const std::string& key, bool& out) {
    note(key, out ? "true" : "false");
    if (const auto v = get(key)) {
      const std::string text = v->IsScalar() ? v->Scalar() : "";
      if (text == "true" || text == "yes" || text == "on") {
        out = true;
      } else if (text == "false" || text == "no" || text == "off") {
        out = false;
      } else {
        problem(key, "must be true or false, got '" + text + "'");
      }
    }
  }

  // A YAML sequence of strings, or one comma-separated string (as environment overrides give).
  void string_list(const std::string& key, std::vector<std::string>& out) {
    std::string text;
    for (const auto& item : out) text += (text.empty() ? "" : ", ") + item;
    note(key, "[" + text + "]");
    if (const auto v = get(key)) {
      out.clear();
      if (v->IsSequence()) {
        for (const auto& item : *v) {
          if (!item.IsScalar()) return problem(key, "must be a list of strings");
          out.push_back(item.Scalar());
        }
      } else if (v->IsScalar()) {
        for (auto& part : split(v->Scalar(), ",")) {
          const auto b = part.find_first_not_of(' ');
          const auto e = part.find_last_not_of(' ');
          if (b != std::string::npos) out.push_back(part.substr(b, e - b + 1));
        }
      } else if (!v->IsNull()) {
        problem(key, "must be a list of strings");
      }
    }
  }

  void string_choice(const std::string& key, std::string& out,
                     std::initializer_list<std::string_view> choices) {
    std::string value = out;
    string(key, value);
    for (auto c : choices) {
      if (value == c) {
        out = value;
        return;
      }
    }
    std::string list;
    for (auto c : choices) list += (list.empty() ? "" : ", ") + std::string(c);
    problem(key, "must be one of " + list + ", got '" + value + "'");
  }

  /// One of the named values of an enum.
  template <typename Enum>
  void choice(const std::string& key, Enum& out,
              std::initializer_list<std::pair<std::string_view, Enum>> choices) {
    std::string value;
    for (const auto& [name, e] : choices) {
      if (e == out) value = name;
    }
    string(key, value);
    for (const auto& [name, e] : choices) {
      if (value == name) {
        out = e;
        return;
      }
    }
    std::string list;
    for (const auto& [name, e] : choices) list += (list.empty() ? "" : ", ") + std::string(name);
    problem(key, "must be one of " + list + ", got '" + value + "'");
  }

  template <typename Int>
  void integer(const std::string& key, Int& out, long long min, long long max) {
    note(key, std::to_string(out));
    if (const auto v = get(key)) {
      long long value = 0;
      if (!v->IsScalar() || !YAML::convert<long long>::decode(*v, value)) {
        return problem(key, "must be an integer, got '" + (v->IsScalar() ? v->Scalar() : "") + "'");
      }
      if (value < min || value > max) {
        return problem(key, "must be between " + std::to_string(min) + " and " +
                                std::to_string(max) + ", got " + std::to_string(value));
      }
      out = static_cast<Int>(value);
    }
  }

  void number(const std::string& key, double& out, double min, double max) {
    note(key, number_text(out));
    if (const auto v = get(key)) {
      double value = 0;
      if (!v->IsScalar() || !YAML::convert<double>::decode(*v, value)) {
        return problem(key, "must be a number, got '" + (v->IsScalar() ? v->Scalar() : "") + "'");
      }
      if (value < min || value > max) {
        return problem(key, "must be between " + std::to_string(min) + " and " +
                                std::to_string(max) + ", got " + v->Scalar());
      }
      out = value;
    }
  }

  void properties(const std::string& key, std::map<std::string, std::string>& out) {
    note(key, "{}");
    const auto v = get(key);
    if (!v) return;
    if (!v->IsMap()) return problem(key, "must be a mapping of librdkafka properties");
    for (const auto& kv : *v) {
      const std::string name = kv.first.as<std::string>("");
      if (!kv.second.IsScalar()) {
        problem(key + "." + name, "must be a scalar");
        continue;
      }
      out[name] = kv.second.Scalar();
    }
  }

  void problem(const std::string& key, std::string message) {
    problems_.push_back({join(key), std::move(message)});
  }

 private:
  void note(const std::string& key, std::string default_value) {
    if (keys_) keys_->push_back({join(key), env_variable(join(key)), std::move(default_value)});
  }

  // The value at `key`, or nothing when absent or null.
  std::optional<YAML::Node> get(const std::string& key) {
    read_.insert(key);
    if (!node_ || !node_.IsMap()) return std::nullopt;
    YAML::Node v = node_[key];
    if (!v || v.IsNull()) return std::nullopt;
    return v;
  }
  std::string join(const std::string& key) const {
    if (key.empty()) return path_;
    return path_.empty() ? key : path_ + "." + key;
  }

  YAML::Node node_;
  std::string path_;
  std::vector<Problem>& problems_;
  std::vector<KeyInfo>* keys_;
  std::set<std::string> read_;
};

void apply_env(YAML::Node& root, const Environment& env, std::vector<Problem>& problems) {
  static constexpr std::string_view kPrefix = "NEWSFLOW_";
  for (const auto& [name, value] : env) {
    // NEWSFLOW_SECTION__KEY; of the top-level keys only `role` (NEWSFLOW_ROLE): other
    // NEWSFLOW_* names (NEWSFLOW_BIN in scripts) are not configuration.
    if (!name.starts_with(kPrefix) ||
        (name.find("__") == std::string::npos && name != "NEWSFLOW_ROLE")) {
      continue;
    }
    std::vector<std::string> path = split(std::string_view(name).substr(kPrefix.size()), "__");
    for (auto& p : path) p = lower(p);
    if (std::any_of(path.begin(), path.end(), [](const auto& p) { return p.empty(); })) {
      problems.push_back({name, "environment override has an empty key segment"});
      continue;
    }
    // librdkafka property names use dots; environment names cannot.
    if (path.size() >= 3 && path[0] == "kafka" &&
        (path[1] == "client" || path[1] == "consumer" || path[1] == "producer" ||
         path[1] == "lease")) {
      std::string prop;
      for (std::size_t i = 2; i < path.size(); ++i) prop += (i > 2 ? "." : "") + path[i];
      std::replace(prop.begin(), prop.end(), '_', '.');
      path.resize(2);
      path.push_back(prop);
    }
    YAML::Node parsed;
    try {
      parsed = YAML::Load(value);
    } catch (const YAML::Exception&) {
      parsed = YAML::Node(value);
    }
    if (!parsed || parsed.IsNull()) parsed = YAML::Node(value);
    // Walk down with fresh handles: yaml-cpp nodes alias on assignment.
    std::vector<YAML::Node> chain{root};
    bool ok = true;
    for (std::size_t i = 0; i + 1 < path.size(); ++i) {
      YAML::Node child = chain.back()[path[i]];
      if (child && !child.IsNull() && !child.IsMap()) {
        problems.push_back(
            {name, "cannot override inside '" + path[i] + "', which is not a mapping"});
        ok = false;
        break;
      }
      chain.push_back(child);
    }
    if (ok) chain.back()[path.back()] = parsed;
  }
}

// Each section of the file, read into its part of the configuration in the order they are listed.

void read_kafka(Section k, Config& c) {
  k.string("brokers", c.kafka.brokers);
  k.string("group_id", c.kafka.group_id);
  if (c.kafka.group_id.empty()) k.problem("group_id", "must not be empty");
  k.string("group_instance_id", c.kafka.group_instance_id);
  k.properties("client", c.kafka.client);
  k.properties("consumer", c.kafka.consumer);
  k.properties("producer", c.kafka.producer);
  k.properties("lease", c.kafka.lease);
  k.integer("batch_max_messages", c.kafka.batch_max_messages, 1, 100000);
  k.integer("batch_max_ms", c.kafka.batch_max_ms, 1, 60000);
  k.integer("flush_timeout_ms", c.kafka.flush_timeout_ms, 100, 600000);
  k.integer("commit_interval_ms", c.kafka.commit_interval_ms, 0, 600000);
  k.integer("batch_max_bytes", c.kafka.batch_max_bytes, 1 << 16, 1LL << 34);
  k.integer("drain_timeout_ms", c.kafka.drain_timeout_ms, 0, 600000);
  k.integer("max_idle_ms", c.kafka.max_idle_ms, 0, 600000);
  k.integer("extractor_silence_ms", c.kafka.extractor_silence_ms, 0, 3600000);
  k.integer("dlq_max_payload_bytes", c.kafka.dlq_max_payload_bytes, 0, 1LL << 30);
  k.integer("state_snapshot_articles", c.kafka.state_snapshot_articles, 0, 1LL << 32);
  k.integer("restore_buffer_bytes", c.kafka.restore_buffer_bytes, 0, 1LL << 40);
  k.choice("delivery", c.kafka.delivery,
           {{"at_least_once", Delivery::kAtLeastOnce}, {"exactly_once", Delivery::kExactlyOnce}});
  k.string("transactional_id", c.kafka.transactional_id);
  if (c.kafka.transactional_id.empty()) k.problem("transactional_id", "must not be empty");
  k.integer("embedded_brokers", c.kafka.embedded_brokers, 1, 9);
  k.integer("embedded_partitions", c.kafka.embedded_partitions, 1, 256);
  k.integer("workers", c.kafka.workers, 0, 256);
}

void read_topics(Section t, Config& c) {
  for (auto [key, field] : {std::pair{"pages", &c.topics.pages},
                            {"feeds", &c.topics.feeds},
                            {"articles", &c.topics.articles},
                            {"stories", &c.topics.stories},
                            {"dlq", &c.topics.dlq}}) {
    t.string(key, *field);
    if (field->empty()) t.problem(key, "topic name must not be empty");
  }
  t.string("state", c.topics.state);  // empty: no changelog (restore from the articles)
  t.string("extracted", c.topics.extracted);
  if (c.topics.extracted.empty()) t.problem("extracted", "topic name must not be empty");
  t.string("dedup_lease", c.topics.dedup_lease);      // empty: no standby
  t.string("fetch_retries", c.topics.fetch_retries);  // empty: no later tries
}

// The role, and what it needs of the sections read before it.
void read_role(Section& top, Config& c) {
  top.choice("role", c.role,
             {{"all", Role::kAll}, {"extract", Role::kExtract}, {"dedup", Role::kDedup}});
  if (c.role == Role::kDedup && !c.topics.dedup_lease.empty() && c.topics.state.empty()) {
    top.problem("topics",
                "topics.dedup_lease needs topics.state: a standby follows the "
                "owner through the state changelog (set both, or dedup_lease: \"\")");
  }
  if (c.role != Role::kAll && c.kafka.brokers.empty()) {
    top.problem("role", "'" + std::string(role_name(c.role)) +
                            "' shares the work with other processes through Kafka: it needs "
                            "kafka.brokers (an embedded cluster is private to one process)");
  }
}

void read_http(Section h, Config& c) {
  h.string("listen", c.http.listen);
  const auto colon = c.http.listen.rfind(':');
  if (!c.http.listen.empty() &&
      (colon == std::string::npos || colon + 1 == c.http.listen.size() ||
       c.http.listen.find_first_not_of("0123456789", colon + 1) != std::string::npos)) {
    h.problem("listen",
              "must be host:port (empty disables the HTTP endpoint), got '" + c.http.listen + "'");
  }
}

void read_state(Section st, Config& c) { st.string("dir", c.state.dir); }

void read_log(Section l, Config& c) {
  l.string_choice("format", c.log.format, {"text", "json"});
  l.string_choice("level", c.log.level, {"debug", "info", "warn", "error"});
}

void read_extract(Section e, Config& c) {
  std::string method = "mss";
  e.string("method", method);
  if (!extractors::parse_extract_method(method, c.extract.method)) {
    e.problem("method", "must be one of mss, finn, got '" + method + "'");
  }
  e.string("model_file", c.extract_model_file);
  e.number("drop_below", c.extract.segment.drop_below, 0.0, 1.0);
  e.number("secondary_share", c.extract.segment.secondary_share, 0.0, 10.0);
  e.integer("min_run_words", c.extract.segment.min_run_words, 0, 100000);
  e.boolean("drop_comments", c.extract.segment.drop_comments);
  e.integer("max_html_bytes", c.extract.max_html_bytes, 1024, 1LL << 30);
  e.integer("max_nesting_depth", c.extract.max_nesting_depth, 16, 1000000);
  e.integer("max_feed_items", c.extract.max_feed_items, 1, 1000000);
  e.integer("max_elements", c.extract.max_elements, 1000, 100000000);
  e.integer("max_page_words", c.extract.max_page_words, 1000, 100000000);
  e.integer("min_text_chars", c.extract.min_text_chars, 0, 1 << 20);
  e.integer("max_text_bytes", c.extract.max_text_bytes, 1024, 1LL << 30);
}

void read_window(Section w, Config& c) {
  long long hours = 72;
  w.integer("hours", hours, 1, 24 * 365);
  c.window.window_seconds = hours * 3600;
  c.stories.window_seconds = hours * 3600;
  c.boilerplate.window_seconds = hours * 3600;
  long long lead_minutes = 60;
  w.integer("max_lead_minutes", lead_minutes, 0, 24 * 60 * 365);
  c.max_event_lead_seconds = lead_minutes * 60;
  w.integer("max_articles", c.window.max_articles, 0, 16777215);  // DedupWindow::kMaxArticles
}

void read_dedup(Section d, Config& c) {
  std::string scheme = "weighted";
  d.string("signature", scheme);
  if (!dedup::parse_signature_scheme(scheme, c.signature.scheme)) {
    d.problem(
        "signature",
        "must be one of weighted, shingles, spotsigs, sentences, simhash, got '" + scheme + "'");
  }
  // Measured best phrase lengths: 7 words weighted, 5 for the plain schemes.
  if (c.signature.scheme != dedup::SignatureScheme::kWeighted) c.signature.shingle_words = 5;
  c.window.simhash = c.signature.scheme == dedup::SignatureScheme::kSimHash;
  d.integer("simhash_max_bits", c.window.simhash_max_bits, 0, 32);
  d.integer("shingle_words", c.signature.shingle_words, 1, 16);
  d.integer("spot_chain", c.signature.spot_chain, 1, 8);
  d.number("near_threshold", c.window.near_threshold, 0.0, 1.0);
  d.number("contained_threshold", c.window.contained_threshold, 0.0, 1.0);
  d.number("contained_max_ratio", c.window.contained_max_ratio, 0.0, 1.0);
  d.integer("bands", c.window.bands, 1, dedup::kSketchSlots);
  d.integer("min_phrases", c.window.min_phrases, 0, 100000);
  std::string site_boilerplate = c.boilerplate.enabled ? "true" : "false";
  d.string("site_boilerplate", site_boilerplate);
  if (site_boilerplate != "true" && site_boilerplate != "false") {
    d.problem("site_boilerplate", "must be true or false, got '" + site_boilerplate + "'");
  }
  c.boilerplate.enabled = site_boilerplate == "true";
  d.integer("boilerplate_min_pages", c.boilerplate.min_other_pages, 1, 254);
  if (dedup::kSketchSlots % c.window.bands != 0) {
    d.problem("bands", "must divide " + std::to_string(dedup::kSketchSlots));
  }
}

void read_fetch(Section f, Config& c) {
  f.boolean("enabled", c.fetch.enabled);
  f.integer("min_feed_words", c.fetch.min_feed_words, 0, 1000000);
  f.string("user_agent", c.fetch.user_agent);
  if (c.fetch.user_agent.empty()) f.problem("user_agent", "must not be empty");
  f.integer("max_concurrency", c.fetch.max_concurrency, 1, 1024);
  f.integer("per_host_concurrency", c.fetch.per_host_concurrency, 1, 64);
  f.integer("host_delay_ms", c.fetch.host_delay_ms, 0, 600000);
  f.integer("connect_timeout_ms", c.fetch.connect_timeout_ms, 100, 600000);
  f.integer("timeout_ms", c.fetch.timeout_ms, 100, 600000);
  f.integer("max_redirects", c.fetch.max_redirects, 0, 50);
  f.integer("max_body_bytes", c.fetch.max_body_bytes, 1024, 1LL << 30);
  f.integer("retries", c.fetch.retries, 0, 10);
  f.integer("retry_backoff_ms", c.fetch.retry_backoff_ms, 0, 600000);
  f.string_list("allow_networks", c.fetch.allow_networks);
  f.integer("seen_urls_max", c.fetch.seen_urls_max, 0, 100000000);
  f.boolean("robots_txt", c.fetch.robots_txt);
  f.integer("robots_cache_seconds", c.fetch.robots_cache_seconds, 0, 86400);
  f.integer("robots_error_seconds", c.fetch.robots_error_seconds, 0, 86400);
  f.integer("max_crawl_delay_ms", c.fetch.max_crawl_delay_ms, 0, 600000);
  f.integer("batch_deadline_ms", c.fetch.batch_deadline_ms, 0, 600000);
  f.integer("batch_wait_ms", c.fetch.batch_wait_ms, 0, 600000);
  f.integer("requeue_attempts", c.fetch.requeue_attempts, 0, 100);
  f.integer("requeue_backoff_ms", c.fetch.requeue_backoff_ms, 10, 86400000);
  f.integer("requeue_max_backoff_ms", c.fetch.requeue_max_backoff_ms, 10, 7 * 86400000LL);
  if (c.fetch.requeue_max_backoff_ms < c.fetch.requeue_backoff_ms) {
    f.problem("requeue_max_backoff_ms", "must not be less than requeue_backoff_ms");
  }
}

void read_stories(Section s, Config& c) {
  s.integer("max_listed", c.stories.max_listed, 1, 100000);
  s.number("similarity_threshold", c.stories.similarity_threshold, 0.0, 1.0);
  s.number("decay_hours", c.stories.decay_hours, 0.1, 24.0 * 365);
  s.integer("text_words", c.stories.text_words, 0, 100000);
  s.number("title_weight", c.stories.title_weight, 0.0, 100.0);
  s.integer("lead_words", c.stories.lead_words, 0, 100000);
  s.number("lead_weight", c.stories.lead_weight, 1.0, 100.0);
  s.integer("stem_chars", c.stories.stem_chars, 0, 100);
  s.number("entity_boost", c.stories.entity_boost, 0.1, 10.0);
  s.integer("terms_per_article", c.stories.terms_per_article, 1, 10000);
  s.number("merge_threshold", c.stories.merge_threshold, 0.0, 1.0);
  s.boolean("within_language", c.stories.within_language);
  s.boolean("related_across_languages", c.stories.related_across_languages);
  s.number("related_threshold", c.stories.related_threshold, 0.0, 1.0);
  s.integer("related_max", c.stories.related_max, 1, 100);
  {
    Section m = s.section("model");
    m.number("bias", c.stories.model.bias, -1000.0, 1000.0);
    m.number("cosine", c.stories.model.cosine, -1000.0, 1000.0);
    m.number("containment", c.stories.model.containment, -1000.0, 1000.0);
  }
  if (c.stories.merge_threshold > 0 && c.stories.merge_threshold < c.stories.similarity_threshold) {
    s.problem("merge_threshold",
              "must be 0 (never merge) or at least stories.similarity_threshold");
  }
}

// parse_config, noting every key it reads in `keys` when that is set.
tl::expected<Config, std::vector<Problem>> parse(std::string_view yaml_text, const Environment& env,
                                                 std::vector<KeyInfo>* keys) {
  std::vector<Problem> problems;
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    return tl::unexpected(std::vector<Problem>{
        {"", "invalid YAML at line " + std::to_string(e.mark.line + 1) + ", column " +
                 std::to_string(e.mark.column + 1) + ": " + e.msg}});
  }
  if (!root || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap()) return tl::unexpected(std::vector<Problem>{{"", "must be a mapping"}});
  apply_env(root, env, problems);

  Config c;
  {
    Section top(root, "", problems, keys);
    read_kafka(top.section("kafka"), c);
    read_topics(top.section("topics"), c);
    read_role(top, c);
    read_http(top.section("http"), c);
    read_state(top.section("state"), c);
    read_log(top.section("log"), c);
    read_extract(top.section("extract"), c);
    read_window(top.section("window"), c);
    read_dedup(top.section("dedup"), c);
    read_fetch(top.section("fetch"), c);
    read_stories(top.section("stories"), c);
  }
  if (!problems.empty()) return tl::unexpected(std::move(problems));
  return c;
}

}  // namespace

Environment process_environment() {
  Environment env;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view kv(*e);
    const auto eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return env;
}

std::string_view role_name(Role role) {
  switch (role) {
    case Role::kAll:
      return "all";
    case Role::kExtract:
      return "extract";
    case Role::kDedup:
      return "dedup";
  }
  return "all";
}

std::optional<Role> parse_role(std::string_view name) {
  for (const Role r : {Role::kAll, Role::kExtract, Role::kDedup}) {
    if (role_name(r) == name) return r;
  }
  return std::nullopt;
}

std::string_view delivery_name(Delivery delivery) {
  return delivery == Delivery::kExactlyOnce ? "exactly_once" : "at_least_once";
}

std::string env_variable(std::string_view path) {
  std::string name = "NEWSFLOW_";
  for (const char ch : path) {
    if (ch == '.') {
      name += "__";
    } else {
      name += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    }
  }
  return name;
}

std::vector<KeyInfo> known_keys() {
  std::vector<KeyInfo> keys;
  parse("", {}, &keys);
  return keys;
}

tl::expected<Config, std::vector<Problem>> parse_config(std::string_view yaml_text,
                                                        const Environment& env) {
  return parse(yaml_text, env, nullptr);
}

tl::expected<Config, std::vector<Problem>> load_config_file(const std::string& path,
                                                            const Environment& env) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return tl::unexpected(std::vector<Problem>{{"", "cannot read config file " + path}});
  std::ostringstream text;
  text << in.rdbuf();
  return parse_config(text.str(), env);
}

}  // namespace newsflow::config
