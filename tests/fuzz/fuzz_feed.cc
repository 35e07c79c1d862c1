// libFuzzer target: raw bytes as a feed (RSS, Atom, RDF, JSON Feed) through decoding and parsing.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "extractors/charset.h"
#include "extractors/feed.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace newsflow::extractors;
  auto decoded = decode_to_utf8(std::string_view(reinterpret_cast<const char*>(data), size), "");
  if (!decoded) return 0;
  auto feed = parse_feed(decoded->text, "https://fuzz.test/feed");
  if (feed) {
    for (const auto& item : feed->items) {
      (void)html_fragment_text(item.content_html);
      (void)html_fragment_text(item.summary_html);
    }
  }
  return 0;
}
