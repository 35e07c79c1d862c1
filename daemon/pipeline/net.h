#pragma once

#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace newsflow::daemon {

/// An IPv4 or IPv6 network, `10.0.0.0/8` or `fd00::/8`; IPv4 is held as IPv4-mapped IPv6.
struct Cidr {
  std::array<std::uint8_t, 16> address{};
  int prefix = 0;  ///< bits, of the 128-bit (mapped) form
};

/// Parses `a.b.c.d/n`, `x::y/n` or a bare address (a /32 or /128). nullopt when malformed.
std::optional<Cidr> parse_cidr(std::string_view text);

/// The 16-byte (IPv4-mapped for IPv4) form of a socket address; nullopt for other families.
std::optional<std::array<std::uint8_t, 16>> ip_bytes(const sockaddr* addr);

bool cidr_contains(const Cidr& net, const std::array<std::uint8_t, 16>& ip);

/// Why `ip` must not be fetched from by default (loopback, private, link-local and cloud
/// metadata, shared, multicast, reserved, unspecified, IPv6 unique-local; IPv4 addresses
/// embedded in IPv4-mapped or NAT64 IPv6 are judged as IPv4), or empty if it is a public
/// address.
std::string non_public_range(const std::array<std::uint8_t, 16>& ip);

/// Human-readable form of a 16-byte address (dotted quad for IPv4-mapped).
std::string ip_string(const std::array<std::uint8_t, 16>& ip);

}  // namespace newsflow::daemon
