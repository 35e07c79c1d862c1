#include "dedup/internal/article_index.h"

#include <algorithm>
#include <utility>

#include "dedup/fingerprint.h"
#include "dedup/internal/codec.h"

namespace newsflow::dedup::internal {

namespace {
constexpr std::size_t kMinCapacity = 64;
}  // namespace

std::uint64_t ArticleIndex::key_of(std::string_view article) { return hash64(article); }

std::size_t ArticleIndex::find_entry(std::uint64_t key) const {
  return Probe::probe(entries_, hash(key), [&](std::size_t i) { return entries_[i].key() == key; });
}

void ArticleIndex::rebuild(const std::vector<Entry>& live, std::size_t capacity) {
  entries_.assign(std::max(kMinCapacity, capacity), Entry{});
  for (const Entry& e : live) Probe::place(entries_, e);
  size_ = live.size();
}

std::uint32_t ArticleIndex::name(std::string_view story) {
  auto [it, added] = name_of_.try_emplace(std::string(story), 0);
  if (added) {
    if (free_names_.empty()) {
      it->second = static_cast<std::uint32_t>(names_.size());
      names_.emplace_back();
    } else {
      it->second = free_names_.back();
      free_names_.pop_back();
    }
    names_[it->second].id = story;
  }
  ++names_[it->second].articles;
  return it->second;
}

void ArticleIndex::release(std::uint32_t name) {
  Name& n = names_[name];
  if (--n.articles > 0) return;
  name_of_.erase(n.id);
  n.id.clear();
  n.id.shrink_to_fit();
  free_names_.push_back(name);
}

const std::string* ArticleIndex::find(std::string_view article) const {
  const std::size_t i = find_entry(key_of(article));
  return i == entries_.size() ? nullptr : &names_[entries_[i].name].id;
}

void ArticleIndex::set(std::string_view article, std::string_view story) {
  const std::uint64_t key = key_of(article);
  if (const std::size_t i = find_entry(key); i != entries_.size()) {
    const std::uint32_t named = name(story);
    release(entries_[i].name);
    entries_[i].name = named;
    return;
  }
  // Grown at 85% full to 60%.
  if ((size_ + 1) * 20 > entries_.size() * 17) {
    std::vector<Entry> live;
    live.reserve(size_ + 1);
    for (const Entry& e : entries_) {
      if (e.name != kFree) live.push_back(e);
    }
    rebuild(live, (size_ + 1) * 5 / 3);
  }
  Probe::place(entries_, {static_cast<std::uint32_t>(key), static_cast<std::uint32_t>(key >> 32),
                          name(story)});
  ++size_;
}

void ArticleIndex::erase(std::string_view article) {
  const std::size_t i = find_entry(key_of(article));
  if (i == entries_.size()) return;
  release(entries_[i].name);
  Probe::erase_at(entries_, i);
  --size_;
}

void ArticleIndex::save(Writer& w) const {
  w.array(entries_);
  w.varint(size_);
  w.varint(names_.size());
  for (const Name& n : names_) {
    w.string(n.id);
    w.varint(n.articles);
  }
  w.array(free_names_);
}

bool ArticleIndex::load(Reader& r) {
  ArticleIndex next;
  if (!r.array(next.entries_)) return false;
  next.size_ = r.varint();
  next.names_.resize(r.count());
  for (Name& n : next.names_) {
    n.id = r.string();
    n.articles = static_cast<std::uint32_t>(r.varint());
  }
  if (!r.array(next.free_names_) || !r.ok()) return false;
  std::size_t live = 0;
  std::vector<std::uint32_t> named(next.names_.size(), 0);
  for (const Entry& e : next.entries_) {
    if (e.name == kFree) continue;
    if (e.name >= next.names_.size()) return false;
    ++live;
    ++named[e.name];
  }
  // Probing ends at a free entry: a table without one is not ours.
  if (live != next.size_ || (!next.entries_.empty() && live == next.entries_.size())) return false;
  for (std::uint32_t k = 0; k < next.names_.size(); ++k) {
    const Name& n = next.names_[k];
    if (named[k] != n.articles || (n.articles > 0) == n.id.empty()) return false;
    if (n.articles > 0 && !next.name_of_.emplace(n.id, k).second) return false;
  }
  *this = std::move(next);
  return true;
}

}  // namespace newsflow::dedup::internal
