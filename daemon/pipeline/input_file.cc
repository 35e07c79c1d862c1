#include "daemon/pipeline/input_file.h"

#include <fcntl.h>
#include <isa-l/igzip_lib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace newsflow::daemon {
namespace {

constexpr std::size_t kInputBuffer = std::size_t{1} << 18;

std::string inflate_error(int code) {
  switch (code) {
    case ISAL_INCORRECT_CHECKSUM:
      return "gzip member fails its CRC-32 or length check";
    case ISAL_INVALID_WRAPPER:
      return "gzip header is invalid";
    case ISAL_UNSUPPORTED_METHOD:
      return "gzip member uses an unsupported compression method";
    default:
      return "gzip data is corrupt (igzip error " + std::to_string(code) + ")";
  }
}

}  // namespace

tl::expected<std::unique_ptr<InputFile>, std::string> InputFile::open(const std::string& path) {
  const int fd = path == "-" ? ::dup(0) : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return tl::unexpected(path + ": " + std::strerror(errno));
  return std::unique_ptr<InputFile>(new InputFile(fd));
}

InputFile::InputFile(int fd) : fd_(fd), in_(kInputBuffer) {
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode)) {
    // Standard input may have been read from before it came to us: what is left counts.
    const off_t at = ::lseek(fd_, 0, SEEK_CUR);
    size_ = static_cast<std::uint64_t>(st.st_size - std::max<off_t>(at, 0));
  }
}

InputFile::~InputFile() { ::close(fd_); }

bool InputFile::fill() {
  if (in_pos_ > 0) {  // keep what is left at the front
    std::memmove(in_.data(), in_.data() + in_pos_, in_len_ - in_pos_);
    in_len_ -= in_pos_;
    in_pos_ = 0;
  }
  if (eof_ || in_len_ == in_.size()) return false;
  while (true) {
    const ssize_t n = ::read(fd_, in_.data() + in_len_, in_.size() - in_len_);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error_ = std::string("read error: ") + std::strerror(errno);
      return false;
    }
    if (n == 0) {
      eof_ = true;
      return false;
    }
    in_len_ += static_cast<std::size_t>(n);
    raw_read_ += static_cast<std::uint64_t>(n);
    return true;
  }
}

std::ptrdiff_t InputFile::read(char* out, std::size_t n) {
  if (peeked_pos_ < peeked_.size()) {
    const std::size_t take = std::min(n, peeked_.size() - peeked_pos_);
    std::memcpy(out, peeked_.data() + peeked_pos_, take);
    peeked_pos_ += take;
    if (peeked_pos_ == peeked_.size()) {
      peeked_.clear();
      peeked_pos_ = 0;
    }
    return static_cast<std::ptrdiff_t>(take);
  }
  return read_some(out, n);
}

std::string_view InputFile::peek(std::size_t n) {
  if (peeked_pos_ > 0) {
    peeked_.erase(0, peeked_pos_);
    peeked_pos_ = 0;
  }
  char buf[4096];
  while (peeked_.size() < n) {
    const std::ptrdiff_t got = read_some(buf, std::min(sizeof buf, n - peeked_.size()));
    if (got <= 0) break;
    peeked_.append(buf, static_cast<std::size_t>(got));
  }
  return std::string_view(peeked_).substr(0, n);
}

std::optional<std::uint64_t> InputFile::member_offset(std::uint64_t offset) {
  if (!gzip_ || members_.empty()) return std::nullopt;
  while (members_.size() > 1 && members_[1].first <= offset) members_.pop_front();
  return members_.front().second;
}

void InputFile::start_member(std::uint64_t at) {
  member_start_ = raw_offset();
  if (track_members_ || members_.empty()) members_.emplace_back(at, member_start_);
}

void InputFile::damaged(std::string what, bool truncated) {
  damage_ = Damage{std::move(what), member_start_, out_, truncated};
}

std::pair<bool, std::uint64_t> InputFile::resume() {
  if (!damage_) return {true, 0};
  damage_.reset();
  // The next member starts after the damaged one's first byte, wherever igzip left the input:
  // so every resume moves on.
  const std::uint64_t buffer_start = raw_read_ - in_len_;  // file offset of in_[0]
  if (buffer_start + in_pos_ <= member_start_) {
    in_pos_ = static_cast<std::size_t>(
        std::min<std::uint64_t>(in_len_, member_start_ + 1 - buffer_start));
  }
  std::uint64_t skipped = 0;
  while (true) {
    for (; in_pos_ + 2 < in_len_; ++in_pos_, ++skipped) {
      if (in_[in_pos_] == 0x1f && in_[in_pos_ + 1] == 0x8b && in_[in_pos_ + 2] == 8) {
        isal_inflate_reset(state_.get());
        state_->crc_flag = ISAL_GZIP;
        start_member(out_);
        return {true, skipped};
      }
    }
    if (eof_ || !fill()) {  // the last two bytes cannot start a member
      skipped += in_len_ - in_pos_;
      in_pos_ = in_len_;
      done_ = true;
      return {false, skipped};
    }
  }
}

std::ptrdiff_t InputFile::read_some(char* out, std::size_t n) {
  if (!error_.empty()) return -1;
  if (!sniffed_) {
    while (in_len_ < 2 && fill()) {
    }
    if (!error_.empty()) return -1;
    sniffed_ = true;
    gzip_ = in_len_ >= 2 && in_[0] == 0x1f && in_[1] == 0x8b;
    if (gzip_) {
      state_ = std::make_unique<inflate_state>();
      isal_inflate_init(state_.get());
      state_->crc_flag = ISAL_GZIP;
      start_member(0);
    }
  }
  if (n == 0) return 0;
  if (gzip_) {
    const std::ptrdiff_t got = inflate(out, n);
    if (got > 0) out_ += static_cast<std::uint64_t>(got);
    return got;
  }
  if (in_pos_ == in_len_) {
    in_pos_ = in_len_ = 0;
    if (!fill()) return error_.empty() ? 0 : -1;
  }
  const std::size_t take = std::min(n, in_len_ - in_pos_);
  std::memcpy(out, in_.data() + in_pos_, take);
  in_pos_ += take;
  out_ += take;
  return static_cast<std::ptrdiff_t>(take);
}

std::ptrdiff_t InputFile::inflate(char* out, std::size_t n) {
  inflate_state& s = *state_;
  const auto want = static_cast<std::uint32_t>(std::min<std::size_t>(n, UINT32_MAX));
  while (!done_ && !damage_) {
    if (in_pos_ == in_len_ && !eof_) {
      in_pos_ = in_len_ = 0;
      fill();
      if (!error_.empty()) return -1;
    }
    s.next_in = in_.data() + in_pos_;
    s.avail_in = static_cast<std::uint32_t>(in_len_ - in_pos_);
    s.next_out = reinterpret_cast<std::uint8_t*>(out);
    s.avail_out = want;
    const int rc = isal_inflate(&s);
    // igzip gives back input it held as bits; after an error it may give back more than this
    // buffer holds (bytes of an earlier fill): the position cannot go before the buffer.
    in_pos_ = in_len_ - std::min<std::size_t>(s.avail_in, in_len_);
    if (rc < 0) {
      // What this call inflated of the damaged member is dropped with it.
      if (resume_after_damage_) {
        damaged(inflate_error(rc), false);
        return 0;
      }
      error_ = inflate_error(rc);
      return -1;
    }
    const std::size_t produced = want - s.avail_out;
    if (s.block_state == ISAL_BLOCK_FINISH) {
      // The member and its trailer are read: another member may follow.
      if (in_len_ - in_pos_ < 2) fill();
      if (!error_.empty()) return -1;
      if (in_len_ - in_pos_ >= 2 && in_[in_pos_] == 0x1f && in_[in_pos_ + 1] == 0x8b) {
        isal_inflate_reset(&s);
        s.crc_flag = ISAL_GZIP;
        start_member(out_ + produced);
      } else {
        done_ = true;  // the end, or bytes that are not gzip: ignored, as gzread does
      }
    } else if (produced == 0 && in_pos_ == in_len_ && eof_) {
      if (resume_after_damage_) {
        damaged("gzip data is truncated", true);
        return 0;
      }
      error_ = "gzip data is truncated";
      return -1;
    }
    if (produced > 0) return static_cast<std::ptrdiff_t>(produced);
  }
  return 0;
}

}  // namespace newsflow::daemon
