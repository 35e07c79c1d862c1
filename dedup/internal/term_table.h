#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dedup/internal/slot_list.h"
#include "dedup/internal/table_part.h"

namespace newsflow::dedup::internal {

class Reader;
class Writer;

/// The story book's terms, interned: each distinct term once, numbered, with a count of its
/// uses (the stories' terms and their representatives' terms) and the slots of the stories that
/// have it (the index the candidates come from). A term no longer used is forgotten and its
/// number given to the next new one. A held term's number is found under 32 bits of its text's
/// hash, the text kept once: 8 bytes a term, where a map from the text took a node and a second
/// copy. Not thread-safe.
class TermTable {
 public:
  using Id = std::uint32_t;

  /// The number of a held term, or nullopt.
  std::optional<Id> find(std::string_view term) const;
  /// The number of `term`, held from now on (a new term has no uses yet).
  Id intern(std::string_view term);
  /// `intern` of each of `terms` (distinct), in order, into `ids`: the same numbers, with the
  /// table's entries and the terms they name fetched for all of them first (an article's 64
  /// terms are 64 lookups in a table of the window's size: waiting for each in turn was most of
  /// their cost).
  void intern_all(std::span<const std::string_view> terms, std::span<Id> ids);
  /// One more use of a held term.
  void use(Id term) { ++terms_[term].uses; }
  /// One use fewer; at none the term is forgotten.
  void release(Id term);

  const std::string& text(Id term) const { return terms_[term].text; }
  /// Fetches what the table holds of a term (its text, uses and stories) ahead of a use.
  void prefetch(Id term) const {
    const char* info = reinterpret_cast<const char*>(&terms_[term]);
    __builtin_prefetch(info);
    __builtin_prefetch(info + sizeof(Info) - 1);
  }
  SlotList& stories(Id term) { return terms_[term].stories; }
  const SlotList& stories(Id term) const { return terms_[term].stories; }
  /// Every term's list of stories emptied (the caller makes the index again).
  void clear_stories();

  /// Numbers given out, held or free: every held term's number is below it.
  std::size_t size() const { return terms_.size(); }

  /// The table as it is, and back (false, and the table unchanged, for other bytes or when a
  /// term lists a story slot not below `slots`, which `valid` checks after the slots are read).
  void save(Writer& w) const;
  bool load(Reader& r);
  bool valid(std::size_t slots) const;

 private:
  struct Info {
    std::string text;
    std::uint32_t uses = 0;
    SlotList stories;  // slots of the stories that have it
  };
  struct Ref {
    std::uint32_t hash = 0;
    Id id = UINT32_MAX;  // UINT32_MAX: a free entry
  };
  struct RefTraits {
    static bool free(const Ref& e) { return e.id == UINT32_MAX; }
    static std::uint32_t hash(const Ref& e) { return e.hash; }
  };
  static std::uint32_t hash(std::string_view term);
  // `find` of a term whose `hash` is `h`.
  std::optional<Id> find(std::string_view term, std::uint32_t h) const;
  // A new number for `term` (not held), indexed under `h`.
  Id add(std::string_view term, std::uint32_t h);
  // Puts a held term in `ids_`.
  void index(Id term);

  std::vector<Info> terms_;
  std::vector<Id> free_;
  TablePart<Ref, RefTraits> ids_;
};

}  // namespace newsflow::dedup::internal
