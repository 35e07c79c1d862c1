#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dedup/window.h"

namespace newsflow::dedup {

/// What one article left in the window, the document frequencies, the boilerplate filter and
/// the story book when it was judged: the record of the state changelog (`newsflow.state`),
/// from which a restarted process, or a standby, rebuilds the same state without the text.
/// Applied in `seq` order, the records give back the state an uninterrupted run holds.
struct ArticleState {
  std::uint64_t seq = 0;  ///< the order the owner judged articles in
  std::string id;
  std::int64_t event_time = 0;
  Fingerprint fp;
  Verdict verdict;
  std::string url;
  std::string source;
  std::string title;
  std::string story_id;                  ///< the story it joined (after merges)
  std::vector<std::string> merged_from;  ///< stories its arrival merged into that story
  std::vector<std::pair<std::string, float>> story_terms;  ///< title and lead terms, weighted
  /// Its distinct term hashes for the document frequencies: the low 32 bits, of which a record
  /// keeps the `TermStats::kWeightedBits` the counters read.
  std::vector<std::uint32_t> df_terms;
  /// Its boilerplate-filter paragraph keys (a record keeps the filter's 56 bits).
  std::vector<std::uint64_t> paragraphs;
  std::string link;  ///< a fetched feed item's link ("" otherwise)
  bool from_feed = false;
  std::string language;  ///< its detected language (BCP-47), "" when unsure: stories keep to one
  /// Its lead image URL and description: its story's card while it represents the story.
  std::string image_url;
  std::string description;
};

/// The changelog's value format: "NFS2", then varints, fixed-width hashes and length-prefixed
/// strings (dedup/README.md documents the layout). Compact and fast to read: restore speed is
/// what a standby and a restart wait for.
std::string encode_state(const ArticleState& state);

/// The `seq` of a record, read without decoding the rest (restores order records by it).
std::optional<std::uint64_t> state_seq(std::string_view bytes);

/// Reads a record written by `encode_state`, or by the versions before (`NFS2`, without the
/// card, and `NFS1`, read for an upgrade); nothing for anything else (truncated, another
/// version, junk).
std::optional<ArticleState> decode_state(std::string_view bytes);
/// `decode_state` into `state`, every field of it written (its strings and lists keep their
/// room: a state decoded into again and again allocates next to nothing). False, and `state`
/// anything, for bytes `decode_state` refuses.
bool decode_state_into(std::string_view bytes, ArticleState& state);

/// A chunk of a snapshot of the judging state (`Pipeline::save_state`) in the changelog: "NFC1",
/// then varints `seq` (the last record the snapshot covers), `index` and `last` (1 for the
/// snapshot's last chunk: it is written as it is made, so the count is known only at the end),
/// then the chunk's bytes.
struct SnapshotChunk {
  std::uint64_t seq = 0;
  std::uint64_t index = 0;
  bool last = false;
  std::string_view bytes;  ///< a view into the record read
};
std::string encode_snapshot_chunk(std::uint64_t seq, std::uint64_t index, bool last,
                                  std::string_view bytes);
/// Nothing for anything else than a chunk (a state record, junk).
std::optional<SnapshotChunk> decode_snapshot_chunk(std::string_view record);
/// The key of a snapshot chunk: "snapshot/<seq>/<index>".
std::string snapshot_key(std::uint64_t seq, std::uint64_t index);

}  // namespace newsflow::dedup
