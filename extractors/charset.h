#pragma once

#include <string>
#include <string_view>

#include "extractors/error.h"
#include "tl/expected.hpp"

namespace newsflow::extractors {

/// The outcome of decoding raw document bytes.
struct Decoded {
  std::string text;     ///< UTF-8
  std::string charset;  ///< the charset the bytes were read as, lowercase, e.g. "windows-1252"
  std::string source;   ///< where it came from: "bom", "content_type", "meta", "utf8", "detected"
  /// A problem worth a warning, e.g. "declared charset 'bogus' is unknown; read as utf-8", or
  /// "charset not declared; read as windows-1252 by detection"; empty when there is none.
  std::string warning;
};

/// Extracts the `charset=` parameter of an HTTP Content-Type value, lowercased; empty if none.
std::string charset_from_content_type(std::string_view content_type);

/// Finds the charset an HTML document declares in its first 4 KiB (`<meta charset>` or
/// `<meta http-equiv="Content-Type" content="...charset=...">`), lowercased; empty if none.
std::string charset_from_meta(std::string_view html_head);

/// The `encoding` of an XML declaration (`<?xml version="1.0" encoding="..."?>`) at the start of
/// the bytes, lowercased; empty if none.
std::string charset_from_xml_declaration(std::string_view head);

/// Decodes raw HTML/XML bytes to UTF-8. Precedence: byte order mark, then the HTTP content type,
/// then the XML declaration, then `<meta charset>`, then strict UTF-8, then statistical detection
/// (uchardet). Labels follow WHATWG: `latin1`/`iso-8859-1`/`ascii` mean windows-1252. Bytes that do
/// not convert become U+FFFD. Fails only when no converter exists for the charset found.
tl::expected<Decoded, ExtractError> decode_to_utf8(std::string_view bytes,
                                                   std::string_view content_type);

}  // namespace newsflow::extractors
