// The Robots Exclusion Protocol (RFC 9309) as the fetcher reads it. tests/integration/
// robots_protego_test.py checks the same matcher against Scrapy's Protego on a corpus.
#include "daemon/pipeline/robots.h"

#include <gtest/gtest.h>

#include <chrono>
#include <random>

namespace newsflow::daemon {
namespace {

TEST(Robots, TheRfcExample) {
  // RFC 9309 section 5.1, read by foobot, barbot and a crawler the file does not name.
  const std::string file =
      "User-Agent: *\nDisallow: *.gif$\nDisallow: /example/\nAllow: /publications/\n\n"
      "User-Agent: foobot\nDisallow:/\nAllow:/example/page.html\nAllow:/example/allowed.gif\n\n"
      "User-Agent: barbot\nUser-Agent: bazbot\nDisallow: /example/page.html\n\n"
      "User-Agent: quxbot\n";
  const auto foo = RobotsRules::parse(file, "foobot");
  EXPECT_TRUE(foo.allows("/example/page.html"));
  EXPECT_TRUE(foo.allows("/example/allowed.gif"));
  EXPECT_FALSE(foo.allows("/example/other.html"));
  EXPECT_FALSE(foo.allows("/"));
  const auto baz = RobotsRules::parse(file, "BazBot");  // the token matches in any case
  EXPECT_FALSE(baz.allows("/example/page.html"));
  EXPECT_TRUE(baz.allows("/example/other.html"));
  const auto qux = RobotsRules::parse(file, "quxbot");  // its group is empty: all allowed
  EXPECT_TRUE(qux.allows("/example/page.html"));
  const auto other = RobotsRules::parse(file, "newsflow");  // the '*' group
  EXPECT_FALSE(other.allows("/example/x"));
  EXPECT_FALSE(other.allows("/images/a.gif"));
  EXPECT_TRUE(other.allows("/images/a.gif?size=2"));  // '$' anchors the end
  EXPECT_TRUE(other.allows("/publications/"));
}

TEST(Robots, LongestMatchDecidesAndAllowWinsATie) {
  const auto r = RobotsRules::parse(
      "User-agent: *\nDisallow: /a\nAllow: /a/b\nDisallow: /a/b.php\nDisallow: /page\n"
      "Allow: /page\n",
      "newsflow");
  EXPECT_FALSE(r.allows("/a"));
  EXPECT_FALSE(r.allows("/a/c"));
  EXPECT_TRUE(r.allows("/a/b"));
  EXPECT_TRUE(r.allows("/a/b.html"));
  EXPECT_FALSE(r.allows("/a/b.php?x=1"));
  EXPECT_TRUE(r.allows("/page"));  // same length: allow
  EXPECT_TRUE(r.allows("/b"));
}

TEST(Robots, WildcardsAndTheEndAnchor) {
  const auto r = RobotsRules::parse(
      "User-agent: *\nDisallow: /*.php$\nDisallow: /fish*.html\nDisallow: /**/deep\n", "nf");
  EXPECT_FALSE(r.allows("/index.php"));
  EXPECT_FALSE(r.allows("/a/b/c.php"));
  EXPECT_TRUE(r.allows("/index.php5"));
  EXPECT_TRUE(r.allows("/index.php?x"));
  EXPECT_FALSE(r.allows("/fish.html"));
  EXPECT_FALSE(r.allows("/fishheads/yummy.html"));
  EXPECT_TRUE(r.allows("/Fish.html"));  // paths are case-sensitive
  EXPECT_FALSE(r.allows("/x/y/deep/z"));
}

// A pattern of 40 KB of "*a" against a path of 80 KB of "a" and a final "b" took 6 s in the
// backtracking matcher (pattern x path steps). Linear now, and bounded: patterns are cut at
// 16,664 octets, a group keeps 10,000 rules, a path over 16 KiB is never allowed.
TEST(Robots, CraftedPatternsAndPathsAreMatchedInBoundedTime) {
  std::string pattern;
  while (pattern.size() < 40000) pattern += "*a";
  const auto r = RobotsRules::parse("User-agent: *\nDisallow: /" + pattern + "b\n", "nf");
  const std::string path = "/" + std::string(16000, 'a');
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 20; ++i) EXPECT_FALSE(r.allows(path));  // the cut pattern has no 'b'...
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(seconds, 2.0);
  // ... and the path over the bound is not fetched.
  EXPECT_FALSE(RobotsRules::allow_all().allows("/" + std::string(20000, 'a')));
  std::string many = "User-agent: *\n";
  for (int i = 0; i < 20000; ++i) many += "Disallow: /r" + std::to_string(i) + "\n";
  const auto capped = RobotsRules::parse(many, "nf");
  EXPECT_EQ(capped.rules(), 10000u);
}

// The linear matcher agrees with a plain backtracking one (the definition) on random patterns.
bool reference_match(std::string_view p, std::string_view s) {
  if (p.empty()) return true;
  if (p == "$") return s.empty();
  if (p[0] == '*') {
    for (std::size_t k = 0; k <= s.size(); ++k) {
      if (reference_match(p.substr(1), s.substr(k))) return true;
    }
    return false;
  }
  return !s.empty() && p[0] == s[0] && reference_match(p.substr(1), s.substr(1));
}

TEST(Robots, TheLinearMatcherAgreesWithTheDefinition) {
  std::mt19937 rng(11);
  const std::string alphabet = "ab/*";
  int checked = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string pattern = "/";
    for (int k = rng() % 7; k > 0; --k) pattern += alphabet[rng() % alphabet.size()];
    if (rng() % 3 == 0) pattern += '$';
    std::string path = "/";
    for (int k = rng() % 9; k > 0; --k) path += "ab/"[rng() % 3];
    const auto r = RobotsRules::parse("User-agent: *\nDisallow: " + pattern + "\n", "nf");
    ASSERT_EQ(!r.allows(path), reference_match(pattern, path)) << pattern << " vs " << path;
    ++checked;
  }
  EXPECT_EQ(checked, 20000);
}

TEST(Robots, PathsCompareInOnePercentEncoding) {
  const auto r =
      RobotsRules::parse("User-agent: *\nDisallow: /caf%c3%a9\nDisallow: /%7Euser/\n", "newsflow");
  EXPECT_FALSE(r.allows("/caf%C3%A9/menu"));
  EXPECT_FALSE(r.allows("/caf\xC3\xA9"));
  EXPECT_FALSE(r.allows("/~user/page"));
  EXPECT_TRUE(r.allows("/cafe"));
  const auto slash = RobotsRules::parse("User-agent: *\nDisallow: /a/b\n", "newsflow");
  EXPECT_TRUE(slash.allows("/a%2Fb"));  // an escaped '/' is no path separator
}

TEST(Robots, GroupsForTheCrawlerMergeAndOutrankTheStarGroup) {
  const auto r = RobotsRules::parse(
      "User-agent: *\nDisallow: /\nCrawl-delay: 9\n\n"
      "User-agent: newsflow\nDisallow: /a\n\nUser-agent: other\nDisallow: /b\n\n"
      "user-agent: NewsFlow/2.0\nDisallow: /private # not for us\nCrawl-delay: 1.5\n",
      "newsflow");
  EXPECT_FALSE(r.allows("/a"));
  EXPECT_FALSE(r.allows("/private/x"));
  EXPECT_TRUE(r.allows("/b"));
  EXPECT_TRUE(r.allows("/news"));
  ASSERT_TRUE(r.crawl_delay());
  EXPECT_DOUBLE_EQ(*r.crawl_delay(), 1.5);
  EXPECT_EQ(RobotsRules::parse("User-agent: *\nCrawl-delay: 9\n", "newsflow").crawl_delay(), 9.0);
}

TEST(Robots, LenientReadingOfRealFiles) {
  // A BOM, CRLF, a missing colon, a misspelling, rules before any user-agent, empty values.
  const auto r = RobotsRules::parse(
      "\xEF\xBB\xBF"
      "Disallow: /ignored\r\nUser-agent: *\r\nDisallow /x\r\nDissallow: /y\r\nAllow:\r\n"
      "Sitemap: https://a.test/s.xml\r\nNoindex: /z\r\n",
      "newsflow");
  EXPECT_FALSE(r.allows("/x"));
  EXPECT_FALSE(r.allows("/y"));
  EXPECT_TRUE(r.allows("/z"));
  EXPECT_TRUE(r.allows("/ignored"));
  EXPECT_EQ(r.rules(), 2u);
  EXPECT_TRUE(RobotsRules::parse("", "newsflow").allows("/anything"));
  EXPECT_TRUE(RobotsRules::parse("<html>Not found</html>", "newsflow").allows("/a"));
}

TEST(Robots, OnlyTheFirst500KiBAreRead) {
  std::string file = "User-agent: *\nDisallow: /early\n";
  while (file.size() < 600 * 1024) file += "# padding padding padding padding padding\n";
  file += "Disallow: /late\n";
  const auto r = RobotsRules::parse(file, "newsflow");
  EXPECT_FALSE(r.allows("/early"));
  EXPECT_TRUE(r.allows("/late"));
}

TEST(Robots, RobotsTxtItselfIsAlwaysAllowed) {
  EXPECT_TRUE(RobotsRules::disallow_all().allows("/robots.txt"));
  EXPECT_FALSE(RobotsRules::disallow_all().allows("/"));
  EXPECT_TRUE(RobotsRules::allow_all().allows("/private"));
}

TEST(Robots, OriginsAndPathsOfUrls) {
  EXPECT_EQ(robots_origin("https://News.Example.com/a/b?c=d#e"), "https://news.example.com");
  EXPECT_EQ(robots_origin("http://a.test:80/x"), "http://a.test");
  EXPECT_EQ(robots_origin("http://a.test:8080/x"), "http://a.test:8080");
  EXPECT_EQ(robots_origin("http://[::1]:8080/x"), "http://[::1]:8080");
  EXPECT_FALSE(robots_origin("file:///etc/passwd"));
  EXPECT_FALSE(robots_origin("not a url"));
  EXPECT_EQ(robots_path("https://a.test/a/b?c=d#e"), "/a/b?c=d");
  EXPECT_EQ(robots_path("https://a.test"), "/");
}

}  // namespace
}  // namespace newsflow::daemon
