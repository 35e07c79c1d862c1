#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"

namespace newsflow::daemon {

/// The demo's input through `newsflow produce`'s producer: the replay lines of `path` and of
/// `feeds_path` (each `rewrites` pair replaced in feed bodies) to the pages and feeds topics at
/// `bootstrap`, then three poison messages. Returns how many the brokers acknowledged (0 when
/// `path` cannot be read).
std::size_t produce_samples(const std::string& bootstrap, const config::Config& config,
                            const std::string& path, const std::string& feeds_path,
                            const std::vector<std::pair<std::string, std::string>>& rewrites);

}  // namespace newsflow::daemon
