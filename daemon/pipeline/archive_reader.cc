#include <algorithm>
#include <string>

#include "daemon/pipeline/http_response.h"
#include "daemon/pipeline/input_file.h"
#include "daemon/pipeline/warc.h"

// What both archive readers do alike: the buffer, going on after a record that cannot be read,
// and what a record that is no page becomes.

namespace newsflow::daemon {
namespace {

constexpr std::size_t kChunk = std::size_t{1} << 16;  // read from the file at a time

}  // namespace

bool ArchiveReader::fill() {
  if (end_) return false;
  const std::size_t old = buf_.size();
  buf_.resize(old + kChunk);
  const std::ptrdiff_t n = file_.read(buf_.data() + old, kChunk);
  buf_.resize(old + static_cast<std::size_t>(std::max<std::ptrdiff_t>(n, 0)));
  if (n > 0) return true;
  if (n < 0) error_ = file_.error();
  end_ = true;
  return false;
}

bool ArchiveReader::ensure(std::size_t n) {
  while (buf_.size() - pos_ < n && fill()) {
  }
  return buf_.size() - pos_ >= n;
}

void ArchiveReader::drop_before(std::size_t k) {
  buf_.erase(0, k);
  base_ += k;
  pos_ = pos_ > k ? pos_ - k : 0;
}

void ArchiveReader::forget_read() {
  // Erasing moves what is left: only when that is no more than what goes, so that a large
  // buffer read a record at a time (after a resync into held bytes) stays linear.
  if (pos_ >= kChunk && pos_ >= buf_.size() - pos_) drop_before(pos_);
}

bool ArchiveReader::resync(std::size_t from) {
  std::size_t p = from;
  while (true) {
    if (const auto at = find_header(&p, buf_.size())) {
      pos_ = *at;
      return true;
    }
    if (end_) {
      pos_ = buf_.size();
      return false;
    }
    const std::size_t keep = p > 0 ? p - 1 : 0;  // the byte before p says whether p starts a line
    drop_before(keep);
    p -= keep;
    fill();
  }
}

WarcRecord ArchiveReader::dead_letter(WarcRecord record, std::string reason,
                                      const std::string& detail) const {
  std::string where = "record at offset " + std::to_string(record.offset);
  if (record.member_offset) {
    where += " (gzip member at file offset " + std::to_string(*record.member_offset) + ")";
  }
  record.outcome = WarcRecord::Outcome::kDeadLetter;
  record.parsed.failure = Failure::named(std::move(reason), where + ": " + detail);
  return record;
}

WarcRecord ArchiveReader::skip_to_next_record(WarcRecord record, std::string reason,
                                              std::string detail, std::size_t from) {
  const bool found = resync(from);
  const std::uint64_t to = base_ + pos_;
  detail += "; " + std::to_string(to - record.offset) + " bytes skipped from offset " +
            std::to_string(record.offset);
  if (found) {
    detail += " to the next record header, at offset " + std::to_string(to);
  } else if (file_.damage()) {
    detail += " to a damaged gzip member, at offset " + std::to_string(to);
  } else {
    detail += " to the end of the input, where no record header follows";
  }
  return dead_letter(std::move(record), std::move(reason), detail);
}

ArchiveReader::Skipped ArchiveReader::skip_block(std::uint64_t length) {
  Skipped out;
  const std::uint64_t start = base_ + pos_, end = start + length;
  std::size_t from = pos_;  // record headers before it are ruled out
  while (true) {
    const std::uint64_t have = base_ + buf_.size();
    if (!out.header) {
      const auto limit = static_cast<std::size_t>(std::min(end, have) - base_);
      if (const auto at = find_header(&from, limit)) out.header = base_ + *at;
    }
    if (have >= end) break;
    if (out.header) {
      if (have - *out.header > options_.max_held_bytes) {
        out.held_too_much = true;
        break;
      }
      // The byte before the header says that it starts a line.
      drop_before(static_cast<std::size_t>(*out.header - base_ - 1));
    } else {
      const std::size_t keep = from > 0 ? from - 1 : 0;
      drop_before(keep);
      from -= keep;
    }
    if (!fill()) break;
  }
  out.look_from = out.header.value_or(base_ + from);
  const std::uint64_t stop = std::min(end, base_ + buf_.size());
  pos_ = static_cast<std::size_t>(stop - base_);
  out.bytes = stop - start;
  return out;
}
WarcRecord ArchiveReader::not_a_page(WarcRecord record, NotAPage why) const {
  if (why.dead_letter) return dead_letter(std::move(record), std::move(why.reason), why.detail);
  return as_skipped(std::move(record), std::move(why.reason));
}

WarcRecord ArchiveReader::as_skipped(WarcRecord record, std::string reason) {
  record.outcome = WarcRecord::Outcome::kSkipped;
  record.skip_reason = std::move(reason);
  return record;
}

WarcRecord ArchiveReader::as_page(WarcRecord record, std::string content_type, std::string body) {
  Input& in = record.parsed.input;
  in.kind = BodyKind::kHtmlBytes;
  in.content_type = std::move(content_type);
  in.body = std::move(body);
  record.outcome = WarcRecord::Outcome::kDocument;
  return record;
}

}  // namespace newsflow::daemon
