#pragma once

// What the fetcher is made of (fetcher.cc, and fetch_run.cc for one run of transfers): the
// fetcher's own header is fetcher.h.

#include <curl/curl.h>

#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "daemon/pipeline/fetcher.h"
#include "daemon/pipeline/net.h"
#include "daemon/pipeline/robots.h"

namespace newsflow::daemon {

using FetchClock = std::chrono::steady_clock;

/// Scheme and host of a URL (lowercase), via libcurl's own parser; the host may be empty
/// (file:///...).
bool split_url(const std::string& url, std::string& scheme, std::string& host);

struct Fetcher::Impl {
  config::FetchConfig options;
  Metrics* metrics = nullptr;
  std::vector<Cidr> allowed;
  CURLM* multi = nullptr;
  CURLSH* share = nullptr;  // DNS cache shared by every handle
  /// Set by `cut_short` from another thread: the fetch in progress gives up what is not done.
  std::atomic<bool> cut{false};

  struct Transfer {
    Impl* impl = nullptr;
    std::size_t index = 0;
    std::string host;
    CURL* easy = nullptr;
    FetchResult result;
    FetchClock::time_point first_start{};
    FetchClock::time_point not_before{};
    bool blocked = false;  // the open-socket callback refused an address
    bool too_large = false;
    bool robots = false;     // a robots.txt: any content type, read up to kRobotsBytes
    bool truncated = false;  // a robots.txt cut at kRobotsBytes (read, not an error)
  };

  // RFC 9309 2.5: at least 500 KiB of a robots.txt are read; the rest is not fetched.
  static constexpr std::size_t kRobotsBytes = 500 * 1024;

  struct RobotsEntry {
    RobotsRules rules;
    FetchClock::time_point expires;
  };
  std::map<std::string, RobotsEntry> robots;  // by origin
  void bound_robots();
  std::string product;  // the user agent's product token

  /// One URL of a `run`: a page, or the robots.txt of `origin`.
  struct Job {
    std::string url;
    bool robots = false;
    std::string origin;
    /// A page of a site whose robots.txt is being fetched in the same run (that job's index):
    /// it waits for that file alone, and is then admitted or refused by it.
    std::optional<std::size_t> after_robots;
  };
  /// Fetches `jobs`; past `deadline`, what runs is stopped ("timeout") and what waits is not
  /// started ("deferred"), robots.txt files both "deferred" (asked again next time). Once `cut`
  /// is set, what runs or waits is "deferred" at once. `delays`: the hosts' Crawl-delays, more
  /// of them as robots.txt files are read.
  class Run;  // one `run`, in fetch_run.cc
  std::vector<FetchResult> run(const std::vector<Job>& jobs,
                               std::map<std::string, std::chrono::milliseconds> delays,
                               std::optional<FetchClock::time_point> deadline);
  /// Keeps what the robots.txt of `origin` said (`got`: its fetch) for as long as it is trusted.
  void learn_robots(const std::string& origin, const FetchResult& got);
  /// Whether the known robots.txt of `origin` allows `url`; when not, `refused` says why. A
  /// Crawl-delay it asks for goes into `delays`.
  bool robots_allow(const std::string& url, const std::string& origin, FetchResult& refused,
                    std::map<std::string, std::chrono::milliseconds>& delays);

  ~Impl() {
    if (multi) curl_multi_cleanup(multi);
    if (share) curl_share_cleanup(share);
  }

  /// libcurl's write callback: the body, up to its limit.
  static size_t on_body(char* data, size_t size, size_t n, void* user);
  /// Every connection libcurl opens, first hop or redirect, comes through here with the address
  /// DNS gave: the place to refuse non-public addresses.
  static curl_socket_t on_open_socket(void* user, curlsocktype, curl_sockaddr* addr);
  void configure(Transfer& t);
  /// Classifies a finished attempt; returns true when it should be retried.
  bool classify(Transfer& t, CURLcode code);

  curl_slist* headers = nullptr;
};

}  // namespace newsflow::daemon
