#include "dedup/internal/term_table.h"

#include <xxhash.h>

#include <span>
#include <utility>

#include "dedup/internal/codec.h"
#include "dedup/internal/grow.h"
#include "dedup/internal/robin_hood.h"

namespace newsflow::dedup::internal {

std::uint32_t TermTable::hash(std::string_view term) {
  return static_cast<std::uint32_t>(XXH3_64bits(term.data(), term.size()));
}

std::optional<TermTable::Id> TermTable::find(std::string_view term) const {
  return find(term, hash(term));
}

std::optional<TermTable::Id> TermTable::find(std::string_view term, std::uint32_t h) const {
  const std::span<const Ref> refs = ids_.entries();
  const std::size_t i = RobinHood<Ref, RefTraits>::probe(
      refs, h, [&](std::size_t k) { return refs[k].hash == h && terms_[refs[k].id].text == term; });
  if (i == refs.size()) return std::nullopt;
  return refs[i].id;
}

void TermTable::index(Id term) {
  ids_.reserve_one();
  RobinHood<Ref, RefTraits>::place(ids_.entries(), {hash(terms_[term].text), term});
  ++ids_.size;
}

TermTable::Id TermTable::add(std::string_view term, std::uint32_t h) {
  Id id;
  if (free_.empty()) {
    id = static_cast<Id>(terms_.size());
    grow_by_quarter(terms_);
    terms_.emplace_back();
  } else {
    id = free_.back();
    free_.pop_back();
  }
  terms_[id].text = term;
  ids_.reserve_one();
  RobinHood<Ref, RefTraits>::place(ids_.entries(), {h, id});
  ++ids_.size;
  return id;
}

TermTable::Id TermTable::intern(std::string_view term) {
  const std::uint32_t h = hash(term);
  if (const std::optional<Id> held = find(term, h)) return *held;
  return add(term, h);
}

void TermTable::intern_all(std::span<const std::string_view> terms, std::span<Id> ids) {
  using Probe = RobinHood<Ref, RefTraits>;
  std::vector<std::uint32_t> hashes(terms.size());
  const std::span<const Ref> refs = ids_.entries();
  for (std::size_t i = 0; i < terms.size(); ++i) {
    hashes[i] = hash(terms[i]);
    if (!refs.empty()) __builtin_prefetch(&refs[Probe::home(hashes[i], refs.size())]);
  }
  // The terms whose hash an entry has (most often the term itself), before their texts are
  // compared.
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const std::uint32_t h = hashes[i];
    Probe::probe(refs, h, [&](std::size_t k) {
      if (refs[k].hash != h) return false;
      prefetch(refs[k].id);
      return true;
    });
  }
  // Every lookup before any term is added (an insert moves the entries); a term not held is
  // looked up again as it is added, in case the list names it twice.
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const std::optional<Id> held = find(terms[i], hashes[i]);
    ids[i] = held ? *held : UINT32_MAX;
  }
  for (std::size_t i = 0; i < terms.size(); ++i) {
    if (ids[i] != UINT32_MAX) continue;
    const std::optional<Id> held = find(terms[i], hashes[i]);
    ids[i] = held ? *held : add(terms[i], hashes[i]);
  }
}

void TermTable::release(Id term) {
  Info& info = terms_[term];
  if (--info.uses > 0) return;
  const std::span<Ref> refs = ids_.entries();
  const std::size_t i = RobinHood<Ref, RefTraits>::probe(
      refs, hash(info.text), [&](std::size_t k) { return refs[k].id == term; });
  if (i < refs.size()) {
    RobinHood<Ref, RefTraits>::erase_at(refs, i);
    --ids_.size;
    ids_.shrink_to_fit();
  }
  info = Info{};
  free_.push_back(term);
}

void TermTable::clear_stories() {
  for (Info& info : terms_) info.stories.clear();
}

void TermTable::save(Writer& w) const {
  w.varint(terms_.size());
  for (const Info& t : terms_) {
    w.string(t.text);
    w.varint(t.uses);
    w.varint(t.stories.size());
    for (const std::uint32_t s : t.stories) w.fixed(s);
  }
  w.array(free_);
}

bool TermTable::load(Reader& r) {
  TermTable next;
  next.terms_.resize(r.count());
  std::vector<std::uint32_t> held;
  for (Info& t : next.terms_) {
    t.text = r.string();
    t.uses = static_cast<std::uint32_t>(r.varint());
    if (!r.array(held)) return false;
    t.stories.assign(held);
  }
  if (!r.array(next.free_)) return false;
  for (const Id t : next.free_) {
    if (t >= next.terms_.size()) return false;
  }
  if (!r.ok()) return false;
  for (Id t = 0; t < next.terms_.size(); ++t) {
    if (next.terms_[t].uses > 0) next.index(t);
  }
  *this = std::move(next);
  return true;
}

bool TermTable::valid(std::size_t slots) const {
  for (const Info& t : terms_) {
    for (const std::uint32_t s : t.stories) {
      if (s >= slots) return false;
    }
  }
  return true;
}

}  // namespace newsflow::dedup::internal
