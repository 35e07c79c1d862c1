#include "dedup/window.h"

#include <algorithm>
#include <bit>
#include <span>
#include <utility>

#include "dedup/internal/codec.h"
#include "dedup/normalize.h"

namespace newsflow::dedup {

std::string_view dup_kind_name(DupKind k) {
  switch (k) {
    case DupKind::kUnique:
      return "unique";
    case DupKind::kExact:
      return "exact";
    case DupKind::kNear:
      return "near";
    case DupKind::kContained:
      return "contained";
  }
  return "unique";
}

Fingerprint make_fingerprint(std::string_view text, const SignatureOptions& options,
                             const TermStats* stats, std::vector<std::uint64_t>* terms,
                             std::string* normalized_out) {
  std::string normalized = normalize_text(text);
  const Fingerprint fp = fingerprint_of_normalized(normalized, text, options, stats, terms);
  if (normalized_out) *normalized_out = std::move(normalized);
  return fp;
}

Fingerprint fingerprint_of_normalized(std::string_view normalized, std::string_view text,
                                      const SignatureOptions& options, const TermStats* stats,
                                      std::vector<std::uint64_t>* terms) {
  Fingerprint fp;
  fp.exact = content_hash(normalized);
  std::vector<std::uint64_t> phrases;
  if (options.scheme == SignatureScheme::kWeighted && stats) {
    phrases = weighted_phrase_hashes(normalized, options, *stats, terms);
  } else if (terms) {
    *terms = term_hashes(normalized);
  }
  if (phrases.empty()) {
    phrases = options.scheme == SignatureScheme::kSentences
                  ? phrase_hashes(text, options)
                  : phrase_hashes_of_normalized(normalized, options);
  }
  if (options.scheme == SignatureScheme::kSimHash) {
    fp.simhash = simhash(phrases);
  } else {
    fp.sketch = minhash_sketch(phrases);
  }
  fp.phrases = static_cast<std::uint32_t>(phrases.size());
  return fp;
}

Fingerprint fingerprint_of_shingles(std::string_view normalized, const Shingles& shingles,
                                    const TermStats& stats) {
  Fingerprint fp;
  fp.exact = content_hash(normalized);
  std::vector<std::uint64_t> phrases = weighted_phrase_hashes(shingles, stats);
  if (phrases.empty()) phrases = plain_phrase_hashes(shingles);
  fp.sketch = minhash_sketch(phrases);
  fp.phrases = static_cast<std::uint32_t>(phrases.size());
  return fp;
}

DedupWindow::DedupWindow(WindowOptions options)
    : options_(options), rows_(kSketchSlots / std::clamp(options.bands, 1, kSketchSlots)) {
  // The band table's slots are 24 bits: no bound, or a higher one, is this one.
  if (options_.max_articles == 0 || options_.max_articles > kMaxArticles) {
    options_.max_articles = kMaxArticles;
  }
}

std::vector<std::uint32_t> DedupWindow::band_keys(const Fingerprint& fp) const {
  std::uint32_t keys[kMaxBands];
  return std::vector<std::uint32_t>(keys, keys + band_keys(fp, keys));
}

int DedupWindow::band_keys(const Fingerprint& fp, std::uint32_t* keys) const {
  if (options_.simhash) {
    // Permuted-table lookup (Manku et al.) in its simplest form: with at most 3 differing bits
    // of 64, one of four 16-bit blocks is equal.
    for (std::uint32_t b = 0; b < 4; ++b) {
      const auto block = static_cast<std::uint32_t>(fp.simhash >> (16 * b) & 0xFFFF);
      keys[b] = ((b << 16) | block) * 0x9E3779B1u;
    }
    return 4;
  }
  const Sketch& sketch = fp.sketch;
  const int bands = kSketchSlots / rows_;
  for (int b = 0; b < bands; ++b) {
    std::uint64_t key = 0x9E3779B97F4A7C15ULL * static_cast<std::uint64_t>(b + 1);
    for (int r = 0; r < rows_; ++r) {
      key ^= sketch[static_cast<std::size_t>(b * rows_ + r)] + 0x9E3779B97F4A7C15ULL + (key << 6) +
             (key >> 2);
    }
    keys[b] = static_cast<std::uint32_t>(key ^ (key >> 32));
  }
  return bands;
}

void DedupWindow::defer_bands() {
  if (size() == 0) bands_deferred_ = true;
}

void DedupWindow::build_bands() const {
  if (!bands_deferred_) return;
  bands_deferred_ = false;
  using internal::SlotTable;
  // The bands hold the oldest of each exact fingerprint (`insert`): a slot held whose older
  // copy (`prev_same`, the newest when it is the oldest) has no newer one.
  const auto each_key = [this](auto&& fn) {
    std::uint32_t keys[kMaxBands];
    for (std::uint32_t s = 0; s < slots_.size(); ++s) {
      const Entry& e = slots_[s];
      if (e.prev_same == kNone || slots_[e.prev_same].next_same != kNone || e.phrases == 0) {
        continue;  // a free slot, a later copy, or no phrases
      }
      const int n = band_keys(fp_of(e), keys);
      for (int k = 0; k < n; ++k) fn(SlotTable::mixed(keys[k]), s);
    }
  };
  buckets_ = SlotTable();
  std::vector<std::uint32_t> more(SlotTable::kParts);
  each_key([&more](std::uint32_t mixed, std::uint32_t) { ++more[mixed >> 16]; });
  buckets_.reserve(more);
  // Each part's entries placed together, its table in cache (placed one article at a time, each
  // of its 32 keys went to a part of its own, far from the last): staged by part, a group of
  // parts at a time (at most kStaged entries, 64 MiB), each part's in slot order as an insert
  // at a time puts them.
  constexpr std::size_t kStaged = std::size_t{1} << 23;
  std::vector<std::uint64_t> staged;
  std::vector<std::uint32_t> at;
  for (std::size_t lo = 0; lo < SlotTable::kParts;) {
    std::size_t hi = lo, n = 0;
    while (hi < SlotTable::kParts && (hi == lo || n + more[hi] <= kStaged)) n += more[hi++];
    at.assign(hi - lo + 1, 0);
    for (std::size_t p = lo; p < hi; ++p) at[p - lo + 1] = at[p - lo] + more[p];
    staged.resize(n);
    std::vector<std::uint32_t> next(at.begin(), at.end() - 1);
    each_key([&](std::uint32_t mixed, std::uint32_t slot) {
      const std::size_t p = mixed >> 16;
      if (p >= lo && p < hi) staged[next[p - lo]++] = std::uint64_t{mixed} << 32 | slot;
    });
    for (const std::uint64_t x : staged) {
      buckets_.insert_mixed(static_cast<std::uint32_t>(x >> 32), static_cast<std::uint32_t>(x));
    }
    lo = hi;
  }
}

Verdict DedupWindow::judge(const Fingerprint& fp) const {
  build_bands();
  Verdict best;
  if (const std::uint32_t oldest = find_exact(exact_bits(fp.exact)); oldest != kNone) {
    best.kind = DupKind::kExact;
    best.of = slots_[oldest].id();
    best.similarity = 1.0;
    return best;
  }
  if (fp.phrases == 0 || fp.phrases < options_.min_phrases) return best;
  std::vector<std::uint32_t> candidates;
  for (const std::uint32_t key : band_keys(fp)) {
    buckets_.for_each(key, [&](std::uint32_t slot) {
      // The bands hold the oldest of each exact fingerprint; its later copies share them.
      for (std::uint32_t s = slot; s != kNone; s = slots_[s].next_same) candidates.push_back(s);
    });
  }
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  double best_score = 0;
  std::int64_t best_time = 0;
  for (const std::uint32_t slot : candidates) {
    const Entry& e = slots_[slot];
    if (e.phrases < options_.min_phrases) continue;
    if (options_.simhash) {
      const int bits = std::popcount(fp.simhash ^ e.simhash());
      if (bits > options_.simhash_max_bits) continue;
      const double score = 1.0 - bits / 64.0;
      if (score > best_score || (score == best_score && e.event_time < best_time)) {
        best_score = score;
        best_time = e.event_time;
        best = {DupKind::kNear, e.id(), score};
      }
      continue;
    }
    const double j = estimate_jaccard(fp.sketch, e.sketch);
    DupKind kind = DupKind::kUnique;
    double score = 0;
    if (fp.phrases <= options_.contained_max_ratio * e.phrases) {
      // The new article is the shorter one: is it inside the held one?
      const double c = estimate_containment(j, fp.phrases, e.phrases);
      if (c >= options_.contained_threshold) kind = DupKind::kContained, score = c;
    } else if (e.phrases <= options_.contained_max_ratio * fp.phrases) {
      // The held article is a shorter copy of the new one.
      const double c = estimate_containment(j, e.phrases, fp.phrases);
      if (c >= options_.contained_threshold) kind = DupKind::kNear, score = c;
    }
    if (kind == DupKind::kUnique && j >= options_.near_threshold) kind = DupKind::kNear, score = j;
    if (kind == DupKind::kUnique) continue;
    if (score > best_score || (score == best_score && e.event_time < best_time)) {
      best_score = score;
      best_time = e.event_time;
      best.kind = kind;
      best.of = e.id();
      best.similarity = score;
    }
  }
  return best;
}

Verdict DedupWindow::observe(std::string_view id, const Fingerprint& fp, std::int64_t event_time,
                             std::int64_t low_watermark) {
  if (const std::uint32_t held = find(id); held != kNone) return slots_[held].verdict();

  // Expire first, so an original that just left the window is not matched.
  advance(event_time, low_watermark);
  const Verdict verdict = judge(fp);
  insert(id, fp, event_time, verdict);
  return verdict;
}

void DedupWindow::advance(std::int64_t event_time, std::int64_t low_watermark) {
  watermark_ = std::max(watermark_, event_time);
  expire(low_watermark);
}

void DedupWindow::remember(std::string_view id, const Fingerprint& fp, std::int64_t event_time,
                           const Verdict& verdict) {
  if (contains(id)) return;
  build_bands();
  insert(id, fp, event_time, verdict);
}

void DedupWindow::restore(std::string_view id, const Fingerprint& fp, std::int64_t event_time,
                          const Verdict& verdict) {
  if (contains(id)) return;
  watermark_ = std::max(watermark_, event_time);
  expire();
  if (event_time < watermark_ - options_.window_seconds) return;
  insert(id, fp, event_time, verdict);
}

std::uint32_t DedupWindow::id_key(std::string_view id) {
  return static_cast<std::uint32_t>(hash64(id));
}

std::uint32_t DedupWindow::find(std::string_view id) const {
  std::uint32_t found = kNone;
  ids_.for_each(id_key(id), [&](std::uint32_t slot) {
    if (found == kNone && slots_[slot].names.equals(0, id)) found = slot;
  });
  return found;
}

template <typename T>
void DedupWindow::grow(std::vector<T>& v) const {
  if (v.size() < v.capacity()) return;
  // By a quarter, not double, and never past the bound: slots are never more than the articles
  // held (doubling left up to half of 256-byte slots unused: 430 bytes an article at 10 M).
  std::size_t capacity = std::max<std::size_t>(1024, v.capacity() + v.capacity() / 4);
  if (options_.max_articles > 0) {
    capacity =
        std::min<std::size_t>(capacity, std::max<std::size_t>(options_.max_articles, v.size() + 1));
  }
  v.reserve(capacity);
}

std::uint32_t DedupWindow::exact_key(std::uint64_t exact) {
  return static_cast<std::uint32_t>(exact ^ (exact >> 32));
}

std::uint32_t DedupWindow::find_exact(std::uint64_t exact) const {
  std::uint32_t found = kNone;
  by_hash_.for_each(exact_key(exact), [&](std::uint32_t slot) {
    if (found == kNone && slots_[slot].exact == exact) found = slot;
  });
  return found;
}

Fingerprint DedupWindow::fp_of(const Entry& e) const {
  if (options_.simhash) return {{}, Sketch{}, e.phrases, e.simhash()};
  return {{}, e.sketch, e.phrases, 0};
}

Sketch DedupWindow::signature_of(const Fingerprint& fp) const {
  if (!options_.simhash) return fp.sketch;
  Sketch s{};
  std::memcpy(s.data(), &fp.simhash, sizeof fp.simhash);
  return s;
}

std::size_t DedupWindow::heap_bytes(const Entry& e) { return e.names.heap_bytes(); }

std::size_t DedupWindow::memory_bytes() const {
  return slots_.capacity() * sizeof(Entry) + free_slots_.capacity() * sizeof(std::uint32_t) +
         ids_.memory_bytes() + by_hash_.memory_bytes() + buckets_.memory_bytes() +
         by_time_.capacity() * sizeof(Expiry) + string_bytes_;
}

void DedupWindow::insert(std::string_view id, const Fingerprint& fp, std::int64_t event_time,
                         const Verdict& verdict) {
  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(slots_.size());
    grow(slots_);
    slots_.emplace_back();
  }
  const std::uint64_t exact = exact_bits(fp.exact);
  slots_[slot] = Entry{exact,
                       signature_of(fp),
                       event_time,
                       verdict.similarity,
                       internal::IdPair(id, verdict.of),
                       verdict.kind,
                       fp.phrases,
                       kNone,
                       kNone};
  string_bytes_ += heap_bytes(slots_[slot]);
  ids_.insert(id_key(id), slot);
  // Appended to the chain of its exact fingerprint (the oldest's `prev_same` is the newest).
  if (const std::uint32_t oldest = find_exact(exact); oldest == kNone) {
    by_hash_.insert(exact_key(exact), slot);
    slots_[slot].prev_same = slot;
    // Only the oldest copy is in the bands (a copy's sketch is the oldest's): a judge finds the
    // others through the chain. With many copies of wire stories that is a fifth of the bands.
    // (Deferred: `build_bands` puts it there.)
    if (fp.phrases > 0 && !bands_deferred_) {
      for (const std::uint32_t k : band_keys(fp)) buckets_.insert(k, slot);
    }
  } else {
    const std::uint32_t newest = slots_[oldest].prev_same;
    slots_[newest].next_same = slot;
    slots_[slot].prev_same = newest;
    slots_[oldest].prev_same = slot;
  }
  grow(by_time_);
  by_time_.push_back({event_time, slot});
  std::push_heap(by_time_.begin(), by_time_.end(), std::greater<>());
}

void DedupWindow::expire(std::int64_t low_watermark) {
  const std::int64_t horizon = std::min(watermark_, low_watermark) - options_.window_seconds;
  while (!by_time_.empty() && by_time_.front().event_time() < horizon) remove_oldest();
  // Bounded memory: past `max_articles` (the one about to join included) the oldest leave.
  while (options_.max_articles > 0 && !by_time_.empty() && ids_.size() >= options_.max_articles) {
    remove_oldest();
    ++evicted_;
  }
}

void DedupWindow::remove_oldest() {
  std::pop_heap(by_time_.begin(), by_time_.end(), std::greater<>());
  const std::uint32_t slot = by_time_.back().slot;
  by_time_.pop_back();
  remove_slot(slot);
}

bool DedupWindow::forget(std::string_view id) {
  const std::uint32_t slot = find(id);
  if (slot == kNone) return false;
  // Out of the heap: rare (an article that was never published), so a pass over it will do.
  const auto it = std::find_if(by_time_.begin(), by_time_.end(),
                               [slot](const Expiry& x) { return x.slot == slot; });
  if (it != by_time_.end()) {
    *it = by_time_.back();
    by_time_.pop_back();
    std::make_heap(by_time_.begin(), by_time_.end(), std::greater<>());
  }
  const bool tracked = std::exchange(track_left_, false);  // it did not leave: it never was
  remove_slot(slot);
  track_left_ = tracked;
  return true;
}

void DedupWindow::remove_slot(std::uint32_t slot) {
  Entry& e = slots_[slot];
  // Unlink from the exact-fingerprint chain.
  if (const std::uint32_t oldest = find_exact(e.exact); oldest == slot) {
    by_hash_.erase(exact_key(e.exact), slot);
    // Deferred bands are made from the slots held at the end: nothing to take out or move.
    const std::vector<std::uint32_t> keys =
        e.phrases > 0 && !bands_deferred_ ? band_keys(fp_of(e)) : std::vector<std::uint32_t>{};
    for (const std::uint32_t k : keys) buckets_.erase(k, slot);
    if (e.next_same != kNone) {
      slots_[e.next_same].prev_same = e.prev_same;  // the newest
      by_hash_.insert(exact_key(e.exact), e.next_same);
      for (const std::uint32_t k : keys) buckets_.insert(k, e.next_same);
    }
  } else if (oldest != kNone) {
    slots_[e.prev_same].next_same = e.next_same;
    if (e.next_same != kNone) {
      slots_[e.next_same].prev_same = e.prev_same;
    } else {
      slots_[oldest].prev_same = e.prev_same;  // the newest now
    }
  }
  ids_.erase(id_key(e.id()), slot);
  string_bytes_ -= heap_bytes(e);
  if (track_left_) left_.emplace_back(e.id());
  e = Entry{};
  free_slots_.push_back(slot);
}

namespace internal {

void read_fingerprint(Reader& r, Fingerprint& fp) {
  fp.exact.high = r.fixed<std::uint64_t>();
  fp.exact.low = r.fixed<std::uint64_t>();
  for (auto& v : fp.sketch) v = r.fixed<std::uint16_t>();
  fp.phrases = static_cast<std::uint32_t>(r.varint());
  fp.simhash = r.fixed<std::uint64_t>();
}

void write_verdict(Writer& w, const Verdict& v) {
  w.varint(static_cast<std::uint64_t>(v.kind));
  w.string(v.of);
  w.fixed(v.similarity);
}

bool read_verdict(Reader& r, Verdict& v) {
  const std::uint64_t kind = r.varint();
  if (kind > static_cast<std::uint64_t>(DupKind::kContained)) return false;
  v.kind = static_cast<DupKind>(kind);
  v.of.assign(r.view());
  v.similarity = r.fixed<double>();
  return true;
}

}  // namespace internal

void DedupWindow::save(internal::Writer& w) const {
  build_bands();
  w.raw("NFW5");
  w.signed_varint(watermark_);
  w.varint(evicted_);
  w.varint(slots_.size());
  for (const Entry& e : slots_) {
    w.string(e.id());
    w.fixed(e.exact);
    for (const std::uint16_t v : e.sketch) w.fixed(v);  // or the SimHash in its place
    w.varint(e.phrases);
    w.signed_varint(e.event_time);
    internal::write_verdict(w, e.verdict());
    w.fixed(e.prev_same);
    w.fixed(e.next_same);
  }
  w.array(free_slots_);
  w.varint(by_time_.size());
  for (const Expiry& x : by_time_) {  // the heap as it is: equal times leave in the same order
    w.signed_varint(x.event_time());
    w.fixed(x.slot);
  }
  ids_.save(w);
  by_hash_.save(w);
  buckets_.save(w);
}

bool DedupWindow::load(internal::Reader& r) {
  DedupWindow next(options_);
  next.track_left_ = track_left_;
  if (!r.expect("NFW5")) return false;
  next.watermark_ = r.signed_varint();
  next.evicted_ = r.varint();
  const std::size_t n = r.count();
  if (n > kMaxArticles) return false;  // slots the tables cannot name
  next.slots_.resize(n);
  const auto in_range = [n](std::uint32_t s) { return s == kNone || s < n; };
  for (Entry& e : next.slots_) {
    const std::string_view id = r.view();
    e.exact = r.fixed<std::uint64_t>();
    for (auto& v : e.sketch) v = r.fixed<std::uint16_t>();
    e.phrases = static_cast<std::uint32_t>(r.varint());
    e.event_time = r.signed_varint();
    Verdict verdict;
    if (!internal::read_verdict(r, verdict)) return false;
    e.kind = verdict.kind;
    e.similarity = verdict.similarity;
    e.names = internal::IdPair(id, verdict.of);
    e.prev_same = r.fixed<std::uint32_t>();
    e.next_same = r.fixed<std::uint32_t>();
    if (!r.ok() || !in_range(e.prev_same) || !in_range(e.next_same)) return false;
  }
  if (!r.array(next.free_slots_)) return false;
  next.by_time_.resize(r.count());
  for (Expiry& x : next.by_time_) {
    const std::int64_t t = r.signed_varint();
    x = Expiry(t, r.fixed<std::uint32_t>());
    if (x.slot >= n) return false;
  }
  if (!r.ok() || !next.ids_.load(r) || !next.by_hash_.load(r) || !next.buckets_.load(r)) {
    return false;
  }
  if (next.by_time_.size() + next.free_slots_.size() != n ||
      next.ids_.size() != next.by_time_.size() || next.by_hash_.size() > next.ids_.size()) {
    return false;
  }
  std::vector<bool> free(n, false);
  for (const std::uint32_t s : next.free_slots_) {
    if (s >= n) return false;
    free[s] = true;
  }
  for (std::uint32_t s = 0; s < n; ++s) {
    if (!free[s]) next.string_bytes_ += heap_bytes(next.slots_[s]);
  }
  *this = std::move(next);
  return true;
}

}  // namespace newsflow::dedup
