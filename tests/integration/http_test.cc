// The real binary: `newsflow run` on its embedded Kafka, scraped over HTTP, stopped by SIGTERM.
#include <arpa/inet.h>
#include <curl/curl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

extern char** environ;

namespace {

using namespace std::chrono_literals;

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
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
  const int port = free_port();
  const std::string base = "http://127.0.0.1:" + std::to_string(port);
  std::vector<std::string> env_strings{"NEWSFLOW_HTTP__LISTEN=127.0.0.1:" + std::to_string(port),
                                       "NEWSFLOW_KAFKA__EMBEDDED_PARTITIONS=2",
                                       "NEWSFLOW_LOG__FORMAT=json"};
  std::vector<char*> env;
  for (char** e = environ; *e; ++e) env.push_back(*e);
  for (auto& s : env_strings) env.push_back(s.data());
  env.push_back(nullptr);
  char arg0[] = NEWSFLOW_BINARY;
  char arg1[] = "run";
  char* argv[] = {arg0, arg1, nullptr};
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, NEWSFLOW_BINARY, nullptr, nullptr, argv, env.data()), 0);

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
