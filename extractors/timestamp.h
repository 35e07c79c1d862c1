#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace newsflow::extractors {

/// Seconds since the Unix epoch, UTC.
using UnixSeconds = std::int64_t;

/// Parses RFC 3339 and the common ISO 8601 forms: `2026-11-21T10:00:00Z`,
/// `2026-11-21 10:00:00+02:00`, `2026-11-21T10:00:00.123-0500`, `2026-11-21T10:00` and a bare
/// date `2026-11-21` (midnight UTC). A missing offset means UTC. Returns nothing for anything
/// else, including out-of-range fields.
std::optional<UnixSeconds> parse_iso8601(std::string_view s);

/// The same, also giving the offset from UTC the text was written in (seconds east; 0 for `Z`
/// or none).
std::optional<UnixSeconds> parse_iso8601(std::string_view s, int* offset_seconds);

/// Parses RFC 822 / RFC 2822 dates as feeds write them: `Sat, 07 Sep 2002 00:00:01 GMT`,
/// without the weekday or the seconds, two-digit years, numeric offsets and the US zone names
/// (EST, PDT, ...), single military letters and a missing zone (UTC).
std::optional<UnixSeconds> parse_rfc822(std::string_view s);

/// Midnight UTC of a proleptic Gregorian day; nothing for a month or day out of range.
std::optional<UnixSeconds> civil_day(int year, int month, int day);

/// RFC 3339 / ISO 8601, else RFC 822.
std::optional<UnixSeconds> parse_date(std::string_view s);

/// Formats as RFC 3339 in UTC with a `Z` suffix, e.g. `2026-11-21T10:00:00Z`.
std::string format_rfc3339(UnixSeconds t);

/// Formats in the local time of an offset from UTC (seconds east), e.g.
/// `2026-11-21T15:30:00+05:30`; `Z` for offset 0. The same instant as `format_rfc3339(t)`.
std::string format_rfc3339(UnixSeconds t, int offset_seconds);

}  // namespace newsflow::extractors
