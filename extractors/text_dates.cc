#include <algorithm>
#include <array>
#include <cctype>

#include "extractors/dates.h"
#include "extractors/internal/date_words.h"

// Dates written in text (`find_text_dates`), a URL's day (`url_date`) and a page's slash order:
// the matcher over the tokens of internal/date_words.h.

namespace newsflow::extractors {
namespace {

using internal::DateToken;
using internal::is_ordinal_suffix;
using internal::month_of;
using internal::role_word;

bool number(const std::vector<DateToken>& t, std::size_t i, int min_digits, int max_digits) {
  return i < t.size() && t[i].type == DateToken::Type::kNumber && t[i].digits >= min_digits &&
         t[i].digits <= max_digits;
}
bool punct(const std::vector<DateToken>& t, std::size_t i, char c) {
  return i < t.size() && t[i].type == DateToken::Type::kPunct && t[i].punct == c;
}
bool word(const std::vector<DateToken>& t, std::size_t i, std::string_view w) {
  return i < t.size() && t[i].type == DateToken::Type::kWord && t[i].word == w;
}
// Glued to the token before it (no space between).
bool glued(const std::vector<DateToken>& t, std::size_t i) {
  return i < t.size() && !t[i].space_before;
}

struct Match {
  int year = 0, month = 0, day = 0;
  std::size_t end = 0;  // one past its last token
};

// A date starting at token i, if one does.
std::optional<Match> match_at(const std::vector<DateToken>& t, std::size_t i, SlashOrder order) {
  if (i >= t.size()) return std::nullopt;
  // Not the tail of a longer number run (1.2.3.2020, 12-2020-06-07).
  if (i > 0 && !t[i].space_before &&
      (t[i - 1].type == DateToken::Type::kNumber ||
       (t[i - 1].type == DateToken::Type::kPunct &&
        (t[i - 1].punct == '.' || t[i - 1].punct == '/' || t[i - 1].punct == '-' ||
         t[i - 1].punct == ':')))) {
    return std::nullopt;
  }
  const auto not_continued = [&t](std::size_t end) {
    // 2020-06-07-3 or 07.06.2020.1 is something else; 07.06.2020. (a sentence's end) is a date.
    if (end >= t.size() || t[end].space_before) return true;
    if (t[end].type == DateToken::Type::kNumber) return false;
    if (t[end].type == DateToken::Type::kPunct &&
        (t[end].punct == '/' || t[end].punct == '-' || t[end].punct == '.')) {
      return !(end + 1 < t.size() && !t[end + 1].space_before &&
               t[end + 1].type == DateToken::Type::kNumber);
    }
    return true;
  };
  if (number(t, i, 4, 4)) {
    const int year = t[i].value;
    // 2020-06-07, 2020/06/07, 2020.06.07 (spaces allowed after dots)
    for (char sep : {'-', '/', '.'}) {
      if (punct(t, i + 1, sep) && number(t, i + 2, 1, 2) && punct(t, i + 3, sep) &&
          number(t, i + 4, 1, 2)) {
        if (sep != '.' &&
            (!glued(t, i + 1) || !glued(t, i + 2) || !glued(t, i + 3) || !glued(t, i + 4))) {
          continue;
        }
        if (!not_continued(i + 5)) return std::nullopt;
        return Match{year, t[i + 2].value, t[i + 4].value, i + 5};
      }
    }
    // 2020年6月7日, 2020년 6월 7일
    for (auto [y, m, d] : {std::array<std::string_view, 3>{"年", "月", "日"},
                           std::array<std::string_view, 3>{"년", "월", "일"}}) {
      if (word(t, i + 1, y) && number(t, i + 2, 1, 2) && word(t, i + 3, m) &&
          number(t, i + 4, 1, 2) && word(t, i + 5, d)) {
        return Match{year, t[i + 2].value, t[i + 4].value, i + 6};
      }
    }
    // 2020. június 7.
    if (punct(t, i + 1, '.') && i + 2 < t.size() && month_of(t[i + 2]) != 0 &&
        number(t, i + 3, 1, 2)) {
      return Match{year, month_of(t[i + 2]), t[i + 3].value, i + 4};
    }
    return std::nullopt;
  }
  if (number(t, i, 1, 2)) {
    const int first = t[i].value;
    // 07.06.2020, 7. 6. 2020, 07-06-2020, 07/06/2020
    for (char sep : {'.', '-', '/'}) {
      if (punct(t, i + 1, sep) && number(t, i + 2, 1, 2) && punct(t, i + 3, sep) &&
          number(t, i + 4, 4, 4)) {
        if (sep != '.' &&
            (!glued(t, i + 1) || !glued(t, i + 2) || !glued(t, i + 3) || !glued(t, i + 4))) {
          continue;
        }
        if (!not_continued(i + 5)) return std::nullopt;
        const int second = t[i + 2].value;
        const int year = t[i + 4].value;
        bool month_first = sep == '/' && order == SlashOrder::kMonthFirst;
        if (first > 12) month_first = false;
        if (second > 12) month_first = true;
        return month_first ? Match{year, first, second, i + 5} : Match{year, second, first, i + 5};
      }
    }
    // 28.09.19: a two-digit year, only in its strictest form (two digits each, dots, no spaces),
    // as German forums and tickers write it.
    if (number(t, i, 2, 2) && punct(t, i + 1, '.') && glued(t, i + 1) && number(t, i + 2, 2, 2) &&
        glued(t, i + 2) && punct(t, i + 3, '.') && glued(t, i + 3) && number(t, i + 4, 2, 2) &&
        glued(t, i + 4)) {
      if (!not_continued(i + 5)) return std::nullopt;
      const int yy = t[i + 4].value;
      return Match{yy < 70 ? 2000 + yy : 1900 + yy, t[i + 2].value, first, i + 5};
    }
    // 7. Juni 2020, 7th June 2020, 17 de marzo de 2020, 7 июня 2020, 1er mai 2020
    std::size_t k = i + 1;
    if (k < t.size() && glued(t, k) && (punct(t, k, '.') || is_ordinal_suffix(t[k]))) ++k;
    if (word(t, k, "de")) ++k;
    if (k < t.size() && month_of(t[k])) {
      const int month = month_of(t[k]);
      std::size_t y = k + 1;
      // The month in two calendars' names, as the Levant writes it: "24 نيسان / أبريل 2020".
      if (punct(t, y, '/') && y + 1 < t.size() && month_of(t[y + 1]) == month) y += 2;
      if (punct(t, y, '.')) ++y;
      if (punct(t, y, ',')) ++y;
      if (word(t, y, "de") || word(t, y, "del")) ++y;
      if (number(t, y, 4, 4)) return Match{t[y].value, month, first, y + 1};
    }
    return std::nullopt;
  }
  // June 7, 2020; Jun. 7th 2020; Dezember 16th, 2012 (the month is looked up only before a day)
  const std::size_t day_at = punct(t, i + 1, '.') ? i + 2 : i + 1;
  if (!number(t, day_at, 1, 2)) return std::nullopt;
  if (const int month = month_of(t[i]); month != 0) {
    std::size_t k = day_at;
    const int day = t[k].value;
    ++k;
    if (k < t.size() && glued(t, k) && is_ordinal_suffix(t[k])) ++k;
    if (punct(t, k, ',')) ++k;
    if (number(t, k, 4, 4)) return Match{t[k].value, month, day, k + 1};
  }
  return std::nullopt;
}

// A byte of a glued run of numbers: an ASCII digit, or a separator that glues a number to the
// one before it for `match_at` (. / - :).
bool run_byte(char c) {
  return (c >= '0' && c <= '9') || c == '.' || c == '/' || c == '-' || c == ':';
}

// Where to go on reading a glued run of numbers that goes on at `read` ("28.09.2019.28.09.2019."
// without a space): at the start of its last `keep` tokens. In such a run no token but its first
// can start a date (each is glued to a number or to a separator after one: the tail of a longer
// number), and a match reads at most 16 tokens ahead and its role word 6 behind, so the tokens
// between its first few and its last few are read by no match. Tokens there are single
// separators and runs of digits, so their starts are found from the run's end backwards.
std::size_t skip_number_run(std::string_view text, std::size_t read, std::size_t keep) {
  std::size_t end = read;
  while (end < text.size() && run_byte(text[end])) ++end;
  std::size_t at = end;
  for (std::size_t tokens = 0; at > read && tokens < keep; ++tokens) {
    if (text[at - 1] >= '0' && text[at - 1] <= '9') {
      while (at > read && text[at - 1] >= '0' && text[at - 1] <= '9') --at;
    } else {
      --at;
    }
  }
  return std::max(at, read);
}

std::optional<UnixSeconds> plausible(int year, int month, int day) {
  if (year < 1995 || year > 2100) return std::nullopt;
  return civil_day(year, month, day);
}

}  // namespace

std::vector<TextDate> find_text_dates(std::string_view text, SlashOrder order,
                                      std::size_t max_dates) {
  std::vector<TextDate> out;
  // Every date has a number: text without a digit (ASCII, or the lead byte of an Arabic-Indic
  // or fullwidth one) has none, and is not tokenized.
  if (std::none_of(text.begin(), text.end(), [](char c) {
        return (c >= '0' && c <= '9') || c == '\xD9' || c == '\xDB' || c == '\xEF';
      })) {
    return out;
  }
  // The tokens around the one matched at, read as the match moves on: a date spans at most a
  // dozen tokens and its role word is among the six before it, so a window of a few thousand
  // holds every token a match reads, and the memory stays the window's however long the text
  // (a page's text tokenized whole was 72 bytes a token: 0.8 GB for 8 MB of U+FFFD).
  constexpr std::size_t kAhead = 16, kBehind = 8, kWindow = 4096;
  std::vector<DateToken> tokens;
  std::size_t read = 0;  // text bytes tokenized
  bool space = true, more = true;
  std::size_t after_last = 0;  // the token after the previous date
  // Tokens of the glued run of ASCII numbers and separators read last (`skip_number_run`).
  constexpr std::size_t kRunHead = 32, kRunTail = 16;
  std::size_t run = 0;
  for (std::size_t i = 0; out.size() < max_dates; ++i) {
    if (i >= kWindow) {  // tokens before i - kBehind are read by no match again
      const std::size_t drop = i - kBehind;
      tokens.erase(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(drop));
      i -= drop;
      after_last = after_last > drop ? after_last - drop : 0;
    }
    for (DateToken t; more && tokens.size() < i + kAhead;) {
      more = internal::next_date_token(text, read, space, t);
      if (!more) break;
      const bool in_run = run_byte(text[t.begin]) &&
                          (t.type == DateToken::Type::kPunct || t.type == DateToken::Type::kNumber);
      run = !in_run ? 0 : t.space_before ? 1 : run + 1;
      tokens.push_back(std::move(t));
      if (run >= kRunHead && read < text.size() && run_byte(text[read])) {
        read = skip_number_run(text, read, kRunTail);
      }
    }
    if (i >= tokens.size()) break;
    const auto m = match_at(tokens, i, order);
    if (!m) continue;
    const auto day = plausible(m->year, m->month, m->day);
    if (!day) continue;
    TextDate d;
    d.day = *day;
    d.offset = tokens[i].begin;
    d.length = tokens[m->end - 1].end - tokens[i].begin;
    // The nearest role word among the six tokens before it (not past the previous date).
    for (std::size_t back = 1; back <= 6 && i >= back && i - back >= after_last; ++back) {
      const DateToken& w = tokens[i - back];
      if (w.type != DateToken::Type::kWord) continue;
      // The nearest word that says published or updated; else one that says "date".
      if (const DateRole r = role_word(w.word); r == DateRole::kDated) {
        if (d.role == DateRole::kUnknown) d.role = r;
      } else if (r != DateRole::kUnknown) {
        d.role = r;
        break;
      }
    }
    out.push_back(d);
    after_last = m->end;
    i = m->end - 1;
  }
  return out;
}

std::optional<UnixSeconds> url_date(std::string_view url) {
  // The path and query: after the scheme and host.
  std::size_t start = url.find("://");
  start = start == std::string_view::npos ? 0 : url.find('/', start + 3);
  if (start == std::string_view::npos) return std::nullopt;
  std::string_view path = url.substr(start);
  if (const std::size_t hash = path.find('#'); hash != std::string_view::npos) {
    path = path.substr(0, hash);
  }
  const auto digits_at = [&path](std::size_t i, std::size_t n, int& out) {
    if (i + n > path.size()) return false;
    int v = 0;
    for (std::size_t k = 0; k < n; ++k) {
      const char c = path[i + k];
      if (c < '0' || c > '9') return false;
      v = v * 10 + (c - '0');
    }
    out = v;
    return true;
  };
  const auto is_digit = [&path](std::size_t i) {
    return i < path.size() && path[i] >= '0' && path[i] <= '9';
  };
  for (std::size_t i = 1; i + 8 <= path.size(); ++i) {
    if (is_digit(i - 1) || !is_digit(i)) continue;
    int year = 0;
    if (!digits_at(i, 4, year) || year < 1995 || year > 2100) continue;
    const std::size_t j = i + 4;
    // YYYYMMDD between non-digits
    if (int m = 0, d = 0; digits_at(j, 2, m) && digits_at(j + 2, 2, d) && !is_digit(j + 4)) {
      if (auto day = plausible(year, m, d)) return day;
      continue;
    }
    // YYYY/MM/DD, YYYY-MM-DD, YYYY_MM_DD, with one- or two-digit month and day
    const char sep = j < path.size() ? path[j] : '\0';
    if (sep != '/' && sep != '-' && sep != '_') continue;
    std::size_t k = j + 1;
    int m = 0, d = 0;
    const std::size_t mlen = is_digit(k + 1) ? 2 : 1;
    if (!digits_at(k, mlen, m) || is_digit(k + mlen)) continue;
    k += mlen;
    if (k >= path.size() || path[k] != sep) continue;
    ++k;
    const std::size_t dlen = is_digit(k + 1) ? 2 : 1;
    if (!digits_at(k, dlen, d) || is_digit(k + dlen)) continue;
    // `/2023/10/3-fragen-an/`, `/2019/05/10-tips/`: after a year and month in folders, a number
    // the slug goes on from is the slug's own (WordPress' /%year%/%monthnum%/%postname%/), not
    // a day, which is a folder of its own.
    if (const char after = k + dlen < path.size() ? path[k + dlen] : '\0';
        sep == '/' &&
        (after == '-' || after == '_' || std::isalpha(static_cast<unsigned char>(after)))) {
      continue;
    }
    if (auto day = plausible(year, m, d)) return day;
  }
  return std::nullopt;
}

SlashOrder slash_order(std::string_view lang, std::string_view url) {
  if (lang != "en") return SlashOrder::kDayFirst;
  // English pages of countries that write the day first.
  std::size_t host_start = url.find("://");
  host_start = host_start == std::string_view::npos ? 0 : host_start + 3;
  std::string_view host = url.substr(host_start);
  host = host.substr(0, host.find_first_of("/:?#"));
  for (std::string_view tld : {".uk", ".au", ".nz", ".ie", ".in", ".za", ".ng", ".ke", ".pk", ".sg",
                               ".my", ".ph", ".gh", ".lk", ".bd"}) {
    if (host.ends_with(tld)) return SlashOrder::kDayFirst;
  }
  return SlashOrder::kMonthFirst;
}

}  // namespace newsflow::extractors
