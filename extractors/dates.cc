#include "extractors/dates.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <unordered_map>

#include "extractors/page.h"
#include "extractors/text.h"

namespace newsflow::extractors {
namespace {

// The earliest day a web page can have been published.
constexpr UnixSeconds kFirstWebDay = 788918400;  // 1995-01-01

// ---------------------------------------------------------------------------------------------
// Tokens of text: numbers, lowercased words, and single punctuation characters.

struct Token {
  enum class Type : std::uint8_t { kNumber, kWord, kPunct };
  Type type;
  bool space_before;
  std::uint8_t digits;  // of a number (more than 4 are counted as 5)
  int value;            // of a number
  char punct;           // an ASCII punctuation character; '\0' for any other
  std::size_t begin, end;
  std::string word;  // lowercased, of a word
};

// The code point of the UTF-8 sequence at s[i] and its length (1 for an invalid byte).
char32_t decode(std::string_view s, std::size_t i, std::size_t& len) {
  const auto c = static_cast<unsigned char>(s[i]);
  auto cont = [&](std::size_t k) {
    return i + k < s.size() && (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80
               ? static_cast<unsigned char>(s[i + k]) & 0x3F
               : 0x100;
  };
  if (c < 0x80) {
    len = 1;
    return c;
  }
  if (c >= 0xC2 && c < 0xE0 && cont(1) < 0x100) {
    len = 2;
    return (char32_t(c & 0x1F) << 6) | cont(1);
  }
  if (c >= 0xE0 && c < 0xF0 && cont(1) < 0x100 && cont(2) < 0x100) {
    len = 3;
    return (char32_t(c & 0x0F) << 12) | (cont(1) << 6) | cont(2);
  }
  if (c >= 0xF0 && c < 0xF5 && cont(1) < 0x100 && cont(2) < 0x100 && cont(3) < 0x100) {
    len = 4;
    return (char32_t(c & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3);
  }
  len = 1;
  return 0xFFFD;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Lowercase of the letters month names use: Latin-1, Latin Extended-A, Greek and Cyrillic.
char32_t to_lower(char32_t c) {
  if (c >= 'A' && c <= 'Z') return c + 32;
  if ((c >= 0xC0 && c <= 0xDE && c != 0xD7) || (c >= 0x391 && c <= 0x3AB && c != 0x3A2) ||
      (c >= 0x410 && c <= 0x42F)) {
    return c + 32;
  }
  if (c >= 0x400 && c <= 0x40F) return c + 80;
  if (c == 0x130) return 'i';
  if ((c >= 0x100 && c <= 0x137) || (c >= 0x14A && c <= 0x177)) return c | 1;
  if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E)) return (c & 1) ? c + 1 : c;
  return c;
}

// The value of a decimal digit in ASCII, Arabic-Indic, Extended Arabic-Indic or fullwidth form.
int digit_value(char32_t c) {
  if (c >= '0' && c <= '9') return static_cast<int>(c - '0');
  if (c >= 0x660 && c <= 0x669) return static_cast<int>(c - 0x660);
  if (c >= 0x6F0 && c <= 0x6F9) return static_cast<int>(c - 0x6F0);
  if (c >= 0xFF10 && c <= 0xFF19) return static_cast<int>(c - 0xFF10);
  return -1;
}

bool is_space(char32_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' || c == 0xA0 ||
         (c >= 0x2000 && c <= 0x200B) || c == 0x202F || c == 0x205F || c == 0x3000 || c == 0xFEFF;
}

// Characters that stand as a token of their own: the ideographs and syllables of Chinese,
// Japanese and Korean (年, 月, 日, 년, 월, 일 among them).
bool single_char_token(char32_t c) {
  return (c >= 0x3040 && c <= 0x30FF) || (c >= 0x3400 && c <= 0x9FFF) ||
         (c >= 0xAC00 && c <= 0xD7AF) || (c >= 0xF900 && c <= 0xFAFF);
}

bool is_letter(char32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  if (c == 0xD7 || c == 0xF7) return false;
  return (c >= 0xAA && c < 0x2000) || (c >= 0x2C00 && c < 0x3000) || (c >= 0xFB00 && c < 0xFF00);
}

// The next token of `text` from `i` on (whitespace skipped; `space` says whether some was, and
// starts true), or false at the end. One token at a time, so the caller holds only the few it
// matches against, whatever the text's length.
bool next_token(std::string_view text, std::size_t& i, bool& space, Token& t) {
  std::size_t len = 1;
  while (i < text.size()) {
    const char32_t c = decode(text, i, len);
    if (is_space(c)) {
      space = true;
      i += len;
      continue;
    }
    t = Token{};
    t.space_before = space;
    t.begin = i;
    space = false;
    if (digit_value(c) >= 0) {
      t.type = Token::Type::kNumber;
      int digits = 0, value = 0;
      while (i < text.size()) {
        const char32_t d = decode(text, i, len);
        const int v = digit_value(d);
        if (v < 0) break;
        if (digits < 5) value = value * 10 + v;
        ++digits;
        i += len;
      }
      t.digits = static_cast<std::uint8_t>(std::min(digits, 5));
      t.value = value;
    } else if (single_char_token(c)) {
      t.type = Token::Type::kWord;
      t.word.assign(text.substr(i, len));
      i += len;
    } else if (is_letter(c)) {
      t.type = Token::Type::kWord;
      while (i < text.size()) {
        const char32_t d = decode(text, i, len);
        if (!is_letter(d) || single_char_token(d)) break;
        if (t.word.size() < 32) append_utf8(t.word, to_lower(d));
        i += len;
      }
    } else {
      t.type = Token::Type::kPunct;
      t.punct = c < 0x80 ? static_cast<char>(c) : '\0';
      i += len;
    }
    t.end = i;
    return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Month names, lowercase, with their common abbreviations.

const std::unordered_map<std::string_view, int>& month_names() {
  static const auto* names = [] {
    auto* m = new std::unordered_map<std::string_view, int>;
    const auto add = [m](int month, std::initializer_list<std::string_view> words) {
      for (std::string_view w : words) m->emplace(w, month);
    };
    // English, German, French, Spanish, Portuguese, Italian, Dutch, Scandinavian, Indonesian,
    // Polish (nominative and genitive), Czech, Russian and Ukrainian (genitive and nominative),
    // Turkish, Finnish (partitive), Hungarian, Greek (genitive), Arabic (Egyptian and Levantine
    // single-word names).
    add(1, {"january",  "jan",      "januar",     "jänner",     "janvier", "janv",
            "enero",    "ene",      "janeiro",    "gennaio",    "gen",     "januari",
            "styczeń",  "stycznia", "sty",        "leden",      "ledna",   "января",
            "январь",   "янв",      "січня",      "січень",     "ocak",    "tammikuuta",
            "tammikuu", "január",   "ιανουαρίου", "ιανουάριος", "يناير",   "كانون"});
    add(2,
        {"february",    "feb",       "februar", "février",    "fevrier",  "févr",    "fév",
         "febrero",     "fevereiro", "fev",     "febbraio",   "februari", "luty",    "lutego",
         "lut",         "únor",      "února",   "февраля",    "февраль",  "фев",     "лютого",
         "лютий",       "şubat",     "subat",   "helmikuuta", "helmikuu", "február", "φεβρουαρίου",
         "φεβρουάριος", "فبراير",    "شباط"});
    add(3, {"march",     "mar",     "märz",    "maerz",    "mär",    "mars",
            "marzo",     "março",   "marco",   "maart",    "mrt",    "marts",
            "maret",     "marzec",  "marca",   "březen",   "března", "марта",
            "март",      "мар",     "березня", "березень", "mart",   "maaliskuuta",
            "maaliskuu", "március", "μαρτίου", "μάρτιος",  "مارس",   "آذار"});
    add(4, {"april",    "apr",      "avril",   "avr",   "abril",      "abr",      "aprile",
            "kwiecień", "kwietnia", "kwi",     "duben", "dubna",      "апреля",   "апрель",
            "апр",      "квітня",   "квітень", "nisan", "huhtikuuta", "huhtikuu", "április",
            "απριλίου", "απρίλιος", "أبريل",   "ابريل", "إبريل",      "نيسان"});
    add(5, {"may",     "mai",   "mayo",   "maio",       "maggio",   "mag",   "mei",
            "maj",     "maja",  "květen", "května",     "мая",      "май",   "травня",
            "травень", "mayıs", "mayis",  "toukokuuta", "toukokuu", "május", "μαΐου",
            "μάιος",   "مايو",  "أيار",   "ايار"});
    add(6, {"june",   "jun",      "juni",    "juin",    "junio",   "junho",     "giugno",
            "giu",    "czerwiec", "czerwca", "cze",     "červen",  "června",    "июня",
            "июнь",   "июн",      "червня",  "червень", "haziran", "kesäkuuta", "kesäkuu",
            "június", "ιουνίου",  "ιούνιος", "يونيو",   "يونيه",   "حزيران"});
    add(7, {"july",     "jul",    "juli",    "juillet", "juil",   "julio",    "julho",
            "luglio",   "lug",    "lipiec",  "lipca",   "lip",    "červenec", "července",
            "июля",     "июль",   "июл",     "липня",   "липень", "temmuz",   "heinäkuuta",
            "heinäkuu", "július", "ιουλίου", "ιούλιος", "يوليو",  "يوليه",    "تموز"});
    add(8, {"august",    "aug",       "août",    "aout",     "agosto",   "ago",
            "augustus",  "augusti",   "agustus", "sierpień", "sierpnia", "sie",
            "srpen",     "srpna",     "августа", "август",   "авг",      "серпня",
            "серпень",   "ağustos",   "agustos", "elokuuta", "elokuu",   "augusztus",
            "αυγούστου", "αύγουστος", "أغسطس",   "اغسطس",    "آب"});
    add(9, {"september",   "sep",      "sept",      "septembre", "septiembre", "setiembre",
            "setembro",    "set",      "settembre", "wrzesień",  "września",   "wrz",
            "září",        "сентября", "сентябрь",  "сен",       "вересня",    "вересень",
            "eylül",       "eylul",    "syyskuuta", "syyskuu",   "szeptember", "σεπτεμβρίου",
            "σεπτέμβριος", "سبتمبر",   "أيلول",     "ايلول"});
    add(10, {"october",   "oct",       "oktober", "okt",       "octobre",     "octubre",
             "outubro",   "out",       "ottobre", "ott",       "październik", "października",
             "paź",       "říjen",     "října",   "октября",   "октябрь",     "окт",
             "жовтня",    "жовтень",   "ekim",    "lokakuuta", "lokakuu",     "október",
             "οκτωβρίου", "οκτώβριος", "أكتوبر",  "اكتوبر",    "تشرين"});
    add(11,
        {"november", "nov",       "novembre",    "noviembre", "novembro",  "listopad",  "listopada",
         "lis",      "listopadu", "ноября",      "ноябрь",    "ноя",       "листопада", "листопад",
         "kasım",    "kasim",     "marraskuuta", "marraskuu", "νοεμβρίου", "νοέμβριος", "نوفمبر"});
    add(12, {"december", "dec",        "dezember", "dez",        "décembre",   "decembre",
             "déc",      "diciembre",  "dic",      "dezembro",   "dicembre",   "desember",
             "des",      "grudzień",   "grudnia",  "gru",        "prosinec",   "prosince",
             "декабря",  "декабрь",    "дек",      "грудня",     "грудень",    "aralık",
             "aralik",   "joulukuuta", "joulukuu", "δεκεμβρίου", "δεκέμβριος", "ديسمبر"});
    return m;
  }();
  return *names;
}

int month_of(const Token& t) {
  if (t.type != Token::Type::kWord) return 0;
  const auto& names = month_names();
  const auto it = names.find(t.word);
  return it == names.end() ? 0 : it->second;
}

// Words that say what the date after them is.
DateRole role_word(std::string_view w) {
  static constexpr std::string_view kModified[] = {
      "updated",       "update",     "aktualisiert",   "aktualisierung",
      "geändert",      "modified",   "changed",        "revised",
      "mis",           "maj",        "actualizado",    "actualizada",
      "actualización", "aggiornato", "aggiornamento",  "atualizado",
      "atualização",   "bijgewerkt", "zaktualizowano", "aktualizacja",
      "обновлено",     "оновлено",   "güncellendi",    "güncelleme",
      "päivitetty",    "frissítve",  "diperbarui",     "stand",
      "modifié",       "modifiée",   "ενημερώθηκε",    "تحديث",
      "更新"};
  static constexpr std::string_view kPublished[] = {
      "published",    "posted",     "publié",       "publiée",     "publication",  "veröffentlicht",
      "erschienen",   "publicado",  "publicada",    "publicación", "pubblicato",   "pubblicata",
      "gepubliceerd", "geplaatst",  "opublikowano", "publikacja",  "опубликовано", "опубліковано",
      "yayınlanma",   "yayınlandı", "julkaistu",    "közzétéve",   "diterbitkan",  "δημοσιεύθηκε",
      "نشر",          "نشره",       "نشرت",         "发布",        "發佈",         "發布"};
  // Words that name a date without saying which: read as the publication date, less surely.
  static constexpr std::string_view kDate[] = {"written", "created", "erstellt", "datum",
                                               "date",    "fecha",   "data",     "dátum"};
  for (std::string_view m : kModified) {
    if (w == m) return DateRole::kModified;
  }
  for (std::string_view p : kPublished) {
    if (w == p) return DateRole::kPublished;
  }
  for (std::string_view d : kDate) {
    if (w == d) return DateRole::kDated;
  }
  return DateRole::kUnknown;
}

bool is_ordinal_suffix(const Token& t) {
  if (t.type == Token::Type::kPunct) return false;
  static constexpr std::string_view kSuffixes[] = {"st",  "nd", "rd", "th", "er", "e",
                                                   "ème", "º",  "ª",  "o",  "a",  "ci"};
  for (std::string_view s : kSuffixes) {
    if (t.word == s) return true;
  }
  return false;
}

bool number(const std::vector<Token>& t, std::size_t i, int min_digits, int max_digits) {
  return i < t.size() && t[i].type == Token::Type::kNumber && t[i].digits >= min_digits &&
         t[i].digits <= max_digits;
}
bool punct(const std::vector<Token>& t, std::size_t i, char c) {
  return i < t.size() && t[i].type == Token::Type::kPunct && t[i].punct == c;
}
bool word(const std::vector<Token>& t, std::size_t i, std::string_view w) {
  return i < t.size() && t[i].type == Token::Type::kWord && t[i].word == w;
}
// Glued to the token before it (no space between).
bool glued(const std::vector<Token>& t, std::size_t i) {
  return i < t.size() && !t[i].space_before;
}

struct Match {
  int year = 0, month = 0, day = 0;
  std::size_t end = 0;  // one past its last token
};

// A date starting at token i, if one does.
std::optional<Match> match_at(const std::vector<Token>& t, std::size_t i, SlashOrder order) {
  if (i >= t.size()) return std::nullopt;
  // Not the tail of a longer number run (1.2.3.2020, 12-2020-06-07).
  if (i > 0 && !t[i].space_before &&
      (t[i - 1].type == Token::Type::kNumber ||
       (t[i - 1].type == Token::Type::kPunct &&
        (t[i - 1].punct == '.' || t[i - 1].punct == '/' || t[i - 1].punct == '-' ||
         t[i - 1].punct == ':')))) {
    return std::nullopt;
  }
  const auto not_continued = [&t](std::size_t end) {
    // 2020-06-07-3 or 07.06.2020.1 is something else; 07.06.2020. (a sentence's end) is a date.
    if (end >= t.size() || t[end].space_before) return true;
    if (t[end].type == Token::Type::kNumber) return false;
    if (t[end].type == Token::Type::kPunct &&
        (t[end].punct == '/' || t[end].punct == '-' || t[end].punct == '.')) {
      return !(end + 1 < t.size() && !t[end + 1].space_before &&
               t[end + 1].type == Token::Type::kNumber);
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
  std::vector<Token> tokens;
  std::size_t read = 0;  // text bytes tokenized
  bool space = true, more = true;
  std::size_t after_last = 0;  // the token after the previous date
  for (std::size_t i = 0; out.size() < max_dates; ++i) {
    if (i >= kWindow) {  // tokens before i - kBehind are read by no match again
      const std::size_t drop = i - kBehind;
      tokens.erase(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(drop));
      i -= drop;
      after_last = after_last > drop ? after_last - drop : 0;
    }
    for (Token t; more && tokens.size() < i + kAhead;) {
      more = next_token(text, read, space, t);
      if (more) tokens.push_back(std::move(t));
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
      const Token& w = tokens[i - back];
      if (w.type != Token::Type::kWord) continue;
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

namespace {

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

}  // namespace

PageDates resolve_dates(const DateEvidence& ev) {
  const UnixSeconds not_after = ev.not_after ? *ev.not_after + 86400 : INT64_MAX;
  const auto in_range = [not_after](UnixSeconds t) { return t >= kFirstWebDay && t <= not_after; };
  // A date an attribute or JSON-LD gives: ISO 8601, RFC 822, else a date written in it.
  // The offset from UTC the last value read was written in.
  int offset = 0;
  const auto read_value = [&ev, &offset](std::string_view value) -> std::optional<UnixSeconds> {
    offset = 0;
    const std::string v = collapse_whitespace(value);
    if (v.empty()) return std::nullopt;
    if (auto t = parse_iso8601(v, &offset)) return t;
    if (auto t = parse_date(v)) return t;
    if (v.size() >= 10) {  // 2020-06-07 with a time in another shape
      if (auto t = parse_iso8601(std::string_view(v).substr(0, 10))) return t;
    }
    const auto found = find_text_dates(v, ev.order, 1);
    if (!found.empty()) return found.front().day;
    return std::nullopt;
  };
  const auto distance = [&ev](std::size_t word) -> std::size_t {
    if (ev.anchor_word == SIZE_MAX) return word;
    return word >= ev.anchor_word ? word - ev.anchor_word : 2 * (ev.anchor_word - word);
  };
  const ParsedPage* page = ev.page;
  // Words [first, end) as text, single-spaced; `starts`, when given, gets each word's offset.
  const auto render = [page](std::size_t first, std::size_t end, std::vector<std::size_t>* starts) {
    std::string out;
    if (!page) return out;
    end = std::min(end, page->words.size());
    for (std::size_t w = first; w < end; ++w) {
      if (!out.empty()) out += ' ';
      if (starts) starts->push_back(out.size());
      out.append(page->words[w].text);
    }
    return out;
  };

  std::vector<Candidate> cands;
  // A candidate; `local` says that it was read by `read_value` (with its offset).
  const auto add = [&](std::optional<UnixSeconds> t, DateRole role, DateSource source, int tier,
                       std::size_t dist, std::string detail, bool local = false) {
    if (t && in_range(*t)) {
      cands.push_back({*t, local ? offset : 0, role, source, tier, dist, std::move(detail)});
    }
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
    kMostFrequent = 7
  };
  // Within a tier, what is declared for machines comes before what is shown.
  constexpr std::size_t kShown = 3000;
  // A date written in text, by what its words and its element say of it.
  const auto add_shown = [&](const TextDate& d, DateRole element_role, DateSource source,
                             Tier unmarked, std::size_t dist) {
    DateRole role = d.role != DateRole::kUnknown ? d.role : element_role;
    if (d.role == DateRole::kPublished ||
        (d.role == DateRole::kUnknown && element_role == DateRole::kPublished &&
         source == DateSource::kItemprop)) {
      add(d.day, DateRole::kPublished, source, kDeclared, kShown + dist, "");
    } else if (role == DateRole::kModified) {
      add(d.day, role, source, kMarkedPublished, dist, "");
    } else if (role != DateRole::kUnknown) {
      add(d.day, DateRole::kPublished, source, kMarkedPublished, dist, "");
    } else {
      add(d.day, DateRole::kUnknown, source, unmarked, dist, "");
    }
  };

  add(url_date(ev.url), DateRole::kPublished, DateSource::kUrl, kUrlTier, 0, "");

  add(read_value(ev.json_ld_published), DateRole::kPublished, DateSource::kJsonLd, kDeclared, 0,
      "datePublished", true);
  add(read_value(ev.json_ld_modified), DateRole::kModified, DateSource::kJsonLd, kDeclared, 0,
      "dateModified", true);
  // Dublin Core names are written with a dot or a colon (dcterms.created, dcterms:created).
  const auto dc_name = [](std::string_view name) {
    std::string n(name);
    if (n.starts_with("dc:") || n.starts_with("dcterms:")) n[n.find(':')] = '.';
    return n;
  };
  std::vector<std::pair<std::string, std::string_view>> metas;
  if (ev.metas) {
    metas.reserve(ev.metas->size());
    for (const auto& [name, content] : *ev.metas) metas.emplace_back(dc_name(name), content);
  }
  // Each list in its order of preference: a page's first meta of each name counts.
  const auto add_metas = [&](const auto& names, DateRole role, Tier tier) {
    for (std::size_t rank = 0; rank < std::size(names); ++rank) {
      for (const auto& [name, content] : metas) {
        if (name != names[rank]) continue;
        add(read_value(content), role, DateSource::kMeta, tier, 1 + rank, std::string(name), true);
        break;
      }
    }
  };
  add_metas(kPublishedMetas, DateRole::kPublished, kDeclared);
  add_metas(kGenericMetas, DateRole::kPublished, kGenericMeta);
  // A publication date a script holds as data (as htmldate's search of the page for
  // "datePublished" finds it): after every date shown around the headline, before the day the
  // text names most often.
  add(read_value(ev.script_published), DateRole::kPublished, DateSource::kScriptData, kNearHeadline,
      SIZE_MAX / 2, "", true);
  add_metas(kModifiedMetas, DateRole::kModified, kDeclared);

  // What the page shows can change nothing once both dates are declared for machines (a shown
  // date never outranks a declared one): then it is not read at all.
  const auto declared = [&cands](bool modified) {
    return std::any_of(cands.begin(), cands.end(), [modified](const Candidate& c) {
      return c.tier <= kDeclared && (c.role == DateRole::kModified) == modified;
    });
  };
  const bool settled = declared(false) && declared(true);

  // Marked elements: their attribute, and the dates written in them.
  if (ev.marks && !settled) {
    for (const DateMark& m : *ev.marks) {
      const std::size_t dist = distance(m.first_word);
      const std::size_t end = std::min<std::size_t>(m.end_word, m.first_word + 40);
      // The dates written in it; returns whether one said it is the publication date.
      std::size_t shown = 0;  // dates its text gave
      const auto from_text = [&](DateSource source, Tier unmarked) {
        const std::string text = render(m.first_word, end, nullptr);
        bool published = false;
        for (const TextDate& d : find_text_dates(text, ev.order, 4)) {
          add_shown(d, m.role, source, unmarked, dist);
          published |= d.role == DateRole::kPublished;
          ++shown;
        }
        return published;
      };
      const Tier value_tier = m.role == DateRole::kUnknown ? kTimeUnmarked : kDeclared;
      switch (m.kind) {
        case DateMark::Kind::kItemprop:
          if (!m.value.empty()) {
            add(read_value(m.value), m.role, DateSource::kItemprop, kDeclared, 1000 + dist, "",
                true);
          } else {
            from_text(DateSource::kItemprop, kDateClass);
          }
          break;
        case DateMark::Kind::kTime:
          // "Publié le 29 juin 2019" shown in a <time> whose datetime is another day: what the
          // reader is told is the publication date is.
          if (from_text(DateSource::kTime, kTimeUnmarked) || m.value.empty()) break;
          add(read_value(m.value), m.role, DateSource::kTime, value_tier, 2000 + dist, "", true);
          break;
        case DateMark::Kind::kAbbr:
          add(read_value(m.value), m.role, DateSource::kDateElement,
              m.role == DateRole::kUnknown ? kDateClass : kMarkedPublished, dist, "abbr", true);
          break;
        case DateMark::Kind::kClass:
          // "15 minutes ago" shown, the date itself in the element's title or datetime.
          from_text(DateSource::kDateElement, kDateClass);
          if (shown == 0 && !m.value.empty()) {
            add(read_value(m.value), m.role, DateSource::kDateElement, kDateClass, dist,
                "attribute", true);
          }
          break;
      }
    }
  }

  // Written around the headline.
  if (page && !page->words.empty() && !settled) {
    const std::size_t anchor = ev.anchor_word == SIZE_MAX ? 0 : ev.anchor_word;
    const std::size_t first = anchor > 60 ? anchor - 60 : 0;
    std::vector<std::size_t> starts;
    const std::string text = render(first, anchor + 200, &starts);
    for (const TextDate& d : find_text_dates(text, ev.order, 16)) {
      const auto at = std::upper_bound(starts.begin(), starts.end(), d.offset) - starts.begin();
      const std::size_t word =
          first + static_cast<std::size_t>(std::max<std::ptrdiff_t>(at - 1, 0));
      add_shown(d, DateRole::kUnknown, DateSource::kHeaderText, kNearHeadline, distance(word));
    }
  }

  // Nothing marked and nothing near the headline: the day the page's text names most often
  // (ties: the first), as htmldate's extensive search does.
  if (page && std::none_of(cands.begin(), cands.end(),
                           [](const Candidate& c) { return c.role != DateRole::kModified; })) {
    const std::string text = render(0, page->words.size(), nullptr);  // no word is looked up
    std::vector<std::pair<UnixSeconds, std::size_t>> counts;  // day, count (first-seen order)
    for (const TextDate& d : find_text_dates(text, ev.order, 256)) {
      if (!in_range(d.day) || d.role == DateRole::kModified) continue;
      auto it = std::find_if(counts.begin(), counts.end(),
                             [&d](const auto& c) { return c.first == d.day; });
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
      add(best->first, DateRole::kUnknown, DateSource::kPageText, kMostFrequent, 0, "");
    }
  }

  PageDates out;
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
  // Only an update's date is known: it is the best guess of the publication day too.
  if (!pub && mod) pub = mod;
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
  }
  return out;
}

}  // namespace newsflow::extractors
