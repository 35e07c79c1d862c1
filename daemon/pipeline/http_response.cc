#include "daemon/pipeline/http_response.h"

#include <brotli/decode.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdint>
#include <optional>
#include <vector>

#include "extractors/text.h"

namespace newsflow::daemon {
namespace {

constexpr std::size_t kChunk = std::size_t{1} << 16;  // decoded at a time

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
Decoded undo_codings(std::string_view payload, const HttpHead& head, std::size_t limit) {
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

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::string printable(std::string_view s, std::size_t max) {
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

tl::expected<HttpResponse, NotAPage> read_http_response(std::string_view block) {
  auto head = parse_http_head(block);
  if (!head) return tl::unexpected(NotAPage{true, "http_bad_header", std::move(head.error())});
  if (head->status / 100 != 2) {
    return tl::unexpected(NotAPage{false, "http_" + std::to_string(head->status / 100) + "xx", {}});
  }
  const std::size_t length = head->length;
  return HttpResponse{std::move(*head), block.substr(length)};
}

tl::expected<std::string, NotAPage> decode_payload(std::string_view payload, const HttpHead& head,
                                                   std::size_t limit) {
  auto decoded = undo_codings(payload, head, limit);
  if (!decoded) {
    return tl::unexpected(
        NotAPage{true, std::move(decoded.error().reason), std::move(decoded.error().detail)});
  }
  return std::move(*decoded);
}

}  // namespace newsflow::daemon
