// The fetcher against a real HTTP server on 127.0.0.1: status codes, redirects, slow and
// oversized responses, charsets and encodings, retries, limits, connection reuse and the
// address policy; then link-only feed items through the pipeline.
#include <gtest/gtest.h>
#include <zlib.h>

#include <chrono>
#include <thread>

#include "daemon/ops/metrics.h"
#include "daemon/pipeline/fetcher.h"
#include "daemon/pipeline/pipeline.h"
#include "tests/integration/local_http_server.h"

namespace newsflow::daemon {
namespace {

using namespace std::chrono_literals;
using testing::LocalHttpServer;

std::string article_page(const std::string& title, const std::string& words) {
  std::string body = "<html><head><title>" + title +
                     "</title></head><body><nav><a href=/>Home</a>" +
                     "<a href=/world>World</a></nav><article><h1>" + title + "</h1>";
  for (int p = 0; p < 6; ++p) {
    body += "<p>" + words + " Paragraph " + std::to_string(p) +
            " of the report tells what happened, who said what and why it matters to the "
            "readers of this newspaper in the city and beyond.</p>";
  }
  return body + "</article><footer>Copyright</footer></body></html>";
}

std::string gzip(const std::string& in) {
  z_stream z{};
  deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, in.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

class FetcherTest : public ::testing::Test {
 protected:
  FetcherTest()
      : server_({
            {"/page/",
             [](mg_connection* c, const mg_request_info* info) {
               LocalHttpServer::send(
                   c, 200, "text/html; charset=utf-8",
                   article_page(std::string("Story ") + info->local_uri, "Fresh words."));
             }},
            {"/redirect", [](mg_connection* c,
                             const mg_request_info*) { LocalHttpServer::redirect(c, "/page/r"); }},
            {"/loop", [](mg_connection* c,
                         const mg_request_info*) { LocalHttpServer::redirect(c, "/loop"); }},
            {"/to-private",
             [](mg_connection* c, const mg_request_info*) {
               LocalHttpServer::redirect(c, "http://10.255.255.1/secret");
             }},
            {"/to-file",
             [](mg_connection* c, const mg_request_info*) {
               LocalHttpServer::redirect(c, "file:///etc/passwd");
             }},
            {"/slow",
             [](mg_connection* c, const mg_request_info*) {
               std::this_thread::sleep_for(1500ms);
               LocalHttpServer::send(c, 200, "text/html", article_page("Slow", "Late."));
             }},
            {"/busy",
             [](mg_connection* c, const mg_request_info*) {
               std::this_thread::sleep_for(150ms);
               LocalHttpServer::send(c, 200, "text/html", article_page("Busy", "Busy."));
             }},
            {"/big",
             [](mg_connection* c, const mg_request_info*) {
               LocalHttpServer::send(c, 200, "text/html", std::string(3 << 20, 'x'));
             }},
            {"/big-chunked",
             [](mg_connection* c, const mg_request_info*) {
               // No Content-Length: the limit must hold while the body streams in.
               mg_printf(c,
                         "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
                         "Transfer-Encoding: chunked\r\n\r\n");
               const std::string chunk(64 * 1024, 'y');
               for (int i = 0; i < 64; ++i) mg_send_chunk(c, chunk.data(), chunk.size());
               mg_send_chunk(c, "", 0);
             }},
            {"/flaky",
             [this](mg_connection* c, const mg_request_info*) {
               if (++flaky_calls_ <= 2) return LocalHttpServer::send(c, 503, "text/plain", "busy");
               LocalHttpServer::send(c, 200, "text/html", article_page("Flaky", "Third time."));
             }},
            {"/down",
             [](mg_connection* c, const mg_request_info*) {
               LocalHttpServer::send(c, 503, "text/plain", "down");
             }},
            {"/gone",
             [](mg_connection* c, const mg_request_info*) {
               LocalHttpServer::send(c, 404, "text/plain", "gone");
             }},
            {"/image",
             [](mg_connection* c, const mg_request_info*) {
               LocalHttpServer::send(c, 200, "image/png", std::string("\x89PNG\r\n\x1a\n", 8));
             }},
            {"/latin1",
             [](mg_connection* c, const mg_request_info*) {
               // The header says latin-1; the page itself says nothing.
               std::string page = article_page("Caf\xe9 cr\xe8me", "Caf\xe9 au lait.");
               LocalHttpServer::send(c, 200, "text/html; charset=iso-8859-1", page);
             }},
            {"/gzip",
             [](mg_connection* c, const mg_request_info*) {
               LocalHttpServer::send(c, 200, "text/html", gzip(article_page("Zipped", "Packed.")),
                                     "Content-Encoding: gzip\r\n");
             }},
            {"/ua",
             [](mg_connection* c, const mg_request_info*) {
               const char* ua = mg_get_header(c, "User-Agent");
               LocalHttpServer::send(c, 200, "text/html", article_page(ua ? ua : "none", "UA."));
             }},
        }) {
    options_.allow_networks = {"127.0.0.0/8"};
    options_.host_delay_ms = 0;
    options_.timeout_ms = 800;
    options_.retry_backoff_ms = 20;
    options_.max_body_bytes = 1 << 20;
  }

  std::unique_ptr<Fetcher> fetcher(Metrics* metrics = nullptr) {
    auto f = Fetcher::create(options_, metrics);
    EXPECT_TRUE(f) << f.error();
    return std::move(*f);
  }
  FetchResult one(const std::string& path) { return fetcher()->fetch({server_.url(path)})[0]; }

  LocalHttpServer server_;
  config::FetchConfig options_;
  std::atomic<int> flaky_calls_{0};
};

TEST_F(FetcherTest, FetchesPagesFollowsRedirectsAndReportsFailuresByReason) {
  ASSERT_TRUE(server_.ok());
  const FetchResult ok = one("/page/1");
  EXPECT_EQ(ok.outcome, "ok") << ok.detail;
  EXPECT_EQ(ok.status, 200);
  EXPECT_NE(ok.body.find("Story /page/1"), std::string::npos);

  const FetchResult moved = one("/redirect");
  EXPECT_EQ(moved.outcome, "ok");
  EXPECT_EQ(moved.final_url, server_.url("/page/r"));

  EXPECT_EQ(one("/loop").outcome, "too_many_redirects");
  EXPECT_EQ(one("/gone").outcome, "http_4xx");
  EXPECT_EQ(one("/gone").attempts, 1);  // a 404 is not retried
  EXPECT_EQ(one("/image").outcome, "not_html");
  const FetchResult slow = one("/slow");
  EXPECT_EQ(slow.outcome, "timeout");
  EXPECT_EQ(slow.attempts, 3);  // retried twice
  EXPECT_EQ(one("/big").outcome, "too_large");
  EXPECT_EQ(one("/big-chunked").outcome, "too_large");
  const FetchResult down = one("/down");
  EXPECT_EQ(down.outcome, "http_5xx");
  EXPECT_EQ(down.attempts, 3);
}

TEST_F(FetcherTest, RetriesServerErrorsWithBackoffUntilTheyPass) {
  const FetchResult r = one("/flaky");
  EXPECT_EQ(r.outcome, "ok");
  EXPECT_EQ(r.attempts, 3);
  EXPECT_GE(r.seconds, 0.02 + 0.04);  // 20 ms, then 40 ms
}

TEST_F(FetcherTest, DecodesGzipAndSendsTheConfiguredUserAgent) {
  const FetchResult z = one("/gzip");
  EXPECT_EQ(z.outcome, "ok");
  EXPECT_NE(z.body.find("Zipped"), std::string::npos);
  options_.user_agent = "newsflow-test/1.0";
  EXPECT_NE(one("/ua").body.find("newsflow-test/1.0"), std::string::npos);
}

TEST_F(FetcherTest, RefusesNonPublicAddressesUnlessAllowedAndNonHttpSchemes) {
  options_.allow_networks.clear();
  const FetchResult local = one("/page/1");
  EXPECT_EQ(local.outcome, "blocked_address");
  EXPECT_NE(local.detail.find("127.0.0.1 is a loopback address"), std::string::npos)
      << local.detail;
  EXPECT_EQ(server_.requests(), 0u);  // refused before connecting
  options_.allow_networks = {"127.0.0.0/8"};
  // A public page that redirects into the private network is refused at the redirect.
  const FetchResult hop = one("/to-private");
  EXPECT_EQ(hop.outcome, "blocked_address");
  EXPECT_NE(hop.detail.find("10.255.255.1 is a private address"), std::string::npos);
  const FetchResult file = one("/to-file");
  EXPECT_EQ(file.outcome, "blocked_scheme") << file.detail;
  auto f = fetcher();
  EXPECT_EQ(f->fetch({"file:///etc/passwd"})[0].outcome, "blocked_scheme");
  EXPECT_EQ(f->fetch({"gopher://example.com/"})[0].outcome, "blocked_scheme");
  EXPECT_EQ(f->fetch({"not a url"})[0].outcome, "error");
  options_.allow_networks = {"not-a-network"};
  EXPECT_FALSE(Fetcher::create(options_, nullptr));
}

TEST_F(FetcherTest, KeepsPerHostLimitsAndReusesConnections) {
  options_.per_host_concurrency = 2;
  options_.max_concurrency = 8;
  std::vector<std::string> urls;
  for (int i = 0; i < 8; ++i) urls.push_back(server_.url("/busy?" + std::to_string(i)));
  Metrics metrics;
  auto f = fetcher(&metrics);
  const auto t0 = std::chrono::steady_clock::now();
  const auto results = f->fetch(urls);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const auto& r : results) EXPECT_EQ(r.outcome, "ok");
  EXPECT_LE(server_.max_concurrent(), 2);
  EXPECT_GE(seconds, 4 * 0.15);          // 8 requests, 2 at a time, 150 ms each
  EXPECT_LE(server_.connections(), 2u);  // kept alive and reused
  // Politeness: with a 100 ms delay between starts, 4 requests to one host take >= 300 ms.
  options_.host_delay_ms = 100;
  auto polite = fetcher();
  const auto t1 = std::chrono::steady_clock::now();
  polite->fetch({server_.url("/page/a"), server_.url("/page/b"), server_.url("/page/c"),
                 server_.url("/page/d")});
  EXPECT_GE(std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count(), 0.3);
}

// The value of a counter series in the registry (0 when absent).
double counter_value(const Metrics& m, const std::string& family, const std::string& label,
                     const std::string& value) {
  for (const auto& f : m.registry()->Collect()) {
    if (f.name != family) continue;
    for (const auto& metric : f.metric) {
      for (const auto& l : metric.label) {
        if (l.name == label && l.value == value) return metric.counter.value;
      }
    }
  }
  return 0;
}

TEST(FetcherRobots, HonoursRobotsTxtAndItsCrawlDelay) {
  std::atomic<int> robots_requests{0};
  LocalHttpServer site({
      {"/robots.txt",
       [&](mg_connection* c, const mg_request_info*) {
         ++robots_requests;
         LocalHttpServer::send(c, 200, "text/plain",
                               "User-agent: *\nDisallow: /\n\n"
                               "User-agent: newsflow\nDisallow: /private\nCrawl-delay: 0.2\n");
       }},
      {"/",
       [](mg_connection* c, const mg_request_info* info) {
         LocalHttpServer::send(c, 200, "text/html", article_page(info->local_uri, "Words."));
       }},
  });
  ASSERT_TRUE(site.ok());
  config::FetchConfig options;
  options.allow_networks = {"127.0.0.0/8"};
  options.host_delay_ms = 0;
  Metrics metrics;
  auto f = Fetcher::create(options, &metrics);
  ASSERT_TRUE(f);
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = (*f)->fetch(
      {site.url("/page/1"), site.url("/private/x?y=1"), site.url("/page/2"), site.url("/page/3")});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r[0].outcome, "ok");
  EXPECT_EQ(r[1].outcome, "disallowed");
  EXPECT_NE(r[1].detail.find("disallows /private/x?y=1 for newsflow"), std::string::npos)
      << r[1].detail;
  EXPECT_EQ(r[2].outcome, "ok");
  EXPECT_EQ(r[3].outcome, "ok");
  EXPECT_GE(seconds, 0.4);         // three pages 0.2 s apart (Crawl-delay over host_delay_ms 0)
  EXPECT_EQ(site.requests(), 4u);  // robots.txt and three pages; the disallowed one never asked
  // Trusted for a day: the next batch does not ask again.
  EXPECT_EQ((*f)->fetch({site.url("/private/y")})[0].outcome, "disallowed");
  EXPECT_EQ(robots_requests.load(), 1);
  EXPECT_EQ(counter_value(metrics, "newsflow_robots_fetch_total", "result", "ok"), 1);
  EXPECT_EQ(counter_value(metrics, "newsflow_fetch_total", "outcome", "disallowed"), 2);

  // Turned off, robots.txt is neither read nor obeyed.
  options.robots_txt = false;
  auto rude = Fetcher::create(options, nullptr);
  ASSERT_TRUE(rude);
  EXPECT_EQ((*rude)->fetch({site.url("/private/x")})[0].outcome, "ok");
  EXPECT_EQ(robots_requests.load(), 1);
}

// A feed of 50 links to a site whose robots.txt asks 30 s between requests held the whole
// stream for 25 minutes: the links were fetched one after the other with no bound for the
// batch. Now what cannot start before the batch's deadline is given up as "deferred" at once:
// the batch does not even wait for its deadline.
TEST(FetcherRobots, ALongCrawlDelayDefersLinksPastTheBatchDeadline) {
  LocalHttpServer site({
      {"/robots.txt",
       [](mg_connection* c, const mg_request_info*) {
         LocalHttpServer::send(c, 200, "text/plain", "User-agent: *\nCrawl-delay: 30\n");
       }},
      {"/",
       [](mg_connection* c, const mg_request_info* info) {
         LocalHttpServer::send(c, 200, "text/html", article_page(info->local_uri, "Words."));
       }},
  });
  ASSERT_TRUE(site.ok());
  config::FetchConfig options;
  options.allow_networks = {"127.0.0.0/8"};
  options.batch_deadline_ms = 1500;
  Metrics metrics;
  auto f = Fetcher::create(options, &metrics);
  ASSERT_TRUE(f);
  std::vector<std::string> urls;
  for (int i = 0; i < 50; ++i) urls.push_back(site.url("/page/" + std::to_string(i)));
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = (*f)->fetch(urls);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(seconds, 1.2);  // the robots.txt and the first page, not the 1.5 s deadline
  EXPECT_EQ(r[0].outcome, "ok");
  for (std::size_t i = 1; i < r.size(); ++i) {
    EXPECT_EQ(r[i].outcome, "deferred") << i;
    EXPECT_NE(r[i].detail.find("Crawl-delay"), std::string::npos) << r[i].detail;
  }
  EXPECT_EQ(counter_value(metrics, "newsflow_fetch_total", "outcome", "deferred"), 49);
}

// A site that sends 100 bytes of `type`, `byte` after byte a second, until `stop`.
LocalHttpServer::Route trickle(const std::atomic<bool>& stop, std::string type, char byte) {
  return [&stop, type = std::move(type), byte](mg_connection* c, const mg_request_info*) {
    mg_printf(c, "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: 100\r\n\r\n",
              type.c_str());
    for (int i = 0; i < 100 && !stop; ++i) {
      if (mg_write(c, &byte, 1) <= 0) return;
      std::this_thread::sleep_for(1s);
    }
  };
}

// A site that sends its page a byte a second held every batch of the daemon for the whole
// batch deadline (issue 53): the batch now waits a short while, then cuts the fetch short from
// its own thread. What another site sent is kept; the slow page is given up at once as
// "deferred" (a later try), not at its deadline or its timeout.
TEST(FetcherCutShort, TheSlowSitesPageIsDeferredAndTheOthersKept) {
  std::atomic<bool> stop{false};
  // Its robots.txt too: the other site's pages wait for their own file only.
  LocalHttpServer slow({
      {"/", trickle(stop, "text/html", '<')},
  });
  LocalHttpServer quick({
      {"/",
       [](mg_connection* c, const mg_request_info* info) {
         LocalHttpServer::send(c, 200, "text/html", article_page(info->local_uri, "Words."));
       }},
  });
  ASSERT_TRUE(slow.ok() && quick.ok());
  config::FetchConfig options;
  options.allow_networks = {"127.0.0.0/8"};
  options.host_delay_ms = 0;
  Metrics metrics;
  auto created = Fetcher::create(options, &metrics);
  ASSERT_TRUE(created);
  Fetcher& f = **created;
  // Called before a fetch begins, it does not cut that fetch.
  f.cut_short();
  EXPECT_EQ(f.fetch({quick.url("/before")})[0].outcome, "ok");

  std::thread judge([&] {
    std::this_thread::sleep_for(800ms);
    f.cut_short();
  });
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = f.fetch({slow.url("/trickle"), quick.url("/a"), quick.url("/b")});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  judge.join();
  stop = true;
  EXPECT_LT(seconds, 1.5);  // not the 15 s timeout nor the 20 s batch deadline
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].outcome, "deferred");
  EXPECT_NE(r[0].detail.find("fetch.batch_wait_ms"), std::string::npos) << r[0].detail;
  EXPECT_TRUE(fetch_failure_is_transient("fetch_" + r[0].outcome));  // a later try
  EXPECT_EQ(r[1].outcome, "ok");
  EXPECT_EQ(r[2].outcome, "ok");
  EXPECT_EQ(counter_value(metrics, "newsflow_fetch_total", "outcome", "deferred"), 1);
  // The next fetch is not cut.
  EXPECT_EQ(f.fetch({quick.url("/after")})[0].outcome, "ok");
}

// Every site's robots.txt was read before any page: one site that sent its file a byte a second
// held every other site's pages until the batch's deadline, and they were all deferred. A page
// waits for its own site's file only.
TEST(FetcherRobots, ASlowRobotsTxtHoldsOnlyItsOwnSitesPages) {
  std::atomic<bool> stop{false};
  LocalHttpServer slow({
      {"/", trickle(stop, "text/plain", '#')},
  });
  LocalHttpServer quick({
      {"/robots.txt",
       [](mg_connection* c, const mg_request_info*) {
         LocalHttpServer::send(c, 200, "text/plain", "User-agent: *\nDisallow: /private\n");
       }},
      {"/",
       [](mg_connection* c, const mg_request_info* info) {
         LocalHttpServer::send(c, 200, "text/html", article_page(info->local_uri, "Words."));
       }},
  });
  ASSERT_TRUE(slow.ok() && quick.ok());
  config::FetchConfig options;
  options.allow_networks = {"127.0.0.0/8"};
  options.host_delay_ms = 0;
  options.batch_deadline_ms = 1500;
  auto f = Fetcher::create(options, nullptr);
  ASSERT_TRUE(f);
  const auto r =
      (*f)->fetch({slow.url("/post"), quick.url("/a"), quick.url("/private/b"), quick.url("/c")});
  stop = true;
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].outcome, "deferred");  // its robots.txt was not read by the deadline
  EXPECT_EQ(r[1].outcome, "ok");
  EXPECT_EQ(r[2].outcome, "disallowed");
  EXPECT_EQ(r[3].outcome, "ok");
  EXPECT_LT(r[1].seconds, 1.0);
}

// The robots.txt cache had no bound on sites: a feed naming a new host in every link grew it
// without end. At its bound, the entry that expires soonest goes and is asked again when needed.
TEST(FetcherRobots, TheRobotsCacheKeepsItsBound) {
  std::atomic<int> robots_requests{0};
  auto make_site = [&] {
    return std::make_unique<LocalHttpServer>(std::map<std::string, LocalHttpServer::Route>{
        {"/robots.txt",
         [&](mg_connection* c, const mg_request_info*) {
           ++robots_requests;
           LocalHttpServer::send(c, 200, "text/plain", "User-agent: *\nDisallow: /private\n");
         }},
        {"/",
         [](mg_connection* c, const mg_request_info* info) {
           LocalHttpServer::send(c, 200, "text/html", article_page(info->local_uri, "Words."));
         }},
    });
  };
  auto a = make_site(), b = make_site(), c = make_site();
  config::FetchConfig options;
  options.allow_networks = {"127.0.0.0/8"};
  options.host_delay_ms = 0;
  options.robots_cache_max_sites = 2;
  auto f = Fetcher::create(options, nullptr);
  ASSERT_TRUE(f);
  EXPECT_EQ((*f)->fetch({a->url("/x")})[0].outcome, "ok");
  EXPECT_EQ((*f)->fetch({b->url("/x")})[0].outcome, "ok");
  EXPECT_EQ((*f)->fetch({c->url("/x")})[0].outcome, "ok");  // a's file goes (it expires first)
  EXPECT_EQ(robots_requests.load(), 3);
  EXPECT_EQ((*f)->fetch({c->url("/private/y")})[0].outcome, "disallowed");  // kept
  EXPECT_EQ(robots_requests.load(), 3);
  EXPECT_EQ((*f)->fetch({a->url("/y")})[0].outcome, "ok");  // asked again
  EXPECT_EQ(robots_requests.load(), 4);
}

TEST(FetcherRobots, AMissingFileAllowsAndAnUnreachableOneDisallows) {
  std::atomic<int> status{404};
  LocalHttpServer site({
      {"/robots.txt",
       [&](mg_connection* c, const mg_request_info*) {
         LocalHttpServer::send(c, status.load(), "text/plain", "no robots here");
       }},
      {"/page/",
       [](mg_connection* c, const mg_request_info*) {
         LocalHttpServer::send(c, 200, "text/html", article_page("Page", "Words."));
       }},
  });
  ASSERT_TRUE(site.ok());
  config::FetchConfig options;
  options.allow_networks = {"127.0.0.0/8"};
  options.host_delay_ms = 0;
  options.robots_cache_seconds = 0;  // ask again on every batch
  options.robots_error_seconds = 0;
  Metrics metrics;
  auto f = Fetcher::create(options, &metrics);
  ASSERT_TRUE(f);
  EXPECT_EQ((*f)->fetch({site.url("/page/a")})[0].outcome, "ok");  // 404: no rules
  status = 503;
  const auto down = (*f)->fetch({site.url("/page/b")})[0];
  EXPECT_EQ(down.outcome, "disallowed");  // 5xx: assume complete disallow
  status = 200;
  EXPECT_EQ((*f)->fetch({site.url("/page/c")})[0].outcome, "ok");  // "no robots here": no rules
  EXPECT_EQ(counter_value(metrics, "newsflow_robots_fetch_total", "result", "unavailable"), 1);
  EXPECT_EQ(counter_value(metrics, "newsflow_robots_fetch_total", "result", "unreachable"), 1);
  EXPECT_EQ(counter_value(metrics, "newsflow_robots_fetch_total", "result", "ok"), 1);
}

TEST_F(FetcherTest, LinkOnlyFeedItemsBecomeArticlesFromTheirPages) {
  config::Config config;
  config.fetch = options_;
  Pipeline pipeline(config, nullptr);
  auto f = fetcher();
  Input feed;
  feed.id = "feed1";
  feed.url = server_.url("/feed.xml");
  feed.kind = BodyKind::kFeedText;
  feed.body =
      "<rss version='2.0'><channel><title>Local</title>"
      "<item><title>First headline</title><link>" +
      server_.url("/page/one") +
      "</link><guid>g1</guid><pubDate>Mon, 01 May 2023 10:00:00 GMT</pubDate></item>"
      "<item><title>Latin headline</title><link>/latin1</link><guid>g2</guid>"
      "<description>A short teaser.</description></item>"
      "<item><title>Missing page</title><link>/gone</link><guid>g3</guid>"
      "<description>Teaser kept when the page is gone.</description></item>"
      "<item><title>Nothing at all</title><link>/gone/2</link><guid>g4</guid></item>"
      "</channel></rss>";
  auto prepared = pipeline.prepare(feed);
  ASSERT_TRUE(prepared);
  ASSERT_EQ(prepared->size(), 4u);
  std::vector<Pipeline::Extracted*> items;
  for (auto& e : *prepared) items.push_back(&e);
  pipeline.resolve_links(items, *f);
  EXPECT_FALSE((*prepared)[0].fetch_failure);
  EXPECT_TRUE((*prepared)[2].fetch_failure);
  EXPECT_EQ((*prepared)[2].fetch_failure->reason, "fetch_http_4xx");
  EXPECT_TRUE((*prepared)[3].skip);  // no page and no teaser
  const auto outputs = pipeline.commit(std::move(*prepared), feed);
  pipeline.confirm_links();
  ASSERT_EQ(outputs.size(), 3u);
  EXPECT_EQ(outputs[0].article.title, "First headline");
  EXPECT_NE(outputs[0].article.text.find("Fresh words. Paragraph 0"), std::string::npos);
  EXPECT_EQ(outputs[0].article.text.find("Home"), std::string::npos);  // page extraction
  EXPECT_EQ(outputs[0].feed_id, "feed1");
  EXPECT_EQ(outputs[0].event_time, 1682935200);  // the item's date
  EXPECT_NE(outputs[1].article.text.find("Caf\xc3\xa9 au lait"), std::string::npos);
  EXPECT_EQ(outputs[2].article.text, "Teaser kept when the page is gone.");

  // The next poll of the same feed fetches nothing again.
  const std::size_t served = server_.requests();
  auto again = pipeline.prepare(feed);
  ASSERT_TRUE(again);
  items.clear();
  for (auto& e : *again) items.push_back(&e);
  pipeline.resolve_links(items, *f);
  EXPECT_TRUE((*again)[0].skip);
  EXPECT_TRUE((*again)[1].skip);
  EXPECT_TRUE((*again)[2].skip);              // published with its teaser
  EXPECT_TRUE((*again)[3].fetch_failure);     // asked again, failed again
  EXPECT_EQ(server_.requests(), served + 1);  // only the page that gave nothing is asked again

  // The same guid under a new link (a tracking parameter added) is the same item: not fetched.
  Input moved = feed;
  moved.body = "<rss version='2.0'><channel><item><title>First headline</title><link>" +
               server_.url("/page/one?utm_source=rss") +
               "</link><guid>g1</guid></item></channel></rss>";
  auto third = pipeline.prepare(moved);
  ASSERT_TRUE(third);
  items = {&(*third)[0]};
  pipeline.resolve_links(items, *f);
  EXPECT_TRUE((*third)[0].skip);
  EXPECT_EQ(server_.requests(), served + 1);
}

TEST_F(FetcherTest, APageFetchedApartIsSkippedWhenItsLinkWasPublishedMeanwhile) {
  // The daemon asks which links are new, fetches them beside its loop and gives the pages to
  // the items when it judges them: a link published in between is not published again.
  config::Config config;
  config.fetch = options_;
  Pipeline pipeline(config, nullptr);
  auto f = fetcher();
  auto feed_of = [&](const std::string& id, const std::string& items) {
    Input feed;
    feed.id = id;
    feed.url = server_.url("/" + id + ".xml");
    feed.kind = BodyKind::kFeedText;
    feed.body = "<rss version='2.0'><channel><title>Local</title>" + items + "</channel></rss>";
    return feed;
  };
  auto item = [&](const std::string& guid, const std::string& path) {
    return "<item><title>Headline " + guid + "</title><link>" + server_.url(path) +
           "</link><guid>" + guid + "</guid></item>";
  };
  // Two items of one feed link to the same page, a third to another: two fetches.
  const Input first = feed_of(
      "a", item("a1", "/page/shared") + item("a2", "/page/shared") + item("a3", "/page/other"));
  auto prepared = pipeline.prepare(first);
  ASSERT_TRUE(prepared);
  std::vector<Pipeline::Extracted*> items;
  for (auto& e : *prepared) items.push_back(&e);
  const std::vector<std::string> urls = pipeline.links_to_fetch(items);
  ASSERT_EQ(urls.size(), 2u);
  auto pages = pipeline.fetch_pages(urls, *f);
  ASSERT_EQ(pages.size(), 2u);
  EXPECT_TRUE(pages[0].article);
  // Meanwhile another feed's item with the other link is judged and acknowledged.
  const Input second = feed_of("b", item("b1", "/page/other"));
  auto other = pipeline.prepare(second);
  ASSERT_TRUE(other);
  pipeline.resolve_links({&(*other)[0]}, *f);
  ASSERT_EQ(pipeline.commit(std::move(*other), second).size(), 1u);
  pipeline.confirm_links();
  pipeline.apply_pages(items, urls, std::move(pages));
  EXPECT_FALSE((*prepared)[0].skip);
  EXPECT_FALSE((*prepared)[1].skip);
  EXPECT_TRUE((*prepared)[2].skip);  // published meanwhile
  const auto outputs = pipeline.commit(std::move(*prepared), first);
  ASSERT_EQ(outputs.size(), 2u);
  for (const auto& out : outputs) {  // both items have the shared page's text
    EXPECT_NE(out.article.text.find("Fresh words. Paragraph 0"), std::string::npos);
  }
}

}  // namespace
}  // namespace newsflow::daemon
