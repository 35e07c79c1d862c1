#include "daemon/kafka/crash_guard.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "config/config.h"
#include "daemon/kafka/kafka.h"
#include "daemon/kafka/roles.h"
#include "daemon/ops/crash_scope.h"
#include "daemon/ops/log.h"

namespace newsflow::daemon {
namespace {

std::string file_name_safe(std::string s) {
  for (char& c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) c = '-';
  }
  return s;
}

// Written to a temporary file and renamed: a crash leaves the old note or the new one.
bool write_file(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  bool ok = fd >= 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (fd >= 0) ::close(fd);
  return ok && std::rename(tmp.c_str(), path.c_str()) == 0;
}

}  // namespace

CrashGuard::CrashGuard(std::string dir, bool count_kills)
    : dir_(std::move(dir)),
      path_(dir_.empty() || !count_kills ? "" : dir_ + "/inflight.jsonl"),
      crashed_path_(dir_.empty() ? "" : dir_ + "/crashed.jsonl") {}

std::string CrashGuard::directory_for(const config::Config& config) {
  if (!config.state.dir.empty()) return config.state.dir;
  // An embedded cluster does not outlive the process: its offsets mean nothing to the next one.
  if (config.kafka.brokers.empty()) return "";
  const char* tmp = std::getenv("TMPDIR");
  const std::string base = tmp && *tmp ? tmp : "/tmp";
  // An input is a topic, partition and offset of one cluster: the brokers are part of the name.
  char cluster[17];
  std::snprintf(cluster, sizeof cluster, "%016llx",
                static_cast<unsigned long long>(std::hash<std::string>{}(config.kafka.brokers)));
  return base + "/newsflow-crash-guard-" + std::to_string(::getuid()) + "/" +
         file_name_safe(config.kafka.group_id + "-" + std::string(role_of(config).name()) + "-" +
                        host_name() + "-" + cluster);
}

std::string CrashGuard::scope_note(const std::string& topic, int partition, std::int64_t offset) {
  return nlohmann::json{{"topic", topic}, {"partition", partition}, {"offset", offset}}.dump();
}

std::size_t CrashGuard::load() {
  if (crashed_path_.empty()) return 0;
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) {
    log::warn("crash_guard_unwritable", {{"path", dir_}, {"error", ec.message()}});
    return 0;
  }
  std::size_t n = 0;
  const auto read = [this, &n](const std::string& path, const auto& apply) {
    std::ifstream in(path);
    for (std::string line; in && std::getline(in, line);) {
      const auto j = nlohmann::json::parse(line, nullptr, false);
      if (!j.is_object()) continue;
      if (j.contains("link") && j["link"].is_string()) {
        links_.insert(j["link"].get<std::string>());
        ++n;
        continue;
      }
      if (!j.contains("topic") || !j["topic"].is_string()) continue;
      apply(Key{j["topic"].get<std::string>(), j.value("partition", 0),
                j.value("offset", std::int64_t{0})},
            j);
      ++n;
    }
  };
  if (!path_.empty())
    read(path_, [this](const Key& key, const nlohmann::json& j) {
      crashes_[key] = std::max(crashes_[key], j.value("crashes", 0) + 1);
      if (j.contains("signal") && j["signal"].is_string()) signals_[key] = j["signal"];
    });
  // Named by a fatal signal: dead-lettered at once. The names stay for the life of the
  // directory (an input read again after a rewind, a page linked again), so a kill before the
  // dead letter is out loses nothing.
  std::set<Key> named;
  read(crashed_path_, [this, &named](const Key& key, const nlohmann::json&) {
    crashes_[key] = std::max(crashes_[key], 2);
    signals_[key] = "fatal signal";
    named.insert(key);
  });
  std::string notes;
  for (const auto& [topic, partition, offset] : named) {
    notes += scope_note(topic, partition, offset) + "\n";
  }
  for (const auto& link : links_) notes += link_crash_note(link) + "\n";
  if (notes.empty() || !write_file(crashed_path_, notes)) ::unlink(crashed_path_.c_str());
  if (n > 0) {
    log::warn("crash_recovered",
              {{"inputs_in_flight", std::to_string(n)},
               {"action",
                "an input named by a fatal signal, or with two crashes, is dead-lettered; "
                "inputs with one crash are processed alone"}});
  }
  install_crash_handler(crashed_path_);
  return n;
}

int CrashGuard::crashes(const std::string& topic, int partition, std::int64_t offset) const {
  const auto it = crashes_.find(Key{topic, partition, offset});
  return it == crashes_.end() ? 0 : it->second;
}

std::string CrashGuard::crash_detail(const std::string& topic, int partition,
                                     std::int64_t offset) const {
  if (signals_.contains(Key{topic, partition, offset})) {
    return "the process died of a fatal signal while processing this input";
  }
  return "the process died twice while processing this input";
}

bool CrashGuard::begin(const std::vector<Input>& inputs) {
  if (!enabled()) return true;
  std::string text;
  for (const auto& in : inputs) {
    const Key key{in.topic, in.partition, in.offset};
    nlohmann::json j{{"topic", in.topic},
                     {"partition", in.partition},
                     {"offset", in.offset},
                     {"crashes", crashes(in.topic, in.partition, in.offset)}};
    if (signals_.contains(key)) j["signal"] = signals_.at(key);
    text += j.dump() + "\n";
  }
  const bool ok = write_file(path_, text);
  if (!ok) log::warn("crash_guard_unwritable", {{"path", path_}});
  return ok;
}

void CrashGuard::end() {
  if (enabled()) ::unlink(path_.c_str());
}

}  // namespace newsflow::daemon
