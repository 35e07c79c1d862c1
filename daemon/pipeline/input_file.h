#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <utility>
#include <vector>

struct inflate_state;

namespace newsflow::daemon {

/// A plain or gzip input file ("-": standard input) read as bytes. Gzip is told by its magic
/// bytes and inflated with ISA-L's igzip (Debian libisal), two to three times zlib's pace on
/// the replay path; every member of a multi-member file is read and its CRC-32 and length
/// checked, and bytes after the last member that are not a gzip member are ignored, as zlib's
/// gzread does. Not thread-safe.
///
///     auto file = InputFile::open("crawl.warc.gz");
///     if (!file) return fail(file.error());
///     if ((*file)->peek(7) == "WARC/1.") ...
///     while ((n = (*file)->read(buf, sizeof buf)) > 0) ...
class InputFile {
 public:
  /// The file opened, or why it cannot be.
  static tl::expected<std::unique_ptr<InputFile>, std::string> open(const std::string& path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  /// Reads up to `n` bytes into `out`: the count, 0 at the end, -1 on an error (`error()`
  /// says which: a read error, a corrupt or truncated gzip member). With
  /// `resume_after_damage()`, a damaged gzip member gives 0 and `damage()` instead.
  std::ptrdiff_t read(char* out, std::size_t n);
  const std::string& error() const { return error_; }

  /// Up to `n` of the next bytes (decompressed) without consuming them: `read` returns them
  /// again. Fewer at the end of the input or on an error. The view lasts until the next call.
  std::string_view peek(std::size_t n);

  /// Bytes of the file consumed so far: the position in the compressed file for gzip. Read-ahead
  /// not yet inflated does not count.
  std::uint64_t raw_offset() const { return raw_read_ - (in_len_ - in_pos_); }
  /// The file's size when it is a regular file (standard input redirected from a file too).
  std::optional<std::uint64_t> size() const { return size_; }
  /// Whether the bytes are gzip; known after the first `read` or `peek`.
  bool gzip() const { return gzip_; }

  /// Remembers where each gzip member starts, for `member_offset`. Off by default: a reader that
  /// never asks would hold one entry per member.
  void track_members() { track_members_ = true; }
  /// The file offset of the gzip member that holds decompressed byte `offset` (with
  /// `track_members()`); nothing for plain input. Offsets asked for must not decrease: members
  /// before the one found are forgotten.
  std::optional<std::uint64_t> member_offset(std::uint64_t offset);

  /// A corrupt or truncated gzip member, as `read` met it in `resume_after_damage` mode.
  struct Damage {
    std::string what;             ///< as `error()` would say it
    std::uint64_t member_offset;  ///< file offset of the damaged member
    std::uint64_t at;             ///< decompressed bytes delivered before it
    bool truncated = false;       ///< the file ends inside the member
  };
  /// From now on a damaged gzip member ends a segment instead of the whole input: `read`
  /// returns 0 with `damage()` set, and `resume()` goes on at the next member. For formats that
  /// can resynchronise (WARC: one record per member); replay lines keep the fatal error.
  void resume_after_damage() { resume_after_damage_ = true; }
  const std::optional<Damage>& damage() const { return damage_; }
  /// After `damage()`: skips the compressed bytes up to the next gzip member. Whether one was
  /// found, and how many bytes were skipped.
  std::pair<bool, std::uint64_t> resume();

 private:
  explicit InputFile(int fd);
  bool fill();  // more raw bytes into in_; false at the end of the file or on a read error
  std::ptrdiff_t read_some(char* out, std::size_t n);
  std::ptrdiff_t inflate(char* out, std::size_t n);
  void start_member(std::uint64_t at);  // a member starts here, at decompressed offset `at`
  void damaged(std::string what, bool truncated);

  int fd_;
  std::vector<unsigned char> in_;
  std::size_t in_pos_ = 0, in_len_ = 0;
  std::uint64_t raw_read_ = 0;  // bytes read from fd_
  std::uint64_t out_ = 0;       // decompressed bytes delivered (peeked ones included)
  std::optional<std::uint64_t> size_;
  bool eof_ = false, sniffed_ = false, gzip_ = false, done_ = false;
  std::unique_ptr<inflate_state> state_;
  std::string error_;
  std::string peeked_;  // bytes `peek` read ahead, served first by `read`
  std::size_t peeked_pos_ = 0;
  bool track_members_ = false;
  std::deque<std::pair<std::uint64_t, std::uint64_t>> members_;  // (decompressed, file) offsets
  std::uint64_t member_start_ = 0;                               // of the member inflating
  bool resume_after_damage_ = false;
  std::optional<Damage> damage_;
};

}  // namespace newsflow::daemon
