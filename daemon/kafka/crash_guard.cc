#include "daemon/kafka/crash_guard.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "daemon/ops/log.h"

namespace newsflow::daemon {

CrashGuard::CrashGuard(std::string dir)
    : dir_(std::move(dir)), path_(dir_.empty() ? "" : dir_ + "/inflight.jsonl") {}

std::size_t CrashGuard::load() {
  if (!enabled()) return 0;
  std::ifstream in(path_);
  if (!in) return 0;
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || !j.contains("topic") || !j["topic"].is_string()) continue;
    const auto key = std::tuple{j["topic"].get<std::string>(), j.value("partition", 0),
                                j.value("offset", std::int64_t{0})};
    crashes_[key] = j.value("crashes", 0) + 1;
    ++n;
  }
  if (n > 0) {
    log::warn("crash_recovered",
              {{"inputs_in_flight", std::to_string(n)},
               {"action", "inputs with one crash are processed alone; with two, dead-lettered"}});
  }
  return n;
}

int CrashGuard::crashes(const std::string& topic, int partition, std::int64_t offset) const {
  const auto it = crashes_.find(std::tuple{topic, partition, offset});
  return it == crashes_.end() ? 0 : it->second;
}

bool CrashGuard::begin(const std::vector<Input>& inputs) {
  if (!enabled()) return true;
  std::string text;
  for (const auto& in : inputs) {
    nlohmann::json j{{"topic", in.topic},
                     {"partition", in.partition},
                     {"offset", in.offset},
                     {"crashes", crashes(in.topic, in.partition, in.offset)}};
    text += j.dump() + "\n";
  }
  const std::string tmp = path_ + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  bool ok = fd >= 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (fd >= 0) ::close(fd);
  ok = ok && std::rename(tmp.c_str(), path_.c_str()) == 0;
  if (!ok) log::warn("crash_guard_unwritable", {{"path", path_}});
  return ok;
}

void CrashGuard::end() {
  if (enabled()) ::unlink(path_.c_str());
}

}  // namespace newsflow::daemon
