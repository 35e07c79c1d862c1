#include "dedup/window.h"

#include <algorithm>

namespace newsflow::dedup {

std::string_view dup_kind_name(DupKind k) {
  switch (k) {
    case DupKind::kUnique: return "unique";
    case DupKind::kExact: return "exact";
    case DupKind::kNear: return "near";
    case DupKind::kContained: return "contained";
  }
  return "unique";
}

Verdict DedupWindow::observe(std::string_view id, const ContentHash& hash,
                             std::int64_t event_time) {
  const std::string key(id);
  if (auto it = by_id_.find(key); it != by_id_.end()) return it->second.verdict;

  // Expire first, so an original that just left the window is not matched.
  watermark_ = std::max(watermark_, event_time);
  expire();
  Verdict verdict;
  auto& ids = by_hash_[hash];
  if (!ids.empty()) {
    verdict.kind = DupKind::kExact;
    verdict.of = ids.front();
    verdict.similarity = 1.0;
  }
  ids.push_back(key);
  by_id_.emplace(key, Entry{hash, event_time, verdict});
  by_time_.emplace(event_time, key);
  return verdict;
}

void DedupWindow::expire() {
  const std::int64_t horizon = watermark_ - options_.window_seconds;
  while (!by_time_.empty() && by_time_.begin()->first < horizon) {
    const std::string id = std::move(by_time_.begin()->second);
    by_time_.erase(by_time_.begin());
    const auto entry = by_id_.find(id);
    if (entry == by_id_.end()) continue;
    if (auto ids = by_hash_.find(entry->second.hash); ids != by_hash_.end()) {
      auto& q = ids->second;
      q.erase(std::remove(q.begin(), q.end(), id), q.end());
      if (q.empty()) by_hash_.erase(ids);
    }
    by_id_.erase(entry);
  }
}

}  // namespace newsflow::dedup
