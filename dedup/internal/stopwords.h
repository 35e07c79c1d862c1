#pragma once

#include <string_view>

namespace newsflow::dedup::internal {

/// True for frequent function words of en, de, fr, es, it, pt and nl in normalized (case-folded)
/// form: they are skipped in SpotSigs chains and in story terms.
bool is_stopword(std::string_view normalized_word);

}  // namespace newsflow::dedup::internal
