#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "dedup/internal/robin_hood.h"
#include "dedup/internal/table_part.h"

namespace newsflow::dedup {

namespace internal {
class Reader;
class Writer;
}  // namespace internal

/// A teaser of another page: a paragraph of a dozen words or more cut mid-word with an
/// ellipsis ("... stands for the story" boxes that extraction let through). Never article
/// prose, so it says nothing about which article a page carries.
bool is_teaser(std::string_view paragraph);

/// A page's paragraphs as `BoilerplateFilter` reads them (each normalized and keyed by its
/// site), and the page's whole normalized text: all that filtering and fingerprinting need of a
/// page apart from the filter's state, so they can be made on any thread, before the judging
/// that reads and changes that state. Paragraphs are separated by blank lines.
class PageParagraphs {
 public:
  PageParagraphs() = default;
  PageParagraphs(std::string_view site, std::string_view text);

  /// Whether these are the paragraphs of `text` on `site` (a text cut to a bound after they
  /// were made is not).
  bool of(std::string_view site, std::string_view text) const;

  /// `normalize_text(text)`: the normalized paragraphs joined by spaces.
  const std::string& normalized() const { return normalized_; }

 private:
  friend class BoilerplateFilter;
  struct Paragraph {
    std::size_t begin = 0, size = 0;                        // in the text
    std::size_t normalized_begin = 0, normalized_size = 0;  // in `normalized_`
    std::uint64_t key = 0;  // the normalized paragraph's hash, seeded by the site's
    bool teaser = false;
  };
  std::vector<Paragraph> paragraphs_;  // those with words only
  std::string normalized_;
  std::uint64_t site_hash_ = 0, text_hash_ = 0;
  std::size_t text_size_ = 0;
  bool made_ = false;
  bool no_site_ = true;
};

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
/// Each (site, paragraph) is 11 bytes in a flat table split in 65,536 Robin Hood parts by the
/// high bits of its key (`internal::TablePart`, 75-90% full; each sweep makes the parts again at
/// the size they need, so the table shrinks with the window too); entries expire with the
/// window. Paragraphs are known by 48 bits of their hash (16 name the part, 32 are kept; a state
/// record keeps 56). Event times count within 1970-2106 (earlier or later ones as those bounds).
/// Not thread-safe.
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

  /// `filter` of a page whose paragraphs are made (`PageParagraphs(site, text)`).
  /// `normalized`, when given, receives `normalize_text` of what it returns, from the
  /// paragraphs' normalized forms (the title alone is normalized here).
  std::string filter(const PageParagraphs& page, std::string_view url, std::string_view text,
                     std::int64_t event_time, std::string_view title = {},
                     std::vector<std::uint64_t>* keys = nullptr, bool learn = true,
                     std::string* normalized = nullptr);

  /// Records the paragraphs `keys` (from `filter`) of a page of `site` at `url` again, as
  /// `filter` did: the state a restart rebuilds from the changelog without the text.
  void record(std::string_view site, std::string_view url, const std::vector<std::uint64_t>& keys,
              std::int64_t event_time);

  /// Many pages are about to be recorded (a restore from the records alone): until `end_bulk`,
  /// a part that grows is made half full, not three quarters (a third of the moves: each part
  /// grew every fifth of its size), and `end_bulk` makes the parts filled under three quarters
  /// 88% full (under the 90% a part grows at), so the filter takes no more room than recording
  /// one page at a time leaves (75-90% full).
  void begin_bulk() { bulk_ = true; }
  void end_bulk();

  /// Distinct (site, paragraph) pairs held.
  std::size_t size() const { return size_; }
  /// The filter as it is, and back (false, and the filter unchanged, for other bytes).
  void save(internal::Writer& w) const;
  bool load(internal::Reader& r);

  /// Bytes of its table.
  std::size_t memory_bytes() const { return entries_ * sizeof(Seen) + kParts * sizeof(Part); }

 private:
  // The key's high 16 bits pick one of 65,536 parts; an entry keeps the low 32 bits.
  static constexpr std::size_t kParts = 1 << 16;
  static constexpr int kPartShift = 40;
  static constexpr std::uint64_t kKeptBits = 0xFFFFFFFF;
  // A part grows when one more would fill more than 90% of it, to 75% full: fuller than the
  // window's tables (a page looks up 19 paragraphs, the window 64 bands). Against 60-85%, at
  // 200,000 articles (`bench_restore --parts-only`): 323 bytes an article instead of 373, about
  // a microsecond more per article (8.4 us; 80-92%: 312 bytes, 11 us).
  static constexpr std::size_t kFullPercent = 90;
  static constexpr std::size_t kGrownPercent = 75;
  static constexpr std::size_t kBulkGrownPercent = 50;  // between `begin_bulk` and `end_bulk`
  static constexpr std::size_t kBulkEndPercent = 88;    // the parts `end_bulk` makes again
  // 11 bytes, unaligned, little-endian: 32 of the key's 40 bits the part does not say (two
  // paragraphs of a part share them 1 time in 4 billion), the page count (0: a free entry), 16
  // bits of the last page's URL hash and the last event time (seconds since 1970).
  struct Seen {
    std::uint8_t b[11] = {};
    std::uint32_t key() const { return get<std::uint32_t>(0); }
    void set_key(std::uint32_t k) { put(0, k); }
    // Distinct pages (consecutive-distinct approximation), from 1 to 255: more says nothing
    // more to a bound of at most 254.
    std::uint32_t pages() const { return b[4]; }
    void add_page() {
      if (b[4] < 255) ++b[4];
    }
    // Two pages whose URLs share these 16 bits count as one (1 in 65,536 of the pages that
    // follow one another on a paragraph).
    std::uint16_t last_url() const { return get<std::uint16_t>(5); }
    void set_last_url(std::uint16_t u) { put(5, u); }
    std::uint32_t last_time() const { return get<std::uint32_t>(7); }
    void set_last_time(std::uint32_t t) { put(7, t); }

   private:
    template <class T>
    T get(std::size_t at) const {
      T v;
      std::memcpy(&v, b + at, sizeof v);
      return v;
    }
    template <class T>
    void put(std::size_t at, T v) {
      std::memcpy(b + at, &v, sizeof v);
    }
  };
  static_assert(sizeof(Seen) == 11);
  void expire(std::int64_t now);
  // Forgets the pairs seen longest ago until at most 90% of `max_entries` are left.
  void shrink();
  // Counts one page's paragraph; true when it was boilerplate for the site before this page.
  bool count(std::uint64_t key, std::uint16_t url_hash, std::int64_t event_time);
  // The same verdict as `count`, counting nothing.
  bool known(std::uint64_t key, std::uint16_t url_hash) const;
  void advance(std::int64_t event_time);
  static std::uint32_t hash(std::uint64_t kept);
  struct Traits {
    static bool free(const Seen& s) { return s.pages() == 0; }
    static std::uint32_t hash(const Seen& s) { return BoilerplateFilter::hash(s.key()); }
  };
  using Probe = internal::RobinHood<Seen, Traits>;
  using Part = internal::TablePart<Seen, Traits>;
  // The entry of `key` (of 56 bits) in its part, or nullptr when it is not held.
  Seen* find(std::uint64_t key);
  const Seen* find(std::uint64_t key) const;
  // Frees the entries `gone` says go, then makes each part again at the size it needs.
  template <class Gone>
  void sweep(Gone gone);

  BoilerplateOptions options_;
  std::vector<Part> parts_ = std::vector<Part>(kParts);
  std::size_t size_ = 0;
  std::size_t entries_ = 0;  // entries of all parts, free ones included
  std::int64_t watermark_ = 0;
  std::int64_t last_sweep_ = 0;
  bool bulk_ = false;
};

}  // namespace newsflow::dedup
