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
/// holds one key for every article in the window, so it is kept small: 16 bytes a key that is
/// 16 lowercase hex digits (the ids the daemon derives), 16 bytes and the key's own for any
/// other (a `std::pair<std::uint64_t, std::string>` took 40 and a heap block of 32).
/// No I/O; not thread-safe.
class RecordKeys {
 public:
  void add(std::uint64_t seq, std::string_view key) {
    Entry e;
    if (const auto hex = pack_hex(key)) {
      e.seq = seq;
      e.key = *hex;
    } else {
      e.seq = seq | kPooled;
      e.key = pool_.size() << kSizeBits | std::min<std::uint64_t>(key.size(), kMaxSize);
      pool_.append(key.substr(0, kMaxSize));
    }
    entries_.push_back(e);
  }

  /// Forgets the keys of records up to `seq` (a snapshot read covers them).
  void erase_through(std::uint64_t seq) {
    std::vector<Entry> kept;
    std::string pool;
    for (const Entry& e : entries_) {
      if ((e.seq & ~kPooled) <= seq) continue;
      if (e.seq & kPooled) {
        const std::string_view k = pooled(e);
        kept.push_back({e.seq, pool.size() << kSizeBits | k.size()});
        pool.append(k);
      } else {
        kept.push_back(e);
      }
    }
    entries_ = std::move(kept);
    pool_ = std::move(pool);
  }

  /// Calls `f(key)` for every key, in the order they were added.
  template <typename F>
  void for_each(F&& f) const {
    for (const Entry& e : entries_) {
      if (e.seq & kPooled) {
        f(std::string(pooled(e)));
      } else {
        f(unpack_hex(e.key));
      }
    }
  }

  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  void clear() {
    std::vector<Entry>().swap(entries_);
    std::string().swap(pool_);
  }

 private:
  struct Entry {
    std::uint64_t seq;  // with kPooled: the key is in `pool_`
    std::uint64_t key;  // the 16 hex digits, or (offset in `pool_` << kSizeBits | size)
  };
  static constexpr std::uint64_t kPooled = std::uint64_t{1} << 63;  // no `seq` comes near it
  static constexpr int kSizeBits = 20;
  static constexpr std::uint64_t kMaxSize = (std::uint64_t{1} << kSizeBits) - 1;

  std::string_view pooled(const Entry& e) const {
    return std::string_view(pool_).substr(e.key >> kSizeBits, e.key & kMaxSize);
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

  std::vector<Entry> entries_;
  std::string pool_;
};

}  // namespace newsflow::daemon
