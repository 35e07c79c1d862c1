#include "daemon/pipeline.h"

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "daemon/metrics.h"
#include "dedup/fingerprint.h"
#include "dedup/normalize.h"
#include "extractors/charset.h"
#include "extractors/html.h"
#include "extractors/metadata.h"
#include "extractors/text.h"

namespace newsflow::daemon {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

nlohmann::json optional_time(const std::optional<extractors::UnixSeconds>& t) {
  return t ? nlohmann::json(extractors::format_rfc3339(*t)) : nlohmann::json(nullptr);
}

nlohmann::json or_null(const std::string& s) {
  return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
}

std::string dump(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Id of an input without one: 16 hex digits of the canonical URL's hash, so a page re-crawled
// under the same canonical URL keeps its key downstream.
std::string derived_id(const std::string& canonical_url) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx",
                static_cast<unsigned long long>(dedup::hash64(canonical_url)));
  return buf;
}

}  // namespace

std::string article_json(const Output& out) {
  const extractors::Article& a = out.article;
  nlohmann::ordered_json j;
  j["id"] = a.id;
  j["url"] = a.url;
  j["canonical_url"] = a.canonical_url;
  j["source"] = a.source;
  j["title"] = a.title;
  j["text"] = a.text;
  j["lang"] = or_null(a.lang);
  j["published_at"] = optional_time(a.published_at);
  j["fetched_at"] = optional_time(a.fetched_at);
  j["content_hash"] = out.content_hash;
  j["dup"] = {{"kind", dedup::dup_kind_name(out.verdict.kind)},
              {"of", or_null(out.verdict.of)},
              {"similarity", out.verdict.similarity}};
  j["story_id"] = out.story_id;
  return dump(j);
}

std::string story_json(const dedup::Story& s) {
  nlohmann::ordered_json j;
  j["story_id"] = s.story_id;
  j["title"] = s.title;
  j["representative"] = s.representative;
  auto& articles = j["articles"] = nlohmann::ordered_json::array();
  for (const auto& m : s.articles) {
    articles.push_back({{"id", m.id},
                        {"url", m.url},
                        {"source", m.source},
                        {"dup", dedup::dup_kind_name(m.kind)}});
  }
  j["article_count"] = s.article_count;
  j["sources"] = s.sources;
  j["first_seen"] = extractors::format_rfc3339(s.first_seen);
  j["last_updated"] = extractors::format_rfc3339(s.last_updated);
  j["version"] = s.version;
  return dump(j);
}

Pipeline::Pipeline(const config::Config& config, Metrics* metrics)
    : config_(config), metrics_(metrics), window_(config.window), stories_(config.stories) {}

tl::expected<extractors::Article, Failure> Pipeline::extract(const Input& input) {
  using extractors::ExtractReason;
  auto fail = [](const extractors::ExtractError& e) {
    return tl::unexpected(Failure{std::string(extractors::reason_name(e.reason)), e.detail});
  };
  switch (input.kind) {
    case BodyKind::kText: {
      if (!extractors::is_valid_utf8(input.body) || !extractors::is_valid_utf8(input.title)) {
        return tl::unexpected(Failure{"invalid_utf8", "text is not UTF-8"});
      }
      extractors::Article a;
      a.url = input.url;
      a.canonical_url = input.url;
      a.source = extractors::url_source(input.url);
      a.title = extractors::collapse_whitespace(input.title);
      a.text = input.body;
      if (extractors::collapse_whitespace(a.text).size() < config_.extract.min_text_chars) {
        return tl::unexpected(Failure{"empty_document", "text is empty"});
      }
      return a;
    }
    case BodyKind::kHtmlBytes: {
      if (input.body.size() > config_.extract.max_html_bytes) {
        return fail({ExtractReason::kTooLarge, "document has " + std::to_string(input.body.size()) +
                                                   " bytes, limit " +
                                                   std::to_string(config_.extract.max_html_bytes)});
      }
      if (extractors::looks_binary(input.body) &&
          !(input.body.size() >= 2 && (input.body[0] == '\xFF' || input.body[0] == '\xFE'))) {
        return fail({ExtractReason::kBinary, "document holds NUL bytes or control characters"});
      }
      auto decoded = extractors::decode_to_utf8(input.body, input.content_type);
      if (!decoded) return fail(decoded.error());
      auto a = extractors::extract_html(decoded->text, input.url, config_.extract);
      if (!a) return fail(a.error());
      return std::move(*a);
    }
    case BodyKind::kHtmlText: {
      auto a = extractors::extract_html(input.body, input.url, config_.extract);
      if (!a) return fail(a.error());
      return std::move(*a);
    }
  }
  return tl::unexpected(Failure{"internal_error", "unknown body kind"});
}

tl::expected<std::vector<Output>, Failure> Pipeline::process(const Input& input) {
  if (input.url.empty()) return tl::unexpected(Failure{"missing_url", "input has no url"});
  auto t0 = Clock::now();
  auto extracted = extract(input);
  if (metrics_) metrics_->stage_seconds("extract", seconds_since(t0));
  if (!extracted) return tl::unexpected(extracted.error());

  Output out;
  out.article = std::move(*extracted);
  extractors::Article& a = out.article;
  if (!input.title.empty() && a.title.empty()) a.title = input.title;
  if (input.published_at) a.published_at = input.published_at;
  a.fetched_at = input.fetched_at;
  a.id = !input.id.empty() ? input.id : derived_id(a.canonical_url);

  t0 = Clock::now();
  const dedup::Fingerprint fp =
      dedup::make_fingerprint(dedup::normalize_text(a.text), config_.signature);
  out.content_hash = fp.exact.hex();
  // Event time: the input's own published/fetched time. A date printed on the page is not
  // trusted for windowing: templates carry stale dates and copies keep the original's.
  std::int64_t event_time = window_.watermark();
  if (input.published_at) {
    event_time = *input.published_at;
  } else if (input.fetched_at) {
    event_time = *input.fetched_at;
  }
  out.verdict = window_.observe(a.id, fp, event_time);
  if (metrics_) metrics_->stage_seconds("dedup", seconds_since(t0));

  t0 = Clock::now();
  out.story = stories_.assign({a.id, a.url, a.source, out.verdict.kind}, a.title, out.verdict,
                              event_time);
  out.story_id = out.story.story_id;
  if (metrics_) {
    metrics_->stage_seconds("cluster", seconds_since(t0));
    metrics_->window_size(static_cast<double>(window_.size()));
    metrics_->stories_active(static_cast<double>(stories_.size()));
  }
  std::vector<Output> outputs;
  outputs.push_back(std::move(out));
  return outputs;
}

}  // namespace newsflow::daemon
