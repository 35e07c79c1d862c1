#include "dedup/state.h"

#include <algorithm>
#include <cstring>

namespace newsflow::dedup {
namespace {

constexpr std::string_view kMagic = "NFS1";
constexpr std::size_t kMaxItems = 1 << 20;  // per list: anything larger is not a record of ours

class Writer {
 public:
  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<char>(v | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<char>(v));
  }
  void signed_varint(std::int64_t v) {
    varint((static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63));
  }
  template <typename T>
  void fixed(T v) {
    char buf[sizeof(T)];
    std::memcpy(buf, &v, sizeof(T));  // little-endian hosts (x86-64, arm64)
    out_.append(buf, sizeof(T));
  }
  void string(std::string_view s) {
    varint(s.size());
    out_.append(s);
  }
  std::string take() { return std::move(out_); }
  void raw(std::string_view s) { out_.append(s); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool ok() const { return ok_; }
  bool done() const { return ok_ && pos_ == in_.size(); }
  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= in_.size()) return fail();
      const auto byte = static_cast<unsigned char>(in_[pos_++]);
      v |= static_cast<std::uint64_t>(byte & 0x7F) << shift;
      if (!(byte & 0x80)) return v;
    }
    return fail();
  }
  std::int64_t signed_varint() {
    const std::uint64_t z = varint();
    return static_cast<std::int64_t>((z >> 1) ^ (~(z & 1) + 1));
  }
  template <typename T>
  T fixed() {
    T v{};
    if (in_.size() - pos_ < sizeof(T)) return fail(), v;
    std::memcpy(&v, in_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string string() {
    const std::uint64_t n = varint();
    if (!ok_ || n > in_.size() - pos_) return fail(), std::string();
    std::string s(in_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  std::size_t count() {
    const std::uint64_t n = varint();
    if (n > kMaxItems || n > in_.size() - pos_) return fail(), 0;
    return static_cast<std::size_t>(n);
  }
  bool expect(std::string_view magic) {
    if (in_.substr(0, magic.size()) != magic) return fail(), false;
    pos_ = magic.size();
    return true;
  }

 private:
  std::uint64_t fail() {
    ok_ = false;
    pos_ = in_.size();
    return 0;
  }
  std::string_view in_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace

std::string encode_state(const ArticleState& s) {
  Writer w;
  w.raw(kMagic);
  w.varint(s.seq);
  w.string(s.id);
  w.signed_varint(s.event_time);
  w.fixed(s.fp.exact.high);
  w.fixed(s.fp.exact.low);
  for (const std::uint16_t slot : s.fp.sketch) w.fixed(slot);
  w.varint(s.fp.phrases);
  w.fixed(s.fp.simhash);
  w.varint(static_cast<std::uint64_t>(s.verdict.kind));
  w.string(s.verdict.of);
  w.fixed(s.verdict.similarity);
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
  Reader r(bytes);
  if (!r.expect(kMagic)) return std::nullopt;
  const std::uint64_t seq = r.varint();
  return r.ok() ? std::optional(seq) : std::nullopt;
}

std::optional<ArticleState> decode_state(std::string_view bytes) {
  Reader r(bytes);
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
  s.fp.exact.high = r.fixed<std::uint64_t>();
  s.fp.exact.low = r.fixed<std::uint64_t>();
  for (auto& slot : s.fp.sketch) slot = r.fixed<std::uint16_t>();
  s.fp.phrases = static_cast<std::uint32_t>(r.varint());
  s.fp.simhash = r.fixed<std::uint64_t>();
  const std::uint64_t kind = r.varint();
  if (kind > static_cast<std::uint64_t>(DupKind::kContained)) return std::nullopt;
  s.verdict.kind = static_cast<DupKind>(kind);
  s.verdict.of = r.string();
  s.verdict.similarity = r.fixed<double>();
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

}  // namespace newsflow::dedup
