// libFuzzer target: an extractor's record as the dedup role reads it from `topics.extracted`.
// The fast path (simdjson) must read what the general path (nlohmann) reads wherever it answers,
// and a record read back must read again as itself once written (`extracted_json`).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "daemon/pipeline/extracted_simdjson.h"
#include "daemon/pipeline/pipeline.h"

namespace {

std::string written(
    const std::pair<newsflow::daemon::Pipeline::Extracted, newsflow::daemon::Input>& r) {
  return newsflow::daemon::extracted_json(r.first, r.second);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace newsflow::daemon;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto general = parse_extracted_general(text);
  if (const auto fast = read_extracted_fast(text)) {
    if (!general || written(*fast) != written(*general)) std::abort();
  }
  const auto record = parse_extracted(text);
  if (!record) return 0;
  const std::string again = written(*record);
  const auto reread = parse_extracted(again);
  if (!reread || written(*reread) != again) std::abort();
  return 0;
}
