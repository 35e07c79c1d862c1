// The record of a linked page's later try (topics.fetch_retries) and when it is due: the
// retrier that reads and writes them is fetch_retries.cc.

#include <algorithm>
#include <nlohmann/json.hpp>

#include "daemon/kafka/fetch_retries.h"
#include "daemon/pipeline/fetcher.h"
#include "extractors/timestamp.h"

namespace newsflow::daemon {

std::string fetch_retry_json(const FetchRetry& r) {
  nlohmann::ordered_json j;
  j["id"] = r.id;
  j["link"] = r.link;
  j["title"] = r.title;
  j["published_at"] = r.published_at
                          ? nlohmann::ordered_json(extractors::format_rfc3339(*r.published_at))
                          : nlohmann::ordered_json();
  j["feed_url"] = r.feed_url;
  j["feed_id"] = r.feed_id;
  j["published"] = r.published;
  j["attempts"] = r.attempts;
  j["due_ms"] = r.due_ms;
  j["reason"] = r.reason;
  j["detail"] = r.detail;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::optional<FetchRetry> parse_fetch_retry(std::string_view json) {
  const auto j = nlohmann::json::parse(json, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  const auto str = [&j](const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  FetchRetry r;
  r.id = str("id");
  r.link = str("link");
  const auto attempts = j.find("attempts");
  if (r.id.empty() || r.link.empty() || attempts == j.end() || !attempts->is_number_integer()) {
    return std::nullopt;
  }
  r.attempts = static_cast<int>(std::clamp<std::int64_t>(*attempts, 1, 1000));
  r.title = str("title");
  if (const std::string p = str("published_at"); !p.empty()) {
    r.published_at = extractors::parse_iso8601(p);
  }
  r.feed_url = str("feed_url");
  r.feed_id = str("feed_id");
  if (const auto p = j.find("published"); p != j.end() && p->is_boolean()) r.published = *p;
  if (const auto d = j.find("due_ms"); d != j.end() && d->is_number_integer()) r.due_ms = *d;
  r.reason = str("reason");
  r.detail = str("detail");
  return r;
}

std::int64_t fetch_retry_delay_ms(const config::FetchConfig& fetch, int attempts,
                                  std::int64_t retry_after_seconds) {
  std::int64_t delay = fetch.requeue_backoff_ms;
  for (int i = 1; i < attempts && delay < fetch.requeue_max_backoff_ms; ++i) delay *= 2;
  delay = std::min(delay, fetch.requeue_max_backoff_ms);
  const std::int64_t asked = std::min(std::max<std::int64_t>(retry_after_seconds, 0),
                                      fetch.requeue_max_backoff_ms / 1000 + 1) *
                             1000;
  return std::max(delay, std::min(asked, fetch.requeue_max_backoff_ms));
}

bool fetch_retry_left(const config::FetchConfig& fetch, int attempts, std::string_view reason) {
  // The first try is the judging process's; `requeue_attempts` more follow it.
  return fetch_failure_is_transient(reason) && attempts - 1 < fetch.requeue_attempts;
}

}  // namespace newsflow::daemon
