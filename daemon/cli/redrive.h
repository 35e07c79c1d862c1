#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/config.h"

namespace newsflow::daemon {

/// `newsflow redrive`: sends dead letters that carry their input back to the topic they came
/// from, once the cause is gone (a site back up, a limit raised).
struct RedriveOptions {
  std::vector<std::string> reasons;   ///< error_reason values to take (empty: every reason)
  std::optional<std::int64_t> since;  ///< dead letters written at or after (Unix seconds)
  std::optional<std::int64_t> until;  ///< and before
  bool dry_run = false;               ///< list what would be sent, send nothing
  std::size_t limit = 0;              ///< at most this many (0: no limit)
};

/// Reads `topics.dlq` from its beginning to its current end and sends each dead letter that
/// matches and carries its whole input (not a feed item's record, not a cut payload) to its
/// `source_topic` with its key and its own headers (the dead letter's are dropped; a
/// `redriven_from` header names the dead letter). Prints one line per dead letter taken or
/// passed over and a summary; returns the exit code.
int run_redrive(const config::Config& config, const RedriveOptions& options);

}  // namespace newsflow::daemon
