#include "extractors/internal/date_words.h"

#include <algorithm>
#include <unordered_map>

#include "extractors/text.h"

namespace newsflow::extractors::internal {
namespace {

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

// The code point at text[i] and its length: ASCII read in place, the rest decoded.
char32_t code_point(std::string_view text, std::size_t i, std::size_t& len) {
  const auto b = static_cast<unsigned char>(text[i]);
  if (b < 0x80) {
    len = 1;
    return b;
  }
  return decode_utf8(text, i, len);
}

// The length of the whitespace character at text[i] (`whitespace_prefix`), ASCII read in place.
std::size_t space_at(std::string_view text, std::size_t i) {
  const auto b = static_cast<unsigned char>(text[i]);
  if (b < 0x80) return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\f' || b == '\v';
  return whitespace_prefix(text.substr(i));
}

}  // namespace

bool next_date_token(std::string_view text, std::size_t& i, bool& space, DateToken& t) {
  std::size_t len = 1;
  while (i < text.size()) {
    if (const std::size_t w = space_at(text, i); w > 0) {
      space = true;
      i += w;
      continue;
    }
    const char32_t c = code_point(text, i, len);
    t = DateToken{};
    t.space_before = space;
    t.begin = i;
    space = false;
    if (digit_value(c) >= 0) {
      t.type = DateToken::Type::kNumber;
      int digits = 0, value = 0;
      while (i < text.size()) {
        const char32_t d = code_point(text, i, len);
        const int v = digit_value(d);
        if (v < 0) break;
        if (digits < 5) value = value * 10 + v;
        ++digits;
        i += len;
      }
      t.digits = static_cast<std::uint8_t>(std::min(digits, 5));
      t.value = value;
    } else if (single_char_token(c)) {
      t.type = DateToken::Type::kWord;
      t.word.assign(text.substr(i, len));
      i += len;
    } else if (is_letter(c)) {
      t.type = DateToken::Type::kWord;
      while (i < text.size()) {
        const char32_t d = code_point(text, i, len);
        if (!is_letter(d) || single_char_token(d)) break;
        if (t.word.size() < 32) append_utf8(t.word, to_lower(d));
        i += len;
      }
    } else {
      t.type = DateToken::Type::kPunct;
      t.punct = c < 0x80 ? static_cast<char>(c) : '\0';
      i += len;
    }
    t.end = i;
    return true;
  }
  return false;
}

int month_of(const DateToken& t) {
  if (t.type != DateToken::Type::kWord) return 0;
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

bool is_ordinal_suffix(const DateToken& t) {
  if (t.type == DateToken::Type::kPunct) return false;
  static constexpr std::string_view kSuffixes[] = {"st",  "nd", "rd", "th", "er", "e",
                                                   "ème", "º",  "ª",  "o",  "a",  "ci"};
  for (std::string_view s : kSuffixes) {
    if (t.word == s) return true;
  }
  return false;
}

}  // namespace newsflow::extractors::internal
