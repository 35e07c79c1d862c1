#include "dedup/internal/story_index.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <utility>

#include "dedup/internal/codec.h"

namespace newsflow::dedup::internal {

std::uint32_t StoryIndex::slot_for(const std::string& story_id) {
  const auto [it, added] = slot_of_.try_emplace(story_id, 0);
  if (!added) return it->second;
  if (free_slots_.empty()) {
    it->second = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  } else {
    it->second = free_slots_.back();
    free_slots_.pop_back();
  }
  slots_[it->second].story_id = story_id;
  return it->second;
}

std::optional<std::uint32_t> StoryIndex::find(const std::string& story_id) const {
  const auto it = slot_of_.find(story_id);
  if (it == slot_of_.end()) return std::nullopt;
  return it->second;
}

void StoryIndex::drop(std::uint32_t slot) { free(slot, /*unindex=*/true); }

void StoryIndex::free(std::uint32_t slot, bool unindex) {
  Slot& s = slots_[slot];
  for (std::size_t k = s.terms.size(); k-- > 0;) {
    if (unindex) {
      remove_term(slot, k);
    } else {
      terms_.release(s.terms[k].first);
    }
  }
  for (const auto& [t, w] : s.representative) terms_.release(t);
  slot_of_.erase(s.story_id);
  s = Slot{};
  free_slots_.push_back(slot);
}

void StoryIndex::remove_term(std::uint32_t slot, std::size_t k) {
  TermWeights& terms = slots_[slot].terms;
  const TermId t = terms[k].first;
  terms_.stories(t).remove_last(slot);
  terms.erase(terms.begin() + static_cast<std::ptrdiff_t>(k));
  terms_.release(t);
}

void StoryIndex::add_terms(std::uint32_t slot, const TermWeights& terms) {
  // Both sorted by term, merged in one pass (a binary search and an insert per term cost twice
  // as much); a term new to the story joins the index. The incoming sorted as 64-bit words
  // (the term's number above its weight's bits: distinct numbers, so by number).
  std::vector<std::uint64_t> sorted(terms.size());
  for (std::size_t k = 0; k < terms.size(); ++k) {
    sorted[k] = std::uint64_t{terms[k].first} << 32 | std::bit_cast<std::uint32_t>(terms[k].second);
  }
  std::sort(sorted.begin(), sorted.end());
  TermWeights& st = slots_[slot].terms;
  TermWeights merged;
  merged.reserve(st.size() + sorted.size());
  auto held = st.begin();
  for (const std::uint64_t x : sorted) {
    const auto t = static_cast<TermId>(x >> 32);
    const auto w = std::bit_cast<float>(static_cast<std::uint32_t>(x));
    while (held != st.end() && held->first < t) merged.push_back(*held++);
    if (held != st.end() && held->first == t) {
      merged.emplace_back(t, held->second + w);
      ++held;
      continue;
    }
    merged.emplace_back(t, w);
    terms_.use(t);
    terms_.stories(t).push_back(slot);
  }
  merged.insert(merged.end(), held, st.end());
  st = std::move(merged);
  if (st.size() > kTermsPerStory) keep_heaviest(slot);
}

void StoryIndex::keep_heaviest(std::uint32_t slot) {
  TermWeights& st = slots_[slot].terms;
  const std::size_t n = st.size();
  // The heaviest kTermsPerStory, ties by term: those heavier than the kTermsPerStory-th weight,
  // and of those at it the first by text (only they are compared by text: fetched ahead).
  std::vector<float> weights(n);
  for (std::size_t k = 0; k < n; ++k) weights[k] = st[k].second;
  std::nth_element(weights.begin(), weights.begin() + (kTermsPerStory - 1), weights.end(),
                   std::greater<float>());
  const float cut = weights[kTermsPerStory - 1];
  std::vector<bool> leaves(n);
  std::vector<std::size_t> at_cut;
  std::size_t heavier = 0;
  for (std::size_t k = 0; k < n; ++k) {
    if (st[k].second > cut) {
      ++heavier;
    } else if (st[k].second == cut) {
      at_cut.push_back(k);
    } else {
      leaves[k] = true;
    }
  }
  const std::size_t room = kTermsPerStory - heavier;  // at least one: the cut's own
  if (at_cut.size() > room) {
    for (const std::size_t k : at_cut) terms_.prefetch(st[k].first);
    std::nth_element(at_cut.begin(), at_cut.begin() + static_cast<std::ptrdiff_t>(room),
                     at_cut.end(), [&](std::size_t a, std::size_t b) {
                       return terms_.text(st[a].first) < terms_.text(st[b].first);
                     });
    for (std::size_t i = room; i < at_cut.size(); ++i) leaves[at_cut[i]] = true;
  }
  // The lightest leave, from the back (the order `remove_term` one at a time took: terms
  // released in it number the next new ones); the index forgets the story under each, else it
  // grows with every article until the next sweep. Marked, then taken out in one pass.
  constexpr TermId kLeft = UINT32_MAX;  // no term's number
  for (std::size_t k = n; k-- > 0;) {
    if (!leaves[k]) continue;
    const TermId t = std::exchange(st[k].first, kLeft);
    terms_.stories(t).remove_last(slot);
    terms_.release(t);
  }
  std::erase_if(st, [](const auto& term) { return term.first == kLeft; });
  // The inserts doubled it past the cap: held at its size, the terms of a story take half
  // (34 bytes an article held at 1 M).
  st.shrink_to_fit();
}

namespace {

void save_weights(Writer& w, const StoryIndex::TermWeights& v) {
  w.varint(v.size());
  for (const auto& [t, x] : v) {
    w.fixed(t);
    w.fixed(x);
  }
}

bool load_weights(Reader& r, StoryIndex::TermWeights& v, std::size_t terms) {
  v.resize(r.count());
  for (auto& [t, x] : v) {
    t = r.fixed<std::uint32_t>();
    x = r.fixed<float>();
    if (t >= terms) return false;
  }
  return r.ok();
}

}  // namespace

void StoryIndex::save(Writer& w) const {
  terms_.save(w);
  w.varint(slots_.size());
  for (const Slot& s : slots_) {
    w.string(s.story_id);
    save_weights(w, s.terms);
    save_weights(w, s.representative);
  }
  w.array(free_slots_);
}

bool StoryIndex::load(Reader& r) {
  StoryIndex next;
  if (!next.terms_.load(r)) return false;
  next.slots_.resize(r.count());
  for (Slot& s : next.slots_) {
    s.story_id = r.string();
    if (!load_weights(r, s.terms, next.terms_.size()) ||
        !load_weights(r, s.representative, next.terms_.size())) {
      return false;
    }
  }
  if (!r.array(next.free_slots_)) return false;
  for (std::uint32_t k = 0; k < next.slots_.size(); ++k) {
    if (!next.slots_[k].story_id.empty()) next.slot_of_.emplace(next.slots_[k].story_id, k);
  }
  if (!next.terms_.valid(next.slots_.size())) return false;
  for (const std::uint32_t s : next.free_slots_) {
    if (s >= next.slots_.size()) return false;
  }
  if (!r.ok()) return false;
  *this = std::move(next);
  return true;
}

}  // namespace newsflow::dedup::internal
