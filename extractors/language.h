#pragma once

#include <string>
#include <string_view>

namespace newsflow::extractors {

/// The language of an article's title and prose (its paragraphs of 80 bytes or more, when they
/// hold 200 bytes: captions and labels a template leaks do not outvote the article) as a BCP-47 tag
/// ("en", "de", "ja", "zh-Hans", "zh-Hant",
/// ...), or "" when unsure: CLD2 (Chromium's Compact Language Detector 2, Debian libcld2) on
/// plain text, trusted when it calls its answer reliable and the language covers at least half
/// of the text, or when one language covers 60% with no rival (CLD2 withholds "reliable" when a
/// fifth of the text is commands or code). `declared` (`<html lang>`, Content-Language, og:locale,
/// a feed's
/// `<language>`) and the host's top-level domain are hints that tilt a close call; they never
/// decide alone, so a page that declares the wrong language still gets its text's.
///
///   detect_language("Der Bundestag hat am Donnerstag ...", "") == "de"
std::string detect_language(std::string_view title, std::string_view text,
                            std::string_view declared = {}, std::string_view host = {});

}  // namespace newsflow::extractors
