#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dedup/internal/robin_hood.h"

namespace newsflow::dedup::internal {

class Reader;
class Writer;

/// Which story each article is in: 12 bytes an article in a flat Robin Hood table (60-85% full)
/// under 64 bits of the article id's hash, naming its story by number; each story id is kept
/// once, with a count of the articles that name it. Not thread-safe.
class ArticleIndex {
 public:
  /// The story id the article was placed in (nullptr when not held).
  const std::string* find(std::string_view article) const;
  /// Places the article in `story` (again, when it was in another).
  void set(std::string_view article, std::string_view story);
  void erase(std::string_view article);
  /// Keeps only the articles whose story id `keep` says to keep.
  template <class Keep>
  void retain(Keep keep) {
    std::vector<Entry> kept;
    kept.reserve(size_);
    for (const Entry& e : entries_) {
      if (e.name == kFree) continue;
      if (keep(names_[e.name].id)) {
        kept.push_back(e);
      } else {
        release(e.name);
      }
    }
    rebuild(kept, kept.size() * 10 / 7 + 1);
  }

  std::size_t size() const { return size_; }

  /// The index as it is (`load` makes an equal one; false for bytes that are not an index).
  void save(Writer& w) const;
  bool load(Reader& r);

 private:
  struct Entry {
    std::uint32_t key_low = 0, key_high = 0;  // the article id's hash
    std::uint32_t name = kFree;               // the story's number
    std::uint64_t key() const { return std::uint64_t{key_high} << 32 | key_low; }
  };
  static constexpr std::uint32_t kFree = UINT32_MAX;
  struct Name {
    std::string id;  // "" when free
    std::uint32_t articles = 0;
  };
  static std::uint64_t key_of(std::string_view article);
  static std::uint32_t hash(std::uint64_t key) {
    return static_cast<std::uint32_t>((key * 0x9E3779B97F4A7C15ULL) >> 32);
  }
  struct Traits {
    static bool free(const Entry& e) { return e.name == kFree; }
    static std::uint32_t hash(const Entry& e) { return ArticleIndex::hash(e.key()); }
  };
  using Probe = RobinHood<Entry, Traits>;
  std::size_t find_entry(std::uint64_t key) const;  // entries_.size() when not held
  void rebuild(const std::vector<Entry>& live, std::size_t capacity);
  std::uint32_t name(std::string_view story);  // counted once more
  void release(std::uint32_t name);

  std::vector<Entry> entries_;
  std::size_t size_ = 0;
  std::vector<Name> names_;
  std::vector<std::uint32_t> free_names_;
  std::unordered_map<std::string, std::uint32_t> name_of_;
};

}  // namespace newsflow::dedup::internal
