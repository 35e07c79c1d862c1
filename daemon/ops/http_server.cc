#include "daemon/ops/http_server.h"

#include <civetweb.h>

#include <mutex>

namespace newsflow::daemon {
namespace {

std::once_flag g_init;

const char* reason_phrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 404:
      return "Not Found";
    case 503:
      return "Service Unavailable";
    default:
      return "Error";
  }
}

}  // namespace

HttpServer::~HttpServer() {
  if (ctx_) mg_stop(ctx_);
}

tl::expected<std::unique_ptr<HttpServer>, std::string> HttpServer::start(
    const std::string& listen, std::vector<std::pair<std::string, Handler>> routes) {
  std::call_once(g_init, [] { mg_init_library(0); });
  std::unique_ptr<HttpServer> server(new HttpServer());
  server->routes_ = std::move(routes);
  // A thread per connection: 64 of them, so a few dozen clients that send their request a
  // byte at a time (each read resets civetweb's 5 s timeout) still leave threads for the
  // probes and the scrape; connections past them wait in the listen queue.
  const char* options[] = {
      "listening_ports",    listen.c_str(), "num_threads",      "64",    "tcp_nodelay", "1",
      "request_timeout_ms", "5000",         "max_request_size", "16384", nullptr};
  mg_callbacks callbacks{};
  server->ctx_ = mg_start(&callbacks, server.get(), options);
  if (!server->ctx_) return tl::unexpected("cannot listen on " + listen);
  for (std::size_t i = 0; i < server->routes_.size(); ++i) {
    mg_set_request_handler(server->ctx_, server->routes_[i].first.c_str(), &HttpServer::dispatch,
                           server.get());
  }
  mg_server_port ports[4]{};
  if (mg_get_server_ports(server->ctx_, 4, ports) > 0) server->port_ = ports[0].port;
  return server;
}

int HttpServer::dispatch(::mg_connection* conn, void* self_ptr) {
  auto* self = static_cast<HttpServer*>(self_ptr);
  const mg_request_info* info = mg_get_request_info(conn);
  const std::string uri = info && info->local_uri ? info->local_uri : "";
  HttpResponse response{404, "text/plain; charset=utf-8", "not found\n"};
  for (const auto& [path, handler] : self->routes_) {
    if (path == uri) {
      try {
        response = handler();
      } catch (const std::exception& e) {
        response = {500, "text/plain; charset=utf-8", std::string("error: ") + e.what() + "\n"};
      }
      break;
    }
  }
  mg_printf(conn,
            "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
            "Cache-Control: no-store\r\nConnection: close\r\n"
            // The pages are the daemon's own markup with inline styles and no script: a page
            // or feed that slipped markup or a javascript: URL into them still runs nothing.
            "Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'; "
            "img-src http: https:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'\r\n"
            "X-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\n\r\n",
            response.status, reason_phrase(response.status), response.content_type.c_str(),
            response.body.size());
  mg_write(conn, response.body.data(), response.body.size());
  return response.status;
}

}  // namespace newsflow::daemon
