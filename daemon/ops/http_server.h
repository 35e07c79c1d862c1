#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "tl/expected.hpp"

struct mg_context;
struct mg_connection;

namespace newsflow::daemon {

/// A response of a route handler.
struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

/// The operations HTTP endpoint (civetweb): /metrics, /healthz, /readyz and whatever routes
/// are added. Handlers run on civetweb's worker threads and must be thread-safe.
class HttpServer {
 public:
  using Handler = std::function<HttpResponse()>;

  ~HttpServer();

  /// Starts listening on `listen` ("host:port"; port 0 picks a free one) with the given routes
  /// (exact paths). Fails with a message when the address cannot be bound.
  static tl::expected<std::unique_ptr<HttpServer>, std::string> start(
      const std::string& listen, std::vector<std::pair<std::string, Handler>> routes);

  /// The port actually bound.
  int port() const { return port_; }

 private:
  HttpServer() = default;
  static int dispatch(::mg_connection* conn, void* self);

  mg_context* ctx_ = nullptr;
  int port_ = 0;
  std::vector<std::pair<std::string, Handler>> routes_;
};

}  // namespace newsflow::daemon
