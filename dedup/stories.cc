#include "dedup/stories.h"

#include <algorithm>
#include <unordered_set>

namespace newsflow::dedup {

const Story& StoryBook::assign(const StoryMember& member, std::string_view title,
                               const Verdict& verdict, std::int64_t event_time) {
  if (auto placed = story_of_.find(member.id); placed != story_of_.end()) {
    if (auto story = stories_.find(placed->second); story != stories_.end()) return story->second;
  }
  watermark_ = std::max(watermark_, event_time);
  if (++since_sweep_ >= 1024) expire(watermark_);

  std::string story_id;
  if (verdict.kind != DupKind::kUnique) {
    if (auto it = story_of_.find(verdict.of); it != story_of_.end() && stories_.count(it->second)) {
      story_id = it->second;
    }
  }
  if (story_id.empty()) story_id = member.id;
  auto [it, created] = stories_.try_emplace(story_id);
  Story& story = it->second;
  if (created) {
    story.story_id = story_id;
    story.title = std::string(title);
    story.representative = member.id;
    story.first_seen = event_time;
  }
  story.first_seen = std::min(story.first_seen, event_time);
  story.last_updated = std::max(story.last_updated, event_time);
  ++story.article_count;
  ++story.version;
  if (story.articles.size() < options_.max_listed) story.articles.push_back(member);
  std::unordered_set<std::string_view> sources;
  for (const auto& m : story.articles) sources.insert(m.source);
  story.sources = sources.size();
  story_of_[member.id] = story_id;
  return story;
}

std::string StoryBook::story_of(std::string_view article_id) const {
  const auto it = story_of_.find(std::string(article_id));
  return it == story_of_.end() ? std::string() : it->second;
}

std::vector<Story> StoryBook::largest(std::size_t n) const {
  std::vector<const Story*> all;
  all.reserve(stories_.size());
  for (const auto& [id, story] : stories_) all.push_back(&story);
  const auto bigger = [](const Story* a, const Story* b) {
    if (a->article_count != b->article_count) return a->article_count > b->article_count;
    if (a->last_updated != b->last_updated) return a->last_updated > b->last_updated;
    return a->story_id < b->story_id;
  };
  n = std::min(n, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n), all.end(), bigger);
  std::vector<Story> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(*all[i]);
  return out;
}

void StoryBook::expire(std::int64_t watermark) {
  since_sweep_ = 0;
  const std::int64_t horizon = watermark - options_.window_seconds;
  for (auto it = stories_.begin(); it != stories_.end();) {
    it = it->second.last_updated < horizon ? stories_.erase(it) : std::next(it);
  }
  for (auto it = story_of_.begin(); it != story_of_.end();) {
    it = stories_.count(it->second) ? std::next(it) : story_of_.erase(it);
  }
}

}  // namespace newsflow::dedup
