#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <tl/expected.hpp>

namespace newsflow::daemon {

// The HTTP response an archive record holds, as the WARC and ARC readers both take it (warc.h):
// its head read, the status judged, the payload's codings undone. Helpers of the readers only.

/// An HTTP header block, at most.
inline constexpr std::size_t kMaxHttpHead = std::size_t{1} << 16;

/// `s` without the spaces and tabs around it (and a trailing CR).
std::string_view trim(std::string_view s);

/// At most `max` bytes of `s` for a dead letter's detail, control and non-ASCII bytes as \xNN.
std::string printable(std::string_view s, std::size_t max = 40);

/// The media type of a Content-Type value, lower case, without parameters.
std::string media_type(std::string_view content_type);

/// Whether a Content-Type value names HTML (`text/html`, `application/xhtml+xml`).
bool is_html_type(std::string_view content_type);

/// Whether a payload without a declared type starts as an HTML document does.
bool sniffs_as_html(std::string_view s);

/// Why a record's payload is no page: skipped (`reason` a short label, no detail) or a dead
/// letter (`reason` and `detail`).
struct NotAPage {
  bool dead_letter = false;
  std::string reason;
  std::string detail;
};

/// The HTTP response header at the start of a record's block.
struct HttpHead {
  int status = 0;
  std::string content_type;
  std::string content_encoding;   ///< every Content-Encoding field, joined with ","
  std::string transfer_encoding;  ///< every Transfer-Encoding field, joined with ","
  std::size_t length = 0;         ///< of the header block with its blank line
};

/// A 2xx HTTP response: its head, and what follows it (a view into the block).
struct HttpResponse {
  HttpHead head;
  std::string_view payload;
};

/// The HTTP response at the start of `block`: a head that is not one is a dead letter
/// (`http_bad_header`), a status other than 2xx is skipped (`http_3xx`, ...).
tl::expected<HttpResponse, NotAPage> read_http_response(std::string_view block);

/// The payload with the head's transfer and content codings undone, last applied first
/// (chunked; gzip, deflate, br): a dead letter when they cannot be (`http_bad_chunking`,
/// `http_bad_encoding`, `http_unsupported_encoding`) or when it decodes to more than `limit`
/// bytes (`too_large`).
tl::expected<std::string, NotAPage> decode_payload(std::string_view payload, const HttpHead& head,
                                                   std::size_t limit);

}  // namespace newsflow::daemon
