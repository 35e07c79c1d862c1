#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "tl/expected.hpp"

namespace newsflow::daemon {

class Metrics;

/// The result of fetching one URL. `outcome` is "ok" or the reason it failed, a metric label
/// and DLQ reason (prefixed "fetch_"): http_4xx, http_5xx, http_429, timeout, connect_error,
/// dns_error, blocked_address, blocked_scheme, too_large, too_many_redirects, not_html,
/// disallowed (by the site's robots.txt), deferred (not started by the batch's deadline,
/// `fetch.batch_deadline_ms`, or not fetched when the fetch was cut short: `Fetcher::cut_short`),
/// error.
struct FetchResult {
  std::string url;        ///< as requested
  std::string final_url;  ///< after redirects
  std::string outcome = "error";
  std::string detail;
  long status = 0;  ///< HTTP status of the last response
  std::string content_type;
  std::string body;  ///< decoded from gzip/deflate/br; raw charset
  int attempts = 0;
  double seconds = 0;  ///< from the first attempt's start to the end
  /// A 429 or 5xx answer's Retry-After, in seconds from the answer (0: none given).
  std::int64_t retry_after_seconds = 0;
  bool ok() const { return outcome == "ok"; }
};

/// Whether a fetch that failed for `reason` (a FetchResult outcome with its "fetch_" prefix,
/// as in dead letters) may succeed later without anyone changing anything: the site was busy
/// (429, 5xx), slow (timeout), unreachable (a refused or broken connection) or not reached in
/// time (deferred). A host name that does not resolve is not retried.
bool fetch_failure_is_transient(std::string_view reason);

/// Checks the fetch section beyond what the YAML parser can (the allow-listed networks).
std::vector<config::Problem> check_fetch_config(const config::Config& config);

/// Fetches article pages over HTTP(S) with libcurl's multi interface: connections reused across
/// calls, at most `max_concurrency` transfers and `per_host_concurrency` per host, a politeness
/// delay between starts to one host, timeouts, a redirect limit, a body limit, gzip/deflate/br,
/// retries with exponential backoff for 5xx, 429, timeouts and refused connections. Safety: only
/// http and https, and no connection to a non-public address (loopback, private, link-local,
/// metadata, ...) unless its network is allow-listed, judged on the resolved address of every
/// connection, redirects included. Environment proxies are ignored. Politeness: each site's
/// robots.txt (RFC 9309) is fetched through the same guarded client before its pages, trusted
/// for `robots_cache_seconds`; a page it disallows is not fetched (outcome "disallowed"); a 4xx
/// answer allows everything, a 5xx, 429 or network failure disallows everything for
/// `robots_error_seconds`; a Crawl-delay raises the host's delay (up to `max_crawl_delay_ms`).
/// One thread at a time, except `cut_short`.
class Fetcher {
 public:
  /// `metrics` may be null. Fails on an allow-list entry that is not a network.
  static tl::expected<std::unique_ptr<Fetcher>, std::string> create(
      const config::FetchConfig& options, Metrics* metrics);
  ~Fetcher();
  Fetcher(const Fetcher&) = delete;
  Fetcher& operator=(const Fetcher&) = delete;

  /// Fetches every URL (concurrently, within the limits) and returns the results in order.
  std::vector<FetchResult> fetch(const std::vector<std::string>& urls);

  /// Ends the `fetch` in progress on another thread soon (within ~100 ms): what is still being
  /// fetched or waits to start is given up as "deferred", what is done keeps its result. For
  /// the daemon's batch, which waits only `fetch.batch_wait_ms` for a slow site and leaves the
  /// page to a later try. Thread-safe. A `fetch` that starts after the call is not cut (call
  /// again while it runs).
  void cut_short();

 private:
  struct Impl;
  explicit Fetcher(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace newsflow::daemon
