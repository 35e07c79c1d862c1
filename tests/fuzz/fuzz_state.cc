// libFuzzer target: bytes as a state changelog record (the `newsflow.state` topic is input to a
// restart): decoded, re-encoded identically, and applied to a pipeline's window and stories.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "config/config.h"
#include "daemon/pipeline/pipeline.h"
#include "dedup/state.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace newsflow;
  static const config::Config config = *config::parse_config("", {});
  static daemon::Pipeline pipeline(config, nullptr);
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const auto seq = dedup::state_seq(bytes);
  const auto state = dedup::decode_state(bytes);
  if (!state) return 0;
  if (!seq || *seq != state->seq) std::abort();
  // Encoding what was decoded is a fixed point (compared as bytes: weights may be NaN).
  const std::string encoded = dedup::encode_state(*state);
  const auto again = dedup::decode_state(encoded);
  if (!again || dedup::encode_state(*again) != encoded) std::abort();
  pipeline.restore(*state);
  return 0;
}
