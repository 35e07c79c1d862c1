#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace newsflow::daemon {

/// What one site's robots.txt says to one crawler: the Robots Exclusion Protocol, RFC 9309.
/// Pure: parsing and matching only; the fetcher fetches the file and caches the result.
class RobotsRules {
 public:
  /// Everything may be fetched (no robots.txt: a 4xx answer, RFC 9309 2.3.1.3).
  static RobotsRules allow_all();
  /// Nothing may be fetched (the file is unreachable: a 5xx answer or a network error, 2.3.1.4).
  static RobotsRules disallow_all();

  /// Reads a robots.txt body for the crawler whose product token is `product` ("newsflow"):
  /// the groups whose `user-agent` names the token (case-insensitively; "newsflow/1.0" names
  /// it too), merged, else the `*` groups, else none (everything allowed). Lines are
  /// `field: value` with `#` comments; a group is one or more `user-agent` lines and the rules
  /// that follow. Only the first 500 KiB are read (2.5). Unknown fields are ignored.
  static RobotsRules parse(std::string_view body, std::string_view product);

  /// May the path (with its query, as in the request line: "/a/b?c=d") be fetched? The rule
  /// whose pattern matches the most octets decides, `allow` over `disallow` on a tie; `*`
  /// matches any run of characters and a final `$` the end of the path (2.2.2, 2.2.3). Paths
  /// and patterns are compared percent-encoded alike (non-ASCII and reserved octets encoded,
  /// escapes of other characters decoded, hex upper case). "/robots.txt" is always allowed.
  /// Bounded whatever the file says: patterns cut at 16,664 octets, 10,000 rules a group, a path
  /// over 16 KiB never allowed, and each match linear in pattern and path.
  bool allows(std::string_view path) const;

  /// `Crawl-delay` of the chosen group in seconds, when it gives one (not in RFC 9309; common).
  std::optional<double> crawl_delay() const { return crawl_delay_; }

  /// Rules of the chosen group (for tests and `newsflow robots`).
  std::size_t rules() const { return rules_.size(); }

  /// About the memory it holds (its patterns), for the fetcher's bound on cached files.
  std::size_t bytes() const {
    std::size_t n = sizeof(*this);
    for (const Rule& r : rules_) n += sizeof(Rule) + r.pattern.capacity();
    return n;
  }

 private:
  struct Rule {
    std::string pattern;  // normalized; may hold '*' and a final '$'
    bool allow = false;
  };
  std::vector<Rule> rules_;
  std::optional<double> crawl_delay_;
  bool disallow_everything_ = false;
};

/// The path and query of an absolute URL as a request line carries them ("/" when empty), or
/// nothing when `url` is not one.
std::optional<std::string> robots_path(std::string_view url);

/// The origin of an absolute http(s) URL: "scheme://host[:port]" with the default port left
/// out, lowercase; its robots.txt is `origin + "/robots.txt"`. Nothing when `url` is not one.
std::optional<std::string> robots_origin(std::string_view url);

/// `newsflow robots`: prints "allow PATH" or "disallow PATH" for every path (a URL is cut to its
/// path and query) and the crawl delay, or in batch mode answers JSON lines
/// {"robots": TEXT, "paths": [...]} read from stdin. Returns the exit code.
int run_robots(const std::string& file, const std::vector<std::string>& paths,
               const std::string& agent, bool batch);

}  // namespace newsflow::daemon
