// The real binary: `newsflow run` on its embedded Kafka, scraped over HTTP, stopped by SIGTERM.
#include <arpa/inet.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "daemon/ops/http_server.h"

extern char** environ;

namespace {

using namespace std::chrono_literals;

// The daemon's log, written to a file: its `http_listening` event names the port it bound.
std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The base URL of the daemon's HTTP server, read from the `http_listening` event of its log,
// or "" if the event does not come within `tries` tenths of a second. (Plain string search:
// GCC 12 warns inside std::regex under the sanitizers, and the build treats warnings as
// errors.)
std::string listening_base(const std::string& log_path, int tries) {
  const std::string event = R"("event":"http_listening","metrics":")";
  for (int i = 0; i < tries; ++i) {
    const std::string log = read_file(log_path);
    if (const std::size_t at = log.find(event); at != std::string::npos) {
      const std::size_t from = at + event.size();
      const std::size_t to = log.find("/metrics\"", from);
      if (to != std::string::npos) return log.substr(from, to - from);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return "";
}

struct Response {
  long status = 0;
  std::string body;
};

Response get(const std::string& url) {
  Response r;
  CURL* c = curl_easy_init();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 2000L);
  curl_easy_setopt(
      c, CURLOPT_WRITEFUNCTION, +[](char* p, size_t s, size_t n, void* ud) {
        static_cast<std::string*>(ud)->append(p, s * n);
        return s * n;
      });
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &r.body);
  if (curl_easy_perform(c) == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
  curl_easy_cleanup(c);
  return r;
}

TEST(Binary, ServesMetricsHealthAndReadinessAndStopsOnSigterm) {
  // Port 0: the daemon binds a free port and logs it. A port picked free beforehand can be taken
  // by the embedded Kafka's own listener before the daemon's HTTP server binds it (seen in CI:
  // the health probe reached the mock broker).
  const std::string log_path = ::testing::TempDir() + "newsflow_http_test.log";
  std::vector<std::string> env_strings{"NEWSFLOW_HTTP__LISTEN=127.0.0.1:0",
                                       "NEWSFLOW_KAFKA__EMBEDDED_PARTITIONS=2",
                                       "NEWSFLOW_LOG__FORMAT=json"};
  std::vector<char*> env;
  for (char** e = environ; *e; ++e) env.push_back(*e);
  for (auto& s : env_strings) env.push_back(s.data());
  env.push_back(nullptr);
  char arg0[] = NEWSFLOW_BINARY;
  char arg1[] = "run";
  char* argv[] = {arg0, arg1, nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, NEWSFLOW_BINARY, &actions, nullptr, argv, env.data());
  posix_spawn_file_actions_destroy(&actions);
  ASSERT_EQ(spawned, 0);

  const std::string base = listening_base(log_path, 100);
  if (base.empty()) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    FAIL() << "no http_listening event within 10 s; the log:\n" << read_file(log_path);
  }

  Response health;
  for (int i = 0; i < 100 && health.status != 200; ++i) {
    std::this_thread::sleep_for(100ms);
    health = get(base + "/healthz");
  }
  EXPECT_EQ(health.status, 200);
  Response ready;
  for (int i = 0; i < 150 && ready.status != 200; ++i) {
    std::this_thread::sleep_for(100ms);
    ready = get(base + "/readyz");
  }
  EXPECT_EQ(ready.status, 200) << "the daemon never got its partitions assigned";

  const Response metrics = get(base + "/metrics");
  EXPECT_EQ(metrics.status, 200);
  for (const char* name :
       {"newsflow_build_info", "newsflow_window_articles", "newsflow_stories_active",
        "newsflow_offset_commits_total", "newsflow_delivery_failures_total"}) {
    EXPECT_NE(metrics.body.find(name), std::string::npos) << name << " not in\n" << metrics.body;
  }
  EXPECT_EQ(get(base + "/nope").status, 404);

  kill(pid, SIGTERM);
  int status = 0;
  for (int i = 0; i < 100 && waitpid(pid, &status, WNOHANG) == 0; ++i) {
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_TRUE(WIFEXITED(status)) << "newsflow did not stop within 10 s of SIGTERM";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace

namespace {

// 40 clients that send their request a byte a second held the ops server's four threads, and
// /healthz went unanswered for longer than a liveness probe waits (then the pod restarted and
// reloaded its window). The probe is answered now within a second, and every response carries
// the headers that keep a page from running script.
TEST(OpsServer, ProbesAreAnsweredWhileSlowClientsHoldConnections) {
  auto server = newsflow::daemon::HttpServer::start(
      "127.0.0.1:0", {{"/healthz", [] {
                         return newsflow::daemon::HttpResponse{200, "text/plain", "ok\n"};
                       }}});
  ASSERT_TRUE(server) << server.error();
  const int port = (*server)->port();
  std::vector<int> slow;
  for (int i = 0; i < 40; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ASSERT_EQ(send(fd, "G", 1, 0), 1);  // and nothing more for now
    slow.push_back(fd);
  }
  std::this_thread::sleep_for(300ms);
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/healthz";
  for (int round = 0; round < 3; ++round) {
    for (const int fd : slow) (void)send(fd, "E", 1, MSG_NOSIGNAL);  // a byte now and then
    const auto t0 = std::chrono::steady_clock::now();
    const Response r = get(url);
    EXPECT_EQ(r.status, 200) << "round " << round;
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
    std::this_thread::sleep_for(500ms);
  }
  for (const int fd : slow) close(fd);
  // The security headers.
  CURL* c = curl_easy_init();
  std::string headers;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 2000L);
  curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  curl_easy_setopt(
      c, CURLOPT_HEADERFUNCTION, +[](char* p, size_t s, size_t n, void* ud) {
        static_cast<std::string*>(ud)->append(p, s * n);
        return s * n;
      });
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &headers);
  EXPECT_EQ(curl_easy_perform(c), CURLE_OK);
  curl_easy_cleanup(c);
  EXPECT_NE(headers.find("Content-Security-Policy: default-src 'none'"), std::string::npos)
      << headers;
  EXPECT_NE(headers.find("X-Content-Type-Options: nosniff"), std::string::npos) << headers;
  EXPECT_NE(headers.find("Referrer-Policy: no-referrer"), std::string::npos) << headers;
}

}  // namespace
