#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <tl/expected.hpp>
#include <vector>

struct inflate_state;

namespace newsflow::daemon {

/// A plain or gzip input file ("-": standard input) read as bytes. Gzip is told by its magic
/// bytes and inflated with ISA-L's igzip (Debian libisal), two to three times zlib's pace on
/// the replay path; every member of a multi-member file is read and its CRC-32 and length
/// checked, and bytes after the last member that are not a gzip member are ignored, as zlib's
/// gzread does.
class InputFile {
 public:
  /// The file opened, or why it cannot be.
  static tl::expected<std::unique_ptr<InputFile>, std::string> open(const std::string& path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  /// Reads up to `n` bytes into `out`: the count, 0 at the end, -1 on an error (`error()`
  /// says which: a read error, a corrupt or truncated gzip member).
  std::ptrdiff_t read(char* out, std::size_t n);
  const std::string& error() const { return error_; }

 private:
  explicit InputFile(int fd);
  bool fill();  // more raw bytes into in_; false at the end of the file or on a read error
  std::ptrdiff_t inflate(char* out, std::size_t n);

  int fd_;
  std::vector<unsigned char> in_;
  std::size_t in_pos_ = 0, in_len_ = 0;
  bool eof_ = false, sniffed_ = false, gzip_ = false, done_ = false;
  std::unique_ptr<inflate_state> state_;
  std::string error_;
};

}  // namespace newsflow::daemon
