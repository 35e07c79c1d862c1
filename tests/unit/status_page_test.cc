#include "daemon/ops/status_page.h"

#include <gtest/gtest.h>

#include <string>

namespace newsflow::daemon {
namespace {

dedup::Story story(const std::string& id, const std::string& title, const std::string& language) {
  dedup::Story s;
  s.story_id = id;
  s.title = title;
  s.language = language;
  s.languages = {language};
  s.article_count = 1;
  s.articles.emplace_back(id, "https://" + language + ".test/" + id, language + ".test");
  return s;
}

TEST(StoriesPage, AStoryShowsTheStoriesOfOtherLanguagesItIsRelatedTo) {
  StatusSnapshot s;
  dedup::Story en = story("en1", "Doobie Brothers announce a tour", "en");
  en.related_stories = {"de1", "gone"};  // "gone" was merged away since: not shown
  s.stories = {en, story("de1", "Doobie Brothers <gehen> auf Tour", "de"),
               story("fr1", "Conseil municipal", "fr")};
  s.related["de1"] = {"Doobie Brothers <gehen> auf Tour", "de"};
  const std::string html = render_stories_page(s);
  const auto related = html.find("<li class=related>");
  ASSERT_NE(related, std::string::npos) << html;
  const std::string line = html.substr(related, html.find("</li>", related) - related);
  EXPECT_NE(line.find("data-story-id=\"de1\""), std::string::npos) << line;
  EXPECT_NE(line.find("<span class=lang>de</span> Doobie Brothers &lt;gehen&gt; auf Tour"),
            std::string::npos)
      << line;
  EXPECT_EQ(line.find("gone"), std::string::npos) << line;
  // Only the English story lists any.
  EXPECT_EQ(html.find("<li class=related>", related + 1), std::string::npos);
  // Without links, no such line at all.
  s.stories[0].related_stories.clear();
  EXPECT_EQ(render_stories_page(s).find("class=related"), std::string::npos);
}

// A page or feed item whose URL is javascript: was written into <a href> on the status and
// stories pages: a click ran script on the ops origin. Only web URLs become links now.
TEST(StoriesPage, OnlyWebUrlsBecomeLinks) {
  StatusSnapshot s;
  dedup::Story st = story("a1", "Headline", "en");
  st.articles.emplace_back("a2", "javascript:alert(document.domain)//x", "evil.test");
  st.articles.emplace_back("a3", "JAVASCRIPT:alert(1)", "");
  st.articles.emplace_back("a4", "https://ok.test/\tjavascript:x", "ok.test");
  st.article_count = 4;
  s.stories = {st};
  for (const std::string& html : {render_stories_page(s), render_status_page(s)}) {
    EXPECT_EQ(html.find("href=\"javascript"), std::string::npos) << html;
    EXPECT_EQ(html.find("href=\"JAVASCRIPT"), std::string::npos) << html;
    EXPECT_NE(html.find("<a href=\"https://en.test/a1\""), std::string::npos) << html;
    EXPECT_NE(html.find("<span class=url>javascript:alert(document.domain)//x</span>"),
              std::string::npos)
        << html;
  }
  EXPECT_TRUE(is_web_url("https://a.test/x"));
  EXPECT_TRUE(is_web_url("HTTP://a.test/"));
  EXPECT_FALSE(is_web_url("javascript:alert(1)"));
  EXPECT_FALSE(is_web_url(" https://a.test/"));
  EXPECT_FALSE(is_web_url("https://a.test/\tx"));
  EXPECT_FALSE(is_web_url("data:text/html,x"));
  EXPECT_FALSE(is_web_url("//a.test/x"));
  EXPECT_FALSE(is_web_url("https:"));
}

}  // namespace
}  // namespace newsflow::daemon
