#include "dedup/boilerplate.h"

#include <xxhash.h>

#include <algorithm>
#include <span>
#include <utility>

#include "dedup/internal/codec.h"
#include "dedup/normalize.h"

namespace newsflow::dedup {
namespace {

std::string_view trim_spaces(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

bool is_teaser(std::string_view paragraph) {
  while (!paragraph.empty() && (paragraph.back() == ' ' || paragraph.back() == '\n')) {
    paragraph.remove_suffix(1);
  }
  const bool ellipsis = paragraph.ends_with("...") || paragraph.ends_with("\xE2\x80\xA6");
  if (!ellipsis) return false;
  // A cut sentence: the word before the ellipsis runs into it ("lorem ips..."), and the
  // paragraph is long enough to be a summary rather than a quoted trailing-off.
  const std::string_view body = paragraph.substr(0, paragraph.size() - 3);  // both are 3 bytes
  if (body.empty() || body.back() == ' ' || body.back() == '.' || body.back() == '"') return false;
  return std::count(paragraph.begin(), paragraph.end(), ' ') >= 12;
}

namespace {

std::uint16_t url_key(std::string_view url) {
  return static_cast<std::uint16_t>(XXH3_64bits(url.data(), url.size()) >> 48);
}

std::uint32_t clamp_time(std::int64_t t) {
  return static_cast<std::uint32_t>(std::clamp<std::int64_t>(t, 0, UINT32_MAX));
}

}  // namespace

void BoilerplateFilter::advance(std::int64_t event_time) {
  watermark_ = std::max(watermark_, event_time);
  if (watermark_ - last_sweep_ > options_.window_seconds / 8) expire(watermark_);
}

std::uint32_t BoilerplateFilter::hash(std::uint64_t kept) {
  return static_cast<std::uint32_t>((kept * 0x9E3779B97F4A7C15ULL) >> 32);
}

const BoilerplateFilter::Seen* BoilerplateFilter::find(std::uint64_t key) const {
  const std::span<const Seen> entries = parts_[key >> kPartShift].entries();
  const auto kept = static_cast<std::uint32_t>(key & kKeptBits);
  const std::size_t i =
      Probe::probe(entries, hash(kept), [&](std::size_t k) { return entries[k].key() == kept; });
  return i == entries.size() ? nullptr : &entries[i];
}

BoilerplateFilter::Seen* BoilerplateFilter::find(std::uint64_t key) {
  return const_cast<Seen*>(std::as_const(*this).find(key));
}

bool BoilerplateFilter::count(std::uint64_t key, std::uint16_t url_hash, std::int64_t event_time) {
  key &= kKeyBits;
  if (options_.max_entries > 0 && size_ >= options_.max_entries) shrink();
  if (Seen* s = find(key)) {
    const std::uint32_t pages = s->pages();
    const bool boilerplate = pages >= options_.min_other_pages &&
                             !(pages == options_.min_other_pages && s->last_url() == url_hash);
    if (s->last_url() != url_hash) {
      s->set_last_url(url_hash);
      s->add_page();
    }
    s->set_last_time(std::max(s->last_time(), clamp_time(event_time)));
    return boilerplate;
  }
  Part& part = parts_[key >> kPartShift];
  entries_ -= part.capacity;
  part.reserve_one(kFullPercent, bulk_ ? kBulkGrownPercent : kGrownPercent);
  entries_ += part.capacity;
  Seen fresh;
  fresh.set_key(static_cast<std::uint32_t>(key & kKeptBits));
  fresh.add_page();
  fresh.set_last_url(url_hash);
  fresh.set_last_time(clamp_time(event_time));
  Probe::place(part.entries(), fresh);
  ++part.size;
  ++size_;
  // Seen on no other page before this one.
  return options_.min_other_pages == 0;
}

bool BoilerplateFilter::known(std::uint64_t key, std::uint16_t url_hash) const {
  const Seen* s = find(key & kKeyBits);
  if (!s) return false;
  return s->pages() >= options_.min_other_pages &&
         !(s->pages() == options_.min_other_pages && s->last_url() == url_hash);
}

void BoilerplateFilter::record(std::string_view site, std::string_view url,
                               const std::vector<std::uint64_t>& keys, std::int64_t event_time) {
  if (!options_.enabled || site.empty()) return;
  advance(event_time);
  const std::uint16_t url_hash = url_key(url);
  // A page's paragraphs are each in a part of their own: the parts, then the entries where each
  // key's probe begins, fetched before the first is counted.
  for (const std::uint64_t key : keys) __builtin_prefetch(&parts_[(key & kKeyBits) >> kPartShift]);
  for (const std::uint64_t key : keys) {
    const Part& part = parts_[(key & kKeyBits) >> kPartShift];
    if (part.capacity == 0) continue;
    const auto kept = static_cast<std::uint32_t>(key & kKeptBits);
    __builtin_prefetch(&part.data[Probe::home(hash(kept), part.capacity)]);
  }
  for (const std::uint64_t key : keys) count(key, url_hash, event_time);
}

PageParagraphs::PageParagraphs(std::string_view site, std::string_view text)
    : site_hash_(XXH3_64bits(site.data(), site.size())),
      text_hash_(XXH3_64bits(text.data(), text.size())),
      text_size_(text.size()),
      made_(true),
      no_site_(site.empty()) {
  normalized_.reserve(text.size());
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find("\n\n", pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view paragraph = text.substr(pos, end - pos);
    const std::size_t begin = pos;
    pos = end + 2;
    const std::string normalized = normalize_text(paragraph);
    if (normalized.empty()) continue;
    // The separator is a break between words: the whole text normalizes to its paragraphs'
    // normalized forms joined by spaces.
    if (!normalized_.empty()) normalized_ += ' ';
    paragraphs_.push_back(
        {.begin = begin,
         .size = paragraph.size(),
         .normalized_begin = normalized_.size(),
         .normalized_size = normalized.size(),
         .key = XXH3_64bits_withSeed(normalized.data(), normalized.size(), site_hash_),
         .teaser = is_teaser(paragraph)});
    normalized_ += normalized;
  }
}

bool PageParagraphs::of(std::string_view site, std::string_view text) const {
  return made_ && text.size() == text_size_ &&
         XXH3_64bits(site.data(), site.size()) == site_hash_ &&
         XXH3_64bits(text.data(), text.size()) == text_hash_;
}

std::string BoilerplateFilter::filter(std::string_view site, std::string_view url,
                                      std::string_view text, std::int64_t event_time,
                                      std::string_view title, std::vector<std::uint64_t>* keys,
                                      bool learn) {
  // Without a site (e.g. URNs of pre-extracted items) there is no template to learn.
  if (!options_.enabled || site.empty()) return std::string(text);
  return filter(PageParagraphs(site, text), url, text, event_time, title, keys, learn);
}

std::string BoilerplateFilter::filter(const PageParagraphs& page, std::string_view url,
                                      std::string_view text, std::int64_t event_time,
                                      std::string_view title, std::vector<std::uint64_t>* keys,
                                      bool learn, std::string* normalized) {
  // Without a site (e.g. URNs of pre-extracted items) there is no template to learn.
  if (!options_.enabled || page.no_site_) {
    if (normalized) *normalized = page.normalized_;
    return std::string(text);
  }
  if (learn) advance(event_time);
  const std::uint16_t url_hash = url_key(url);
  std::string kept;
  if (normalized) normalized->clear();
  for (const PageParagraphs::Paragraph& p : page.paragraphs_) {
    if (p.teaser) continue;
    if (keys) keys->push_back(p.key);
    if (learn ? count(p.key, url_hash, event_time) : known(p.key, url_hash)) continue;
    if (!kept.empty()) kept += "\n\n";
    kept.append(text.substr(p.begin, p.size));
    if (normalized) {
      if (!normalized->empty()) *normalized += ' ';
      normalized->append(page.normalized_, p.normalized_begin, p.normalized_size);
    }
  }
  // A page that is all furniture is known by its title; an empty text (or the furniture itself)
  // would make every such page an exact copy of every other.
  if (!kept.empty()) return kept;
  const std::string_view trimmed = trim_spaces(title);
  if (trimmed.empty()) {
    if (normalized) *normalized = page.normalized_;
    return std::string(text);
  }
  if (normalized) *normalized = normalize_text(trimmed);
  return std::string(trimmed);
}

template <class Gone>
void BoilerplateFilter::sweep(Gone gone) {
  for (Part& part : parts_) {
    if (part.size == 0) continue;
    std::uint32_t held = 0;
    for (Seen& s : part.entries()) {
      if (Traits::free(s)) continue;
      if (gone(s)) {
        s = Seen{};
      } else {
        ++held;
      }
    }
    if (held == part.size) continue;
    // Made again as a part grows: what left leaves no holes in the probe chains, and the table
    // shrinks with the window.
    size_ -= part.size - held;
    part.size = held;
    entries_ -= part.capacity;
    part.resize(held == 0 ? 0
                          : std::max<std::size_t>(Part::kMinCapacity,
                                                  held * std::size_t{100} / kGrownPercent + 1));
    entries_ += part.capacity;
  }
}

void BoilerplateFilter::end_bulk() {
  if (!bulk_) return;
  bulk_ = false;
  // Parts grown since are 50-90% full: those under three quarters are made 88% full (one at a
  // time they would be 75-90%).
  for (Part& part : parts_) {
    if (part.size * std::size_t{100} >= part.capacity * kGrownPercent) continue;
    entries_ -= part.capacity;
    part.resize(std::max<std::size_t>(Part::kMinCapacity,
                                      part.size * std::size_t{100} / kBulkEndPercent + 1));
    entries_ += part.capacity;
  }
}

void BoilerplateFilter::shrink() {
  // The time from which the newest 90% were seen; what was seen before it goes. Ties at it
  // stay, unless that would leave the filter full (pages all of one second).
  std::vector<std::uint32_t> times;
  times.reserve(size_);
  for (const Part& part : parts_) {
    for (const Seen& s : part.entries()) {
      if (!Traits::free(s)) times.push_back(s.last_time());
    }
  }
  const std::size_t keep = options_.max_entries * 9 / 10;
  if (times.size() <= keep) return;
  const auto cut = times.end() - static_cast<std::ptrdiff_t>(keep);
  std::nth_element(times.begin(), cut, times.end());
  const std::uint32_t horizon = keep > 0 ? *cut : UINT32_MAX;
  const auto kept = static_cast<std::size_t>(std::count_if(
      times.begin(), times.end(), [horizon](std::uint32_t t) { return t >= horizon; }));
  const bool ties_go = keep == 0 || kept >= options_.max_entries;
  sweep([&](const Seen& s) {
    return s.last_time() < horizon || (ties_go && s.last_time() == horizon);
  });
}

void BoilerplateFilter::expire(std::int64_t now) {
  last_sweep_ = now;
  const std::int64_t horizon = now - options_.window_seconds;
  sweep([&](const Seen& s) { return static_cast<std::int64_t>(s.last_time()) < horizon; });
}

void BoilerplateFilter::save(internal::Writer& w) const {
  for (const Part& part : parts_) part.save(w);
  w.varint(size_);
  w.signed_varint(watermark_);
  w.signed_varint(last_sweep_);
}

bool BoilerplateFilter::load(internal::Reader& r) {
  std::vector<Part> parts(kParts);
  std::size_t held = 0, entries = 0;
  for (Part& part : parts) {
    if (!part.load(r)) return false;
    held += part.size;
    entries += part.capacity;
  }
  const std::size_t size = r.varint();
  const std::int64_t watermark = r.signed_varint();
  const std::int64_t last_sweep = r.signed_varint();
  if (!r.ok() || held != size) return false;
  parts_ = std::move(parts);
  size_ = size;
  entries_ = entries;
  watermark_ = watermark;
  last_sweep_ = last_sweep;
  bulk_ = false;  // its parts are the saved filter's
  return true;
}

}  // namespace newsflow::dedup
