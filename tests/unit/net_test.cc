#include "daemon/pipeline/net.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

namespace newsflow::daemon {
namespace {

std::array<std::uint8_t, 16> ip(const char* text) {
  const auto c = parse_cidr(text);
  EXPECT_TRUE(c) << text;
  return c ? c->address : std::array<std::uint8_t, 16>{};
}

TEST(Net, NonPublicRangesAreNamed) {
  EXPECT_EQ(non_public_range(ip("127.0.0.1")), "loopback");
  EXPECT_EQ(non_public_range(ip("10.1.2.3")), "private");
  EXPECT_EQ(non_public_range(ip("172.31.255.255")), "private");
  EXPECT_EQ(non_public_range(ip("192.168.0.1")), "private");
  EXPECT_EQ(non_public_range(ip("169.254.169.254")), "link-local");  // cloud metadata
  EXPECT_EQ(non_public_range(ip("100.64.0.1")), "shared");
  EXPECT_EQ(non_public_range(ip("0.0.0.0")), "unspecified");
  EXPECT_EQ(non_public_range(ip("224.0.0.1")), "multicast");
  EXPECT_EQ(non_public_range(ip("255.255.255.255")), "reserved");
  EXPECT_EQ(non_public_range(ip("::1")), "loopback");
  EXPECT_EQ(non_public_range(ip("::")), "unspecified");
  EXPECT_EQ(non_public_range(ip("fd00:ec2::254")), "unique-local");  // AWS metadata over IPv6
  EXPECT_EQ(non_public_range(ip("fe80::1")), "link-local");
  // IPv4 inside IPv6 is judged as IPv4.
  EXPECT_EQ(non_public_range(ip("::ffff:127.0.0.1")), "loopback");
  EXPECT_EQ(non_public_range(ip("64:ff9b::10.0.0.1")), "private");
  // Public.
  EXPECT_EQ(non_public_range(ip("8.8.8.8")), "");
  EXPECT_EQ(non_public_range(ip("172.32.0.1")), "");
  EXPECT_EQ(non_public_range(ip("2a00:1450:4001::1")), "");
  EXPECT_EQ(non_public_range(ip("64:ff9b::8.8.8.8")), "");
}

// Each IPv6 form that carries an IPv4 address is judged by that address: without it, a link to
// [::127.0.0.1], [2002:7f00:1::] or [64:ff9b:1::a00:1] reached loopback or private hosts.
TEST(Net, IPv6FormsOfIPv4AreJudgedByTheirIPv4) {
  EXPECT_EQ(non_public_range(ip("::127.0.0.1")), "loopback");  // IPv4-compatible (deprecated)
  EXPECT_EQ(non_public_range(ip("::10.1.2.3")), "private");
  EXPECT_EQ(non_public_range(ip("::169.254.169.254")), "link-local");
  EXPECT_EQ(non_public_range(ip("2002:7f00:1::")), "loopback");        // 6to4 of 127.0.0.1
  EXPECT_EQ(non_public_range(ip("2002:c0a8:101::1")), "private");      // 6to4 of 192.168.1.1
  EXPECT_EQ(non_public_range(ip("64:ff9b:1::a00:1")), "nat64-local");  // RFC 8215
  EXPECT_EQ(non_public_range(ip("64:ff9b:1:ffff::8.8.8.8")), "nat64-local");
  // Teredo: a private server, or a client whose inverted address is loopback.
  EXPECT_EQ(non_public_range(ip("2001:0:a00:1::")), "private");
  EXPECT_EQ(non_public_range(ip("2001:0:808:808::80ff:fffe")), "loopback");
  // The same forms of public addresses stay public.
  EXPECT_EQ(non_public_range(ip("2002:808:808::1")), "");
  EXPECT_EQ(non_public_range(ip("::8.8.8.8")), "");
  EXPECT_EQ(non_public_range(ip("2001:0:808:808::f7f7:f7f7")), "");
}

TEST(Net, CidrsParseAndContain) {
  const auto net = parse_cidr("10.0.0.0/8");
  ASSERT_TRUE(net);
  EXPECT_TRUE(cidr_contains(*net, ip("10.200.1.1")));
  EXPECT_FALSE(cidr_contains(*net, ip("11.0.0.1")));
  const auto v6 = parse_cidr("fd00::/8");
  ASSERT_TRUE(v6);
  EXPECT_TRUE(cidr_contains(*v6, ip("fd12::1")));
  EXPECT_FALSE(cidr_contains(*v6, ip("fe80::1")));
  EXPECT_TRUE(cidr_contains(*parse_cidr("127.0.0.1"), ip("127.0.0.1")));
  EXPECT_FALSE(cidr_contains(*parse_cidr("127.0.0.1"), ip("127.0.0.2")));
  EXPECT_TRUE(cidr_contains(*parse_cidr("0.0.0.0/0"), ip("8.8.8.8")));
  EXPECT_FALSE(parse_cidr("10.0.0.0/33"));
  EXPECT_FALSE(parse_cidr("10.0.0/8"));
  EXPECT_FALSE(parse_cidr("example.com"));
  EXPECT_FALSE(parse_cidr("10.0.0.0/"));
  EXPECT_FALSE(parse_cidr("::1/129"));
  EXPECT_EQ(ip_string(ip("10.0.0.1")), "10.0.0.1");
  EXPECT_EQ(ip_string(ip("fe80::1")), "fe80::1");
}

}  // namespace
}  // namespace newsflow::daemon
