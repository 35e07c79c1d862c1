#include "daemon/kafka/faults.h"

#include <gtest/gtest.h>
#include <stdlib.h>

namespace newsflow::daemon {
namespace {

TEST(InjectedFaults, NoneWithoutTheirVariables) {
  unsetenv("NEWSFLOW_FAULT_CRASH_MARKER");
  unsetenv("NEWSFLOW_FAULT_LOSE_STATE_MARKER");
  setenv("NEWSFLOW_FAULT_NO_COMMIT", "0", 1);
  InjectedFaults f = InjectedFaults::from_environment();
  EXPECT_FALSE(f.crashes_on("anything"));
  EXPECT_FALSE(f.loses_state("anything"));
  EXPECT_FALSE(f.kill_armed());
  EXPECT_FALSE(f.state_unreliable());
  EXPECT_FALSE(f.commits_blocked());
  setenv("NEWSFLOW_FAULT_NO_COMMIT", "1", 1);
  setenv("NEWSFLOW_FAULT_CRASH_MARKER", "BOOM", 1);
  f = InjectedFaults::from_environment();
  unsetenv("NEWSFLOW_FAULT_NO_COMMIT");
  unsetenv("NEWSFLOW_FAULT_CRASH_MARKER");
  EXPECT_TRUE(f.commits_blocked());
  EXPECT_TRUE(f.state_unreliable());
  EXPECT_TRUE(f.crashes_on("a page that says BOOM"));
  EXPECT_FALSE(f.crashes_on("a quiet page"));
}

TEST(InjectedFaults, TheFirstMarkedOutputLosesItsStateAndTheNextArmsTheKill) {
  InjectedFaults f("", "LOSE", false);
  EXPECT_FALSE(f.loses_state("ordinary"));
  EXPECT_FALSE(f.commits_lost());
  EXPECT_TRUE(f.loses_state("LOSE me"));
  EXPECT_TRUE(f.commits_lost());
  EXPECT_TRUE(f.state_unreliable());
  EXPECT_FALSE(f.kill_armed());
  EXPECT_FALSE(f.loses_state("ordinary"));
  EXPECT_FALSE(f.kill_armed());
  EXPECT_FALSE(f.loses_state("LOSE again"));  // written; the process dies after its batch
  EXPECT_TRUE(f.kill_armed());
}

}  // namespace
}  // namespace newsflow::daemon
