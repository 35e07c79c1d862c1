// Later tries of linked pages: the retry record, the waits between tries, which failures get
// one, the offsets committed while records finish out of order, and a retried page read as the
// feed item it is for.
#include "daemon/kafka/fetch_retries.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "daemon/kafka/offset_ledger.h"
#include "daemon/pipeline/fetcher.h"
#include "daemon/pipeline/input.h"
#include "daemon/pipeline/pipeline.h"

namespace newsflow::daemon {
namespace {

TEST(FetchRetry, RecordsRoundTripAndJunkIsRefused) {
  FetchRetry r;
  r.id = "a1";
  r.link = "https://x.test/story";
  r.title = "Headline \"quoted\"";
  r.published_at = 1700000000;
  r.feed_url = "https://x.test/feed";
  r.feed_id = "feed-1";
  r.published = true;
  r.attempts = 3;
  r.due_ms = 1700000000123;
  r.reason = "fetch_http_429";
  r.detail = "HTTP 429";
  const auto back = parse_fetch_retry(fetch_retry_json(r));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->id, r.id);
  EXPECT_EQ(back->link, r.link);
  EXPECT_EQ(back->title, r.title);
  EXPECT_EQ(back->published_at, r.published_at);
  EXPECT_EQ(back->feed_url, r.feed_url);
  EXPECT_EQ(back->feed_id, r.feed_id);
  EXPECT_TRUE(back->published);
  EXPECT_EQ(back->attempts, 3);
  EXPECT_EQ(back->due_ms, r.due_ms);
  EXPECT_EQ(back->reason, r.reason);
  for (const char* junk : {"", "null", "[]", "{\"id\":\"a\"}", "{\"id\":\"a\",\"link\":\"l\"}",
                           "{\"id\":\"\",\"link\":\"l\",\"attempts\":1}",
                           "{\"id\":\"a\",\"link\":\"l\",\"attempts\":\"1\"}", "\xff\xfe"}) {
    EXPECT_FALSE(parse_fetch_retry(junk)) << junk;
  }
}

// The record as deploy/schemas/fetch-retry.schema.json describes it: every field it requires,
// none it does not know, each of its type.
TEST(FetchRetry, RecordsHoldToTheirSchema) {
  std::ifstream in(NEWSFLOW_SOURCE_DIR "/deploy/schemas/fetch-retry.schema.json");
  ASSERT_TRUE(in);
  const auto schema = nlohmann::json::parse(in);
  FetchRetry r;
  r.id = "a";
  r.link = "https://x.test/";
  for (const bool dated : {false, true}) {
    if (dated) r.published_at = 1700000000;
    const auto record = nlohmann::json::parse(fetch_retry_json(r));
    for (const auto& key : schema["required"]) {
      EXPECT_TRUE(record.contains(key.get<std::string>())) << key;
    }
    for (const auto& [key, value] : record.items()) {
      ASSERT_TRUE(schema["properties"].contains(key)) << key << " is not in the schema";
      const auto& property = schema["properties"][key];
      if (!property.contains("type")) continue;
      const std::string type = property["type"];
      const bool ok = type == "string"    ? value.is_string()
                      : type == "integer" ? value.is_number_integer()
                      : type == "boolean" ? value.is_boolean()
                                          : false;
      EXPECT_TRUE(ok) << key << " is not a " << type;
    }
    EXPECT_EQ(record["published_at"].is_null(), !dated);
  }
}

TEST(FetchRetry, WaitsDoubleUpToTheBoundAndKeepTheSitesRetryAfter) {
  config::FetchConfig f;
  f.requeue_backoff_ms = 1000;
  f.requeue_max_backoff_ms = 10000;
  EXPECT_EQ(fetch_retry_delay_ms(f, 1, 0), 1000);
  EXPECT_EQ(fetch_retry_delay_ms(f, 2, 0), 2000);
  EXPECT_EQ(fetch_retry_delay_ms(f, 3, 0), 4000);
  EXPECT_EQ(fetch_retry_delay_ms(f, 4, 0), 8000);
  EXPECT_EQ(fetch_retry_delay_ms(f, 5, 0), 10000);
  EXPECT_EQ(fetch_retry_delay_ms(f, 1000, 0), 10000);   // no overflow
  EXPECT_EQ(fetch_retry_delay_ms(f, 1, 7), 7000);       // the site asked for longer
  EXPECT_EQ(fetch_retry_delay_ms(f, 4, 2), 8000);       // the back-off is longer already
  EXPECT_EQ(fetch_retry_delay_ms(f, 1, 86400), 10000);  // never past the bound
  EXPECT_EQ(fetch_retry_delay_ms(f, 1, INT64_MAX), 10000);
  EXPECT_EQ(fetch_retry_delay_ms(f, 1, -5), 1000);
}

TEST(FetchRetry, OnlyFailuresTimeMayCureAreTriedAgainAndOnlySoOften) {
  config::FetchConfig f;
  f.requeue_attempts = 2;
  for (const char* transient : {"fetch_http_429", "fetch_http_5xx", "fetch_timeout",
                                "fetch_connect_error", "fetch_deferred"}) {
    EXPECT_TRUE(fetch_failure_is_transient(transient)) << transient;
    EXPECT_TRUE(fetch_retry_left(f, 1, transient));
    EXPECT_TRUE(fetch_retry_left(f, 2, transient));
    EXPECT_FALSE(fetch_retry_left(f, 3, transient));  // the first try and two later ones
  }
  for (const char* permanent : {"fetch_http_4xx", "fetch_blocked_address", "fetch_blocked_scheme",
                                "fetch_too_large", "fetch_too_many_redirects", "fetch_not_html",
                                "fetch_disallowed", "fetch_error", "no_text", "http_5xx"}) {
    EXPECT_FALSE(fetch_failure_is_transient(permanent)) << permanent;
    EXPECT_FALSE(fetch_retry_left(f, 1, permanent)) << permanent;
  }
  f.requeue_attempts = 0;
  EXPECT_FALSE(fetch_retry_left(f, 1, "fetch_http_5xx"));
}

TEST(OffsetLedger, CommitsTheOldestRecordNotFinished) {
  OffsetLedger l;
  const OffsetLedger::Partition p{"t", 0}, q{"t", 1};
  EXPECT_EQ(l.committable(p), -1);
  for (std::int64_t o = 10; o < 15; ++o) l.taken(p, o);
  l.taken(q, 3);
  EXPECT_EQ(l.committable(p), 10);
  l.finished(p, 12);
  l.finished(p, 11);
  EXPECT_EQ(l.committable(p), 10);  // 10 is not done: a restart must read it again
  l.finished(p, 10);
  EXPECT_EQ(l.committable(p), 13);
  l.finished(p, 14);
  l.finished(p, 13);
  EXPECT_EQ(l.committable(p), 15);
  EXPECT_EQ(l.open(), 1u);
  auto due = l.to_commit();
  EXPECT_EQ(due[p], 15);
  EXPECT_EQ(due[q], 3);
  l.committed(due);
  EXPECT_TRUE(l.to_commit().empty());  // nothing moved since
  l.finished(q, 3);
  EXPECT_EQ(l.to_commit()[q], 4);
  l.forget(q);
  EXPECT_EQ(l.committable(q), -1);
  l.finished(q, 99);  // a partition no longer held: nothing happens
  EXPECT_EQ(l.committable(q), -1);
}

TEST(OffsetLedger, SaysWhichRecordHoldsBackFinishedOnes) {
  OffsetLedger l;
  const OffsetLedger::Partition p{"t", 0};
  for (int o = 10; o < 14; ++o) l.taken(p, o);
  EXPECT_FALSE(l.holds_back(p, 10));  // nothing after it is finished
  l.finished(p, 12);
  EXPECT_TRUE(l.holds_back(p, 10));
  EXPECT_FALSE(l.holds_back(p, 11));  // not the oldest
  l.finished(p, 10);
  EXPECT_TRUE(l.holds_back(p, 11));
  l.finished(p, 11);
  EXPECT_FALSE(l.holds_back(p, 13));  // the newest: nothing after it
  EXPECT_FALSE(l.holds_back({"t", 1}, 0));
}

TEST(OffsetLedger, NeverCommitsPastARecordNotFinishedInAnyOrder) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    OffsetLedger l;
    const OffsetLedger::Partition p{"t", 0};
    const int n = 1 + static_cast<int>(rng() % 40);
    std::vector<std::int64_t> order;
    for (int o = 0; o < n; ++o) {
      l.taken(p, o);
      order.push_back(o);
    }
    std::shuffle(order.begin(), order.end(), rng);
    std::set<std::int64_t> done;
    for (const std::int64_t o : order) {
      l.finished(p, o);
      done.insert(o);
      std::int64_t lowest_open = n;
      for (std::int64_t k = 0; k < n; ++k) {
        if (!done.count(k)) {
          lowest_open = k;
          break;
        }
      }
      ASSERT_EQ(l.committable(p), lowest_open);
    }
  }
}

TEST(PageMessage, APageTheRetriesFetchedNamesItsFeedItem) {
  const auto parsed = parse_page_message("<p>page</p>",
                                         {{"url", "https://x.test/final"},
                                          {"id", "item-id"},
                                          {"title", "The feed's headline"},
                                          {"link", "https://x.test/story"},
                                          {"feed_url", "https://x.test/feed"},
                                          {"feed_id", "feed-1"},
                                          {"version", "2"}},
                                         0);
  ASSERT_FALSE(parsed.failure);
  EXPECT_EQ(parsed.input.id, "item-id");
  EXPECT_EQ(parsed.input.title, "The feed's headline");
  EXPECT_EQ(parsed.input.link, "https://x.test/story");
  EXPECT_EQ(parsed.input.feed_url, "https://x.test/feed");
  EXPECT_EQ(parsed.input.feed_id, "feed-1");
  EXPECT_EQ(parsed.input.version, 2);
  for (const char* bad : {"", "0", "-1", "2x", "99999", "two"}) {
    const auto p =
        parse_page_message("<p>page</p>", {{"url", "https://x.test/a"}, {"version", bad}}, 0);
    EXPECT_EQ(p.input.version, 1) << bad;
  }
}

// The page a later try brought is published as the item: its id, headline and feed, the
// verdict the id went out with, version 2 when the teaser went out first; its link counts as
// fetched. The extract and dedup roles carry the same through the extracted record.
TEST(PipelineRetriedPage, IsPublishedAsTheFeedItemItCameFor) {
  config::Config c;
  c.fetch.min_feed_words = 80;
  Input feed;
  feed.url = "https://x.test/feed";
  feed.id = "feed-1";
  feed.kind = BodyKind::kFeedText;
  feed.fetched_at = 1700000000;
  feed.body =
      "<rss><channel><item><title>The feed's headline</title><link>https://x.test/story</link>"
      "<guid>g1</guid><pubDate>Tue, 14 Nov 2023 22:00:00 GMT</pubDate><description>A teaser of "
      "a dozen words that the feed gives for the story.</description></item></channel></rss>";
  Input page;
  page.url = "https://x.test/story?final";
  page.kind = BodyKind::kHtmlText;
  page.fetched_at = 1700000100;
  page.title = "The feed's headline";
  page.link = "https://x.test/story";
  page.feed_url = feed.url;
  page.feed_id = feed.id;
  page.version = 2;
  page.body = "<html><head><title>The site's own title</title></head><body><article>";
  for (int i = 0; i < 6; ++i) {
    page.body += "<p>The full story paragraph number " + std::to_string(i) +
                 " says much more than the teaser did about the council.</p>";
  }
  page.body += "</article></body></html>";

  Pipeline all(c, nullptr);
  auto teaser = all.process(feed);
  ASSERT_TRUE(teaser);
  ASSERT_EQ(teaser->size(), 1u);
  const Output& first = (*teaser)[0];
  EXPECT_NE(first.article.text.find("teaser"), std::string::npos);
  all.confirm_links();
  page.id = first.article.id;
  auto full = all.process(page);
  ASSERT_TRUE(full);
  ASSERT_EQ(full->size(), 1u);
  const Output& second = (*full)[0];
  EXPECT_EQ(second.article.id, first.article.id);
  EXPECT_EQ(second.article.title, "The feed's headline");
  EXPECT_NE(second.article.text.find("full story paragraph number 5"), std::string::npos);
  EXPECT_EQ(second.verdict.kind, first.verdict.kind);
  EXPECT_EQ(second.feed_url, feed.url);
  EXPECT_EQ(second.feed_id, feed.id);
  EXPECT_EQ(second.state.link, page.link);
  EXPECT_TRUE(second.state.from_feed);
  const auto j = nlohmann::json::parse(article_json(second));
  EXPECT_EQ(j["version"], 2);
  EXPECT_FALSE(nlohmann::json::parse(article_json(first)).contains("version"));

  // Split roles: the extracted record keeps what the page says of its item.
  Pipeline extractor(c, nullptr), judge(c, nullptr);
  auto prepared = extractor.prepare(page);
  ASSERT_TRUE(prepared);
  auto handed = extractor.hand_over(std::move(*prepared), page);
  ASSERT_EQ(handed.size(), 1u);
  EXPECT_EQ(extractor.take_pending_links().size(), 2u);  // the link and the item
  auto record = parse_extracted(extracted_json(handed[0], page));
  ASSERT_TRUE(record) << record.error();
  EXPECT_EQ(record->second.link, page.link);
  EXPECT_EQ(record->second.feed_url, page.feed_url);
  EXPECT_EQ(record->second.feed_id, page.feed_id);
  EXPECT_EQ(record->second.version, 2);
  std::vector<Pipeline::Extracted> one;
  one.push_back(std::move(record->first));
  const auto judged = judge.commit(std::move(one), record->second);
  ASSERT_EQ(judged.size(), 1u);
  EXPECT_EQ(article_json(judged[0]).find("\"version\":2") != std::string::npos, true);
  EXPECT_EQ(judged[0].article.id, first.article.id);
}

}  // namespace
}  // namespace newsflow::daemon
