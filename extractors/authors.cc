#include "extractors/authors.h"

#include <algorithm>

#include "extractors/dates.h"
#include "extractors/text.h"

namespace newsflow::extractors {
namespace {

// Words that name a role or a desk, not a person ("Staff Writer", "Redaktion"): dropped at the
// end of a name, and a name of nothing else is none.
bool is_role_word(std::string_view lower) {
  static constexpr std::string_view kRoles[] = {"staff",
                                                "writer",
                                                "writers",
                                                "reporter",
                                                "reporters",
                                                "correspondent",
                                                "correspondents",
                                                "editor",
                                                "editors",
                                                "contributor",
                                                "contributors",
                                                "contributing",
                                                "senior",
                                                "chief",
                                                "redaktion",
                                                "redakteur",
                                                "redakteurin",
                                                "autor",
                                                "autorin",
                                                "author",
                                                "authors",
                                                "journalist",
                                                "correspondant",
                                                "rédaction",
                                                "redacción",
                                                "redazione",
                                                "redactie",
                                                "admin",
                                                "administrator",
                                                "guest",
                                                "newsroom",
                                                "staffer",
                                                "columnist",
                                                "photographer",
                                                "by",
                                                "and",
                                                "red",
                                                "desk",
                                                "team"};
  return std::find(std::begin(kRoles), std::end(kRoles), lower) != std::end(kRoles);
}

// Words that announce a date ("Veröffentlicht am", "Published on", "Mis à jour le"): what a byline
// leaves at its end once its date is cut, never the end of a name.
bool announces_date(std::string_view lower) {
  static constexpr std::string_view kWords[] = {"veröffentlicht",
                                                "aktualisiert",
                                                "erschienen",
                                                "stand",
                                                "am",
                                                "vom",
                                                "published",
                                                "updated",
                                                "posted",
                                                "on",
                                                "publié",
                                                "mis",
                                                "à",
                                                "jour",
                                                "le",
                                                "publicado",
                                                "actualizado",
                                                "el"};
  return std::find(std::begin(kWords), std::end(kWords), lower) != std::end(kWords);
}

// The days of the week and their neighbours, in English and German: what a dateline leaves in a
// byline once its date is cut.
bool is_day_word(std::string_view lower) {
  static constexpr std::string_view kDays[] = {
      "monday",     "tuesday", "wednesday", "thursday", "friday",   "saturday",
      "sunday",     "today",   "yesterday", "montag",   "dienstag", "mittwoch",
      "donnerstag", "freitag", "samstag",   "sonntag",  "heute",    "gestern"};
  return std::find(std::begin(kDays), std::end(kDays), lower) != std::end(kDays);
}

// Lowercase ASCII letters and digits of `s` and its other bytes, without a leading "the ": how two
// spellings of one name compare ("The Daily Ledger", "daily-ledger").
std::string name_key(std::string_view s) {
  std::string lower = ascii_lower(collapse_whitespace(s));
  if (lower.starts_with("the ")) lower.erase(0, 4);
  // A name written as the site's domain ("ElVallenc.cat", "hessenschau.de"): without its TLD.
  if (const std::size_t dot = lower.rfind('.');
      dot != std::string::npos && lower.find(' ') == std::string::npos && lower.size() - dot <= 5 &&
      std::all_of(lower.begin() + static_cast<std::ptrdiff_t>(dot) + 1, lower.end(),
                  [](char c) { return c >= 'a' && c <= 'z'; })) {
    lower.resize(dot);
  }
  std::string key;
  for (char c : lower) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || static_cast<unsigned char>(c) >= 0x80) {
      key += c;
    }
  }
  return key;
}

// A name as people write theirs: two to four words, each capitalized and of letters (a dot or a
// hyphen inside), none a word outlets are named with.
bool reads_as_person(std::string_view name) {
  static constexpr std::string_view kOutletWords[] = {
      "news",      "times",     "post",    "daily", "journal", "herald",  "tribune", "magazine",
      "media",     "press",     "radio",   "tv",    "online",  "blog",    "zeitung", "nachrichten",
      "gazette",   "chronicle", "review",  "today", "network", "report",  "weekly",  "express",
      "telegraph", "observer",  "courier", "star",  "mail",    "digital", "group",   "staff"};
  std::size_t words = 0;
  for (std::size_t i = 0; i < name.size();) {
    std::size_t end = name.find(' ', i);
    if (end == std::string_view::npos) end = name.size();
    const std::string_view w = name.substr(i, end - i);
    i = end + 1;
    if (w.empty()) continue;
    ++words;
    if (!(w[0] >= 'A' && w[0] <= 'Z') && static_cast<unsigned char>(w[0]) < 0x80) return false;
    for (char c : w) {
      if ((c >= '0' && c <= '9') || c == '&' || c == '/' || c == ':') return false;
    }
    std::string lower = ascii_lower(w);
    if (std::find(std::begin(kOutletWords), std::end(kOutletWords), lower) !=
        std::end(kOutletWords)) {
      return false;
    }
  }
  return words >= 2 && words <= 4;
}

// A name written as a web address ("INFORM.KZ", "ICI.Radio-Canada.ca", "uncut-news.ch"): an
// outlet's, never a person's.
bool reads_as_domain(std::string_view name) {
  const std::size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || dot == 0 || name.find(' ') != std::string_view::npos) {
    return false;
  }
  const std::string_view tld = name.substr(dot + 1);
  return tld.size() >= 2 && tld.size() <= 4 && std::all_of(tld.begin(), tld.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
         });
}

}  // namespace

bool is_news_agency(std::string_view name) {
  static constexpr std::string_view kAgencies[] = {"ap",
                                                   "associatedpress",
                                                   "reuters",
                                                   "thomsonreuters",
                                                   "afp",
                                                   "agencefrancepresse",
                                                   "dpa",
                                                   "deutschepresseagentur",
                                                   "apa",
                                                   "sda",
                                                   "keystonesda",
                                                   "ats",
                                                   "efe",
                                                   "agenciaefe",
                                                   "europapress",
                                                   "ansa",
                                                   "agenziaansa",
                                                   "pa",
                                                   "pamedia",
                                                   "pressassociation",
                                                   "upi",
                                                   "unitedpressinternational",
                                                   "xinhua",
                                                   "xinhuanewsagency",
                                                   "tass",
                                                   "ria",
                                                   "rianovosti",
                                                   "kyodo",
                                                   "kyodonews",
                                                   "yonhap",
                                                   "aap",
                                                   "australianassociatedpress",
                                                   "cp",
                                                   "canadianpress",
                                                   "kna",
                                                   "epd",
                                                   "anp",
                                                   "belga",
                                                   "ntb",
                                                   "tt",
                                                   "lusa",
                                                   "pap",
                                                   "ctk",
                                                   "bloomberg",
                                                   "ians",
                                                   "pti",
                                                   "ani",
                                                   "aa",
                                                   "anadoluagency",
                                                   "afpdpa",
                                                   "dpaafp",
                                                   "apdpa",
                                                   "dpaap",
                                                   "reutersdpa",
                                                   "dpareuters",
                                                   "afpreuters",
                                                   "reutersafp",
                                                   "apreuters",
                                                   "reutersap",
                                                   "dpatmn",
                                                   "apaots"};
  const std::string key = name_key(name);
  return !key.empty() &&
         std::find(std::begin(kAgencies), std::end(kAgencies), key) != std::end(kAgencies);
}

namespace {

// Whether a name credits no person: an agency, a web address, the site's own name (`site`, its
// `name_key`) unless that reads as a person's.
bool credits_no_person(const std::string& name, const std::string& site) {
  const bool site_own = !site.empty() && name_key(name) == site && !reads_as_person(name);
  return is_news_agency(name) || site_own || reads_as_domain(name);
}

}  // namespace

void drop_imprint_address(std::vector<std::string>& names, std::string_view site_name) {
  if (names.size() < 2 || !credits_no_person(names.front(), name_key(site_name))) return;
  names.erase(std::remove_if(names.begin() + 1, names.end(),
                             [](const std::string& n) { return !reads_as_person(n); }),
              names.end());
}

std::string take_credits(std::vector<std::string>& names, std::string_view site_name) {
  const std::string site = name_key(site_name);
  std::string credits;
  std::vector<std::string> people;
  for (auto& n : names) {
    if (credits_no_person(n, site)) {
      if (ascii_lower(credits).find(ascii_lower(n)) != std::string::npos) continue;  // once
      if (!credits.empty()) credits += ", ";
      credits += n;
    } else {
      people.push_back(std::move(n));
    }
  }
  names = std::move(people);
  return credits;
}

std::string staff_credit(std::string_view byline) {
  std::string s = collapse_whitespace(byline);
  // What follows the names ("Von Redaktion · 15. August 2022", "By Staff | Updated 12:30").
  for (std::string_view sep : {"\xC2\xB7", "|", "\xE2\x80\xA2", ",", " - ", "\xE2\x80\x94"}) {
    if (const std::size_t at = s.find(sep); at != std::string::npos) s.resize(at);
  }
  if (const std::size_t digit = s.find_first_of("0123456789"); digit != std::string::npos) {
    s.resize(digit);
  }
  s = collapse_whitespace(s);
  const std::string lower = ascii_lower(s);
  for (std::string_view prefix : {"by ", "von ", "par ", "por ", "door ", "di "}) {
    if (lower.starts_with(prefix)) {
      s.erase(0, prefix.size());
      break;
    }
  }
  if (s.empty() || s.size() > 40) return {};
  std::size_t roles = 0;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t end = s.find(' ', i);
    if (end == std::string::npos) end = s.size();
    std::string w = ascii_lower(std::string_view(s).substr(i, end - i));
    i = end + 1;
    while (!w.empty() && (w.back() == '.' || w.back() == ':' || w.back() == ',')) w.pop_back();
    if (w == "the") continue;
    if (!is_role_word(w) || w == "by" || w == "and") return {};
    ++roles;
  }
  return roles > 0 ? s : std::string();
}

std::string clean_byline(std::string_view text) {
  std::string s = collapse_whitespace(text);
  const std::string lower = ascii_lower(s.substr(0, 8));
  if (lower.starts_with("http://") || lower.starts_with("https://") || s.size() > 200) return {};
  for (std::string_view prefix : {"by ", "von ", "par ", "por ", "door ", "di "}) {
    if (lower.starts_with(prefix)) {
      s.erase(0, prefix.size());
      break;
    }
  }
  // "A and B" -> "A, B"; "A, Staff Writer, and B" -> "A, Staff Writer, B"
  for (std::size_t p; (p = s.find(", and ")) != std::string::npos;) s.replace(p, 6, ", ");
  for (std::size_t p; (p = s.find(" and ")) != std::string::npos;) s.replace(p, 5, ", ");
  while (!s.empty() && (s.back() == ',' || s.back() == ' ')) s.pop_back();
  return s.size() >= 2 ? s : std::string();
}

std::vector<std::string> split_authors(std::string_view text) {
  std::string s = collapse_whitespace(text);
  std::vector<std::string> out;
  if (s.empty() || s.size() > 400) return out;
  const std::string lower_head = ascii_lower(s.substr(0, 8));
  if (lower_head.starts_with("http://") || lower_head.starts_with("https://")) return out;
  // What is in parentheses is a note ("(www.dw.com)", "(left)"); quotes are not names (an
  // apostrophe inside a word, O'Brien, is).
  std::string plain;
  int depth = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '(') ++depth;
    const bool inside_word = c == '\'' && i > 0 && i + 1 < s.size() && s[i - 1] != ' ' &&
                             s[i + 1] != ' ' && s[i - 1] != ',' && s[i + 1] != ',';
    if (depth == 0 && c != '"' && (c != '\'' || inside_word)) plain += c;
    if (c == ')' && depth > 0) --depth;
  }
  // A date or a time ends the names ("Jane Doe 7 June 2020", "Jane Doe, Updated 12:30").
  if (const auto dates = find_text_dates(plain, SlashOrder::kDayFirst, 1); !dates.empty()) {
    plain.resize(dates.front().offset);
  }
  for (std::size_t i = 0; i + 3 < plain.size(); ++i) {
    if (plain[i] >= '0' && plain[i] <= '9' && (plain[i + 1] == ':' || plain[i + 2] == ':')) {
      plain.resize(i);
      break;
    }
  }
  // Separators between names, in the languages newsflow reads, as one ',' each.
  std::string spaced = " " + plain + " ";
  for (std::string_view sep :
       {" and ", " And ", " AND ",  " und ", " y ",    " et ",  " e ",  " en ",
        " i ",   " и ",   " ve ",   " og ",  " och ",  " ja ",  " és ", " dan ",
        " & ",   " / ",   " | ",    " · ",   " • ",    " - ",   " — ",  " – ",
        ";",     "|",     " with ", " mit ", " avec ", " con ", " com "}) {
    for (std::size_t p; (p = spaced.find(sep)) != std::string::npos;) {
      spaced.replace(p, sep.size(), ",");
    }
  }
  std::size_t pos = 0;
  while (pos <= spaced.size() && out.size() < 20) {
    std::size_t end = spaced.find(',', pos);
    if (end == std::string::npos) end = spaced.size();
    std::string part = collapse_whitespace(std::string_view(spaced).substr(pos, end - pos));
    pos = end + 1;
    // Leading "By", "Von", "Text:", "Analysis by".
    for (bool again = true; again;) {
      again = false;
      const std::string lower = ascii_lower(part);
      for (std::string_view prefix :
           {"by ",           "von ",         "par ",         "por ",        "door ",
            "di ",           "de ",          "av ",          "przez ",      "written by ",
            "posted by ",    "reported by ", "analysis by ", "opinion by ", "commentary by ",
            "interview by ", "text: ",       "text ",        "autor: ",     "autorin: ",
            "author: ",      "texte: ",      "texto: ",      "testo: ",     "von: ",
            "by: ",          "foto: ",       "fotos: ",      "photo: ",     "автор: ",
            "автор ",        "yazar: ",      "كتب ",         "بقلم "}) {
        if (lower.starts_with(prefix)) {
          part.erase(0, prefix.size());
          again = !part.empty();
          break;
        }
      }
    }
    // Words with an e-mail address or a URL are not part of a name.
    std::vector<std::string_view> words;
    for (std::size_t w = 0; w < part.size();) {
      std::size_t e = part.find(' ', w);
      if (e == std::string::npos) e = part.size();
      const std::string_view word = std::string_view(part).substr(w, e - w);
      w = e + 1;
      if (word.empty() || word.find('@') != std::string_view::npos ||
          word.find("://") != std::string_view::npos) {
        continue;
      }
      words.push_back(word);
    }
    // Roles at the end ("Jane Doe, Staff Writer"; "AP Auto Writer" keeps "AP Auto").
    const auto role = [](std::string_view word) {
      std::string lower = ascii_lower(word);
      while (!lower.empty() && (lower.back() == '.' || lower.back() == ':')) lower.pop_back();
      return is_role_word(lower);
    };
    const auto tail = [&role](std::string_view word) {
      std::string lower = ascii_lower(word);
      while (!lower.empty() && (lower.back() == '.' || lower.back() == ':')) lower.pop_back();
      return role(word) || announces_date(lower);
    };
    while (!words.empty() && tail(words.back())) words.pop_back();
    std::size_t first = 0;
    while (first < words.size() && role(words[first])) ++first;
    std::string name;
    for (std::size_t k = first; k < words.size(); ++k) {
      if (!name.empty()) name += ' ';
      name.append(words[k]);
    }
    while (!name.empty() && (name.back() == '.' || name.back() == ':' || name.back() == '-')) {
      name.pop_back();
    }
    if (name.size() < 2 || words.size() - first > 6 || name.size() > 80) continue;
    // A day of the week left of a dateline ("By Jane Doe Wednesday") is no name.
    if (is_day_word(ascii_lower(name))) continue;
    const std::string lower_name = ascii_lower(name);
    if (std::any_of(out.begin(), out.end(),
                    [&lower_name](const std::string& n) { return ascii_lower(n) == lower_name; })) {
      continue;
    }
    out.push_back(std::move(name));
  }
  return out;
}

}  // namespace newsflow::extractors
