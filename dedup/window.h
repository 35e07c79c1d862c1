#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dedup/fingerprint.h"
#include "dedup/internal/id_pair.h"
#include "dedup/internal/slot_table.h"
#include "dedup/signature.h"

namespace newsflow::dedup {

namespace internal {
class Reader;
class Writer;
}  // namespace internal

/// What an article is relative to the articles in the window.
enum class DupKind : std::uint8_t { kUnique, kExact, kNear, kContained };

/// "unique", "exact", "near" or "contained".
std::string_view dup_kind_name(DupKind k);

/// The dedup decision for one article.
struct Verdict {
  DupKind kind = DupKind::kUnique;
  std::string of;           ///< exact: the earliest identical article held; near/contained:
                            ///< the held article it matches best
  double similarity = 0.0;  ///< 1 for exact; estimated Jaccard (near) or containment (contained)
};

/// What the window keeps of an article's text.
struct Fingerprint {
  ContentHash exact;          ///< of the normalized text
  Sketch sketch{};            ///< MinHash of its phrases
  std::uint32_t phrases = 0;  ///< number of distinct phrases
  std::uint64_t simhash = 0;  ///< for SignatureScheme::kSimHash
};

/// Fingerprint of an article's text (normalized inside). The weighted scheme takes its weights
/// from `stats` (without it, or when every weight is 0, it falls back to plain shingles);
/// `terms`, when given, receives the text's `term_hashes` for `TermStats::add`; `normalized`, the
/// normalized text (what `StoryBook::terms_of` reads, so it is not normalized twice).
Fingerprint make_fingerprint(std::string_view text, const SignatureOptions& options,
                             const TermStats* stats = nullptr,
                             std::vector<std::uint64_t>* terms = nullptr,
                             std::string* normalized = nullptr);

/// `make_fingerprint` of a text whose normalized form (`normalize_text(text)`) is already made;
/// `text` itself is read only by the sentences scheme.
Fingerprint fingerprint_of_normalized(std::string_view normalized, std::string_view text,
                                      const SignatureOptions& options,
                                      const TermStats* stats = nullptr,
                                      std::vector<std::uint64_t>* terms = nullptr);

/// The weighted scheme's `fingerprint_of_normalized` (weights from `stats`) of a text whose
/// shingles are made (`make_shingles(normalized, options)`); its terms are `shingles.terms`.
Fingerprint fingerprint_of_shingles(std::string_view normalized, const Shingles& shingles,
                                    const TermStats& stats);

namespace internal {
/// A fingerprint as the state record's first layout (`NFS1`) wrote it, and a verdict as the
/// state record and the window's snapshot both write it.
void read_fingerprint(Reader& r, Fingerprint& fp);
void write_verdict(Writer& w, const Verdict& v);
bool read_verdict(Reader& r, Verdict& v);  ///< false for a kind that is not one
}  // namespace internal

/// Options of the dedup window; filled by `config/`.
struct WindowOptions {
  std::int64_t window_seconds = 72 * 3600;  ///< how far behind the watermark entries live
  double near_threshold = 0.2;              ///< estimated Jaccard from which an article is `near`
  double contained_threshold = 0.8;         ///< share of a shorter article inside a longer one
  double contained_max_ratio = 0.9;         ///< `contained` only if the shorter has at most this
                                            ///< share of the longer one's phrases
  /// Articles held at most (0: no bound but time and `DedupWindow::kMaxArticles`); past it the
  /// oldest by event time leave first.
  std::uint64_t max_articles = 750'000;
  int bands = 32;                 ///< LSH bands over the sketch (rows = 64 / bands)
  std::uint32_t min_phrases = 0;  ///< shorter articles (in distinct phrases) match exactly only
  bool simhash = false;           ///< candidates and verdicts from the SimHash instead
  int simhash_max_bits = 3;       ///< near when at most this many of 64 bits differ
};

/// The sliding event-time window of recent articles: exact duplicates by fingerprint, near
/// duplicates and contained copies by LSH banding over MinHash sketches, each candidate
/// verified on its stored sketch. The watermark is the largest event time seen; entries older
/// than the watermark minus the window length expire, so memory is bounded by the arrival rate
/// times the window. Not thread-safe: one owner (the pipeline).
class DedupWindow {
 public:
  /// The most articles a window holds, whatever `WindowOptions::max_articles` says: its LSH
  /// entries name slots in 24 bits (5 bytes an entry with 16 bits of the key).
  static constexpr std::uint64_t kMaxArticles = internal::SlotTable::kFreeSlot;

  explicit DedupWindow(WindowOptions options = {});

  /// Judges the article `id` with fingerprint `fp` and event time `event_time` (seconds since
  /// the epoch), then remembers it. Judging an id that is still in the window returns the
  /// verdict it got the first time, so replays after a crash repeat decisions. Entries expire
  /// behind the lower of the watermark and `low_watermark`: a consumer of several partitions
  /// passes the lowest event time a partition may still deliver, so a slower partition's
  /// articles still find their originals.
  Verdict observe(std::string_view id, const Fingerprint& fp, std::int64_t event_time,
                  std::int64_t low_watermark = INT64_MAX);

  /// Puts back an article judged before (state rebuilt after a restart): remembered with the
  /// verdict it got, without judging it again. Ignored if the id is held or already expired.
  void restore(std::string_view id, const Fingerprint& fp, std::int64_t event_time,
               const Verdict& verdict);

  /// A restore of many records begins: when the window holds nothing yet (a restore from the
  /// records alone), the articles `restore` puts back join the LSH bands only at `build_bands`,
  /// all at once (each part of the band table made once at its size: a tenth of the cost of
  /// 32 inserts an article). Any other use of the window makes them first; a window that holds
  /// articles already (a snapshot loaded) goes on one article at a time.
  void defer_bands();
  /// Makes the bands `defer_bands` put off (nothing when none are).
  void build_bands() const;

  /// The steps of `observe`, for a window split over several owners (a simulation of sharding,
  /// `bench_sharded_dedup`): `advance` moves the watermark to `event_time` and expires what
  /// falls behind it (and behind `low_watermark`); `judge` finds the best match among the
  /// articles held; `remember` holds an article with a verdict found elsewhere (no expiry check;
  /// an id already held is left alone).
  void advance(std::int64_t event_time, std::int64_t low_watermark = INT64_MAX);
  Verdict judge(const Fingerprint& fp) const;
  void remember(std::string_view id, const Fingerprint& fp, std::int64_t event_time,
                const Verdict& verdict);

  /// Lets the article `id` go as if it had never been judged (an article the daemon could not
  /// publish): later articles no longer find it. False when it is not held.
  bool forget(std::string_view id);

  /// True while the article `id` is held.
  bool contains(std::string_view id) const { return find(id) != kNone; }

  /// Number of articles held.
  std::size_t size() const { return ids_.size(); }

  /// Estimated bytes the window holds on the heap (slots, indexes, ids), for the
  /// `newsflow_window_bytes` gauge; O(1).
  std::size_t memory_bytes() const;

  /// Largest event time seen (0 before the first article).
  std::int64_t watermark() const { return watermark_; }

  /// The whole window as bytes, and back: `load` makes a window equal to the one saved (same
  /// slots, heap, indexes and counters, so it judges every later article as that one would),
  /// at memory speed. False, and the window unchanged, for bytes that are not a saved window.
  void save(internal::Writer& w) const;
  bool load(internal::Reader& r);

  /// Articles that left before their time because the window held `max_articles`.
  std::uint64_t evicted() const { return evicted_; }

  /// From now on the ids of the articles that leave (expired or evicted) are kept for
  /// `take_left`, so an owner can forget them elsewhere too (the story book's index).
  void track_left() { track_left_ = true; }
  /// The ids that left since the last call (with `track_left`), oldest first.
  std::vector<std::string> take_left() { return std::exchange(left_, {}); }

 private:
  static constexpr std::uint32_t kNone = UINT32_MAX;
  // 184 bytes: the fingerprint's and the verdict's fields, the id and the verdict's `of` in
  // place (a heap block only for ids that are not short hex).
  struct Entry {
    // 64 bits of the exact fingerprint (its halves folded): two different texts share them about
    // once in 10^5 windows of the largest size (16.7 M articles).
    std::uint64_t exact = 0;
    // The MinHash sketch, or with `WindowOptions::simhash` the SimHash in its first 8 bytes
    // (the window reads one or the other, never both: `fp_of`).
    Sketch sketch{};
    std::int64_t event_time = 0;
    double similarity = 0;
    // The id and the verdict's `of`, at an offset of 8 bytes' alignment: a heap block's pointer
    // sits at its start, where a leak checker (LeakSanitizer) sees it.
    internal::IdPair names;
    DupKind kind = DupKind::kUnique;
    std::uint32_t phrases = 0;
    // The older / newer entry with the same exact fingerprint; the oldest's `prev_same` is the
    // newest (itself when alone).
    std::uint32_t prev_same = kNone;
    std::uint32_t next_same = kNone;

    std::string id() const { return names.get(0); }
    Verdict verdict() const { return {kind, names.get(1), similarity}; }
    std::uint64_t simhash() const {
      std::uint64_t h;
      std::memcpy(&h, sketch.data(), sizeof h);
      return h;
    }
  };
  static_assert(sizeof(Entry) == 184 && offsetof(Entry, names) % alignof(void*) == 0);
  // The fingerprint an entry keeps: the sketch or the SimHash, as the options read them.
  Fingerprint fp_of(const Entry& e) const;
  // What an entry keeps of `fp` in its `sketch`.
  Sketch signature_of(const Fingerprint& fp) const;
  // 12 bytes: the event time in two 32-bit halves (4-byte aligned).
  struct Expiry {
    Expiry() = default;
    Expiry(std::int64_t t, std::uint32_t s)
        : time_low(static_cast<std::uint32_t>(t)),
          time_high(static_cast<std::int32_t>(t >> 32)),
          slot(s) {}
    std::int64_t event_time() const {
      return static_cast<std::int64_t>(std::uint64_t(std::uint32_t(time_high)) << 32 | time_low);
    }
    bool operator>(const Expiry& o) const { return event_time() > o.event_time(); }
    std::uint32_t time_low = 0;
    std::int32_t time_high = 0;
    std::uint32_t slot = 0;
  };
  static_assert(sizeof(Expiry) == 12);
  void expire(std::int64_t low_watermark = INT64_MAX);
  void remove_oldest();
  // Takes the entry in `slot` out of every index (not out of `by_time_`) and frees the slot.
  void remove_slot(std::uint32_t slot);
  static std::size_t heap_bytes(const Entry& e);
  // Room for one more in `v`, grown by a quarter up to `max_articles`.
  template <typename T>
  void grow(std::vector<T>& v) const;
  std::vector<std::uint32_t> band_keys(const Fingerprint& fp) const;
  static constexpr int kMaxBands = kSketchSlots;
  // The band keys into `keys` (room for kMaxBands); returns how many.
  int band_keys(const Fingerprint& fp, std::uint32_t* keys) const;
  void insert(std::string_view id, const Fingerprint& fp, std::int64_t event_time,
              const Verdict& verdict);

  WindowOptions options_;
  int rows_;
  std::int64_t watermark_ = 0;
  std::vector<Entry> slots_;
  std::vector<std::uint32_t> free_slots_;
  // Slots by the low 32 bits of their id's hash (the id itself is kept once, in the slot).
  internal::SlotTable ids_;
  static std::uint32_t id_key(std::string_view id);
  // The slot holding `id`, or kNone.
  std::uint32_t find(std::string_view id) const;
  // The oldest slot of each exact fingerprint held, under 32 bits of the fingerprint; the
  // others are linked to it through prev_same/next_same in arrival order, so the oldest held
  // copy is always at hand.
  internal::SlotTable by_hash_;
  static std::uint64_t exact_bits(const ContentHash& h) { return h.low ^ h.high; }
  static std::uint32_t exact_key(std::uint64_t exact);
  std::uint32_t find_exact(std::uint64_t exact) const;  // the oldest slot, or kNone
  // The LSH bands: made whole by `build_bands` after a restore from the records alone, so
  // mutable (the window's other uses, `judge` and `save` among them, make them first).
  mutable internal::SlotTable buckets_;
  mutable bool bands_deferred_ = false;  // articles held that the bands do not have yet
  std::vector<Expiry> by_time_;          // min-heap on event time
  std::size_t string_bytes_ = 0;         // heap bytes of the entries' names
  std::uint64_t evicted_ = 0;
  bool track_left_ = false;
  std::vector<std::string> left_;
};

}  // namespace newsflow::dedup
