#include "daemon/pipeline/warc.h"

#include <brotli/decode.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstring>
#include <vector>

#include "daemon/pipeline/input_file.h"
#include "extractors/text.h"
#include "extractors/timestamp.h"
#include "extractors/urls.h"

namespace newsflow::daemon {
namespace {

constexpr std::size_t kChunk = std::size_t{1} << 16;        // read from the file at a time
constexpr std::size_t kMaxHeader = std::size_t{1} << 16;    // a WARC header block, at most
constexpr std::size_t kMaxHttpHead = std::size_t{1} << 16;  // an HTTP header block, at most

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// At most `max` bytes of `s` for a dead letter's detail, control and non-ASCII bytes as \xNN.
std::string printable(std::string_view s, std::size_t max = 40) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < s.size() && i < max; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (s.size() > max) out += "...";
  return out;
}

// The end of the first blank line at or after `from` ("\n\n" or "\n\r\n"): the index after it.
std::optional<std::size_t> blank_line_end(std::string_view s, std::size_t from) {
  for (std::size_t i = s.find('\n', from); i != std::string_view::npos; i = s.find('\n', i + 1)) {
    if (i + 1 < s.size() && s[i + 1] == '\n') return i + 2;
    if (i + 2 < s.size() && s[i + 1] == '\r' && s[i + 2] == '\n') return i + 3;
  }
  return std::nullopt;
}

// Calls fn(line) for every line of `block` (without "\r\n"), header folding undone: a line that
// starts with a space or tab continues the one before.
template <typename F>
void unfold_lines(std::string_view block, F fn) {
  std::string line;
  bool have = false;
  while (!block.empty()) {
    const auto nl = block.find('\n');
    std::string_view raw = block.substr(0, nl);
    block.remove_prefix(nl == std::string_view::npos ? block.size() : nl + 1);
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    if (raw.empty()) continue;
    if ((raw.front() == ' ' || raw.front() == '\t') && have) {
      line += ' ';
      line += trim(raw);
      continue;
    }
    if (have) fn(std::string_view(line));
    line.assign(raw);
    have = true;
  }
  if (have) fn(std::string_view(line));
}

// The media type of a Content-Type value, lower case, without parameters.
std::string media_type(std::string_view content_type) {
  return extractors::ascii_lower(trim(content_type.substr(0, content_type.find(';'))));
}

bool is_html_type(std::string_view content_type) {
  const std::string t = media_type(content_type);
  return t == "text/html" || t == "application/xhtml+xml";
}

// A payload without a declared type that starts as an HTML document does.
bool sniffs_as_html(std::string_view s) {
  if (s.starts_with("\xEF\xBB\xBF")) s.remove_prefix(3);
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r' ||
                        s.front() == '\n' || s.front() == '\f')) {
    s.remove_prefix(1);
  }
  const std::string head = extractors::ascii_lower(s.substr(0, 14));
  return head.starts_with("<!doctype html") || head.starts_with("<html") ||
         head.starts_with("<head") || head.starts_with("<body");
}

// The tokens of a comma-separated header value, lower case, empty ones dropped.
std::vector<std::string> token_list(std::string_view value) {
  std::vector<std::string> out;
  while (!value.empty()) {
    const auto comma = value.find(',');
    const auto token = trim(value.substr(0, comma));
    if (!token.empty()) out.push_back(extractors::ascii_lower(token));
    value.remove_prefix(comma == std::string_view::npos ? value.size() : comma + 1);
  }
  return out;
}

// The HTTP response header at the start of a `response` record's block.
struct HttpHead {
  int status = 0;
  std::string content_type;
  std::string content_encoding;   // every Content-Encoding field, joined with ","
  std::string transfer_encoding;  // every Transfer-Encoding field, joined with ","
  std::size_t length = 0;         // of the header block with its blank line
};

tl::expected<HttpHead, std::string> parse_http_head(std::string_view block) {
  HttpHead head;
  const auto end = blank_line_end(block.substr(0, kMaxHttpHead), 0);
  if (!end) {
    return tl::unexpected(block.size() > kMaxHttpHead
                              ? std::string("HTTP header is longer than 64 KiB")
                              : std::string("no blank line ends the HTTP header"));
  }
  head.length = *end;
  const auto nl = block.find('\n');
  const std::string_view status_line = trim(block.substr(0, nl));
  // HTTP/1.1 200 OK, HTTP/1.0 404, HTTP/2 200
  std::size_t i = 5;
  while (i < status_line.size() &&
         (std::isdigit(static_cast<unsigned char>(status_line[i])) || status_line[i] == '.')) {
    ++i;
  }
  const bool ok = i > 5 && i + 4 <= status_line.size() && status_line[i] == ' ' &&
                  std::isdigit(static_cast<unsigned char>(status_line[i + 1])) &&
                  std::isdigit(static_cast<unsigned char>(status_line[i + 2])) &&
                  std::isdigit(static_cast<unsigned char>(status_line[i + 3])) &&
                  (i + 4 == status_line.size() || status_line[i + 4] == ' ');
  if (!ok) return tl::unexpected("bad HTTP status line '" + printable(status_line) + "'");
  head.status = (status_line[i + 1] - '0') * 100 + (status_line[i + 2] - '0') * 10 +
                (status_line[i + 3] - '0');
  auto join = [](std::string& to, std::string_view v) {
    if (!to.empty()) to += ',';
    to += v;
  };
  // Lines without a colon are ignored, as browsers do.
  unfold_lines(block.substr(nl + 1, *end - nl - 1), [&](std::string_view line) {
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) return;
    const std::string name = extractors::ascii_lower(trim(line.substr(0, colon)));
    const std::string_view value = trim(line.substr(colon + 1));
    if (name == "content-type") head.content_type = value;
    if (name == "content-encoding") join(head.content_encoding, value);
    if (name == "transfer-encoding") join(head.transfer_encoding, value);
  });
  return head;
}

// A failure of undoing the payload's codings.
struct CodingError {
  std::string reason;
  std::string detail;
};
using Decoded = tl::expected<std::string, CodingError>;

// The HTTP response at the start of `block` (WARC response records, ARC records): its head and,
// in `payload`, what follows it. `skip` names a status other than 2xx (`http_3xx`, ...), `bad`
// says why the head is not one.
struct HttpResponse {
  HttpHead head;
  std::string_view payload;
  std::string skip;
  std::string bad;
};

HttpResponse read_http_response(std::string_view block) {
  HttpResponse r;
  auto parsed = parse_http_head(block);
  if (!parsed) {
    r.bad = parsed.error();
    return r;
  }
  r.head = std::move(*parsed);
  if (r.head.status / 100 != 2) {
    r.skip = "http_" + std::to_string(r.head.status / 100) + "xx";
    return r;
  }
  r.payload = block.substr(r.head.length);
  return r;
}

CodingError too_large(std::size_t limit) {
  return {"too_large",
          "decoded payload is larger than extract.max_html_bytes (" + std::to_string(limit) + ")"};
}

// Undoes chunked transfer coding (RFC 9112 section 7.1); trailer fields are dropped.
Decoded dechunk(std::string_view body, std::size_t limit) {
  std::string out;
  auto bad = [](std::string detail) {
    return tl::unexpected(CodingError{"http_bad_chunking", std::move(detail)});
  };
  std::size_t pos = 0;
  while (true) {
    const auto nl = body.find('\n', pos);
    if (nl == std::string_view::npos) {
      return bad(pos == body.size() ? "chunked body ends without its last chunk"
                                    : "chunked body ends inside a chunk-size line");
    }
    const std::string_view line = body.substr(pos, nl - pos);
    const std::string_view size_text = trim(line.substr(0, line.find(';')));
    std::uint64_t size = 0;
    bool valid = !size_text.empty() && size_text.size() <= 15;
    for (const char c : size_text) {
      const int digit = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                        : (c >= 'a' && c <= 'f')                    ? c - 'a' + 10
                        : (c >= 'A' && c <= 'F')                    ? c - 'A' + 10
                                                                    : -1;
      if (digit < 0) valid = false;
      size = size * 16 + static_cast<std::uint64_t>(std::max(digit, 0));
    }
    if (!valid) {
      return bad("bad chunk size '" + printable(trim(line)) + "' at byte " + std::to_string(pos) +
                 " of the body");
    }
    pos = nl + 1;
    if (size == 0) return out;  // the last chunk; trailer fields, if any, are not needed
    if (size > body.size() - pos) {
      return bad("chunk of " + std::to_string(size) + " bytes at byte " + std::to_string(pos) +
                 " of the body runs past its end (" + std::to_string(body.size() - pos) +
                 " bytes left)");
    }
    if (out.size() + size > limit) return tl::unexpected(too_large(limit));
    out.append(body.substr(pos, size));
    pos += size;
    if (body.substr(pos, 2) == "\r\n") {
      pos += 2;
    } else if (body.substr(pos, 1) == "\n") {
      pos += 1;
    } else {
      return bad("chunk of " + std::to_string(size) + " bytes is not followed by CRLF");
    }
  }
}

// zlib's inflate: gzip (window_bits 31, every member), zlib (15) or raw deflate (-15).
Decoded zlib_decode(std::string_view in, int window_bits, std::size_t limit, const char* name,
                    bool* header_error = nullptr) {
  if (in.size() > UINT_MAX) return tl::unexpected(too_large(limit));
  z_stream zs{};
  if (inflateInit2(&zs, window_bits) != Z_OK) {
    return tl::unexpected(CodingError{"internal_error", "zlib cannot start"});
  }
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  std::string out;
  std::vector<char> buf(kChunk);
  std::optional<CodingError> failure;
  while (true) {
    zs.next_out = reinterpret_cast<Bytef*>(buf.data());
    zs.avail_out = static_cast<uInt>(buf.size());
    const int rc = inflate(&zs, Z_NO_FLUSH);
    const std::size_t produced = buf.size() - zs.avail_out;
    if (out.size() + produced > limit) {
      failure = too_large(limit);
      break;
    }
    out.append(buf.data(), produced);
    if (rc == Z_STREAM_END) {
      // Another gzip member may follow; anything else after the end is ignored, as browsers do.
      if (window_bits > 15 && zs.avail_in >= 2 && zs.next_in[0] == 0x1f && zs.next_in[1] == 0x8b) {
        inflateReset(&zs);
        continue;
      }
      break;
    }
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR && zs.avail_in == 0) {
      failure = CodingError{"http_bad_encoding", std::string(name) + " body is truncated"};
    } else {
      if (header_error && rc == Z_DATA_ERROR && zs.total_out == 0) *header_error = true;
      failure = CodingError{"http_bad_encoding", std::string(name) + " body is corrupt (" +
                                                     (zs.msg ? zs.msg : "zlib error") + ")"};
    }
    break;
  }
  inflateEnd(&zs);
  if (failure) return tl::unexpected(*failure);
  return out;
}

Decoded brotli_decode(std::string_view in, std::size_t limit) {
  BrotliDecoderState* state = BrotliDecoderCreateInstance(nullptr, nullptr, nullptr);
  if (!state) return tl::unexpected(CodingError{"internal_error", "brotli cannot start"});
  std::size_t avail_in = in.size();
  const auto* next_in = reinterpret_cast<const std::uint8_t*>(in.data());
  std::string out;
  std::vector<std::uint8_t> buf(kChunk);
  std::optional<CodingError> failure;
  while (true) {
    std::size_t avail_out = buf.size();
    std::uint8_t* next_out = buf.data();
    const auto rc =
        BrotliDecoderDecompressStream(state, &avail_in, &next_in, &avail_out, &next_out, nullptr);
    const std::size_t produced = buf.size() - avail_out;
    if (out.size() + produced > limit) {
      failure = too_large(limit);
      break;
    }
    out.append(reinterpret_cast<const char*>(buf.data()), produced);
    if (rc == BROTLI_DECODER_RESULT_SUCCESS) break;
    if (rc == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT) continue;
    failure =
        CodingError{"http_bad_encoding",
                    rc == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT
                        ? std::string("br body is truncated")
                        : std::string("br body is corrupt (") +
                              BrotliDecoderErrorString(BrotliDecoderGetErrorCode(state)) + ")"};
    break;
  }
  BrotliDecoderDestroyInstance(state);
  if (failure) return tl::unexpected(*failure);
  return out;
}

// The payload with its transfer and content codings undone, last applied first.
Decoded decode_payload(std::string_view payload, const HttpHead& head, std::size_t limit) {
  std::vector<std::string> codings = token_list(head.content_encoding);
  std::vector<std::string> transfer = token_list(head.transfer_encoding);
  std::string data;
  bool chunked = false;
  if (!transfer.empty() && transfer.back() == "chunked") {
    transfer.pop_back();
    chunked = true;
  }
  codings.insert(codings.end(), transfer.begin(), transfer.end());
  if (chunked) {
    auto d = dechunk(payload, limit);
    if (!d) return d;
    data = std::move(*d);
  } else {
    data.assign(payload);
  }
  for (auto it = codings.rbegin(); it != codings.rend(); ++it) {
    const std::string& c = *it;
    Decoded d;
    if (c == "identity") {
      continue;
    } else if (c == "gzip" || c == "x-gzip") {
      d = zlib_decode(data, 15 + 16, limit, "gzip");
    } else if (c == "deflate") {
      // "deflate" is the zlib format, but some servers send raw deflate: browsers take both.
      bool header_error = false;
      d = zlib_decode(data, 15, limit, "deflate", &header_error);
      if (!d && header_error) d = zlib_decode(data, -15, limit, "deflate");
    } else if (c == "br") {
      d = brotli_decode(data, limit);
    } else {
      return tl::unexpected(CodingError{"http_unsupported_encoding",
                                        "content coding '" + printable(c) + "' is not supported"});
    }
    if (!d) return d;
    data = std::move(*d);
  }
  return data;
}

}  // namespace

bool is_warc(std::string_view first_bytes) { return first_bytes.starts_with("WARC/1."); }

// ---------------------------------------------------------------------------------------------
// What both readers do alike: the buffer, and going on after a record that cannot be read.

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

// ---------------------------------------------------------------------------------------------
// WARC.

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
  while (error_.empty()) {
    forget_read();
    if (resync_) {
      resync_ = false;
      resync(pos_);
    }
    // Blank lines between records are tolerated.
    while (ensure(1) && (buf_[pos_] == '\r' || buf_[pos_] == '\n')) ++pos_;
    if (!error_.empty()) break;
    WarcRecord record;
    record.offset = base_ + pos_;
    if (pos_ == buf_.size()) {
      if (!file_.damage()) break;  // the end
      record.member_offset = file_.damage()->member_offset;
      return damaged_segment(std::move(record), false);
    }
    record.member_offset = file_.member_offset(record.offset);

    // The version line, then the named fields up to a blank line.
    ensure(12);
    std::size_t fields_start = 0;
    if (!version_line_at(pos_, &fields_start)) {
      if (!error_.empty()) break;
      if (buf_.size() - pos_ < 12 && file_.damage())
        return damaged_segment(std::move(record), true);
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
    const std::size_t block_start = header.length;  // from pos_
    const std::uint64_t length = header.content_length;
    const std::string length_text = "Content-Length " + std::to_string(length);
    const std::string wrong_length =
        "no blank line after the " + length_text +
        " bytes of its block: the length is wrong or the record is corrupt";
    if (length <= options_.max_html_bytes + kMaxHttpHead) {
      const auto need = block_start + static_cast<std::size_t>(length);
      ensure(need + 4);
      if (!error_.empty()) break;
      if (buf_.size() - pos_ < need) {
        if (file_.damage()) return damaged_segment(std::move(record), true);
        const std::size_t have = buf_.size() - pos_ - block_start;
        return skip_to_next_record(std::move(record), "warc_truncated",
                                   length_text + " runs past the end of the file (" +
                                       std::to_string(have) + " bytes of the block there)",
                                   pos_ + block_start);
      }
      const auto trailer = trailer_length(pos_ + need);
      if (!trailer) {
        return skip_to_next_record(std::move(record), "warc_bad_length", wrong_length,
                                   pos_ + block_start);
      }
      const std::string_view block =
          std::string_view(buf_).substr(pos_ + block_start, static_cast<std::size_t>(length));
      WarcRecord out = classify(std::move(record), header, block, true);
      pos_ += need + *trailer;
      return out;
    }
    ensure(block_start + kMaxHttpHead);
    if (!error_.empty()) break;
    const std::string_view prefix = std::string_view(buf_).substr(pos_ + block_start, kMaxHttpHead);
    WarcRecord out = classify(std::move(record), header, prefix, false);
    pos_ += block_start;
    const Skipped skipped = skip_block(length);
    if (!error_.empty()) break;
    const auto look_from = static_cast<std::size_t>(skipped.look_from - base_);
    if (skipped.held_too_much) {
      return skip_to_next_record(std::move(out), "warc_bad_length",
                                 length_text + ": a record header at offset " +
                                     std::to_string(*skipped.header) +
                                     " lies inside its block, which goes on for more than " +
                                     std::to_string(options_.max_held_bytes) + " bytes after it",
                                 look_from);
    }
    if (skipped.bytes < length) {
      if (file_.damage()) return damaged_segment(std::move(out), true);
      return skip_to_next_record(std::move(out), "warc_truncated",
                                 length_text + " runs past the end of the file (" +
                                     std::to_string(skipped.bytes) +
                                     " bytes of the block there, skipped)",
                                 look_from);
    }
    ensure(4);
    const auto trailer = trailer_length(pos_);
    if (!trailer)
      return skip_to_next_record(std::move(out), "warc_bad_length", wrong_length, look_from);
    pos_ += *trailer;
    return out;
  }
  return std::nullopt;
}

WarcRecord WarcReader::classify(WarcRecord record, const Header& header, std::string_view block,
                                bool whole) {
  const std::string type = extractors::ascii_lower(header.type);
  auto skip = [&](std::string reason) {
    record.outcome = WarcRecord::Outcome::kSkipped;
    record.skip_reason = std::move(reason);
    return std::move(record);
  };
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
    HttpResponse response = read_http_response(block);
    if (!response.bad.empty())
      return dead_letter(std::move(record), "http_bad_header", response.bad);
    if (!response.skip.empty()) return skip(std::move(response.skip));
    head = std::move(response.head);
    payload = response.payload;
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
  if (!decoded) {
    return dead_letter(std::move(record), decoded.error().reason, decoded.error().detail);
  }
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
  in.kind = BodyKind::kHtmlBytes;
  in.content_type = head.content_type;
  in.body = std::move(*decoded);
  record.outcome = WarcRecord::Outcome::kDocument;
  return record;
}

// ---------------------------------------------------------------------------------------------
// ARC (the Internet Archive's format before WARC).

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
  while (error_.empty()) {
    forget_read();
    // Records are separated by a newline (blank lines are tolerated).
    while (ensure(1) && (buf_[pos_] == '\n' || buf_[pos_] == '\r')) ++pos_;
    if (!error_.empty() || pos_ == buf_.size()) break;
    WarcRecord record;
    record.offset = base_ + pos_;
    std::size_t nl;
    while ((nl = std::string_view(buf_).substr(0, pos_ + kMaxArcHeaderLine + 1).find('\n', pos_)) ==
               std::string_view::npos &&
           buf_.size() - pos_ <= kMaxArcHeaderLine && fill()) {
    }
    if (!error_.empty()) break;
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
    const std::string url(header->url);
    const std::string date(header->date);
    const std::string arc_type = extractors::ascii_lower(header->type);
    const std::uint64_t length = header->length;
    const std::string length_text = "Archive-length " + std::to_string(length);
    const std::string wrong_length =
        length_text +
        ": its block is followed neither by the next header line nor by a newline (or by one "
        "and lines that are no header, while a header line starts inside it): the length is "
        "wrong";
    record.type = "arc";
    record.parsed.input.url = url;
    const std::size_t limit = options_.max_html_bytes;
    // Larger than any page may be, with room for its HTTP head: read through, not held.
    if (length > limit + (1 << 20)) {
      const Skipped skipped = skip_block(length);
      if (!error_.empty()) break;
      const auto look_from = static_cast<std::size_t>(skipped.look_from - base_);
      if (skipped.held_too_much) {
        return skip_to_next_record(std::move(record), "arc_bad_length",
                                   length_text + ": a header line at offset " +
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
      if (!error_.empty()) break;
      if (after == After::kJunk || (after == After::kJunkAfterNewline && skipped.header)) {
        return skip_to_next_record(std::move(record), "arc_bad_length", wrong_length, look_from);
      }
      if (url.starts_with("filedesc:")) {
        record.outcome = WarcRecord::Outcome::kSkipped;
        record.skip_reason = "filedesc";
        return record;
      }
      return dead_letter(std::move(record), "too_large",
                         length_text + ": larger than extract.max_html_bytes (" +
                             std::to_string(limit) + "); skipped without being held");
    }
    const std::size_t block_start = pos_;
    if (!ensure(static_cast<std::size_t>(length))) {
      if (!error_.empty()) break;
      return skip_to_next_record(std::move(record), "arc_truncated",
                                 "the file ends " + std::to_string(buf_.size() - block_start) +
                                     " bytes into a record of " + std::to_string(length),
                                 block_start);
    }
    const std::size_t block_end = block_start + static_cast<std::size_t>(length);
    const After after = after_block(block_end);
    if (!error_.empty()) break;
    std::size_t from = block_start;
    if (after == After::kJunk ||
        (after == After::kJunkAfterNewline && find_header(&from, block_end))) {
      return skip_to_next_record(std::move(record), "arc_bad_length", wrong_length, block_start);
    }
    pos_ = block_end;
    return classify(std::move(record), date, arc_type,
                    std::string_view(buf_).substr(block_start, static_cast<std::size_t>(length)));
  }
  return std::nullopt;
}

WarcRecord ArcReader::classify(WarcRecord record, std::string_view date, std::string_view arc_type,
                               std::string_view block) {
  auto skip = [&](std::string reason) {
    record.outcome = WarcRecord::Outcome::kSkipped;
    record.skip_reason = std::move(reason);
    return std::move(record);
  };
  const std::string& url = record.parsed.input.url;
  if (url.starts_with("filedesc:")) return skip("filedesc");
  const std::string scheme = extractors::url_scheme_of(url);
  if (scheme != "http" && scheme != "https") return skip("not_http");  // dns:, ftp:, ...
  HttpHead head;
  std::string_view payload = block;
  if (block.starts_with("HTTP/")) {
    HttpResponse response = read_http_response(block);
    if (!response.bad.empty())
      return dead_letter(std::move(record), "http_bad_header", response.bad);
    if (!response.skip.empty()) return skip(std::move(response.skip));
    head = std::move(response.head);
    payload = response.payload;
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
  if (!decoded) {
    return dead_letter(std::move(record), decoded.error().reason, decoded.error().detail);
  }
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
  in.kind = BodyKind::kHtmlBytes;
  in.content_type = head.content_type;
  in.body = std::move(*decoded);
  record.outcome = WarcRecord::Outcome::kDocument;
  return record;
}

}  // namespace newsflow::daemon
