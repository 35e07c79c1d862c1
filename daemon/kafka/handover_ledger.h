#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

namespace newsflow::daemon {

/// Where a record sits: "topic/partition/offset" (a topic name holds no '/').
struct Position {
  std::string topic;
  int partition = 0;
  std::int64_t offset = 0;
};

/// Reads "topic/partition/offset"; nothing for anything else.
std::optional<Position> parse_position(std::string_view text);

/// What the dedup role has judged of each input partition, so an extracted record handed over
/// again is known. An extractor that lost a partition in a rebalance whose commits failed, or
/// that was killed, leaves its inputs since the last commit to the next owner, which extracts
/// them again and appends them to the same extracted partition. Judged again, an article the
/// window still holds keeps its verdict; one that left the window (the inputs of hours before,
/// when commits failed that long) would be judged anew against the window of now, and published
/// with another verdict than its first (11% of the verdicts of the roles test with a member
/// joining mid-backlog).
///
/// An extracted record is a repeat when its input lies before the last input judged of its
/// partition and the record lies after the one that input was judged from, in the same
/// extracted partition; or when it is of the last input judged, lies after its records and
/// carries an article judged from them (a feed's items share their input's offset: each is
/// judged once, and a copy of one is a repeat). A batch sent back after a failed delivery is
/// judged again from where it was (its records lie before).
/// No I/O: the dedup role feeds it what it judges and what it restores.
class HandoverLedger {
 public:
  /// The record at `at` (extracted partition and offset), of input `source`, with the article
  /// `id` (its key; empty when not known), was judged.
  void judged(const Position& source, int at_partition, std::int64_t at_offset,
              std::string_view id = {}) {
    Mark& m = marks_[{source.topic, source.partition}];
    if (m.set && source.offset < m.input) return;
    if (m.set && source.offset == m.input && m.partition == at_partition) {
      if (!id.empty()) m.ids.emplace(id);
      m.offset = std::max(m.offset, at_offset);
      return;
    }
    m = {true, source.offset, at_partition, at_offset, {}};
    if (!id.empty()) m.ids.emplace(id);
  }

  /// Whether the record at `at`, of input `source`, with the article `id`, hands over an input
  /// judged before.
  bool repeat(const Position& source, int at_partition, std::int64_t at_offset,
              std::string_view id = {}) const {
    const auto it = marks_.find({source.topic, source.partition});
    if (it == marks_.end()) return false;
    const Mark& m = it->second;
    if (at_partition != m.partition || at_offset <= m.offset) return false;
    return source.offset < m.input ||
           (source.offset == m.input && !id.empty() && m.ids.count(std::string(id)) > 0);
  }

  std::size_t size() const { return marks_.size(); }

 private:
  struct Mark {
    bool set = false;
    std::int64_t input = 0;     // the last input judged
    int partition = 0;          // where its record was
    std::int64_t offset = 0;    // the last of its records judged
    std::set<std::string> ids;  // the articles judged from it
  };
  std::map<std::pair<std::string, int>, Mark> marks_;
};

}  // namespace newsflow::daemon
