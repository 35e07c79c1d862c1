#include "daemon/pipeline/pipeline.h"

#include <cstdint>

#include "daemon/pipeline/internal/parts.h"

namespace newsflow::daemon {

namespace {

// The story book and the boilerplate filter bounded by the window's bound: a story per article
// held, and 32 paragraphs (a page has 19 on average), so memory follows `window.max_articles`
// when articles come faster than the window's time lets go of them.
dedup::StoryOptions bounded(dedup::StoryOptions o, std::uint64_t max_articles) {
  o.max_stories = static_cast<std::size_t>(max_articles);
  return o;
}

dedup::BoilerplateOptions bounded(dedup::BoilerplateOptions o, std::uint64_t max_articles) {
  o.max_entries = static_cast<std::size_t>(max_articles * 32);
  return o;
}

}  // namespace

Pipeline::Pipeline(const config::Config& config, Metrics* metrics)
    : config_(config),
      metrics_(metrics),
      window_(config.window),
      stories_(bounded(config.stories, config.window.max_articles)),
      boilerplate_(bounded(config.boilerplate, config.window.max_articles)),
      // 8 slices of 2^20 counters (16 MiB) for the weighted scheme; a token table otherwise.
      term_stats_(config.window.window_seconds, 8,
                  config.signature.scheme == dedup::SignatureScheme::kWeighted
                      ? dedup::TermStats::kWeightedBits
                      : 8) {
  // What leaves the window leaves the story book's index (`forget_left`).
  window_.track_left();
}

void Pipeline::forget_left() {
  for (const std::string& id : window_.take_left()) stories_.forget(id);
}

tl::expected<std::vector<Output>, Failure> Pipeline::process(const Input& input) {
  auto extracted = prepare(input);
  if (!extracted) return tl::unexpected(extracted.error());
  return commit(std::move(*extracted), input);
}

std::string Pipeline::article_id(const Extracted& e, const Input& input) {
  return e.from_feed ? e.article.id : pipeline_internal::page_id(e.article.canonical_url, input);
}

}  // namespace newsflow::daemon
