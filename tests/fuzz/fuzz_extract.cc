// libFuzzer target: raw bytes as a crawled page through charset detection and both extractors.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "extractors/charset.h"
#include "extractors/html.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace newsflow::extractors;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto decoded = decode_to_utf8(bytes, size > 0 && data[0] % 2 ? "text/html; charset=utf-16" : "");
  if (!decoded) return 0;
  ExtractOptions options;
  options.max_nesting_depth = 500;
  (void)extract_html(decoded->text, "https://fuzz.test/a/b?c", options);
  options.method = ExtractMethod::kFinn;
  (void)extract_html(decoded->text, "https://fuzz.test/", options);
  return 0;
}
