#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace newsflow::dedup {

namespace internal {
class Reader;
class Writer;
}  // namespace internal

/// Document frequencies of terms over the sliding window, for phrase weights: in how many of
/// the window's documents each term occurs. Counts live in `segments` time slices of the window
/// (hashed saturating 16-bit counters, 2^bits per slice); when event time moves past a slice, the
/// slice is cleared, so documents leave the statistics as they leave the window (at slice
/// granularity). Hash collisions can only overcount. Not thread-safe: one owner (the pipeline).
class TermStats {
 public:
  /// The bits of a term hash the weighted scheme's counters read (2^20 counters a slice): all a
  /// state record keeps of each.
  static constexpr int kWeightedBits = 20;

  explicit TermStats(std::int64_t window_seconds = 72 * 3600, int segments = 8,
                     int bits = kWeightedBits);

  /// Counts one document's distinct term hashes at `event_time`. A document older than the
  /// oldest slice is not counted.
  void add(const std::vector<std::uint64_t>& distinct_terms, std::int64_t event_time);
  /// The same with the low 32 bits of each hash (a state record's `df_terms`: the counters read
  /// `kWeightedBits` at most).
  void add(std::span<const std::uint32_t> distinct_terms, std::int64_t event_time);

  /// Documents in the window that contain the term (an upper bound).
  std::uint32_t df(std::uint64_t term) const;

  /// Documents counted in the window.
  std::uint64_t documents() const;

  /// Inverse document frequency ln((N + 1) / (df + 1)).
  double idf(std::uint64_t term) const;

  std::size_t memory_bytes() const { return counts_.size() * sizeof(std::uint16_t); }

  /// The counters as they are, and back (`load` needs the same shape; false otherwise).
  void save(internal::Writer& w) const;
  bool load(internal::Reader& r);

 private:
  std::int64_t slice_seconds_;
  int segments_;
  std::uint64_t mask_;
  void clear_slice(std::size_t slot);
  template <class Terms>
  void count(const Terms& distinct_terms, std::int64_t event_time);
  std::vector<std::uint16_t> counts_;      // 2^bits x segments_: a term's slices adjacent
  std::vector<std::uint64_t> slice_docs_;  // documents per slice
  static constexpr std::int64_t kNone = INT64_MIN;
  std::vector<std::int64_t> slice_epoch_;  // which epoch each slice holds, or kNone
  std::int64_t newest_epoch_ = kNone;
};

}  // namespace newsflow::dedup
