#include "daemon/kafka/loop_status.h"

// The status page's snapshot, systemd's notifications and the loop's liveness.

#include <string>

#include "daemon/kafka/message.h"
#include "daemon/ops/log.h"
#include "daemon/ops/metrics.h"
#include "daemon/pipeline/pipeline.h"
#include "daemon/version.h"

namespace newsflow::daemon {

using namespace internal;

LoopStatus::LoopStatus(Metrics& metrics, const Pipeline& pipeline, const Progress& progress)
    : metrics_(metrics), pipeline_(pipeline), progress_(progress) {
  status_.version = kVersion;
  status_.started = unix_now();
}

bool LoopStatus::live(std::chrono::milliseconds stall_limit) const {
  const std::int64_t last = last_tick_ms_.load();
  return last == 0 || steady_ms() - last <= stall_limit.count();
}

StatusSnapshot LoopStatus::snapshot() const {
  std::lock_guard lock(mu_);
  StatusSnapshot copy = status_;
  copy.now = unix_now();
  return copy;
}

void LoopStatus::dead_letter(StatusSnapshot::DeadLetter entry) {
  std::lock_guard lock(mu_);
  status_.dead_letters.push_front(std::move(entry));
  if (status_.dead_letters.size() > StatusSnapshot::kMaxDeadLetters)
    status_.dead_letters.pop_back();
}

void LoopStatus::refresh(bool ready, bool force) {
  const auto now = Clock::now();
  if (!force && now - last_status_ < std::chrono::seconds(1)) return;
  last_status_ = now;
  metrics_.ready(ready);
  std::lock_guard lock(mu_);
  status_.ready = ready;
  status_.window_articles = pipeline_.window().size();
  status_.window_bytes = pipeline_.window().memory_bytes();
  status_.stories_active = pipeline_.stories().size();
  status_.stories = pipeline_.stories().largest(10);
  status_.newest = pipeline_.stories().newest(10);
  status_.related.clear();
  for (const auto* list : {&status_.stories, &status_.newest}) {
    for (const dedup::Story& story : *list) {
      for (const std::string& id : story.related_stories) {
        if (const dedup::Story* r = pipeline_.stories().find(id)) {
          status_.related[id] = {r->title, r->language};
        }
      }
    }
  }
  if (force || status_.samples.empty() || now - last_sample_ >= std::chrono::seconds(10)) {
    last_sample_ = now;
    status_.samples.push_back({unix_now(), progress_.consumed.load(), progress_.articles.load(),
                               progress_.duplicates.load(), progress_.dead_letters.load()});
    if (status_.samples.size() > StatusSnapshot::kMaxSamples) status_.samples.pop_front();
  }
}

void LoopStatus::tick(bool ready, int partitions) {
  last_tick_ms_.store(steady_ms());
  notifier_.alive();
  metrics_.loop_alive(static_cast<double>(unix_now()));
  if (!notified_ready_ && ready) {
    notified_ready_ = true;
    notifier_.ready();
    log::info("daemon_ready", {{"partitions", std::to_string(partitions)}});
  }
  refresh(ready, false);
  if (Clock::now() - last_notify_status_ >= std::chrono::seconds(2)) {
    last_notify_status_ = Clock::now();
    notifier_.status("consumed " + std::to_string(progress_.consumed.load()) + ", articles " +
                     std::to_string(progress_.articles.load()) + ", duplicates " +
                     std::to_string(progress_.duplicates.load()) + ", dead letters " +
                     std::to_string(progress_.dead_letters.load()) + ", window " +
                     std::to_string(pipeline_.window().size()));
  }
}

}  // namespace newsflow::daemon
