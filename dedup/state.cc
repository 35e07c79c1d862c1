#include "dedup/state.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "dedup/boilerplate.h"
#include "dedup/internal/codec.h"
#include "dedup/term_stats.h"

namespace newsflow::dedup {
namespace {

constexpr std::string_view kMagic = "NFS3";
constexpr std::string_view kMagicV2 = "NFS2";  // read still: the layout before the story card
constexpr std::string_view kMagicV1 = "NFS1";  // read still: the layout before that
constexpr std::uint32_t kTermMask = (std::uint32_t{1} << TermStats::kWeightedBits) - 1;
constexpr std::size_t kParagraphBytes = 7;  // the 56 bits of `BoilerplateFilter::kKeyBits`
constexpr float kMaxTermCount = 1 << 20;
// The weight of a story term counted `count` times, as `StoryBook::terms_of` makes it.
float weight_of_count(float count) { return 1 + std::log(count); }
static_assert(BoilerplateFilter::kKeyBits == (std::uint64_t{1} << 8 * kParagraphBytes) - 1);
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
  w.fixed(s.fp.exact.high);
  w.fixed(s.fp.exact.low);
  for (const std::uint16_t v : s.fp.sketch) w.fixed(v);
  w.varint(s.fp.phrases);
  w.varint(s.fp.simhash != 0);  // the SimHash only when there is one (its scheme)
  if (s.fp.simhash != 0) w.fixed(s.fp.simhash);
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
    // A weight is 1 + ln(count) (`StoryBook::terms_of`): the count, when it gives the weight
    // back to the bit, else 0 and the weight.
    const float count = std::round(std::exp(weight - 1));
    if (count >= 1 && count <= kMaxTermCount && weight_of_count(count) == weight) {
      w.varint(static_cast<std::uint64_t>(count));
    } else {
      w.varint(0);
      w.fixed(weight);
    }
  }
  // The bits of the term hashes the counters read, sorted, as gaps (0 for a repeat: each counts):
  // about two bytes a term.
  std::vector<std::uint32_t> terms = s.df_terms;
  for (std::uint32_t& t : terms) t &= kTermMask;
  std::sort(terms.begin(), terms.end());
  w.varint(terms.size());
  std::uint32_t previous = 0;
  for (const std::uint32_t t : terms) {
    w.varint(t - previous);
    previous = t;
  }
  w.varint(s.paragraphs.size());
  for (const std::uint64_t p : s.paragraphs) {
    char bytes[8];
    const std::uint64_t key = p & BoilerplateFilter::kKeyBits;
    for (std::size_t b = 0; b < kParagraphBytes; ++b) bytes[b] = static_cast<char>(key >> 8 * b);
    w.raw(std::string_view(bytes, kParagraphBytes));
  }
  w.string(s.link);
  w.varint(s.from_feed ? 1 : 0);
  w.string(s.language);
  w.string(s.image_url);
  w.string(s.description);
  return w.take();
}

namespace {
// The layout's version (3, 2 for `NFS2` or 1 for `NFS1`), 0 for bytes of none; reads the magic.
int read_magic(Reader& r) {
  for (const auto& [magic, version] :
       {std::pair{kMagic, 3}, std::pair{kMagicV2, 2}, std::pair{kMagicV1, 1}}) {
    Reader attempt = r;
    if (attempt.expect(magic)) {
      r = attempt;
      return version;
    }
  }
  return 0;
}
}  // namespace

std::optional<std::uint64_t> state_seq(std::string_view bytes) {
  Reader r(bytes, kMaxItems);
  if (read_magic(r) == 0) return std::nullopt;
  const std::uint64_t seq = r.varint();
  return r.ok() ? std::optional(seq) : std::nullopt;
}

bool decode_state_into(std::string_view bytes, ArticleState& s) {
  Reader r(bytes, kMaxItems);
  const int version = read_magic(r);
  if (version == 0) return false;
  s.seq = r.varint();
  s.id.assign(r.view());
  s.event_time = r.signed_varint();
  // Seconds since the epoch within +-35,000 years: anything else is not a record of ours (and
  // would overflow the window's arithmetic).
  if (s.event_time > (std::int64_t{1} << 40) || s.event_time < -(std::int64_t{1} << 40)) {
    return false;
  }
  if (version == 1) {
    internal::read_fingerprint(r, s.fp);
  } else {
    s.fp.simhash = 0;
    s.fp.exact.high = r.fixed<std::uint64_t>();
    s.fp.exact.low = r.fixed<std::uint64_t>();
    for (auto& v : s.fp.sketch) v = r.fixed<std::uint16_t>();
    s.fp.phrases = static_cast<std::uint32_t>(r.varint());
    const std::uint64_t simhash = r.varint();
    if (simhash > 1) return false;
    if (simhash == 1) s.fp.simhash = r.fixed<std::uint64_t>();
  }
  if (!internal::read_verdict(r, s.verdict)) return false;
  s.url.assign(r.view());
  s.source.assign(r.view());
  s.title.assign(r.view());
  s.story_id.assign(r.view());
  s.merged_from.resize(r.count());
  for (auto& m : s.merged_from) m.assign(r.view());
  s.story_terms.resize(r.count());
  for (auto& [term, weight] : s.story_terms) {
    term.assign(r.view());
    if (version == 1) {
      weight = r.fixed<float>();
      continue;
    }
    const std::uint64_t count = r.varint();
    if (count > kMaxTermCount) return false;
    weight = count == 0 ? r.fixed<float>() : weight_of_count(static_cast<float>(count));
  }
  s.df_terms.resize(r.count());
  std::uint64_t t = 0;
  for (auto& term : s.df_terms) {
    t += r.varint();
    term = static_cast<std::uint32_t>(t);
  }
  s.paragraphs.resize(r.count());
  for (auto& p : s.paragraphs) {
    if (version == 1) {
      p = r.fixed<std::uint64_t>();
      continue;
    }
    const std::string_view key = r.raw(kParagraphBytes);
    p = 0;
    for (std::size_t b = 0; b < key.size(); ++b) {
      p |= std::uint64_t{static_cast<unsigned char>(key[b])} << 8 * b;
    }
  }
  s.link.assign(r.view());
  s.from_feed = r.varint() != 0;
  s.language.assign(r.view());
  if (version >= 3) {
    s.image_url.assign(r.view());
    s.description.assign(r.view());
  } else {
    s.image_url.clear();
    s.description.clear();
  }
  return r.done() && !s.id.empty();
}

std::optional<ArticleState> decode_state(std::string_view bytes) {
  ArticleState s;
  if (!decode_state_into(bytes, s)) return std::nullopt;
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
