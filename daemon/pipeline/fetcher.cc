#include "daemon/pipeline/fetcher.h"

#include <curl/curl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <utility>

#include "daemon/ops/metrics.h"
#include "daemon/pipeline/fetcher_impl.h"
#include "extractors/text.h"

namespace newsflow::daemon {
namespace {

using Clock = std::chrono::steady_clock;

std::once_flag g_curl_init;

bool html_like(const std::string& content_type) {
  const std::string ct = extractors::ascii_lower(content_type);
  return ct.empty() || ct.starts_with("text/html") || ct.starts_with("application/xhtml") ||
         ct.starts_with("text/plain") || ct.starts_with("application/xml") ||
         ct.starts_with("text/xml");
}

}  // namespace

bool split_url(const std::string& url, std::string& scheme, std::string& host) {
  CURLU* u = curl_url();
  if (!u) return false;
  // Unknown schemes still parse, so they can be refused by name.
  bool ok = curl_url_set(u, CURLUPART_URL, url.c_str(), CURLU_NON_SUPPORT_SCHEME) == CURLUE_OK;
  char* s = nullptr;
  char* h = nullptr;
  ok = ok && curl_url_get(u, CURLUPART_SCHEME, &s, 0) == CURLUE_OK;
  if (ok) {
    scheme = extractors::ascii_lower(s);
    host = curl_url_get(u, CURLUPART_HOST, &h, 0) == CURLUE_OK ? extractors::ascii_lower(h) : "";
  }
  curl_free(s);
  curl_free(h);
  curl_url_cleanup(u);
  return ok;
}

size_t Fetcher::Impl::on_body(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t bytes = size * n;
  if (t->robots && t->result.body.size() + bytes > kRobotsBytes) {
    t->result.body.append(data, kRobotsBytes - t->result.body.size());
    t->truncated = true;
    return 0;  // ends the transfer; what was read is the file
  }
  if (static_cast<std::int64_t>(t->result.body.size() + bytes) > t->impl->options.max_body_bytes) {
    t->too_large = true;
    return 0;  // aborts the transfer (CURLE_WRITE_ERROR)
  }
  t->result.body.append(data, bytes);
  return bytes;
}

curl_socket_t Fetcher::Impl::on_open_socket(void* user, curlsocktype, curl_sockaddr* addr) {
  auto* t = static_cast<Transfer*>(user);
  const auto ip = ip_bytes(&addr->addr);
  if (!ip) {
    t->blocked = true;
    t->result.detail = "address family " + std::to_string(addr->family) + " is not IP";
    return CURL_SOCKET_BAD;
  }
  const std::string range = non_public_range(*ip);
  if (!range.empty()) {
    const bool allowed = std::any_of(t->impl->allowed.begin(), t->impl->allowed.end(),
                                     [&](const Cidr& c) { return cidr_contains(c, *ip); });
    if (!allowed) {
      t->blocked = true;
      t->result.detail = ip_string(*ip) + " is a " + range +
                         " address (fetch.allow_networks lists the exceptions)";
      return CURL_SOCKET_BAD;
    }
  }
  return ::socket(addr->family, addr->socktype, addr->protocol);
}

void Fetcher::Impl::configure(Transfer& t) {
  CURL* e = t.easy;
  curl_easy_setopt(e, CURLOPT_URL, t.result.url.c_str());
  curl_easy_setopt(e, CURLOPT_PRIVATE, &t);
  curl_easy_setopt(e, CURLOPT_SHARE, share);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(e, CURLOPT_MAXREDIRS, static_cast<long>(options.max_redirects));
  curl_easy_setopt(e, CURLOPT_PROXY, "");  // no proxy from the environment
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options.connect_timeout_ms));
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(options.timeout_ms));
  curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(options.max_body_bytes));
  curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");  // every encoding libcurl decodes
  curl_easy_setopt(e, CURLOPT_USERAGENT, options.user_agent.c_str());
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &Impl::on_body);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, &Impl::on_open_socket);
  curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, &t);
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
}

bool Fetcher::Impl::classify(Transfer& t, CURLcode code) {
  FetchResult& r = t.result;
  curl_easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &r.status);
  char* effective = nullptr;
  if (curl_easy_getinfo(t.easy, CURLINFO_EFFECTIVE_URL, &effective) == CURLE_OK && effective) {
    r.final_url = effective;
  }
  char* ct = nullptr;
  if (curl_easy_getinfo(t.easy, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct) {
    r.content_type = ct;
  }
  if (t.blocked) {
    r.outcome = "blocked_address";
    return false;
  }
  if (t.too_large || code == CURLE_FILESIZE_EXCEEDED) {
    r.outcome = "too_large";
    r.detail = "body exceeds fetch.max_body_bytes (" + std::to_string(options.max_body_bytes) + ")";
    return false;
  }
  if (t.truncated) code = CURLE_OK;
  switch (code) {
    case CURLE_OK:
      break;
    case CURLE_OPERATION_TIMEDOUT:
      r.outcome = "timeout";
      r.detail = curl_easy_strerror(code);
      return true;
    case CURLE_COULDNT_CONNECT:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
      r.outcome = "connect_error";
      r.detail = curl_easy_strerror(code);
      return true;
    case CURLE_COULDNT_RESOLVE_HOST:
      r.outcome = "dns_error";
      r.detail = curl_easy_strerror(code);
      return false;
    case CURLE_TOO_MANY_REDIRECTS:
      r.outcome = "too_many_redirects";
      r.detail = "more than " + std::to_string(options.max_redirects) + " redirects";
      return false;
    case CURLE_UNSUPPORTED_PROTOCOL:
      r.outcome = "blocked_scheme";
      r.detail = "only http and https are fetched (also on redirects)";
      return false;
    default:
      r.outcome = "error";
      r.detail = curl_easy_strerror(code);
      return false;
  }
  if (r.status == 429 || r.status >= 500) {
    r.outcome = r.status == 429 ? "http_429" : "http_5xx";
    r.detail = "HTTP " + std::to_string(r.status);
    // The site's own word on when to come back (seconds or an HTTP date; 0: none).
    curl_off_t after = 0;
    if (curl_easy_getinfo(t.easy, CURLINFO_RETRY_AFTER, &after) == CURLE_OK && after > 0) {
      r.retry_after_seconds = static_cast<std::int64_t>(after);
      r.detail += ", Retry-After " + std::to_string(after) + " s";
    }
    return true;
  }
  if (r.status >= 400 || r.status < 200 || r.status >= 300) {
    r.outcome = "http_4xx";
    r.detail = "HTTP " + std::to_string(r.status);
    if (r.status < 400) r.outcome = "error";
    return false;
  }
  if (!t.robots && !html_like(r.content_type)) {
    r.outcome = "not_html";
    r.detail = "content type " + r.content_type;
    return false;
  }
  r.outcome = "ok";
  r.detail.clear();
  return false;
}

bool fetch_failure_is_transient(std::string_view reason) {
  // Not a name that does not resolve: the resolver cannot tell a host that is gone from one it
  // failed to ask about, and a link to a made-up host is common in feeds.
  for (const std::string_view r : {"fetch_http_429", "fetch_http_5xx", "fetch_timeout",
                                   "fetch_connect_error", "fetch_deferred"}) {
    if (reason == r) return true;
  }
  return false;
}

std::vector<config::Problem> check_fetch_config(const config::Config& config) {
  std::vector<config::Problem> problems;
  for (const auto& n : config.fetch.allow_networks) {
    if (!parse_cidr(n)) {
      problems.push_back({"fetch.allow_networks", "'" + n + "' is not an address or network"});
    }
  }
  return problems;
}

Fetcher::Fetcher(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Fetcher::~Fetcher() {
  if (impl_ && impl_->headers) curl_slist_free_all(impl_->headers);
}

tl::expected<std::unique_ptr<Fetcher>, std::string> Fetcher::create(
    const config::FetchConfig& options, Metrics* metrics) {
  std::call_once(g_curl_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->metrics = metrics;
  // The product token robots.txt groups name: the user agent up to its version or comment.
  impl->product = extractors::ascii_lower(
      options.user_agent.substr(0, options.user_agent.find_first_of("/ (")));
  for (const auto& n : options.allow_networks) {
    const auto cidr = parse_cidr(n);
    if (!cidr) return tl::unexpected("fetch.allow_networks: '" + n + "' is not a network");
    impl->allowed.push_back(*cidr);
  }
  impl->multi = curl_multi_init();
  impl->share = curl_share_init();
  if (!impl->multi || !impl->share) return tl::unexpected(std::string("libcurl init failed"));
  curl_share_setopt(impl->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
  curl_multi_setopt(impl->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS,
                    static_cast<long>(options.max_concurrency));
  curl_multi_setopt(impl->multi, CURLMOPT_MAX_HOST_CONNECTIONS,
                    static_cast<long>(options.per_host_concurrency));
  curl_multi_setopt(impl->multi, CURLMOPT_MAXCONNECTS, static_cast<long>(options.max_concurrency));
  impl->headers = curl_slist_append(
      nullptr, "Accept: text/html,application/xhtml+xml;q=0.9,text/plain;q=0.5,*/*;q=0.1");
  return std::unique_ptr<Fetcher>(new Fetcher(std::move(impl)));
}

void Fetcher::Impl::learn_robots(const std::string& origin, const FetchResult& r) {
  const auto now = Clock::now();
  std::string result;
  RobotsEntry entry;
  if (r.ok()) {
    result = "ok";
    entry = {RobotsRules::parse(r.body, product),
             now + std::chrono::seconds(options.robots_cache_seconds)};
  } else if (r.outcome == "http_4xx" || r.outcome == "too_many_redirects") {
    // No robots.txt (RFC 9309 2.3.1.3): everything may be fetched.
    result = "unavailable";
    entry = {RobotsRules::allow_all(), now + std::chrono::seconds(options.robots_cache_seconds)};
  } else if (r.outcome == "http_5xx" || r.outcome == "http_429" || r.outcome == "timeout" ||
             r.outcome == "connect_error" || r.outcome == "error") {
    // Unreachable (2.3.1.4): nothing may be fetched until it is asked again.
    result = "unreachable";
    entry = {RobotsRules::disallow_all(), now + std::chrono::seconds(options.robots_error_seconds)};
  } else {
    // DNS failure, a refused address or scheme, not read in time: the page's own fetch fails
    // for the same reason and says so; nothing is judged, and the file is asked again next time.
    result = "error";
    entry = {RobotsRules::allow_all(), now};
  }
  if (metrics) metrics->robots_fetch(result);
  robots[origin] = std::move(entry);
}

bool Fetcher::Impl::robots_allow(const std::string& url, const std::string& origin,
                                 FetchResult& refused,
                                 std::map<std::string, std::chrono::milliseconds>& delays) {
  const auto it = robots.find(origin);
  if (it == robots.end()) return true;
  const std::string path = robots_path(url).value_or("/");
  if (!it->second.rules.allows(path)) {
    refused.url = refused.final_url = url;
    refused.outcome = "disallowed";
    refused.detail = "robots.txt of " + origin + " disallows " + path + " for " + product;
    if (metrics) metrics->fetch(refused.outcome);
    return false;
  }
  if (const auto d = it->second.rules.crawl_delay()) {
    // Crawl-delay raises the delay between requests to the host, up to the configured cap.
    const auto ms = std::chrono::milliseconds(
        static_cast<std::int64_t>(std::min<double>(*d * 1000.0, options.max_crawl_delay_ms)));
    std::string scheme, host;
    if (split_url(url, scheme, host)) {
      delays[host] = std::max(ms, std::chrono::milliseconds(options.host_delay_ms));
    }
  }
  return true;
}

void Fetcher::Impl::bound_robots() {
  // However many sites the links name: at most robots_cache_max_sites files and
  // robots_cache_max_bytes of rules are kept, the entries that expire soonest forgotten first
  // (asked again when needed).
  const std::size_t max_sites = options.robots_cache_max_sites;
  const std::size_t max_bytes = options.robots_cache_max_bytes;
  std::size_t bytes = 0;
  for (const auto& [origin, e] : robots) bytes += origin.size() + e.rules.bytes();
  if (robots.size() <= max_sites && bytes <= max_bytes) return;
  std::vector<std::pair<Clock::time_point, std::string>> by_expiry;
  by_expiry.reserve(robots.size());
  for (const auto& [origin, e] : robots) by_expiry.emplace_back(e.expires, origin);
  std::sort(by_expiry.begin(), by_expiry.end());
  for (const auto& [expires, origin] : by_expiry) {
    if (robots.size() <= max_sites && bytes <= max_bytes) break;
    const auto it = robots.find(origin);
    bytes -= origin.size() + it->second.rules.bytes();
    robots.erase(it);
  }
}

void Fetcher::cut_short() {
  impl_->cut = true;
  curl_multi_wakeup(impl_->multi);  // out of curl_multi_poll now, not at its timeout
}

std::vector<FetchResult> Fetcher::fetch(const std::vector<std::string>& urls) {
  Impl& im = *impl_;
  im.cut = false;
  std::optional<Clock::time_point> deadline;
  if (im.options.batch_deadline_ms > 0) {
    deadline = Clock::now() + std::chrono::milliseconds(im.options.batch_deadline_ms);
  }
  std::vector<Impl::Job> jobs;
  jobs.reserve(urls.size());
  if (!im.options.robots_txt) {
    for (const auto& url : urls) jobs.push_back({url, false, "", std::nullopt});
    return im.run(jobs, {}, deadline);
  }
  // What each site's robots.txt says, fetched once per origin and trusted for a day. A file not
  // known yet is fetched first, in the same run as the pages: a site's pages wait for its own
  // file, not for every site's (one site that sends its file a byte a second holds only its
  // own pages).
  const auto now = Clock::now();
  std::erase_if(im.robots, [&](const auto& kv) { return kv.second.expires < now; });
  std::vector<std::optional<std::string>> origin(urls.size());
  std::map<std::string, std::size_t> robots_job;  // by origin
  for (std::size_t i = 0; i < urls.size(); ++i) {
    origin[i] = robots_origin(urls[i]);
    if (origin[i] && !im.robots.contains(*origin[i]) && !robots_job.contains(*origin[i])) {
      robots_job.emplace(*origin[i], jobs.size());
      jobs.push_back({*origin[i] + "/robots.txt", true, *origin[i], std::nullopt});
    }
  }
  std::vector<FetchResult> results(urls.size());
  std::vector<std::optional<std::size_t>> job_of(urls.size());
  std::map<std::string, std::chrono::milliseconds> delays;
  for (std::size_t i = 0; i < urls.size(); ++i) {
    Impl::Job page{urls[i], false, origin[i].value_or(""), std::nullopt};
    if (origin[i]) {
      if (const auto r = robots_job.find(*origin[i]); r != robots_job.end()) {
        page.after_robots = r->second;
      } else if (!im.robots_allow(urls[i], *origin[i], results[i], delays)) {
        continue;
      }
    }
    job_of[i] = jobs.size();
    jobs.push_back(std::move(page));
  }
  std::vector<FetchResult> fetched = im.run(jobs, std::move(delays), deadline);
  im.bound_robots();
  for (std::size_t i = 0; i < urls.size(); ++i) {
    if (job_of[i]) results[i] = std::move(fetched[*job_of[i]]);
  }
  return results;
}

}  // namespace newsflow::daemon
