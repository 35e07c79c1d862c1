#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dedup/internal/robin_hood.h"

namespace newsflow::dedup {

namespace internal {
class Reader;
class Writer;
}  // namespace internal

/// A teaser of another page: a paragraph of a dozen words or more cut mid-word with an
/// ellipsis ("... stands for the story" boxes that extraction let through). Never article
/// prose, so it says nothing about which article a page carries.
bool is_teaser(std::string_view paragraph);

/// Options of the per-site boilerplate filter; filled by `config/`.
struct BoilerplateOptions {
  bool enabled = true;
  std::uint32_t min_other_pages = 2;        ///< a paragraph seen on this many other pages of the
                                            ///< same site is boilerplate there (at most 254)
  std::int64_t window_seconds = 72 * 3600;  ///< paragraphs not seen for this long are forgotten
  /// (Site, paragraph) pairs held at most (0: no bound but time); past it those seen longest
  /// ago are forgotten first. The pipeline bounds it by `window.max_articles`.
  std::size_t max_entries = 0;
};

/// Finds a site's page furniture that extraction let through ("Related", "Trending" lists,
/// disclaimers, newsletter boxes): paragraphs that recur on different pages of the same site,
/// and teasers (`is_teaser`) on any page.
/// Copies of one article appear on different sites, so they keep their shared paragraphs, while
/// different articles on one site's template lose what they share only through the template.
/// Each (site, paragraph) is 16 bytes in a flat Robin Hood table (60-85% full: it grows by
/// 40%, and each sweep rebuilds it to the size it needs, so it shrinks with the window too);
/// entries expire with the window. Paragraphs are known by 56 bits of their hash. Event times count
/// within 1970-2106 (earlier or later ones as those bounds). Not thread-safe.
class BoilerplateFilter {
 public:
  /// The bits of a paragraph key the filter keeps (56): all a state record keeps of each.
  static constexpr std::uint64_t kKeyBits = 0x00FFFFFFFFFFFFFFULL;

  explicit BoilerplateFilter(BoilerplateOptions options = {}) : options_(options) {}

  /// Records the paragraphs of a page of `site` at `url` and returns the text without the
  /// paragraphs that are boilerplate for that site (as known before this page), joined by
  /// "\n\n". When every paragraph is (extraction kept only the site's furniture), returns
  /// `title` if it is not empty, else the whole text: furniture shared by all such pages would
  /// make each an exact copy of the others, while the title still tells their articles apart
  /// and keeps re-crawls of one page alike. Paragraphs are separated by blank lines.
  /// `keys`, when given, receives the keys of the paragraphs recorded (for `record`).
  /// `learn` false: the page is one recorded before (the same article judged again, after a
  /// rewind or a re-extraction): it is filtered as it stands, and recorded nowhere, so a page
  /// processed twice leaves the filter as a single pass would.
  std::string filter(std::string_view site, std::string_view url, std::string_view text,
                     std::int64_t event_time, std::string_view title = {},
                     std::vector<std::uint64_t>* keys = nullptr, bool learn = true);

  /// Records the paragraphs `keys` (from `filter`) of a page of `site` at `url` again, as
  /// `filter` did: the state a restart rebuilds from the changelog without the text.
  void record(std::string_view site, std::string_view url, const std::vector<std::uint64_t>& keys,
              std::int64_t event_time);

  /// Distinct (site, paragraph) pairs held.
  std::size_t size() const { return size_; }
  /// The filter as it is, and back (false, and the filter unchanged, for other bytes).
  void save(internal::Writer& w) const;
  bool load(internal::Reader& r);

  /// Bytes of its table.
  std::size_t memory_bytes() const { return table_.capacity() * sizeof(Seen); }

 private:
  // 16 bytes, 4-byte aligned (so the table packs without padding): the key's 56 bits in two
  // halves, the high one sharing its word with the page count.
  struct Seen {
    std::uint32_t key_low = 0;
    std::uint32_t key_high_pages = 0;  // the key's bits 32-55, then the pages (8 bits)
    std::uint32_t last_url = 0;        // hash of the last page that had it (odd); 0: a free entry
    std::uint32_t last_time = 0;       // event time, seconds since 1970
    std::uint64_t key() const { return std::uint64_t{key_high_pages & 0xFFFFFF} << 32 | key_low; }
    // Distinct pages (consecutive-distinct approximation), up to 255: more says nothing more
    // to a bound of at most 254.
    std::uint32_t pages() const { return key_high_pages >> 24; }
    void add_page() {
      if (pages() < 255) key_high_pages += 1u << 24;
    }
  };
  void expire(std::int64_t now);
  // Forgets the pairs seen longest ago until at most 90% of `max_entries` are left.
  void shrink();
  // Counts one page's paragraph; true when it was boilerplate for the site before this page.
  bool count(std::uint64_t key, std::uint32_t url_hash, std::int64_t event_time);
  // The same verdict as `count`, counting nothing.
  bool known(std::uint64_t key, std::uint32_t url_hash) const;
  void advance(std::int64_t event_time);
  // The entry of `key` (of 56 bits), or `table_.size()` when it is not held.
  std::size_t find(std::uint64_t key) const;
  static std::uint32_t hash(std::uint64_t key);
  struct Traits {
    static bool free(const Seen& s) { return s.last_url == 0; }
    static std::uint32_t hash(const Seen& s) { return BoilerplateFilter::hash(s.key()); }
  };
  using Probe = internal::RobinHood<Seen, Traits>;

  BoilerplateOptions options_;
  std::vector<Seen> table_;
  std::size_t size_ = 0;
  std::int64_t watermark_ = 0;
  std::int64_t last_sweep_ = 0;
};

}  // namespace newsflow::dedup
