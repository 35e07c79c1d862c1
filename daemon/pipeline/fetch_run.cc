// One run of the fetcher's transfers (`Fetcher::Impl::run`): the robots.txt files and pages of a
// batch started as the limits allow, retried, and given up at the batch's deadline.

#include <algorithm>
#include <deque>
#include <map>
#include <string>
#include <utility>

#include "daemon/ops/metrics.h"
#include "daemon/pipeline/fetcher_impl.h"

namespace newsflow::daemon {

using Clock = FetchClock;

class Fetcher::Impl::Run {
 public:
  Run(Impl& im, const std::vector<Job>& jobs,
      std::map<std::string, std::chrono::milliseconds> delays,
      std::optional<Clock::time_point> deadline)
      : im_(im),
        jobs_(jobs),
        delays_(std::move(delays)),
        deadline_(deadline),
        transfers_(jobs.size()),
        results_(jobs.size()),
        waiting_(jobs.size()),
        default_delay_(im.options.host_delay_ms) {}

  std::vector<FetchResult> go();

 private:
  void prepare();
  std::chrono::milliseconds delay_of(const std::string& host) const;
  void finish(Transfer& t);
  void admit_pages();
  void defer(Transfer& t, std::string_view why, Clock::time_point now);
  void give_up_all(bool cut_short, Clock::time_point now);
  void start_pending(Clock::time_point now);
  void take_finished();
  void defer_too_late(Clock::time_point now);
  int wait_ms();

  Impl& im_;
  const std::vector<Job>& jobs_;
  std::map<std::string, std::chrono::milliseconds> delays_;
  std::optional<Clock::time_point> deadline_;
  std::vector<Transfer> transfers_;
  std::deque<std::size_t> pending_;
  std::vector<FetchResult> results_;
  std::size_t done_ = 0;
  // The pages that wait for each robots.txt, and the files read but not yet applied to them.
  std::vector<std::vector<std::size_t>> waiting_;
  std::vector<std::size_t> robots_read_;
  std::map<std::string, int> active_per_host_;
  std::map<std::string, Clock::time_point> next_start_;  // politeness per host
  int active_ = 0;
  const std::chrono::milliseconds default_delay_;
};

std::vector<FetchResult> Fetcher::Impl::run(const std::vector<Job>& jobs,
                                            std::map<std::string, std::chrono::milliseconds> delays,
                                            std::optional<Clock::time_point> deadline) {
  return Run(*this, jobs, std::move(delays), deadline).go();
}

std::vector<FetchResult> Fetcher::Impl::Run::go() {
  prepare();
  while (done_ < jobs_.size()) {
    admit_pages();
    // Start what the limits allow, oldest first.
    const auto now = Clock::now();
    if (const bool cut_short = im_.cut.load(); cut_short || (deadline_ && now >= *deadline_)) {
      // The batch's time is up: what runs is stopped, what waits is not started (a site's
      // Crawl-delay, a slow server); each is given up with a reason, and the stream goes on.
      give_up_all(cut_short, now);
      break;
    }
    start_pending(now);
    take_finished();
    if (deadline_ && !pending_.empty()) defer_too_late(now);
    admit_pages();
    if (done_ >= jobs_.size()) break;
    // Sleep until a socket is ready or the next pending transfer may start.
    const int wait = wait_ms();
    if (active_ > 0 || wait > 0) curl_multi_poll(im_.multi, nullptr, 0, std::max(wait, 1), nullptr);
  }
  return std::move(results_);
}

// Each job's transfer; those that cannot be fetched (not a URL, not http or https) are done at
// once, pages waiting for their site's robots.txt wait for it.
void Fetcher::Impl::Run::prepare() {
  for (std::size_t i = 0; i < jobs_.size(); ++i) {
    Transfer& t = transfers_[i];
    t.impl = &im_;
    t.index = i;
    t.result.url = jobs_[i].url;
    t.result.final_url = jobs_[i].url;
    t.robots = jobs_[i].robots;
    std::string scheme;
    if (!split_url(jobs_[i].url, scheme, t.host)) {
      t.result.outcome = "error";
      t.result.detail = "not a URL";
    } else if (scheme != "http" && scheme != "https") {
      t.result.outcome = "blocked_scheme";
      t.result.detail = "only http and https are fetched, not " + scheme;
    } else if (jobs_[i].after_robots) {
      waiting_[*jobs_[i].after_robots].push_back(i);
      continue;
    } else {
      pending_.push_back(i);
      continue;
    }
    if (t.robots) robots_read_.push_back(i);
    results_[i] = std::move(t.result);
    ++done_;
  }
}

std::chrono::milliseconds Fetcher::Impl::Run::delay_of(const std::string& host) const {
  const auto it = delays_.find(host);
  return it == delays_.end() ? default_delay_ : it->second;
}

void Fetcher::Impl::Run::finish(Transfer& t) {
  t.result.seconds = std::chrono::duration<double>(Clock::now() - t.first_start).count();
  if (im_.metrics && !t.robots) im_.metrics->fetch(t.result.outcome);
  if (t.robots) robots_read_.push_back(t.index);
  results_[t.index] = std::move(t.result);
  ++done_;
}

// A site's pages go on once its robots.txt is read: refused, or waiting for their turn.
void Fetcher::Impl::Run::admit_pages() {
  for (const std::size_t r : std::exchange(robots_read_, {})) {
    im_.learn_robots(jobs_[r].origin, results_[r]);
    for (const std::size_t i : waiting_[r]) {
      if (im_.robots_allow(jobs_[i].url, jobs_[i].origin, transfers_[i].result, delays_)) {
        pending_.push_back(i);
      } else {
        results_[i] = std::move(transfers_[i].result);
        ++done_;
      }
    }
    waiting_[r].clear();
  }
}

// A transfer given up before it started: the batch's deadline has come, or will before the
// site lets it start.
void Fetcher::Impl::Run::defer(Transfer& t, std::string_view why, Clock::time_point now) {
  t.result.outcome = "deferred";
  t.result.detail =
      std::string(why) + " within the batch's fetch deadline (fetch.batch_deadline_ms";
  t.result.detail +=
      delays_.contains(t.host) ? "; the site's Crawl-delay spaces its requests)" : ")";
  if (t.result.attempts == 0) t.first_start = now;
  finish(t);
}

// Every transfer not done, stopped if it runs: the batch's deadline has come ("timeout" for a
// page that was being fetched), or the fetch was cut short (`cut_short`: "deferred", a slow
// site's page goes on as a later try while the batch is judged without it).
void Fetcher::Impl::Run::give_up_all(bool cut_short, Clock::time_point now) {
  for (auto& t : transfers_) {
    if (!t.easy) continue;
    curl_multi_remove_handle(im_.multi, t.easy);
    curl_easy_cleanup(t.easy);
    t.easy = nullptr;
    t.result.outcome = t.robots || cut_short ? "deferred" : "timeout";
    t.result.detail =
        cut_short ? "still being fetched when the batch stopped waiting (fetch.batch_wait_ms)"
                  : "still running at the batch's fetch deadline (fetch.batch_deadline_ms)";
    finish(t);
  }
  // A robots.txt given up lets its pages wait in turn, and they are given up too.
  for (admit_pages(); !pending_.empty(); admit_pages()) {
    Transfer& t = transfers_[pending_.front()];
    pending_.pop_front();
    if (!cut_short) {
      defer(t, "not started", now);
      continue;
    }
    t.result.outcome = "deferred";
    t.result.detail = "not fetched when the batch stopped waiting (fetch.batch_wait_ms)";
    if (t.result.attempts == 0) t.first_start = now;
    finish(t);
  }
}

// Starts what the concurrency limits and the hosts' delays allow, oldest first.
void Fetcher::Impl::Run::start_pending(Clock::time_point now) {
  for (auto it = pending_.begin(); it != pending_.end() && active_ < im_.options.max_concurrency;) {
    Transfer& t = transfers_[*it];
    auto& host_active = active_per_host_[t.host];
    auto& host_next = next_start_[t.host];
    if (t.not_before > now || host_active >= im_.options.per_host_concurrency || host_next > now) {
      ++it;
      continue;
    }
    t.easy = curl_easy_init();
    t.result.body.clear();
    t.result.content_type.clear();
    t.result.status = 0;
    t.result.retry_after_seconds = 0;
    t.blocked = t.too_large = t.truncated = false;
    im_.configure(t);
    if (t.result.attempts++ == 0) t.first_start = now;
    curl_multi_add_handle(im_.multi, t.easy);
    ++active_;
    ++host_active;
    host_next = now + delay_of(t.host);
    it = pending_.erase(it);
  }
}

// Lets libcurl work, then takes the transfers it finished: each done, or waiting to be tried
// again.
void Fetcher::Impl::Run::take_finished() {
  int running = 0;
  curl_multi_perform(im_.multi, &running);
  int left = 0;
  while (CURLMsg* msg = curl_multi_info_read(im_.multi, &left)) {
    if (msg->msg != CURLMSG_DONE) continue;
    Transfer* t = nullptr;
    curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, reinterpret_cast<char**>(&t));
    const bool retry = im_.classify(*t, msg->data.result);
    curl_multi_remove_handle(im_.multi, t->easy);
    curl_easy_cleanup(t->easy);
    t->easy = nullptr;
    --active_;
    --active_per_host_[t->host];
    // A robots.txt is not retried: unreachable now, it disallows for robots_error_seconds.
    // A site that says when to come back is not asked again sooner: the page waits for a
    // later try (the daemon's fetch retries topic).
    if (retry && !t->robots && t->result.retry_after_seconds == 0 &&
        t->result.attempts <= im_.options.retries) {
      const auto backoff =
          std::chrono::milliseconds(im_.options.retry_backoff_ms) * (1 << (t->result.attempts - 1));
      t->not_before = Clock::now() + backoff;
      pending_.push_back(t->index);
    } else {
      finish(*t);
    }
  }
}

// A link its site cannot let start before the deadline (the site spaces its requests by
// host_delay_ms or its Crawl-delay, and others of it go first) is deferred now: the batch, and
// the inputs behind it, do not wait for a deadline that link cannot meet.
void Fetcher::Impl::Run::defer_too_late(Clock::time_point now) {
  std::map<std::string, long long> ahead;  // the site's links still waiting before it
  for (auto it = pending_.begin(); it != pending_.end();) {
    Transfer& t = transfers_[*it];
    const long long k = ahead[t.host]++;
    const auto earliest = std::max({t.not_before, next_start_[t.host], now}) +
                          k * std::chrono::duration_cast<Clock::duration>(delay_of(t.host));
    if (earliest <= *deadline_) {
      ++it;
      continue;
    }
    defer(t, "cannot start", now);
    it = pending_.erase(it);
  }
}

// How long to wait for a socket before the next pending transfer may start, or the deadline.
int Fetcher::Impl::Run::wait_ms() {
  int wait = 100;
  const auto now = Clock::now();
  for (const std::size_t i : pending_) {
    // A transfer held back by a concurrency limit starts when another ends (socket activity).
    if (active_ >= im_.options.max_concurrency ||
        active_per_host_[transfers_[i].host] >= im_.options.per_host_concurrency) {
      continue;
    }
    const auto at = std::max(transfers_[i].not_before, next_start_[transfers_[i].host]);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(at - now).count();
    wait = static_cast<int>(std::clamp<long long>(ms, 0, wait));
  }
  if (deadline_) {
    const auto until_deadline =
        std::chrono::duration_cast<std::chrono::milliseconds>(*deadline_ - Clock::now()).count();
    wait = static_cast<int>(std::clamp<long long>(until_deadline, 0, wait));
  }
  return wait;
}

}  // namespace newsflow::daemon
