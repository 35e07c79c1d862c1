#include <gtest/gtest.h>

#include "daemon/kafka/kafka.h"

namespace newsflow::daemon {
namespace {

TEST(GroupInstanceId, AutoIsTheHostAndTheRole) {
  EXPECT_EQ(group_instance_id("auto", "extract", "newsflow-extract-7d9f-x2"),
            "newsflow-extract-7d9f-x2-extract");
  EXPECT_EQ(group_instance_id("auto", "all", "ingest01.example.org"), "ingest01.example.org-all");
}

TEST(GroupInstanceId, CharactersKafkaRejectsBecomeDashes) {
  EXPECT_EQ(group_instance_id("auto", "dedup", "host name:1"), "host-name-1-dedup");
}

TEST(GroupInstanceId, NoneOrEmptyIsDynamicMembership) {
  EXPECT_EQ(group_instance_id("none", "all", "h"), "");
  EXPECT_EQ(group_instance_id("", "all", "h"), "");
}

TEST(GroupInstanceId, AnythingElseIsTakenAsItIs) {
  EXPECT_EQ(group_instance_id("nf-0", "all", "h"), "nf-0");
}

TEST(GroupInstanceId, NoHostNameStillGivesAnId) {
  EXPECT_EQ(group_instance_id("auto", "all", ""), "newsflow-all");
}

}  // namespace
}  // namespace newsflow::daemon
