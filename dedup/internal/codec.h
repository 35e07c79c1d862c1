#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace newsflow::dedup::internal {

/// Writes varints, fixed-width little-endian values, length-prefixed strings and arrays of
/// plain values: the state record's and the state snapshot's coding.
class Writer {
 public:
  /// Bytes out as they come, `chunk` at a time (the last, shorter, at `finish`), instead of all
  /// held: `sink(bytes, last)`.
  using Sink = std::function<void(std::string_view, bool last)>;
  Writer() = default;
  Writer(std::size_t chunk, Sink sink) : chunk_(chunk), sink_(std::move(sink)) {}

  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<char>(v | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<char>(v));
    spill();
  }
  void signed_varint(std::int64_t v) {
    varint((static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63));
  }
  template <typename T>
  void fixed(T v) {
    char buf[sizeof(T)];
    std::memcpy(buf, &v, sizeof(T));  // little-endian hosts (x86-64, arm64)
    out_.append(buf, sizeof(T));
    spill();
  }
  void string(std::string_view s) {
    varint(s.size());
    out_.append(s);
    spill();
  }
  /// A count, then the elements' bytes as they are in memory (types without padding).
  template <typename T>
  void array(const std::vector<T>& v) {
    static_assert(std::has_unique_object_representations_v<T>);
    varint(v.size());
    out_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
    spill();
  }
  void raw(std::string_view s) {
    out_.append(s);
    spill();
  }
  std::string take() { return std::move(out_); }
  /// With a sink: what is left goes out as the last chunk (possibly empty).
  void finish() {
    if (sink_) sink_(out_, true);
    out_.clear();
  }

 private:
  void spill() {
    if (!sink_ || out_.size() < chunk_) return;
    std::size_t at = 0;
    for (; out_.size() - at >= chunk_; at += chunk_) {
      sink_(std::string_view(out_).substr(at, chunk_), false);
    }
    out_.erase(0, at);
  }
  std::string out_;
  std::size_t chunk_ = 0;
  Sink sink_;
};

/// Reads what `Writer` wrote; any read past the end or out of bounds fails the reader (`ok`
/// false) and returns zeros from then on.
class Reader {
 public:
  explicit Reader(std::string_view in, std::size_t max_items = std::size_t{1} << 20)
      : in_(in), max_items_(max_items) {}
  bool ok() const { return ok_; }
  bool done() const { return ok_ && pos_ == in_.size(); }
  /// Bytes read so far.
  std::size_t position() const { return pos_; }
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
  std::string string() { return std::string(view()); }
  /// The next `n` bytes as they are.
  std::string_view raw(std::size_t n) {
    if (!ok_ || n > in_.size() - pos_) return fail(), std::string_view();
    const std::string_view s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  /// A length-prefixed string as a view into the bytes read.
  std::string_view view() {
    const std::uint64_t n = varint();
    if (!ok_ || n > in_.size() - pos_) return fail(), std::string_view();
    const std::string_view s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  /// A count of items that each take at least a byte (a list that cannot be longer than what is
  /// left, nor than `max_items`).
  std::size_t count() {
    const std::uint64_t n = varint();
    if (n > max_items_ || n > in_.size() - pos_) return fail(), 0;
    return static_cast<std::size_t>(n);
  }
  template <typename T>
  bool array(std::vector<T>& v) {
    const std::uint64_t n = varint();
    if (!ok_ || n > (in_.size() - pos_) / sizeof(T)) return fail(), false;
    v.resize(static_cast<std::size_t>(n));
    if (!v.empty()) std::memcpy(v.data(), in_.data() + pos_, v.size() * sizeof(T));
    pos_ += v.size() * sizeof(T);
    return true;
  }
  bool expect(std::string_view magic) {
    if (in_.substr(pos_, magic.size()) != magic) return fail(), false;
    pos_ += magic.size();
    return true;
  }

 private:
  std::uint64_t fail() {
    ok_ = false;
    pos_ = in_.size();
    return 0;
  }
  std::string_view in_;
  std::size_t max_items_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace newsflow::dedup::internal
