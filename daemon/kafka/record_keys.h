#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace newsflow::daemon {

/// The keys of the state records written or read since the last snapshot, each with its
/// record's `seq`: the next snapshot tombstones them. After a restore from the records alone it
/// holds one key for every article in the window, so it is kept small: 8 bytes a key that is 16
/// lowercase hex digits (the ids the daemon derives), 8 bytes and the key's own for any other,
/// and the `seq`s as runs of consecutive numbers (records are read, applied and written in
/// `seq` order: a restore's keys are one run but for its gaps), 16 bytes a run. (Each key with
/// its `seq` took 16 bytes; a `std::pair<std::uint64_t, std::string>` 40 and a heap block.)
/// No I/O; not thread-safe.
class RecordKeys {
 public:
  void add(std::uint64_t seq, std::string_view key) {
    if (runs_.empty() || seq != runs_.back().seq + (keys_.size() - runs_.back().first)) {
      runs_.push_back({seq, keys_.size()});
    }
    if (const auto hex = pack_hex(key)) {
      keys_.push_back(*hex);
      pooled_.push_back(false);
    } else {
      keys_.push_back(pool_.size() << kSizeBits | std::min<std::uint64_t>(key.size(), kMaxSize));
      pooled_.push_back(true);
      pool_.append(key.substr(0, kMaxSize));
    }
  }

  /// Forgets the keys of records up to `seq` (a snapshot read covers them).
  void erase_through(std::uint64_t seq) {
    RecordKeys kept;
    for_each_seq([&](std::uint64_t s, std::size_t i) {
      if (s > seq) kept.add(s, key(i));
    });
    *this = std::move(kept);
  }

  /// Calls `f(key)` for every key, in the order they were added.
  template <typename F>
  void for_each(F&& f) const {
    for (std::size_t i = 0; i < keys_.size(); ++i) f(std::string(key(i)));
  }

  std::size_t size() const { return keys_.size(); }
  bool empty() const { return keys_.empty(); }
  void clear() {
    std::vector<std::uint64_t>().swap(keys_);
    std::vector<bool>().swap(pooled_);
    std::vector<Run>().swap(runs_);
    std::string().swap(pool_);
  }

 private:
  // Keys [first, next run's first) have the seqs seq, seq + 1, ...
  struct Run {
    std::uint64_t seq;
    std::size_t first;
  };
  static constexpr int kSizeBits = 20;
  static constexpr std::uint64_t kMaxSize = (std::uint64_t{1} << kSizeBits) - 1;

  // The i-th key: unpacked (`std::string`'s buffer holds 16 digits in place), or the pool's.
  std::string key(std::size_t i) const {
    const std::uint64_t k = keys_[i];
    if (pooled_[i]) return pool_.substr(k >> kSizeBits, k & kMaxSize);
    return unpack_hex(k);
  }
  // Calls `f(seq, i)` for every key's index.
  template <typename F>
  void for_each_seq(F&& f) const {
    for (std::size_t r = 0; r < runs_.size(); ++r) {
      const std::size_t end = r + 1 < runs_.size() ? runs_[r + 1].first : keys_.size();
      for (std::size_t i = runs_[r].first; i < end; ++i) f(runs_[r].seq + (i - runs_[r].first), i);
    }
  }

  static std::optional<std::uint64_t> pack_hex(std::string_view key) {
    if (key.size() != 16) return std::nullopt;
    std::uint64_t v = 0;
    for (const char c : key) {
      int d;
      if (c >= '0' && c <= '9') {
        d = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        d = c - 'a' + 10;
      } else {
        return std::nullopt;  // upper case would not come back as it was
      }
      v = v << 4 | static_cast<std::uint64_t>(d);
    }
    return v;
  }

  static std::string unpack_hex(std::uint64_t v) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out(16, '0');
    for (int i = 15; i >= 0; --i, v >>= 4) out[static_cast<std::size_t>(i)] = kDigits[v & 15];
    return out;
  }

  std::vector<std::uint64_t>
      keys_;                  // the 16 hex digits, or (offset in `pool_` << kSizeBits | size)
  std::vector<bool> pooled_;  // whether the key is in `pool_`
  std::vector<Run> runs_;
  std::string pool_;
};

}  // namespace newsflow::daemon
