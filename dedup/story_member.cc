#include "dedup/stories.h"

// A story's member: its id, URL, source and language packed in one heap block.

#include <array>

#include "dedup/internal/id_pair.h"

namespace newsflow::dedup {

namespace {

// The beginnings a URL on its source's host has: "https://www." and the source, ...
constexpr std::array<std::string_view, 4> kSchemes = {"https://www.", "https://", "http://www.",
                                                      "http://"};

}  // namespace

StoryMember::StoryMember(std::string_view id, std::string_view url, std::string_view source,
                         DupKind kind, std::string_view language)
    : kind_(kind) {
  std::string_view tail = url;
  for (std::size_t i = 0; i < kSchemes.size() && !source.empty(); ++i) {
    if (url.starts_with(kSchemes[i]) && url.substr(kSchemes[i].size()).starts_with(source)) {
      tail = url.substr(kSchemes[i].size() + source.size());
      host_ = static_cast<std::uint8_t>(i + 1);
      break;
    }
  }
  std::string packed;
  if (id.size() < kRawId && internal::is_lower_hex(id)) {
    packed.resize((id.size() + 1) / 2);
    internal::pack_hex(id, reinterpret_cast<std::uint8_t*>(packed.data()));
    id_digits_ = static_cast<std::uint8_t>(id.size());
    id = packed;
  }
  strings_ = internal::PackedStrings<4>({id, tail, source, language});
}

std::string StoryMember::id() const {
  const std::string_view stored = strings_[0];
  if (id_digits_ == kRawId) return std::string(stored);
  return internal::unpack_hex(reinterpret_cast<const std::uint8_t*>(stored.data()), id_digits_);
}

std::string StoryMember::url() const {
  if (host_ == 0) return std::string(strings_[1]);
  std::string url(kSchemes[host_ - 1]);
  url += strings_[2];
  url += strings_[1];
  return url;
}

}  // namespace newsflow::dedup
