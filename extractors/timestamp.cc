#include "extractors/timestamp.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>

namespace newsflow::extractors {
namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

bool read_digits(std::string_view s, std::size_t& pos, std::size_t n, int& out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const char c = s[pos + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  out = v;
  pos += n;
  return true;
}

bool is_leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int days_in_month(int y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29 : kDays[m - 1];
}

}  // namespace

std::optional<UnixSeconds> parse_iso8601(std::string_view s) { return parse_iso8601(s, nullptr); }

std::optional<UnixSeconds> parse_iso8601(std::string_view s, int* offset) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  std::size_t pos = 0;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!read_digits(s, pos, 4, year)) return std::nullopt;
  if (pos >= s.size() || s[pos++] != '-') return std::nullopt;
  if (!read_digits(s, pos, 2, month)) return std::nullopt;
  if (pos >= s.size() || s[pos++] != '-') return std::nullopt;
  if (!read_digits(s, pos, 2, day)) return std::nullopt;
  if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, month)) return std::nullopt;
  int offset_seconds = 0;
  if (pos < s.size()) {
    if (s[pos] != 'T' && s[pos] != 't' && s[pos] != ' ') return std::nullopt;
    ++pos;
    if (!read_digits(s, pos, 2, hour)) return std::nullopt;
    if (pos >= s.size() || s[pos++] != ':') return std::nullopt;
    if (!read_digits(s, pos, 2, minute)) return std::nullopt;
    if (pos < s.size() && s[pos] == ':') {
      ++pos;
      if (!read_digits(s, pos, 2, second)) return std::nullopt;
      if (pos < s.size() && (s[pos] == '.' || s[pos] == ',')) {
        ++pos;
        const std::size_t start = pos;
        while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') ++pos;
        if (pos == start) return std::nullopt;
      }
    }
    if (hour > 24 || minute > 59 || second > 60) return std::nullopt;
    if (pos < s.size()) {
      const char z = s[pos];
      if (z == 'Z' || z == 'z') {
        ++pos;
      } else if (z == '+' || z == '-') {
        ++pos;
        int oh = 0, om = 0;
        if (!read_digits(s, pos, 2, oh)) return std::nullopt;
        if (pos < s.size() && s[pos] == ':') ++pos;
        if (pos < s.size() && !read_digits(s, pos, 2, om)) return std::nullopt;
        if (oh > 23 || om > 59) return std::nullopt;
        offset_seconds = (oh * 3600 + om * 60) * (z == '-' ? -1 : 1);
      } else {
        return std::nullopt;
      }
    }
    if (pos != s.size()) return std::nullopt;
  }
  const std::int64_t days =
      days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  if (offset) *offset = offset_seconds;
  return days * 86400 + hour * 3600 + minute * 60 + std::min(second, 59) - offset_seconds;
}

std::optional<UnixSeconds> parse_rfc822(std::string_view s) {
  auto skip_space = [&s] {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == ','))
      s.remove_prefix(1);
  };
  auto word = [&s, &skip_space] {
    skip_space();
    std::size_t n = 0;
    while (n < s.size() && s[n] != ' ' && s[n] != '\t' && s[n] != ',') ++n;
    std::string_view w = s.substr(0, n);
    s.remove_prefix(n);
    return w;
  };
  auto number = [](std::string_view w, int& out) {
    if (w.empty() || w.size() > 4) return false;
    int v = 0;
    for (char c : w) {
      if (c < '0' || c > '9') return false;
      v = v * 10 + (c - '0');
    }
    out = v;
    return true;
  };
  static constexpr std::string_view kMonths[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                                 "jul", "aug", "sep", "oct", "nov", "dec"};
  std::string_view w = word();
  int day = 0;
  if (!number(w, day)) w = word();  // a weekday
  if (!number(w, day)) return std::nullopt;
  std::string_view mon = word();
  if (mon.size() < 3) return std::nullopt;
  int month = 0;
  for (int m = 0; m < 12; ++m) {
    std::string lower;
    for (std::size_t k = 0; k < 3; ++k)
      lower += static_cast<char>(std::tolower(static_cast<unsigned char>(mon[k])));
    if (lower == kMonths[m]) month = m + 1;
  }
  int year = 0;
  if (month == 0 || !number(word(), year)) return std::nullopt;
  if (year < 100) year += year < 50 ? 2000 : 1900;
  int hour = 0, minute = 0, second = 0;
  const std::string_view time = word();
  if (!time.empty()) {
    std::size_t pos = 0;
    if (!read_digits(time, pos, 2, hour) && !(pos = 0, read_digits(time, pos, 1, hour)))
      return std::nullopt;
    if (pos >= time.size() || time[pos++] != ':' || !read_digits(time, pos, 2, minute))
      return std::nullopt;
    if (pos < time.size() && (time[pos++] != ':' || !read_digits(time, pos, 2, second)))
      return std::nullopt;
  }
  int offset = 0;
  const std::string_view zone = word();
  if (!zone.empty()) {
    if (zone[0] == '+' || zone[0] == '-') {
      int hhmm = 0;
      std::string_view digits = zone.substr(1);
      std::string compact;
      for (char c : digits)
        if (c != ':') compact += c;
      if (!number(compact, hhmm)) return std::nullopt;
      offset = (hhmm / 100 * 3600 + hhmm % 100 * 60) * (zone[0] == '-' ? -1 : 1);
    } else {
      static constexpr std::pair<std::string_view, int> kZones[] = {
          {"GMT", 0},  {"UT", 0},   {"UTC", 0},  {"Z", 0},    {"EST", -5}, {"EDT", -4},
          {"CST", -6}, {"CDT", -5}, {"MST", -7}, {"MDT", -6}, {"PST", -8}, {"PDT", -7},
          {"A", -1},   {"M", -12},  {"N", 1},    {"Y", 12}};
      bool known = false;
      for (const auto& [name, hours] : kZones) {
        if (zone == name) offset = hours * 3600, known = true;
      }
      if (!known && zone.size() != 1) return std::nullopt;
    }
  }
  if (month < 1 || day < 1 || day > days_in_month(year, month) || hour > 23 || minute > 59 ||
      second > 60) {
    return std::nullopt;
  }
  return days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86400 +
         hour * 3600 + minute * 60 + std::min(second, 59) - offset;
}

std::optional<UnixSeconds> civil_day(int year, int month, int day) {
  if (year < 1 || year > 9999 || month < 1 || month > 12 || day < 1 ||
      day > days_in_month(year, month)) {
    return std::nullopt;
  }
  return days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86400;
}

std::optional<UnixSeconds> parse_date(std::string_view s) {
  if (auto t = parse_iso8601(s)) return t;
  return parse_rfc822(s);
}

std::string format_rfc3339(UnixSeconds t, int offset_seconds) {
  if (offset_seconds == 0 || offset_seconds <= -86400 || offset_seconds >= 86400) {
    return format_rfc3339(t);
  }
  std::string local = format_rfc3339(t + offset_seconds);
  local.pop_back();  // the 'Z'
  const int a = offset_seconds < 0 ? -offset_seconds : offset_seconds;
  char buf[16];
  std::snprintf(buf, sizeof buf, "%c%02d:%02d", offset_seconds < 0 ? '-' : '+', a / 3600,
                a / 60 % 60);
  return local + buf;
}

std::string format_rfc3339(UnixSeconds t) {
  std::int64_t days = t / 86400;
  std::int64_t rem = t % 86400;
  if (rem < 0) {
    rem += 86400;
    --days;
  }
  // civil_from_days (Howard Hinnant).
  days += 719468;
  const std::int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const auto doe = static_cast<unsigned>(days - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  std::int64_t y = static_cast<std::int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02lld:%02lld:%02lldZ",
                static_cast<long long>(y), m, d, static_cast<long long>(rem / 3600),
                static_cast<long long>(rem / 60 % 60), static_cast<long long>(rem % 60));
  return buf;
}

}  // namespace newsflow::extractors
