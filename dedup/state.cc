#include "dedup/state.h"

#include <algorithm>
#include <cstring>

#include "dedup/internal/codec.h"

namespace newsflow::dedup {
namespace {

constexpr std::string_view kMagic = "NFS1";
constexpr std::size_t kMaxItems = 1 << 20;  // per list: anything larger is not a record of ours

using internal::Reader;
using internal::Writer;

}  // namespace

std::string encode_state(const ArticleState& s) {
  Writer w;
  w.raw(kMagic);
  w.varint(s.seq);
  w.string(s.id);
  w.signed_varint(s.event_time);
  internal::write_fingerprint(w, s.fp);
  internal::write_verdict(w, s.verdict);
  w.string(s.url);
  w.string(s.source);
  w.string(s.title);
  w.string(s.story_id);
  w.varint(s.merged_from.size());
  for (const auto& m : s.merged_from) w.string(m);
  w.varint(s.story_terms.size());
  for (const auto& [term, weight] : s.story_terms) {
    w.string(term);
    w.fixed(weight);
  }
  // Term hashes sorted, as gaps: about three bytes each instead of four.
  std::vector<std::uint32_t> terms = s.df_terms;
  std::sort(terms.begin(), terms.end());
  w.varint(terms.size());
  std::uint32_t previous = 0;
  for (const std::uint32_t t : terms) {
    w.varint(t - previous);
    previous = t;
  }
  w.varint(s.paragraphs.size());
  for (const std::uint64_t p : s.paragraphs) w.fixed(p);
  w.string(s.link);
  w.varint(s.from_feed ? 1 : 0);
  w.string(s.language);
  return w.take();
}

std::optional<std::uint64_t> state_seq(std::string_view bytes) {
  Reader r(bytes, kMaxItems);
  if (!r.expect(kMagic)) return std::nullopt;
  const std::uint64_t seq = r.varint();
  return r.ok() ? std::optional(seq) : std::nullopt;
}

std::optional<ArticleState> decode_state(std::string_view bytes) {
  Reader r(bytes, kMaxItems);
  if (!r.expect(kMagic)) return std::nullopt;
  ArticleState s;
  s.seq = r.varint();
  s.id = r.string();
  s.event_time = r.signed_varint();
  // Seconds since the epoch within +-35,000 years: anything else is not a record of ours (and
  // would overflow the window's arithmetic).
  if (s.event_time > (std::int64_t{1} << 40) || s.event_time < -(std::int64_t{1} << 40)) {
    return std::nullopt;
  }
  internal::read_fingerprint(r, s.fp);
  if (!internal::read_verdict(r, s.verdict)) return std::nullopt;
  s.url = r.string();
  s.source = r.string();
  s.title = r.string();
  s.story_id = r.string();
  s.merged_from.resize(r.count());
  for (auto& m : s.merged_from) m = r.string();
  s.story_terms.resize(r.count());
  for (auto& [term, weight] : s.story_terms) {
    term = r.string();
    weight = r.fixed<float>();
  }
  s.df_terms.resize(r.count());
  std::uint64_t t = 0;
  for (auto& term : s.df_terms) {
    t += r.varint();
    term = static_cast<std::uint32_t>(t);
  }
  s.paragraphs.resize(r.count());
  for (auto& p : s.paragraphs) p = r.fixed<std::uint64_t>();
  s.link = r.string();
  s.from_feed = r.varint() != 0;
  s.language = r.string();
  if (!r.done() || s.id.empty()) return std::nullopt;
  return s;
}

std::string encode_snapshot_chunk(std::uint64_t seq, std::uint64_t index, bool last,
                                  std::string_view bytes) {
  Writer w;
  w.raw("NFC1");
  w.varint(seq);
  w.varint(index);
  w.varint(last ? 1 : 0);
  w.raw(bytes);
  return w.take();
}

std::optional<SnapshotChunk> decode_snapshot_chunk(std::string_view record) {
  Reader r(record);
  if (!r.expect("NFC1")) return std::nullopt;
  SnapshotChunk c;
  c.seq = r.varint();
  c.index = r.varint();
  const std::uint64_t last = r.varint();
  if (!r.ok() || last > 1 || c.index >= (std::uint64_t{1} << 24)) return std::nullopt;
  c.last = last == 1;
  c.bytes = record.substr(r.position());  // what is left
  return c;
}

std::string snapshot_key(std::uint64_t seq, std::uint64_t index) {
  return "snapshot/" + std::to_string(seq) + "/" + std::to_string(index);
}

}  // namespace newsflow::dedup
