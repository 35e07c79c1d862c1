#include "dedup/term_stats.h"

#include <algorithm>
#include <cmath>

#include "dedup/internal/codec.h"

namespace newsflow::dedup {

TermStats::TermStats(std::int64_t window_seconds, int segments, int bits)
    : slice_seconds_(std::max<std::int64_t>(1, window_seconds / std::max(1, segments))),
      segments_(std::max(1, segments)),
      mask_((std::uint64_t{1} << std::clamp(bits, 8, 28)) - 1),
      counts_(static_cast<std::size_t>(segments_) * (mask_ + 1), 0),
      slice_docs_(static_cast<std::size_t>(segments_), 0),
      slice_epoch_(static_cast<std::size_t>(segments_), kNone) {}

void TermStats::add(const std::vector<std::uint64_t>& distinct_terms, std::int64_t event_time) {
  count(distinct_terms, event_time);
}

void TermStats::add(std::span<const std::uint32_t> distinct_terms, std::int64_t event_time) {
  count(distinct_terms, event_time);
}

template <class Terms>
void TermStats::count(const Terms& distinct_terms, std::int64_t event_time) {
  const std::int64_t epoch = std::max<std::int64_t>(0, event_time) / slice_seconds_;
  if (newest_epoch_ != kNone && epoch <= newest_epoch_ - segments_) return;  // too old
  newest_epoch_ = std::max(newest_epoch_, epoch);
  const auto slot = static_cast<std::size_t>(epoch % segments_);
  if (slice_epoch_[slot] != epoch) {
    // The slice held an epoch that has left the window: forget it (a slice of no epoch holds
    // zeros already: clearing one walks every counter of the table).
    if (slice_epoch_[slot] != kNone) clear_slice(slot);
    slice_epoch_[slot] = epoch;
  }
  // Slices whose epoch fell out of the window stop counting now, not only when reused.
  for (int s = 0; s < segments_; ++s) {
    if (slice_epoch_[static_cast<std::size_t>(s)] != kNone &&
        slice_epoch_[static_cast<std::size_t>(s)] <= newest_epoch_ - segments_) {
      clear_slice(static_cast<std::size_t>(s));
      slice_epoch_[static_cast<std::size_t>(s)] = kNone;
    }
  }
  ++slice_docs_[slot];
  const auto width = static_cast<std::size_t>(segments_);
  // An article's few hundred counters are anywhere in the table: fetched ahead, a block at a
  // time, rather than waited for one by one.
  constexpr std::size_t kAhead = 16;
  const std::size_t n = distinct_terms.size();
  for (std::size_t i = 0; i < n && i < kAhead; ++i) {
    __builtin_prefetch(
        &counts_[static_cast<std::size_t>(distinct_terms[i] & mask_) * width + slot]);
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) {
      __builtin_prefetch(
          &counts_[static_cast<std::size_t>(distinct_terms[i + kAhead] & mask_) * width + slot]);
    }
    std::uint16_t& c = counts_[static_cast<std::size_t>(distinct_terms[i] & mask_) * width + slot];
    if (c < UINT16_MAX) ++c;
  }
}

std::uint32_t TermStats::df(std::uint64_t term) const {
  // A term's counters of all slices are adjacent: one cache line per lookup. Cleared slices
  // hold zeros.
  const auto width = static_cast<std::size_t>(segments_);
  const std::uint16_t* c = counts_.data() + static_cast<std::size_t>(term & mask_) * width;
  std::uint32_t total = 0;
  for (std::size_t s = 0; s < width; ++s) total += c[s];
  return total;
}

void TermStats::clear_slice(std::size_t slot) {
  const auto width = static_cast<std::size_t>(segments_);
  for (std::size_t i = slot; i < counts_.size(); i += width) counts_[i] = 0;
  slice_docs_[slot] = 0;
}

std::uint64_t TermStats::documents() const {
  std::uint64_t n = 0;
  for (int s = 0; s < segments_; ++s) {
    if (slice_epoch_[static_cast<std::size_t>(s)] != kNone) {
      n += slice_docs_[static_cast<std::size_t>(s)];
    }
  }
  return n;
}

double TermStats::idf(std::uint64_t term) const {
  const double n = static_cast<double>(documents());
  return std::log((n + 1) / (std::min<double>(df(term), n) + 1));
}

void TermStats::save(internal::Writer& w) const {
  // Sparse while few counters are set (a young window: mostly zeros), as they are otherwise.
  const auto set = static_cast<std::size_t>(
      std::count_if(counts_.begin(), counts_.end(), [](std::uint16_t c) { return c != 0; }));
  if (set < counts_.size() / 4) {
    w.varint(1);
    w.varint(set);
    std::size_t previous = 0;
    for (std::size_t i = 0; i < counts_.size(); ++i) {
      if (counts_[i] == 0) continue;
      w.varint(i - previous);
      w.varint(counts_[i]);
      previous = i;
    }
  } else {
    w.varint(0);
    w.array(counts_);
  }
  w.array(slice_docs_);
  w.array(slice_epoch_);
  w.signed_varint(newest_epoch_);
}

bool TermStats::load(internal::Reader& r) {
  std::vector<std::uint16_t> counts;
  std::vector<std::uint64_t> docs;
  std::vector<std::int64_t> epochs;
  const std::uint64_t sparse = r.varint();
  if (sparse == 1) {
    counts.assign(counts_.size(), 0);
    const std::size_t set = r.count();
    std::size_t at = 0;
    for (std::size_t k = 0; k < set && r.ok(); ++k) {
      at += r.varint();
      const std::uint64_t c = r.varint();
      if (at >= counts.size() || c > UINT16_MAX) return false;
      counts[at] = static_cast<std::uint16_t>(c);
    }
  } else if (sparse != 0 || !r.array(counts)) {
    return false;
  }
  if (!r.array(docs) || !r.array(epochs)) return false;
  const std::int64_t newest = r.signed_varint();
  if (!r.ok() || counts.size() != counts_.size() || docs.size() != slice_docs_.size() ||
      epochs.size() != slice_epoch_.size()) {
    return false;
  }
  counts_ = std::move(counts);
  slice_docs_ = std::move(docs);
  slice_epoch_ = std::move(epochs);
  newest_epoch_ = newest;
  // A slice of no epoch holds zeros (`add` counts into it without clearing it first).
  for (std::size_t s = 0; s < slice_epoch_.size(); ++s) {
    if (slice_epoch_[s] == kNone) clear_slice(s);
  }
  return true;
}

}  // namespace newsflow::dedup
