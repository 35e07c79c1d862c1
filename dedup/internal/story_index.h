#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dedup/internal/term_table.h"

namespace newsflow::dedup::internal {

class Reader;
class Writer;

/// What the story book compares articles with: each story in a slot of its own with its term
/// weights (title and lead of its articles, at most `kTermsPerStory`, sorted by term number)
/// and its representative's heaviest terms, over the interned terms (`TermTable`), whose lists
/// of stories are the index candidates come from. A slot freed is given to the next new story.
/// Not thread-safe.
class StoryIndex {
 public:
  using TermId = TermTable::Id;
  using TermWeights = std::vector<std::pair<TermId, float>>;
  struct Slot {
    std::string story_id;  ///< "" when free
    TermWeights terms;
    TermWeights representative;
  };
  static constexpr std::size_t kTermsPerStory = 64;

  TermTable& terms() { return terms_; }
  const TermTable& terms() const { return terms_; }

  /// The slot of `story_id`, a new one when it has none.
  std::uint32_t slot_for(const std::string& story_id);
  /// Its slot, or nullopt.
  std::optional<std::uint32_t> find(const std::string& story_id) const;
  Slot& slot(std::uint32_t k) { return slots_[k]; }
  const Slot& slot(std::uint32_t k) const { return slots_[k]; }

  /// Adds term weights (held terms) to a story's: sums where it has the term, else the term
  /// joins it and the index; past `kTermsPerStory` the lightest leave (ties by term).
  void add_terms(std::uint32_t slot, const TermWeights& terms);
  /// Frees a story's slot, its terms and its representative's released; the index forgets
  /// the story under each of its terms.
  void drop(std::uint32_t slot);
  /// Frees the slots of the stories `gone(story_id)` says are gone, then makes the index again
  /// from the slots held (cheaper than forgetting each gone story under each of its terms).
  template <class Gone>
  void sweep(Gone gone) {
    for (std::uint32_t k = 0; k < slots_.size(); ++k) {
      if (!slots_[k].story_id.empty() && gone(slots_[k].story_id)) free(k, /*unindex=*/false);
    }
    terms_.clear_stories();
    for (std::uint32_t k = 0; k < slots_.size(); ++k) {
      for (const auto& [t, w] : slots_[k].terms) terms_.stories(t).push_back(k);
    }
  }

  /// The index as it is, and back (false, and the index unchanged, for other bytes).
  void save(Writer& w) const;
  bool load(Reader& r);

 private:
  void free(std::uint32_t slot, bool unindex);
  // Of a story's terms past `kTermsPerStory`, the lightest leave (ties: the last by text).
  void keep_heaviest(std::uint32_t slot);
  // Leaves the story's `k`-th term (out of the index, released).
  void remove_term(std::uint32_t slot, std::size_t k);

  TermTable terms_;
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::unordered_map<std::string, std::uint32_t> slot_of_;  // story id -> slot
};

}  // namespace newsflow::dedup::internal
