// libFuzzer target: any bytes as a robots.txt, read for the crawler, then asked about paths
// taken from the same bytes (its last line, and a few of its own patterns' shapes). Reading and
// every decision are bounded whatever the file says (robots.h).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "daemon/pipeline/robots.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using newsflow::daemon::RobotsRules;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const RobotsRules rules = RobotsRules::parse(bytes, "newsflow");
  const std::size_t nl = bytes.rfind('\n');
  const std::string tail(nl == std::string_view::npos ? bytes : bytes.substr(nl + 1));
  for (const std::string& path :
       {"/" + tail, tail, std::string("/"), "/a" + tail + "$", "/" + tail + "?" + tail}) {
    (void)rules.allows(path);
  }
  if (rules.crawl_delay() && *rules.crawl_delay() < 0) __builtin_trap();
  return 0;
}
