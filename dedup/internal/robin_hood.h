#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace newsflow::dedup::internal {

/// The probing the dedup state's flat tables share (`SlotTable`, `ArticleIndex`, the boilerplate
/// filter's): Robin Hood linear probing over a vector of entries of any layout. No entry sits
/// further from its home than one it passed, so a probe for a key ends at a free entry or at
/// one nearer to its home than the key's would be, and erasing shifts the entries after it back
/// (no tombstones). `Traits` says whether an entry is free (`Traits::free(e)`) and gives its
/// hash (`Traits::hash(e)`, 32 well-mixed bits), which scaled to the table is its home: any
/// capacity below 2^32 works, so tables grow by any factor.
template <class Entry, class Traits>
struct RobinHood {
  static std::size_t home(std::uint32_t hash, std::size_t n) {
    return static_cast<std::size_t>(std::uint64_t{hash} * n >> 32);
  }
  static std::size_t next(std::size_t i, std::size_t n) { return i + 1 == n ? 0 : i + 1; }
  // How far the entry at `i` sits from its home.
  static std::size_t distance(std::span<const Entry> t, std::size_t i) {
    const std::size_t h = home(Traits::hash(t[i]), t.size());
    return i >= h ? i - h : i + t.size() - h;
  }

  /// Calls `visit(i)` for the entries that may be `hash`'s, in probe order, until it returns
  /// true; returns that index, or `t.size()`.
  template <class Visit>
  static std::size_t probe(std::span<const Entry> t, std::uint32_t hash, Visit&& visit) {
    const std::size_t n = t.size();
    if (n == 0) return n;
    std::size_t i = home(hash, n);
    for (std::size_t d = 0; !Traits::free(t[i]) && distance(t, i) >= d; i = next(i, n), ++d) {
      if (visit(i)) return i;
    }
    return n;
  }

  /// Puts `e` (a free entry somewhere) in; returns where it went.
  static std::size_t place(std::span<Entry> t, Entry e) {
    const std::size_t n = t.size();
    std::size_t i = home(Traits::hash(e), n), placed = n;
    for (std::size_t d = 0;; i = next(i, n), ++d) {
      if (Traits::free(t[i])) {
        t[i] = e;
        return placed == n ? i : placed;
      }
      // An entry further from its home takes the place of one nearer to its own.
      if (const std::size_t held = distance(t, i); held < d) {
        std::swap(t[i], e);
        if (placed == n) placed = i;
        d = held;
      }
    }
  }

  /// Frees the entry at `i`: the entries after it that are not at home move one place back.
  static void erase_at(std::span<Entry> t, std::size_t i) {
    const std::size_t n = t.size();
    for (std::size_t j = next(i, n); !Traits::free(t[j]) && distance(t, j) > 0; j = next(j, n)) {
      t[i] = t[j];
      i = j;
    }
    t[i] = Entry{};
  }

  /// The table made again at `capacity` entries (more than it holds) with its live entries.
  static void rebuild(std::vector<Entry>& t, std::size_t capacity) {
    std::vector<Entry> old(capacity);
    old.swap(t);
    for (const Entry& e : old) {
      if (!Traits::free(e)) place(t, e);
    }
  }
};

}  // namespace newsflow::dedup::internal
