#include "extractors/language.h"

#include <cld2/public/compact_lang_det.h>
#include <cld2/public/encodings.h>

#include <algorithm>
#include <cstdio>  // before CLD2, whose header uses FILE without it
#include <string>

namespace newsflow::extractors {
namespace {

// 4 KiB of prose name a language as surely as the whole article (measured on the multilingual
// stream and the dev stream); a bounded prefix keeps the cost flat.
constexpr std::size_t kMaxBytes = 4096;
constexpr std::size_t kProseBytes = 80;    // a paragraph this long is prose, not a label
constexpr std::size_t kEnoughProse = 200;  // ... and this much of it decides alone

// Back off to a UTF-8 character boundary at or before `n`.
std::size_t utf8_prefix(std::string_view s, std::size_t n) {
  if (n >= s.size()) return s.size();
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return n;
}

}  // namespace

std::string detect_language(std::string_view title, std::string_view text,
                            std::string_view declared, std::string_view host) {
  // The language of the prose: paragraphs of a sentence or more, when there are enough of them,
  // so captions, bylines and vote counts a template leaks into the text (in the site's
  // language, around an article in another) do not outvote it.
  std::string prose;
  for (std::size_t pos = 0; pos < text.size() && prose.size() < kMaxBytes;) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view para = text.substr(pos, end - pos);
    if (para.size() >= kProseBytes) {
      prose.append(para.substr(0, utf8_prefix(para, kMaxBytes - prose.size())));
      prose += '\n';
    }
    pos = end + 1;
  }
  const std::string_view body = prose.size() >= kEnoughProse ? std::string_view(prose) : text;
  std::string buffer;
  buffer.reserve(std::min(title.size() + body.size() + 1, kMaxBytes));
  buffer.append(title.substr(0, utf8_prefix(title, kMaxBytes / 4)));
  buffer += '\n';
  buffer.append(body.substr(0, utf8_prefix(body, kMaxBytes - buffer.size())));

  // Hints: the declared language ("de-AT" -> "de"), the host's top-level domain.
  std::string lang_hint(declared.substr(0, declared.find_first_of("-_,; ")));
  std::transform(lang_hint.begin(), lang_hint.end(), lang_hint.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string tld;
  if (const auto dot = host.rfind('.'); dot != std::string_view::npos) tld = host.substr(dot + 1);
  CLD2::CLDHints hints{lang_hint.empty() ? nullptr : lang_hint.c_str(),
                       tld.empty() ? nullptr : tld.c_str(), CLD2::UNKNOWN_ENCODING,
                       CLD2::UNKNOWN_LANGUAGE};
  CLD2::Language language3[3];
  int percent3[3];
  double scores3[3];
  int text_bytes = 0, valid_prefix = 0;
  bool reliable = false;
  const CLD2::Language lang = CLD2::ExtDetectLanguageSummaryCheckUTF8(
      buffer.data(), static_cast<int>(buffer.size()), /*is_plain_text=*/true, &hints, 0, language3,
      percent3, scores3, nullptr, &text_bytes, &reliable, &valid_prefix);
  if (lang == CLD2::UNKNOWN_LANGUAGE || lang == CLD2::TG_UNKNOWN_LANGUAGE) return {};
  // CLD2 withholds "reliable" when a fifth of the text is in no language it knows (commands,
  // code, numbers): one language over 60% with no rival is still a clear answer.
  const bool clear = percent3[0] >= 60 && percent3[1] < 10;
  if (!(reliable && percent3[0] >= 50) && !clear) return {};
  // CLD2 names Simplified Chinese "zh" and Traditional "zh-Hant"; BCP-47 says which script.
  if (lang == CLD2::CHINESE) return "zh-Hans";
  if (lang == CLD2::CHINESE_T) return "zh-Hant";
  // CLD2 keeps a few withdrawn ISO 639 codes.
  const std::string_view code = CLD2::LanguageCode(lang);
  if (code == "iw") return "he";
  if (code == "jw") return "jv";
  return std::string(code);
}

}  // namespace newsflow::extractors
