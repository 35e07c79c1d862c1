#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <utility>

namespace newsflow::daemon {

/// The links (and feed item identities) whose page was fetched or published, each with the
/// latest event time it was seen at: a link seen here is not fetched again. Bounded in entries
/// and in time. Every entry of the set has exactly one place in the expiry order, so whatever
/// order the times come in (undated items at time 0, old links seen again from the changelog),
/// the set never holds an entry it cannot expire: the set that broke this kept an entry after
/// dropping its place, stayed over its bound for good, and evicted every new link at once.
class SeenLinks {
 public:
  /// Records `key` at `event_time` (a later time of a known key moves it back in the order when
  /// its place comes up); a new key first makes room: entries last seen before `horizon` and
  /// entries beyond `max_entries` are forgotten, oldest place first.
  void remember(const std::string& key, std::int64_t event_time, std::int64_t horizon,
                std::size_t max_entries) {
    if (max_entries == 0) return;
    auto [it, inserted] = last_seen_.try_emplace(key, event_time);
    if (!inserted) {
      it->second = std::max(it->second, event_time);
      return;
    }
    // The new entry takes its place after the others have made room: it is the link just
    // seen, never the one to go.
    while (!order_.empty() && (last_seen_.size() > max_entries || order_.front().first < horizon)) {
      auto [t, k] = std::move(order_.front());
      order_.pop_front();
      const auto f = last_seen_.find(k);
      if (f == last_seen_.end()) continue;  // not kept by a repaired state; see `load`
      if (f->second <= t) {
        last_seen_.erase(f);
      } else {
        order_.emplace_back(f->second, std::move(k));  // seen again since: its new place
      }
    }
    order_.emplace_back(event_time, key);
  }

  bool contains(const std::string& key) const { return last_seen_.contains(key); }
  std::size_t size() const { return last_seen_.size(); }
  /// Places in the expiry order: equal to `size()` (tests check it).
  std::size_t places() const { return order_.size(); }

  const std::deque<std::pair<std::int64_t, std::string>>& order() const { return order_; }
  const std::unordered_map<std::string, std::int64_t>& last_seen() const { return last_seen_; }

  /// Takes a saved order and set; an entry of the set without a place (saved by a version with
  /// the defect above) gets one at its time, and a place without an entry is dropped.
  void load(std::deque<std::pair<std::int64_t, std::string>> order,
            std::unordered_map<std::string, std::int64_t> last_seen) {
    std::unordered_map<std::string, bool> placed;
    placed.reserve(last_seen.size());
    std::deque<std::pair<std::int64_t, std::string>> kept;
    for (auto& [t, k] : order) {
      if (last_seen.contains(k) && placed.try_emplace(k, true).second) {
        kept.emplace_back(t, std::move(k));
      }
    }
    for (const auto& [k, t] : last_seen) {
      if (!placed.contains(k)) kept.emplace_back(t, k);
    }
    order_ = std::move(kept);
    last_seen_ = std::move(last_seen);
  }

 private:
  std::unordered_map<std::string, std::int64_t> last_seen_;
  std::deque<std::pair<std::int64_t, std::string>> order_;  // one place per entry
};

}  // namespace newsflow::daemon
