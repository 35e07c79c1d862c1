#pragma once

#include <string_view>

namespace newsflow::extractors::internal {

/// True for very common function words of en, de, fr, es, it, pt and nl (lowercase ASCII or
/// UTF-8 input). Used as a prose signal: sentences have many, menus and link lists few.
bool is_stopword(std::string_view lowercase_word);

}  // namespace newsflow::extractors::internal
