// libFuzzer target: one replay input line through parsing and the whole pipeline (extraction,
// dedup window, stories); the pipeline persists across inputs, as in a long replay.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "daemon/pipeline/input.h"
#include "daemon/pipeline/pipeline.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace newsflow;
  static const config::Config config = [] {
    config::Config c;
    c.extract.max_nesting_depth = 500;
    return c;
  }();
  static daemon::Pipeline pipeline(config, nullptr);
  auto parsed =
      daemon::parse_replay_line(std::string_view(reinterpret_cast<const char*>(data), size));
  if (parsed.failure) return 0;
  auto out = pipeline.process(parsed.input);
  if (out) {
    for (const auto& o : *out) (void)daemon::article_json(o);
  }
  return 0;
}
