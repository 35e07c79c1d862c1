#pragma once

#include "config/config.h"

namespace newsflow::daemon {

/// `newsflow create-topics`.
struct CreateTopicsOptions {
  int partitions = 16;          ///< per input topic (pages, feeds) and most others
  int replication_factor = -1;  ///< -1: the brokers' default.replication.factor
  bool check = false;           ///< create nothing, only check what exists
};

/// Creates the configured topics that do not exist (unless `check`), then checks every one:
/// it exists, it is compacted where it must be, `topics.extracted` has a partition for each
/// input partition. One line per topic on stdout; returns the exit code: 0 when every check
/// passed, 1 when one did not, 2 when the brokers could not be asked.
int run_create_topics(const config::Config& config, const CreateTopicsOptions& options);

}  // namespace newsflow::daemon
