#include "daemon/pipeline/net.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

namespace newsflow::daemon {
namespace {

using Bytes = std::array<std::uint8_t, 16>;

Bytes mapped(std::uint32_t v4_host_order) {
  Bytes b{};
  b[10] = b[11] = 0xff;
  b[12] = static_cast<std::uint8_t>(v4_host_order >> 24);
  b[13] = static_cast<std::uint8_t>(v4_host_order >> 16);
  b[14] = static_cast<std::uint8_t>(v4_host_order >> 8);
  b[15] = static_cast<std::uint8_t>(v4_host_order);
  return b;
}

bool is_mapped(const Bytes& b) {
  for (int i = 0; i < 10; ++i) {
    if (b[i] != 0) return false;
  }
  return b[10] == 0xff && b[11] == 0xff;
}

struct Range {
  const char* cidr;
  const char* name;
};

// IPv4 ranges (RFC 6890 special-purpose registry, those that are not globally reachable) and
// the IPv6 ones; IPv4 is checked on the embedded address.
constexpr Range kV4[] = {
    {"0.0.0.0/8", "unspecified"},        {"10.0.0.0/8", "private"},
    {"100.64.0.0/10", "shared"},         {"127.0.0.0/8", "loopback"},
    {"169.254.0.0/16", "link-local"},    {"172.16.0.0/12", "private"},
    {"192.0.0.0/24", "protocol"},        {"192.0.2.0/24", "documentation"},
    {"192.88.99.0/24", "relay"},         {"192.168.0.0/16", "private"},
    {"198.18.0.0/15", "benchmarking"},   {"198.51.100.0/24", "documentation"},
    {"203.0.113.0/24", "documentation"}, {"224.0.0.0/4", "multicast"},
    {"240.0.0.0/4", "reserved"},
};
constexpr Range kV6[] = {
    {"::/128", "unspecified"},    {"::1/128", "loopback"},
    {"fc00::/7", "unique-local"}, {"fe80::/10", "link-local"},
    {"fec0::/10", "site-local"},  {"ff00::/8", "multicast"},
    {"100::/64", "discard"},      {"2001:db8::/32", "documentation"},
};

}  // namespace

std::optional<Cidr> parse_cidr(std::string_view text) {
  std::string addr(text);
  int prefix = -1;
  if (const auto slash = text.find('/'); slash != std::string_view::npos) {
    addr = std::string(text.substr(0, slash));
    const std::string_view p = text.substr(slash + 1);
    if (p.empty() || p.size() > 3) return std::nullopt;
    prefix = 0;
    for (const char c : p) {
      if (c < '0' || c > '9') return std::nullopt;
      prefix = prefix * 10 + (c - '0');
    }
  }
  Cidr out;
  in_addr v4{};
  in6_addr v6{};
  if (inet_pton(AF_INET, addr.c_str(), &v4) == 1) {
    if (prefix > 32) return std::nullopt;
    out.address = mapped(ntohl(v4.s_addr));
    out.prefix = prefix < 0 ? 128 : 96 + prefix;
  } else if (inet_pton(AF_INET6, addr.c_str(), &v6) == 1) {
    if (prefix > 128) return std::nullopt;
    std::memcpy(out.address.data(), &v6, 16);
    out.prefix = prefix < 0 ? 128 : prefix;
  } else {
    return std::nullopt;
  }
  return out;
}

std::optional<Bytes> ip_bytes(const sockaddr* addr) {
  if (!addr) return std::nullopt;
  if (addr->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(addr);
    return mapped(ntohl(in->sin_addr.s_addr));
  }
  if (addr->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(addr);
    Bytes b;
    std::memcpy(b.data(), &in6->sin6_addr, 16);
    return b;
  }
  return std::nullopt;
}

bool cidr_contains(const Cidr& net, const Bytes& ip) {
  int bits = net.prefix;
  for (int i = 0; i < 16 && bits > 0; ++i, bits -= 8) {
    const std::uint8_t mask = bits >= 8 ? 0xff : static_cast<std::uint8_t>(0xff << (8 - bits));
    if ((net.address[i] & mask) != (ip[i] & mask)) return false;
  }
  return true;
}

namespace {

std::uint32_t v4_at(const Bytes& ip, int at) {
  return (std::uint32_t{ip[at]} << 24) | (std::uint32_t{ip[at + 1]} << 16) |
         (std::uint32_t{ip[at + 2]} << 8) | ip[at + 3];
}

std::string v4_range(const Bytes& v) {
  for (const Range& r : kV4) {
    if (cidr_contains(*parse_cidr(r.cidr), v)) return r.name;
  }
  if (v[12] == 255 && v[13] == 255 && v[14] == 255 && v[15] == 255) return "broadcast";
  return "";
}

}  // namespace

std::string non_public_range(const Bytes& ip) {
  if (is_mapped(ip)) return v4_range(ip);
  for (const Range& r : kV6) {
    if (cidr_contains(*parse_cidr(r.cidr), ip)) return r.name;
  }
  // IPv6 forms that carry an IPv4 address, judged by it: NAT64 (64:ff9b::/96, RFC 6052), the
  // deprecated IPv4-compatible ::a.b.c.d (::/96), 6to4 (2002:AABB:CCDD::/16, RFC 3056) and
  // Teredo (2001::/32, RFC 4380: the server in bits 32-63, the client inverted in the last 32).
  // Local-use NAT64 (64:ff9b:1::/48, RFC 8215) is not global at all.
  static const Cidr kNat64 = *parse_cidr("64:ff9b::/96");
  static const Cidr kNat64Local = *parse_cidr("64:ff9b:1::/48");
  static const Cidr kCompatible = *parse_cidr("::/96");
  static const Cidr k6to4 = *parse_cidr("2002::/16");
  static const Cidr kTeredo = *parse_cidr("2001::/32");
  if (cidr_contains(kNat64Local, ip)) return "nat64-local";
  if (cidr_contains(kNat64, ip) || cidr_contains(kCompatible, ip))
    return v4_range(mapped(v4_at(ip, 12)));
  if (cidr_contains(k6to4, ip)) return v4_range(mapped(v4_at(ip, 2)));
  if (cidr_contains(kTeredo, ip)) {
    if (std::string server = v4_range(mapped(v4_at(ip, 4))); !server.empty()) return server;
    return v4_range(mapped(~v4_at(ip, 12)));
  }
  return "";
}

std::string ip_string(const Bytes& ip) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (is_mapped(ip)) {
    inet_ntop(AF_INET, ip.data() + 12, buf, sizeof buf);
  } else {
    inet_ntop(AF_INET6, ip.data(), buf, sizeof buf);
  }
  return buf;
}

}  // namespace newsflow::daemon
