#include "daemon/kafka/faults.h"

#include <cstdlib>

namespace newsflow::daemon {

InjectedFaults InjectedFaults::from_environment() {
  auto text = [](const char* name) {
    const char* v = std::getenv(name);
    return std::string(v ? v : "");
  };
  return InjectedFaults(text("NEWSFLOW_FAULT_CRASH_MARKER"),
                        text("NEWSFLOW_FAULT_LOSE_STATE_MARKER"),
                        text("NEWSFLOW_FAULT_NO_COMMIT") == "1");
}

}  // namespace newsflow::daemon
