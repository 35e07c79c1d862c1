#include "daemon/pipeline/warc.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "daemon/pipeline/http_response.h"
#include "daemon/pipeline/input_file.h"
#include "extractors/text.h"
#include "extractors/timestamp.h"

namespace newsflow::daemon {
namespace {

constexpr std::size_t kMaxHeader = std::size_t{1} << 16;  // a WARC header block, at most

}  // namespace

bool is_warc(std::string_view first_bytes) { return first_bytes.starts_with("WARC/1."); }

// The named fields of a WARC header block that the reader uses.
struct WarcReader::Header {
  enum class Status {
    kOk,    // a header that reads: named fields, a Content-Length and a WARC-Type
    kBad,   // `problem` says why not
    kCut,   // the input ends inside it
    kMore,  // the bytes given end inside it, and the input has more
  };
  std::string type, date, target_uri, content_type, identified_payload_type, segment_number;
  std::uint64_t content_length = 0;
  std::size_t length = 0;  // of the header block with its blank line
  std::string problem;

  // Reads the header block at the start of `s`, whose version line the caller has checked. It
  // stops at the first line that is not a named field, so that looking for the next record
  // stays linear: the next candidate's version line is such a line.
  Status read(std::string_view s, bool at_end);
};

WarcReader::Header::Status WarcReader::Header::read(std::string_view s, bool at_end) {
  bool have_length = false;
  std::string field;  // the field being read, its folded lines joined
  auto take = [&] {
    if (field.empty()) return true;
    const auto colon = field.find(':');
    const std::string key = extractors::ascii_lower(std::string_view(field).substr(0, colon));
    const std::string value(trim(std::string_view(field).substr(colon + 1)));
    field.clear();
    if (key == "warc-type") type = value;
    if (key == "warc-date") date = value;
    if (key == "warc-target-uri") target_uri = value;
    if (key == "content-type") content_type = value;
    if (key == "warc-identified-payload-type") identified_payload_type = value;
    if (key == "warc-segment-number") segment_number = value;
    if (key == "content-length") {
      have_length = !value.empty() && value.size() <= 18 &&
                    std::all_of(value.begin(), value.end(),
                                [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
      content_length = have_length ? std::stoull(value) : 0;
      if (!have_length) {
        problem = "Content-Length '" + printable(value) + "' is not a number";
        return false;
      }
    }
    return true;
  };
  const std::string_view window = s.substr(0, kMaxHeader);
  std::size_t i = s.find('\n') + 1;  // after the version line
  while (true) {
    const auto nl = window.find('\n', i);
    if (nl == std::string_view::npos) {
      if (s.size() >= kMaxHeader) {
        problem = "no blank line ends the header in its first 64 KiB";
        return Status::kBad;
      }
      return at_end ? Status::kCut : Status::kMore;
    }
    std::string_view raw = s.substr(i, nl - i);
    i = nl + 1;
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    if (raw.empty()) break;
    if ((raw.front() == ' ' || raw.front() == '\t') && !field.empty()) {  // folded
      field += ' ';
      field += trim(raw);
      continue;
    }
    if (!take()) return Status::kBad;
    const auto colon = raw.find(':');
    const std::string_view name = colon == std::string_view::npos ? "" : raw.substr(0, colon);
    if (name.empty() || name.find_first_of(" \t") != std::string_view::npos) {
      problem = "bad header line '" + printable(raw) + "'";
      return Status::kBad;
    }
    field.assign(raw);
  }
  if (!take()) return Status::kBad;
  length = i;
  if (!have_length) problem = "no Content-Length";
  if (problem.empty() && type.empty()) problem = "no WARC-Type";
  return problem.empty() ? Status::kOk : Status::kBad;
}

WarcReader::WarcReader(InputFile& file, const WarcOptions& options) : ArchiveReader(file, options) {
  file_.track_members();
  file_.resume_after_damage();
}

bool WarcReader::version_line_at(std::size_t at, std::size_t* line_end) const {
  const std::string_view s = std::string_view(buf_).substr(at);
  if (!is_warc(s) || s.size() < 9 || !std::isdigit(static_cast<unsigned char>(s[7]))) return false;
  std::size_t i = 8;
  if (s[i] == '\r') ++i;
  if (i >= s.size() || s[i] != '\n') return false;
  *line_end = at + i + 1;
  return true;
}

std::optional<std::size_t> WarcReader::find_header(std::size_t* from, std::size_t limit) const {
  const std::string_view s(buf_);
  // A version line that starts before `limit` may end after it.
  const std::string_view window = s.substr(0, std::min(s.size(), limit + 9));
  std::size_t p = *from;
  while (true) {
    const auto hit = window.find("WARC/1.", p);
    if (hit == std::string_view::npos || hit >= limit) {
      // The last bytes may begin a version line that more bytes complete.
      *from = limit < s.size() ? limit : std::max(p, s.size() > 6 ? s.size() - 6 : 0);
      return std::nullopt;
    }
    if ((hit > 0 && s[hit - 1] == '\n') || base_ + hit == line_start_) {
      if (s.size() - hit < 10 && !end_) {  // the whole version line first
        *from = hit;
        return std::nullopt;
      }
      std::size_t fields_start;
      if (version_line_at(hit, &fields_start)) {
        Header header;
        const Header::Status status = header.read(s.substr(hit), end_);
        if (status == Header::Status::kOk) return hit;
        if (status == Header::Status::kMore) {
          *from = hit;
          return std::nullopt;
        }
      }
    }
    p = hit + 1;
  }
}

std::optional<std::size_t> WarcReader::trailer_length(std::size_t at) const {
  // CRLF CRLF ends a record (LF LF is taken too). A file that ends instead, after the whole
  // block, loses nothing.
  std::size_t i = at, newlines = 0;
  while (i < buf_.size() && newlines < 2 && (buf_[i] == '\r' || buf_[i] == '\n')) {
    if (buf_[i] == '\n') ++newlines;
    ++i;
  }
  if (newlines == 2 || (i == buf_.size() && end_)) return i - at;
  return std::nullopt;
}

WarcRecord WarcReader::damaged_segment(WarcRecord record, bool in_record) {
  const InputFile::Damage damage = *file_.damage();
  const auto [found, skipped] = file_.resume();
  // Standalone, the record's offsets are the damaged member's.
  std::string detail = in_record ? "cut by a damaged gzip member at file offset " +
                                       std::to_string(damage.member_offset) + ": " + damage.what
                                 : "damaged gzip member: " + damage.what;
  if (found && skipped > 0) {
    detail += "; " + std::to_string(skipped) + " bytes skipped to the next gzip member";
  } else if (!found && skipped > 0) {
    detail += "; no gzip member follows: the last " + std::to_string(skipped) +
              " bytes of the file cannot be read";
  }
  // What the damaged member gave of this record is dropped; the next member starts a line.
  base_ += buf_.size();
  buf_.clear();
  pos_ = 0;
  line_start_ = base_;
  end_ = !found;
  resync_ = found;
  return dead_letter(std::move(record), damage.truncated ? "warc_truncated" : "warc_gzip_error",
                     detail);
}

std::optional<WarcRecord> WarcReader::next() {
  if (!error_.empty()) return std::nullopt;
  forget_read();
  if (resync_) {
    resync_ = false;
    resync(pos_);
  }
  // Blank lines between records are tolerated.
  while (ensure(1) && (buf_[pos_] == '\r' || buf_[pos_] == '\n')) ++pos_;
  if (!error_.empty()) return std::nullopt;
  WarcRecord record;
  record.offset = base_ + pos_;
  if (pos_ == buf_.size()) {
    if (!file_.damage()) return std::nullopt;  // the end
    record.member_offset = file_.damage()->member_offset;
    return damaged_segment(std::move(record), false);
  }
  record.member_offset = file_.member_offset(record.offset);
  return read_record(std::move(record));
}

std::optional<WarcRecord> WarcReader::read_record(WarcRecord record) {
  // The version line, then the named fields up to a blank line.
  ensure(12);
  std::size_t fields_start = 0;
  if (!version_line_at(pos_, &fields_start)) {
    if (!error_.empty()) return std::nullopt;
    if (buf_.size() - pos_ < 12 && file_.damage()) return damaged_segment(std::move(record), true);
    const std::string_view line = std::string_view(buf_).substr(pos_, 40);
    return skip_to_next_record(std::move(record), "warc_bad_header",
                               "expected a WARC/1.x line, found '" +
                                   printable(trim(line.substr(0, line.find('\n')))) + "'",
                               pos_ + 1);
  }
  Header header;
  Header::Status status;
  while ((status = header.read(std::string_view(buf_).substr(pos_), end_)) ==
         Header::Status::kMore) {
    ensure(buf_.size() - pos_ + 1);
    if (!error_.empty()) return std::nullopt;
    header = Header{};
  }
  if (status == Header::Status::kCut) {
    pos_ = buf_.size();
    if (file_.damage()) return damaged_segment(std::move(record), true);
    return dead_letter(std::move(record), "warc_truncated", "the file ends inside its header");
  }
  // WARC 1.0 wrote the target URI in angle brackets.
  std::string_view uri = header.target_uri;
  if (uri.size() >= 2 && uri.front() == '<' && uri.back() == '>')
    uri = uri.substr(1, uri.size() - 2);
  record.parsed.input.url = uri;
  record.type = header.type;
  if (status == Header::Status::kBad) {
    return skip_to_next_record(std::move(record), "warc_bad_header", header.problem, pos_ + 1);
  }
  // The block: held whole when it may become an input, else skipped through.
  if (header.content_length <= options_.max_html_bytes + kMaxHttpHead) {
    return read_held_block(std::move(record), header);
  }
  return read_skipped_block(std::move(record), header);
}

namespace {

std::string length_text(std::uint64_t length) { return "Content-Length " + std::to_string(length); }

std::string wrong_length(std::uint64_t length) {
  return "no blank line after the " + length_text(length) +
         " bytes of its block: the length is wrong or the record is corrupt";
}

}  // namespace

std::optional<WarcRecord> WarcReader::read_held_block(WarcRecord record, const Header& header) {
  const std::size_t block_start = header.length;  // from pos_
  const std::uint64_t length = header.content_length;
  const auto need = block_start + static_cast<std::size_t>(length);
  ensure(need + 4);
  if (!error_.empty()) return std::nullopt;
  if (buf_.size() - pos_ < need) {
    if (file_.damage()) return damaged_segment(std::move(record), true);
    const std::size_t have = buf_.size() - pos_ - block_start;
    return skip_to_next_record(std::move(record), "warc_truncated",
                               length_text(length) + " runs past the end of the file (" +
                                   std::to_string(have) + " bytes of the block there)",
                               pos_ + block_start);
  }
  const auto trailer = trailer_length(pos_ + need);
  if (!trailer) {
    return skip_to_next_record(std::move(record), "warc_bad_length", wrong_length(length),
                               pos_ + block_start);
  }
  const std::string_view block =
      std::string_view(buf_).substr(pos_ + block_start, static_cast<std::size_t>(length));
  WarcRecord out = classify(std::move(record), header, block, true);
  pos_ += need + *trailer;
  return out;
}

std::optional<WarcRecord> WarcReader::read_skipped_block(WarcRecord record, const Header& header) {
  const std::size_t block_start = header.length;  // from pos_
  const std::uint64_t length = header.content_length;
  ensure(block_start + kMaxHttpHead);
  if (!error_.empty()) return std::nullopt;
  const std::string_view prefix = std::string_view(buf_).substr(pos_ + block_start, kMaxHttpHead);
  WarcRecord out = classify(std::move(record), header, prefix, false);
  pos_ += block_start;
  const Skipped skipped = skip_block(length);
  if (!error_.empty()) return std::nullopt;
  const auto look_from = static_cast<std::size_t>(skipped.look_from - base_);
  if (skipped.held_too_much) {
    return skip_to_next_record(std::move(out), "warc_bad_length",
                               length_text(length) + ": a record header at offset " +
                                   std::to_string(*skipped.header) +
                                   " lies inside its block, which goes on for more than " +
                                   std::to_string(options_.max_held_bytes) + " bytes after it",
                               look_from);
  }
  if (skipped.bytes < length) {
    if (file_.damage()) return damaged_segment(std::move(out), true);
    return skip_to_next_record(std::move(out), "warc_truncated",
                               length_text(length) + " runs past the end of the file (" +
                                   std::to_string(skipped.bytes) +
                                   " bytes of the block there, skipped)",
                               look_from);
  }
  ensure(4);
  const auto trailer = trailer_length(pos_);
  if (!trailer) {
    return skip_to_next_record(std::move(out), "warc_bad_length", wrong_length(length), look_from);
  }
  pos_ += *trailer;
  return out;
}

WarcRecord WarcReader::classify(WarcRecord record, const Header& header, std::string_view block,
                                bool whole) {
  const std::string type = extractors::ascii_lower(header.type);
  auto skip = [&](std::string reason) { return as_skipped(std::move(record), std::move(reason)); };
  if (type != "response" && type != "resource") {
    for (const char* known :
         {"warcinfo", "request", "metadata", "revisit", "conversion", "continuation"}) {
      if (type == known) return skip(type);
    }
    return skip("other_type");
  }
  if (!header.segment_number.empty()) return skip("segmented");

  HttpHead head;
  std::string_view payload = block;
  if (type == "response") {
    if (!block.starts_with("HTTP/")) {
      // dns: and other non-HTTP responses (Heritrix writes them) are not pages.
      if (!media_type(header.content_type).starts_with("application/http")) {
        return skip("not_http");
      }
      return dead_letter(std::move(record), "http_bad_header",
                         "block does not start with an HTTP status line: '" +
                             printable(block.substr(0, block.find('\n'))) + "'");
    }
    auto response = read_http_response(block);
    if (!response) return not_a_page(std::move(record), std::move(response.error()));
    head = std::move(response->head);
    payload = response->payload;
  } else {
    head.content_type = header.content_type;
  }
  const bool coded = !head.content_encoding.empty() || !head.transfer_encoding.empty();
  const std::string_view declared =
      !head.content_type.empty() ? head.content_type : header.identified_payload_type;
  if (!declared.empty() && !is_html_type(declared)) return skip("not_html");
  if (declared.empty() && !whole && (coded || !sniffs_as_html(payload))) return skip("not_html");
  const std::size_t limit = options_.max_html_bytes;
  if (!whole || payload.size() > limit) {
    return dead_letter(std::move(record), "too_large",
                       "Content-Length " + std::to_string(header.content_length) +
                           ": the payload is larger than extract.max_html_bytes (" +
                           std::to_string(limit) + (whole ? ")" : "); skipped without being held"));
  }
  auto decoded = decode_payload(payload, head, limit);
  if (!decoded) return not_a_page(std::move(record), std::move(decoded.error()));
  if (declared.empty() && !sniffs_as_html(*decoded)) return skip("not_html");
  Input& in = record.parsed.input;
  if (in.url.empty()) return dead_letter(std::move(record), "missing_url", "no WARC-Target-URI");
  if (!header.date.empty()) {
    in.fetched_at = extractors::parse_iso8601(header.date);
    if (!in.fetched_at) {
      return dead_letter(std::move(record), "invalid_timestamp",
                         "WARC-Date is not ISO 8601: '" + printable(header.date) + "'");
    }
  }
  return as_page(std::move(record), std::move(head.content_type), std::move(*decoded));
}
}  // namespace newsflow::daemon
