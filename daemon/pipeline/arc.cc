#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "daemon/pipeline/http_response.h"
#include "daemon/pipeline/warc.h"
#include "extractors/timestamp.h"
#include "extractors/urls.h"

// The ARC reader (the Internet Archive's format before WARC).

namespace newsflow::daemon {
namespace {

constexpr std::size_t kMaxArcHeaderLine = 16 * 1024;

// The fields of an ARC header line the reader uses (views into the line).
struct ArcHeader {
  std::string_view url, date, type;
  std::uint64_t length = 0;
};

// "URL IP-address Archive-date Content-type Archive-length" (version 1; version 2 has five more
// fields before the length, which is always last), the URL with its scheme (`http:`, `dns:`,
// `filedesc:`): nothing when `line` is not one.
std::optional<ArcHeader> parse_arc_header(std::string_view line) {
  line = trim(line);
  std::vector<std::string_view> fields;
  for (std::size_t i = 0; i < line.size();) {
    const std::size_t e = std::min(line.find(' ', i), line.size());
    if (e > i) fields.push_back(line.substr(i, e - i));
    i = e + 1;
  }
  if (fields.size() < 5) return std::nullopt;
  const std::string_view url = fields.front(), length = fields.back();
  const auto colon = url.find(':');
  if (colon == std::string_view::npos || colon == 0 ||
      !std::isalpha(static_cast<unsigned char>(url[0])) ||
      !std::all_of(url.begin(), url.begin() + static_cast<std::ptrdiff_t>(colon), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
      })) {
    return std::nullopt;
  }
  if (length.size() > 12 ||
      !std::all_of(length.begin(), length.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  ArcHeader header{url, fields[2], fields[3], 0};
  for (const char c : length)
    header.length = header.length * 10 + static_cast<std::uint64_t>(c - '0');
  return header;
}

}  // namespace

bool is_arc(std::string_view first_bytes) { return first_bytes.starts_with("filedesc://"); }

ArcReader::ArcReader(InputFile& file, const WarcOptions& options) : ArchiveReader(file, options) {}

std::optional<std::size_t> ArcReader::find_header(std::size_t* from, std::size_t limit) const {
  const std::string_view s(buf_);
  std::size_t c = *from;
  while (c < limit) {
    if (c > 0 && s[c - 1] != '\n') {  // on to the next line
      const auto nl = s.substr(0, limit).find('\n', c);
      if (nl == std::string_view::npos) break;
      c = nl + 1;
      continue;
    }
    const auto line_end = s.substr(0, c + kMaxArcHeaderLine + 1).find('\n', c);
    if (line_end == std::string_view::npos) {
      if (s.size() < c + kMaxArcHeaderLine + 1 && !end_) {  // the whole line first
        *from = c;
        return std::nullopt;
      }
      ++c;  // too long, or cut by the end: no header
      continue;
    }
    if (parse_arc_header(s.substr(c, line_end - c))) return c;
    c = line_end + 1;
  }
  *from = std::max(c, limit);
  return std::nullopt;
}

ArcReader::After ArcReader::after_block(std::size_t at) {
  std::size_t i = at;
  bool newline = false;
  while ((i < buf_.size() || ensure(i - pos_ + 1)) && (buf_[i] == '\n' || buf_[i] == '\r')) {
    newline = newline || buf_[i] == '\n';
    ++i;
  }
  if (i >= buf_.size()) return After::kEnd;
  std::size_t nl;
  while ((nl = std::string_view(buf_).substr(0, i + kMaxArcHeaderLine + 1).find('\n', i)) ==
             std::string_view::npos &&
         buf_.size() - i <= kMaxArcHeaderLine && fill()) {
  }
  const std::string_view line =
      std::string_view(buf_).substr(i, nl == std::string_view::npos ? kMaxArcHeaderLine : nl - i);
  if (parse_arc_header(line)) return After::kHeader;
  return newline ? After::kJunkAfterNewline : After::kJunk;
}

std::optional<WarcRecord> ArcReader::next() {
  if (!error_.empty()) return std::nullopt;
  forget_read();
  // Records are separated by a newline (blank lines are tolerated).
  while (ensure(1) && (buf_[pos_] == '\n' || buf_[pos_] == '\r')) ++pos_;
  if (!error_.empty() || pos_ == buf_.size()) return std::nullopt;
  WarcRecord record;
  record.offset = base_ + pos_;
  std::size_t nl;
  while ((nl = std::string_view(buf_).substr(0, pos_ + kMaxArcHeaderLine + 1).find('\n', pos_)) ==
             std::string_view::npos &&
         buf_.size() - pos_ <= kMaxArcHeaderLine && fill()) {
  }
  if (!error_.empty()) return std::nullopt;
  if (nl == std::string_view::npos) {
    const std::string head = printable(std::string_view(buf_).substr(pos_, 60));
    if (buf_.size() - pos_ <= kMaxArcHeaderLine) {
      pos_ = buf_.size();
      return dead_letter(std::move(record), "arc_truncated",
                         "the file ends inside a header line: '" + head + "'");
    }
    return skip_to_next_record(
        std::move(record), "arc_bad_header",
        "a line of more than 16 KiB where a header line should be: '" + head + "'", pos_ + 1);
  }
  const std::string_view line = std::string_view(buf_).substr(pos_, nl - pos_);
  const auto header = parse_arc_header(line);
  if (!header) {
    return skip_to_next_record(
        std::move(record), "arc_bad_header",
        "not an ARC header line (URL IP date type length): '" + printable(trim(line), 60) + "'",
        nl + 1);
  }
  pos_ = nl + 1;
  // Copies: reading the record's bytes may move the buffer the fields point into.
  const std::string date(header->date);
  const std::string arc_type = extractors::ascii_lower(header->type);
  const std::uint64_t length = header->length;
  record.type = "arc";
  record.parsed.input.url = header->url;
  // Larger than any page may be, with room for its HTTP head: read through, not held.
  if (length > options_.max_html_bytes + (1 << 20)) {
    return read_skipped_block(std::move(record), length);
  }
  return read_held_block(std::move(record), date, arc_type, length);
}

namespace {

std::string length_text(std::uint64_t length) { return "Archive-length " + std::to_string(length); }

std::string wrong_length(std::uint64_t length) {
  return length_text(length) +
         ": its block is followed neither by the next header line nor by a newline (or by one "
         "and lines that are no header, while a header line starts inside it): the length is "
         "wrong";
}

}  // namespace

std::optional<WarcRecord> ArcReader::read_skipped_block(WarcRecord record, std::uint64_t length) {
  const Skipped skipped = skip_block(length);
  if (!error_.empty()) return std::nullopt;
  const auto look_from = static_cast<std::size_t>(skipped.look_from - base_);
  if (skipped.held_too_much) {
    return skip_to_next_record(std::move(record), "arc_bad_length",
                               length_text(length) + ": a header line at offset " +
                                   std::to_string(*skipped.header) +
                                   " lies inside its block, which goes on for more than " +
                                   std::to_string(options_.max_held_bytes) + " bytes after it",
                               look_from);
  }
  if (skipped.bytes < length) {
    return skip_to_next_record(std::move(record), "arc_truncated",
                               "the file ends " + std::to_string(skipped.bytes) +
                                   " bytes into a record of " + std::to_string(length),
                               look_from);
  }
  const After after = after_block(pos_);
  if (!error_.empty()) return std::nullopt;
  if (after == After::kJunk || (after == After::kJunkAfterNewline && skipped.header)) {
    return skip_to_next_record(std::move(record), "arc_bad_length", wrong_length(length),
                               look_from);
  }
  if (record.parsed.input.url.starts_with("filedesc:")) {
    return as_skipped(std::move(record), "filedesc");
  }
  return dead_letter(std::move(record), "too_large",
                     length_text(length) + ": larger than extract.max_html_bytes (" +
                         std::to_string(options_.max_html_bytes) + "); skipped without being held");
}

std::optional<WarcRecord> ArcReader::read_held_block(WarcRecord record, const std::string& date,
                                                     const std::string& arc_type,
                                                     std::uint64_t length) {
  const std::size_t block_start = pos_;
  if (!ensure(static_cast<std::size_t>(length))) {
    if (!error_.empty()) return std::nullopt;
    return skip_to_next_record(std::move(record), "arc_truncated",
                               "the file ends " + std::to_string(buf_.size() - block_start) +
                                   " bytes into a record of " + std::to_string(length),
                               block_start);
  }
  const std::size_t block_end = block_start + static_cast<std::size_t>(length);
  const After after = after_block(block_end);
  if (!error_.empty()) return std::nullopt;
  std::size_t from = block_start;
  if (after == After::kJunk ||
      (after == After::kJunkAfterNewline && find_header(&from, block_end))) {
    return skip_to_next_record(std::move(record), "arc_bad_length", wrong_length(length),
                               block_start);
  }
  pos_ = block_end;
  return classify(std::move(record), date, arc_type,
                  std::string_view(buf_).substr(block_start, static_cast<std::size_t>(length)));
}

WarcRecord ArcReader::classify(WarcRecord record, std::string_view date, std::string_view arc_type,
                               std::string_view block) {
  auto skip = [&](std::string reason) { return as_skipped(std::move(record), std::move(reason)); };
  const std::string& url = record.parsed.input.url;
  if (url.starts_with("filedesc:")) return skip("filedesc");
  const std::string scheme = extractors::url_scheme_of(url);
  if (scheme != "http" && scheme != "https") return skip("not_http");  // dns:, ftp:, ...
  HttpHead head;
  std::string_view payload = block;
  if (block.starts_with("HTTP/")) {
    auto response = read_http_response(block);
    if (!response) return not_a_page(std::move(record), std::move(response.error()));
    head = std::move(response->head);
    payload = response->payload;
  } else {
    head.content_type = std::string(arc_type);  // the content as it was, without its head
  }
  const std::string_view declared =
      !head.content_type.empty() ? std::string_view(head.content_type) : arc_type;
  if (!declared.empty() && declared != "no-type" && declared != "unk" && !is_html_type(declared)) {
    return skip("not_html");
  }
  const std::size_t limit = options_.max_html_bytes;
  if (payload.size() > limit) {
    return dead_letter(std::move(record), "too_large",
                       "the payload has " + std::to_string(payload.size()) +
                           " bytes: larger than extract.max_html_bytes (" + std::to_string(limit) +
                           ")");
  }
  auto decoded = decode_payload(payload, head, limit);
  if (!decoded) return not_a_page(std::move(record), std::move(decoded.error()));
  if (!is_html_type(declared) && !sniffs_as_html(*decoded)) return skip("not_html");
  Input& in = record.parsed.input;
  // Archive-date: YYYYMMDDhhmmss (UTC); shorter ones name a coarser time.
  if (!date.empty()) {
    std::string digits(date);
    const bool all_digits =
        std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (all_digits && digits.size() >= 8 && digits.size() <= 14) {
      digits.resize(14, '0');
      in.fetched_at = extractors::parse_iso8601(
          digits.substr(0, 4) + "-" + digits.substr(4, 2) + "-" + digits.substr(6, 2) + "T" +
          digits.substr(8, 2) + ":" + digits.substr(10, 2) + ":" + digits.substr(12, 2) + "Z");
    }
    if (!in.fetched_at) {
      return dead_letter(std::move(record), "invalid_timestamp",
                         "Archive-date is not YYYYMMDDhhmmss: '" + printable(date) + "'");
    }
  }
  return as_page(std::move(record), std::move(head.content_type), std::move(*decoded));
}

}  // namespace newsflow::daemon
