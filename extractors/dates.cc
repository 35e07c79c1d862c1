#include "extractors/dates.h"

#include <algorithm>

#include "extractors/page.h"
#include "extractors/text.h"

// The choice of a page's dates among its candidates: one collector per source, then the surest
// of each role (`resolve_dates`).

namespace newsflow::extractors {

std::string_view date_source_name(DateSource s) {
  switch (s) {
    case DateSource::kNone:
      return "none";
    case DateSource::kUrl:
      return "url";
    case DateSource::kJsonLd:
      return "json_ld";
    case DateSource::kMeta:
      return "meta";
    case DateSource::kItemprop:
      return "itemprop";
    case DateSource::kTime:
      return "time_element";
    case DateSource::kDateElement:
      return "date_element";
    case DateSource::kHeaderText:
      return "header_text";
    case DateSource::kScriptData:
      return "script_data";
    case DateSource::kPageText:
      return "page_text";
  }
  return "none";
}

bool parse_date_sources(std::string_view list, DateSources& out) {
  DateSources set = 0;
  for (std::size_t pos = 0; pos <= list.size();) {
    std::size_t end = list.find(',', pos);
    if (end == std::string_view::npos) end = list.size();
    const std::string name = collapse_whitespace(list.substr(pos, end - pos));
    pos = end + 1;
    if (name.empty()) continue;
    bool known = false;
    for (int s = static_cast<int>(DateSource::kUrl); s <= static_cast<int>(DateSource::kScriptData);
         ++s) {
      if (date_source_name(static_cast<DateSource>(s)) == name) {
        set |= static_cast<DateSources>(1u << s);
        known = true;
      }
    }
    if (!known) return false;
  }
  out = set;
  return true;
}

namespace {

// The earliest day a web page can have been published.
constexpr UnixSeconds kFirstWebDay = 788918400;  // 1995-01-01

// Meta names that give the publication date, most specific first.
constexpr std::string_view kPublishedMetas[] = {"article:published_time",
                                                "og:published_time",
                                                "og:article:published_time",
                                                "article.published",
                                                "datepublished",
                                                "date_published",
                                                "published_time",
                                                "published-date",
                                                "published_date",
                                                "publication_date",
                                                "publish-date",
                                                "publish_date",
                                                "publishdate",
                                                "pubdate",
                                                "pub_date",
                                                "dc.date.issued",
                                                "dcterms.issued",
                                                "schema:datepublished",
                                                "sailthru.date",
                                                "parsely-pub-date",
                                                "citation_publication_date",
                                                "citation_online_date",
                                                "citation_date",
                                                "prism.publicationdate",
                                                "rnews:datepublished",
                                                "cxenseparse:recs:publishtime",
                                                "originalpublicationdate",
                                                "bt:pubdate",
                                                "og:pubdate",
                                                "article_date_original",
                                                "displaydate",
                                                "dc.date.published"};

// Meta names of a date that may be the publication's, or the page's creation or generation.
constexpr std::string_view kGenericMetas[] = {"dc.date.created",
                                              "dcterms.created",
                                              "schema:datecreated",
                                              "datecreated",
                                              "dc.date",
                                              "dcterms.date",
                                              "date"};

// Meta names that give the date of the last change.
constexpr std::string_view kModifiedMetas[] = {
    "article:modified_time", "og:updated_time",  "og:article:modified_time",
    "article.updated",       "datemodified",     "date_modified",
    "modified_time",         "dc.date.modified", "dcterms.modified",
    "schema:datemodified",   "last-modified",    "lastmod",
    "article:updated_time",  "updated_time",     "revised",
    "lastmodified"};

struct Candidate {
  UnixSeconds time;
  int offset;  // from UTC, as the page wrote it
  DateRole role;
  DateSource source;
  int tier;              // lower is surer
  std::size_t distance;  // from the headline, in words (ties within a tier)
  std::string detail;
};

// Tiers, surest first: the URL's day; what the page declares for machines (JSON-LD, the
// specific meta names, itemprop and <time> values) or tells the reader in so many words
// ("Veröffentlicht am ..."); generic meta names (date, dc.date: often the day the page was
// generated); elements whose class says published, dates after "Datum:"; <time> values of no
// role; elements whose class names a date; any date around the headline.
enum Tier : int {
  kUrlTier = 0,
  kDeclared = 1,
  kMarkedPublished = 2,
  kTimeUnmarked = 3,
  kDateClass = 4,
  kGenericMeta = 5,
  kNearHeadline = 6,
  kFarFromHeadline = 7,
  kMostFrequent = 8
};
// Within a tier, what is declared for machines comes before what is shown.
constexpr std::size_t kShown = 3000;

// The day (days since 1970-01-01) of a time.
constexpr UnixSeconds floor_day(UnixSeconds t) { return (t >= 0 ? t : t - 86399) / 86400; }

// The candidates of one page, and what each source reads them with.
class Candidates {
 public:
  explicit Candidates(const DateEvidence& ev)
      : ev_(ev), not_after_(ev.not_after ? *ev.not_after + 86400 : INT64_MAX) {}

  const DateEvidence& evidence() const { return ev_; }
  const std::vector<Candidate>& list() const { return list_; }
  bool in_range(UnixSeconds t) const { return t >= kFirstWebDay && t <= not_after_; }

  // A date an attribute or JSON-LD gives: ISO 8601, RFC 822, else a date written in it. The
  // offset from UTC it was written in is kept for the next `add(..., local)`.
  std::optional<UnixSeconds> read_value(std::string_view value) {
    offset_ = 0;
    const std::string v = collapse_whitespace(value);
    if (v.empty()) return std::nullopt;
    if (auto t = parse_iso8601(v, &offset_)) return t;
    if (auto t = parse_date(v)) return t;
    if (v.size() >= 10) {  // 2020-06-07 with a time in another shape
      if (auto t = parse_iso8601(std::string_view(v).substr(0, 10))) return t;
    }
    const auto found = find_text_dates(v, ev_.order, 1);
    if (!found.empty()) return found.front().day;
    return std::nullopt;
  }

  // Words from the headline; before it counts twice.
  std::size_t distance(std::size_t word) const {
    if (ev_.anchor_word == SIZE_MAX) return word;
    return word >= ev_.anchor_word ? word - ev_.anchor_word : 2 * (ev_.anchor_word - word);
  }

  // Words [first, end) as text, single-spaced; `starts`, when given, gets each word's offset.
  std::string render(std::size_t first, std::size_t end, std::vector<std::size_t>* starts) const {
    std::string out;
    if (!ev_.page) return out;
    end = std::min(end, ev_.page->words.size());
    for (std::size_t w = first; w < end; ++w) {
      if (!out.empty()) out += ' ';
      if (starts) starts->push_back(out.size());
      out.append(ev_.page->words[w].text);
    }
    return out;
  }

  // A candidate; `local` says that it was read by `read_value` (with its offset).
  void add(std::optional<UnixSeconds> t, DateRole role, DateSource source, int tier,
           std::size_t dist, std::string detail, bool local = false) {
    if (t && in_range(*t) && !(ev_.disabled & (1u << static_cast<unsigned>(source)))) {
      list_.push_back({*t, local ? offset_ : 0, role, source, tier, dist, std::move(detail)});
    }
  }

  // A date written in text, by what its words and its element say of it.
  // `precise`: the instant the element declares (read by `read_value`, with its offset); when it
  // falls on the day shown, it is that day with its time of day.
  void add_shown(const TextDate& d, DateRole element_role, DateSource source, Tier unmarked,
                 std::size_t dist, std::optional<UnixSeconds> precise = std::nullopt) {
    const bool exact = precise && floor_day(*precise + offset_) == floor_day(d.day);
    const std::optional<UnixSeconds> t = exact ? precise : std::optional<UnixSeconds>(d.day);
    const DateRole role = d.role != DateRole::kUnknown ? d.role : element_role;
    if (d.role == DateRole::kPublished ||
        (d.role == DateRole::kUnknown && element_role == DateRole::kPublished &&
         source == DateSource::kItemprop)) {
      add(t, DateRole::kPublished, source, kDeclared, kShown + dist, "", exact);
    } else if (role == DateRole::kModified) {
      add(t, role, source, kMarkedPublished, dist, "", exact);
    } else if (role != DateRole::kUnknown) {
      add(t, DateRole::kPublished, source, kMarkedPublished, dist, "", exact);
    } else {
      add(t, DateRole::kUnknown, source, unmarked, dist, "", exact);
    }
  }

  // The candidates from the `first`-th on that only an element's looks make a date (a <time> of
  // no role, a class that names a date) are weaker than any date near the headline.
  void demote_since(std::size_t first) {
    for (std::size_t i = first; i < list_.size(); ++i) {
      if (list_[i].tier == kTimeUnmarked || list_[i].tier == kDateClass) {
        list_[i].tier = kFarFromHeadline;
      }
    }
  }

  // Whether a publication date (or, `modified`, an update's) is declared for machines.
  bool declared(bool modified) const {
    return std::any_of(list_.begin(), list_.end(), [modified](const Candidate& c) {
      return c.tier <= kDeclared && (c.role == DateRole::kModified) == modified;
    });
  }

 private:
  const DateEvidence& ev_;
  const UnixSeconds not_after_;
  int offset_ = 0;  // of the last value read
  std::vector<Candidate> list_;
};

// The main JSON-LD object's dates.
void from_json_ld(Candidates& c) {
  const DateEvidence& ev = c.evidence();
  c.add(c.read_value(ev.json_ld_published), DateRole::kPublished, DateSource::kJsonLd, kDeclared, 0,
        "datePublished", true);
  c.add(c.read_value(ev.json_ld_modified), DateRole::kModified, DateSource::kJsonLd, kDeclared, 0,
        "dateModified", true);
}

// The page's meta tags, names as Dublin Core writes them with a dot (dcterms:created is
// dcterms.created), in page order.
std::vector<std::pair<std::string, std::string_view>> meta_names(const DateEvidence& ev) {
  std::vector<std::pair<std::string, std::string_view>> metas;
  if (!ev.metas) return metas;
  metas.reserve(ev.metas->size());
  for (const auto& [name, content] : *ev.metas) {
    std::string n(name);
    if (n.starts_with("dc:") || n.starts_with("dcterms:")) n[n.find(':')] = '.';
    metas.emplace_back(std::move(n), content);
  }
  return metas;
}

// The metas of one list, in its order of preference: a page's first meta of each name counts.
template <std::size_t N>
void from_metas(Candidates& c, const std::vector<std::pair<std::string, std::string_view>>& metas,
                const std::string_view (&names)[N], DateRole role, Tier tier) {
  for (std::size_t rank = 0; rank < N; ++rank) {
    for (const auto& [name, content] : metas) {
      if (name != names[rank]) continue;
      c.add(c.read_value(content), role, DateSource::kMeta, tier, 1 + rank, std::string(name),
            true);
      break;
    }
  }
}

// A publication date a script holds as data (as htmldate's search of the page for
// "datePublished" finds it): after every date shown around the headline, before the day the
// text names most often.
void from_script_data(Candidates& c) {
  c.add(c.read_value(c.evidence().script_published), DateRole::kPublished, DateSource::kScriptData,
        kNearHeadline, SIZE_MAX / 2, "", true);
}

// One marked element: its attribute, and the dates written in it.
void read_mark(Candidates& c, const DateMark& m) {
  const std::size_t dist = c.distance(m.first_word);
  const std::size_t end = std::min<std::size_t>(m.end_word, m.first_word + 40);
  // The dates written in it; returns whether one said it is the publication date.
  std::size_t shown = 0;  // dates its text gave
  const auto from_text = [&](DateSource source, Tier unmarked,
                             std::optional<UnixSeconds> precise = std::nullopt) {
    const std::string text = c.render(m.first_word, end, nullptr);
    bool published = false;
    for (const TextDate& d : find_text_dates(text, c.evidence().order, 4)) {
      c.add_shown(d, m.role, source, unmarked, dist, precise);
      published |= d.role == DateRole::kPublished;
      ++shown;
    }
    return published;
  };
  const Tier value_tier = m.role == DateRole::kUnknown ? kTimeUnmarked : kDeclared;
  switch (m.kind) {
    case DateMark::Kind::kItemprop:
      if (!m.value.empty()) {
        c.add(c.read_value(m.value), m.role, DateSource::kItemprop, kDeclared, 1000 + dist, "",
              true);
      } else {
        from_text(DateSource::kItemprop, kDateClass);
      }
      break;
    case DateMark::Kind::kTime: {
      // "Publié le 29 juin 2019" shown in a <time> whose datetime is another day: what the
      // reader is told is the publication date is. Its datetime on the day shown gives the time.
      const auto value = m.value.empty() ? std::nullopt : c.read_value(m.value);
      if (from_text(DateSource::kTime, kTimeUnmarked, value) || !value) break;
      c.add(value, m.role, DateSource::kTime, value_tier, 2000 + dist, "", true);
      break;
    }
    case DateMark::Kind::kAbbr:
      c.add(c.read_value(m.value), m.role, DateSource::kDateElement,
            m.role == DateRole::kUnknown ? kDateClass : kMarkedPublished, dist, "abbr", true);
      break;
    case DateMark::Kind::kClass:
      // "15 minutes ago" shown, the date itself in the element's title or datetime.
      from_text(DateSource::kDateElement, kDateClass);
      if (shown == 0 && !m.value.empty()) {
        c.add(c.read_value(m.value), m.role, DateSource::kDateElement, kDateClass, dist,
              "attribute", true);
      }
      break;
  }
}

// One marked element: its attribute, and the dates written in it. Far from the headline (more
// than 60 words before it or 200 after, or after the article's end: a sidebar's list, comments),
// an element whose looks alone say it holds a date is weaker than a date near the headline.
void from_mark(Candidates& c, const DateMark& m) {
  const DateEvidence& ev = c.evidence();
  const bool far = ev.anchor_word != SIZE_MAX && m.end_word > m.first_word &&
                   (m.first_word + 60 < ev.anchor_word || m.first_word > ev.anchor_word + 200 ||
                    (ev.article_end_word != SIZE_MAX && m.first_word >= ev.article_end_word));
  const std::size_t before = c.list().size();
  read_mark(c, m);
  if (far) c.demote_since(before);
}

// Dates written around the headline: from 60 words before it to 200 after, not past the
// article's end.
void from_headline_text(Candidates& c) {
  const DateEvidence& ev = c.evidence();
  if (!ev.page || ev.page->words.empty()) return;
  const std::size_t anchor = ev.anchor_word == SIZE_MAX ? 0 : ev.anchor_word;
  const std::size_t first = anchor > 60 ? anchor - 60 : 0;
  std::size_t end = anchor + 200;
  if (ev.article_end_word != SIZE_MAX && ev.article_end_word > anchor) {
    end = std::min(end, ev.article_end_word);
  }
  std::vector<std::size_t> starts;
  const std::string text = c.render(first, end, &starts);
  for (const TextDate& d : find_text_dates(text, ev.order, 16)) {
    const auto at = std::upper_bound(starts.begin(), starts.end(), d.offset) - starts.begin();
    const std::size_t word = first + static_cast<std::size_t>(std::max<std::ptrdiff_t>(at - 1, 0));
    c.add_shown(d, DateRole::kUnknown, DateSource::kHeaderText, kNearHeadline, c.distance(word));
  }
}

// The day the page's text names most often (ties: the first), as htmldate's extensive search
// does.
void from_page_text(Candidates& c) {
  const DateEvidence& ev = c.evidence();
  if (!ev.page) return;
  const std::string text = c.render(0, ev.page->words.size(), nullptr);  // no word is looked up
  std::vector<std::pair<UnixSeconds, std::size_t>> counts;  // day, count (first-seen order)
  for (const TextDate& d : find_text_dates(text, ev.order, 256)) {
    if (!c.in_range(d.day) || d.role == DateRole::kModified) continue;
    auto it = std::find_if(counts.begin(), counts.end(),
                           [&d](const auto& n) { return n.first == d.day; });
    if (it == counts.end()) {
      counts.emplace_back(d.day, 1);
    } else {
      ++it->second;
    }
  }
  const auto best =
      std::max_element(counts.begin(), counts.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  if (best != counts.end()) {
    c.add(best->first, DateRole::kUnknown, DateSource::kPageText, kMostFrequent, 0, "");
  }
}

// The day a candidate names, as the page wrote it (in its own offset from UTC).
UnixSeconds local_day(const Candidate& c) { return floor_day(c.time + c.offset); }

// A date shown in an element that names a date (`<time>` of no role, class "date") and that no
// other candidate of the page agrees with is weak evidence: a generic meta date (`date`,
// `dc.date`) that names another day is taken instead, as the page's own statement for machines.
const Candidate* unless_contradicted(const Candidate* pub, const std::vector<Candidate>& cands) {
  if (!pub || (pub->tier != kTimeUnmarked && pub->tier != kDateClass)) return pub;
  const UnixSeconds day = local_day(*pub);
  const Candidate* meta = nullptr;
  for (const Candidate& c : cands) {
    if (&c == pub || c.role == DateRole::kModified) continue;
    if (local_day(c) == day) return pub;  // another witness
    if (c.tier == kGenericMeta && !meta) meta = &c;
  }
  return meta ? meta : pub;
}

// Dates the page shows the reader (elements, text), as against what it declares for machines.
bool shown_source(DateSource s) {
  return s == DateSource::kTime || s == DateSource::kDateElement || s == DateSource::kHeaderText ||
         s == DateSource::kItemprop;
}

// A publication date declared for machines (JSON-LD, a publication meta) that no date the page
// shows agrees with, while the page shows one other day at least three times and more often
// than any other: the declared date is a template's or a feed's, and the shown day is taken.
const Candidate* unless_shown_otherwise(const Candidate* pub, const std::vector<Candidate>& cands) {
  if (!pub || pub->tier != kDeclared ||
      (pub->source != DateSource::kJsonLd && pub->source != DateSource::kMeta)) {
    return pub;
  }
  std::vector<std::pair<UnixSeconds, std::size_t>> days;  // shown day, how often
  for (const Candidate& c : cands) {
    if (c.role == DateRole::kModified || !shown_source(c.source)) continue;
    const UnixSeconds day = local_day(c);
    if (day == local_day(*pub)) return pub;  // a shown date agrees
    auto it =
        std::find_if(days.begin(), days.end(), [day](const auto& d) { return d.first == day; });
    if (it == days.end()) {
      days.emplace_back(day, 1);
    } else {
      ++it->second;
    }
  }
  std::sort(days.begin(), days.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  if (days.empty() || days[0].second < 3 || (days.size() > 1 && days[1].second == days[0].second)) {
    return pub;
  }
  const UnixSeconds day = days[0].first;
  const Candidate* best = nullptr;
  for (const Candidate& c : cands) {
    if (c.role == DateRole::kModified || !shown_source(c.source) || local_day(c) != day) continue;
    if (!best || c.tier < best->tier || (c.tier == best->tier && c.distance < best->distance)) {
      best = &c;
    }
  }
  return best;
}

// The page declares its publication on one day and its update on a later one, and its generic
// date (`date`, `dc.date`: the page's own statement of its day) names the update's day: the page
// was published again then (a story rewritten, a guide re-dated), and the update's instant is
// taken as its publication (the generic date often comes without its zone). A day the URL names
// is not overruled.
const Candidate* unless_republished(const Candidate* pub, const Candidate* mod,
                                    const std::vector<Candidate>& cands) {
  if (!pub || !mod || pub->source == DateSource::kUrl || mod->time <= pub->time ||
      local_day(*pub) == local_day(*mod)) {
    return pub;
  }
  const auto meta = std::find_if(cands.begin(), cands.end(), [](const Candidate& c) {
    return c.tier == kGenericMeta && c.role != DateRole::kModified;
  });
  return meta != cands.end() && local_day(*meta) == local_day(*mod) ? mod : pub;
}

// More than a day apart: two instants that no time zone puts on one day.
bool days_apart(const Candidate& a, const Candidate& b) {
  return (a.time > b.time ? a.time - b.time : b.time - a.time) > 86400;
}

// The JSON-LD publication date and a publication meta more than a day apart: the meta is taken
// when the page's generic date (`date`, `dc.date`) names the meta's day and is itself more than
// a day from the JSON-LD's: two of the page's statements for machines against one. (The
// update's day as the second witness was tried: it took the meta's day as often wrongly as
// rightly, where the metas name the last update.)
const Candidate* unless_disputed(const Candidate* pub, const std::vector<Candidate>& cands) {
  if (!pub || pub->source != DateSource::kJsonLd) return pub;
  const auto meta = std::find_if(cands.begin(), cands.end(), [pub](const Candidate& c) {
    return c.source == DateSource::kMeta && c.tier == kDeclared && c.role != DateRole::kModified &&
           local_day(c) != local_day(*pub);
  });
  if (meta == cands.end() || !days_apart(*meta, *pub)) return pub;
  const bool confirmed = std::any_of(cands.begin(), cands.end(), [&](const Candidate& c) {
    return c.tier == kGenericMeta && c.role != DateRole::kModified &&
           local_day(c) == local_day(*meta) && days_apart(c, *pub);
  });
  return confirmed ? &*meta : pub;
}

std::string explained(const Candidate& c) {
  std::string v(date_source_name(c.source));
  if (!c.detail.empty()) v += ":" + c.detail;
  return v + " " + format_rfc3339(c.time, c.offset);
}

// The surest candidate of each role (the first of the surest tier, nearest the headline);
// `modified` never before `published`; every other candidate listed as passed over.
PageDates choose(const std::vector<Candidate>& cands) {
  const auto better = [](const Candidate& a, const Candidate& b) {
    if (a.tier != b.tier) return a.tier < b.tier;
    return a.distance < b.distance;
  };
  const Candidate* pub = nullptr;
  const Candidate* mod = nullptr;
  for (const Candidate& c : cands) {
    if (c.role != DateRole::kModified) {
      if (!pub || better(c, *pub)) pub = &c;
    } else if (!mod || better(c, *mod)) {
      mod = &c;
    }
  }
  pub = unless_contradicted(pub, cands);
  pub = unless_shown_otherwise(pub, cands);
  pub = unless_disputed(pub, cands);
  pub = unless_republished(pub, mod, cands);
  // Only an update's date is known: it is the best guess of the publication day too.
  if (!pub && mod) pub = mod;
  PageDates out;
  if (pub) {
    out.published = pub->time;
    out.published_offset = pub->offset;
    out.published_from = pub->source;
    out.published_detail = pub->detail;
  }
  if (mod && pub && mod->time >= pub->time) {
    out.modified = mod->time;
    out.modified_offset = mod->offset;
    out.modified_from = mod->source;
    out.modified_detail = mod->detail;
  } else {
    mod = nullptr;
  }
  for (const Candidate& c : cands) {
    if (&c == pub || &c == mod) continue;
    out.passed_over.emplace_back(c.role == DateRole::kModified ? "modified_at" : "published_at",
                                 explained(c));
  }
  return out;
}

}  // namespace

PageDates resolve_dates(const DateEvidence& ev) {
  Candidates c(ev);
  c.add(url_date(ev.url), DateRole::kPublished, DateSource::kUrl, kUrlTier, 0, "");
  from_json_ld(c);
  const auto metas = meta_names(ev);
  from_metas(c, metas, kPublishedMetas, DateRole::kPublished, kDeclared);
  from_metas(c, metas, kGenericMetas, DateRole::kPublished, kGenericMeta);
  from_script_data(c);
  from_metas(c, metas, kModifiedMetas, DateRole::kModified, kDeclared);
  // What the page shows can change nothing once both dates are declared for machines (a shown
  // date never outranks a declared one): then it is not read at all.
  if (!c.declared(false) || !c.declared(true)) {
    if (ev.marks) {
      for (const DateMark& m : *ev.marks) from_mark(c, m);
    }
    from_headline_text(c);
  }
  // Nothing marked and nothing near the headline: the day the page's text names most often.
  if (std::none_of(c.list().begin(), c.list().end(),
                   [](const Candidate& k) { return k.role != DateRole::kModified; })) {
    from_page_text(c);
  }
  return choose(c.list());
}

}  // namespace newsflow::extractors
