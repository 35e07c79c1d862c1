#pragma once
// A real HTTP/1.1 server on 127.0.0.1 (civetweb, keep-alive on) for tests and benchmarks of
// the fetcher: each route is a function that writes the whole response.
#include <civetweb.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

namespace newsflow::testing {

class LocalHttpServer {
 public:
  using Route = std::function<void(mg_connection*, const mg_request_info*)>;

  explicit LocalHttpServer(std::map<std::string, Route> routes, int threads = 16)
      : routes_(std::move(routes)) {
    mg_init_library(0);
    const std::string n = std::to_string(threads);
    const char* options[] = {"listening_ports",
                             "127.0.0.1:0",
                             "num_threads",
                             n.c_str(),
                             "enable_keep_alive",
                             "yes",
                             "keep_alive_timeout_ms",
                             "5000",
                             "tcp_nodelay",
                             "1",
                             nullptr};
    mg_callbacks callbacks{};
    ctx_ = mg_start(&callbacks, this, options);
    if (!ctx_) return;
    mg_set_request_handler(ctx_, "/", &LocalHttpServer::dispatch, this);
    mg_server_port ports[2]{};
    if (mg_get_server_ports(ctx_, 2, ports) > 0) port_ = ports[0].port;
  }
  ~LocalHttpServer() {
    if (ctx_) mg_stop(ctx_);
  }

  bool ok() const { return ctx_ != nullptr && port_ > 0; }
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  int port() const { return port_; }

  /// Requests served, and the distinct client ports they came from (connection reuse).
  std::size_t requests() const { return requests_.load(); }
  std::size_t connections() const {
    std::lock_guard lock(mu_);
    return client_ports_.size();
  }
  /// The most requests that were being served at the same time.
  int max_concurrent() const { return max_concurrent_.load(); }

  static void send(mg_connection* c, int status, const std::string& content_type,
                   const std::string& body, const std::string& extra_headers = "") {
    mg_printf(c,
              "HTTP/1.1 %d X\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s"
              "Connection: keep-alive\r\n\r\n",
              status, content_type.c_str(), body.size(), extra_headers.c_str());
    mg_write(c, body.data(), body.size());
  }
  static void redirect(mg_connection* c, const std::string& location) {
    send(c, 302, "text/plain", "moved", "Location: " + location + "\r\n");
  }

 private:
  static int dispatch(mg_connection* c, void* self_ptr) {
    auto* self = static_cast<LocalHttpServer*>(self_ptr);
    const mg_request_info* info = mg_get_request_info(c);
    ++self->requests_;
    const int now = ++self->concurrent_;
    for (int m = self->max_concurrent_.load(); now > m;) {
      if (self->max_concurrent_.compare_exchange_weak(m, now)) break;
    }
    {
      std::lock_guard lock(self->mu_);
      self->client_ports_.insert(info->remote_port);
    }
    const std::string uri = info->local_uri ? info->local_uri : "";
    // Longest route that is a prefix of the path.
    const Route* route = nullptr;
    std::size_t best = 0;
    for (const auto& [path, r] : self->routes_) {
      if (uri.compare(0, path.size(), path) == 0 && path.size() >= best) {
        route = &r;
        best = path.size();
      }
    }
    if (route) {
      (*route)(c, info);
    } else {
      send(c, 404, "text/plain", "not found");
    }
    --self->concurrent_;
    return 1;
  }

  std::map<std::string, Route> routes_;
  mg_context* ctx_ = nullptr;
  int port_ = 0;
  std::atomic<std::size_t> requests_{0};
  std::atomic<int> concurrent_{0};
  std::atomic<int> max_concurrent_{0};
  mutable std::mutex mu_;
  std::set<int> client_ports_;
};

}  // namespace newsflow::testing
