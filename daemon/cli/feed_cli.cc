#include "daemon/cli/feed_cli.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "extractors/charset.h"
#include "extractors/feed.h"

namespace newsflow::daemon {
namespace {

nlohmann::json date(const std::optional<extractors::UnixSeconds>& t) {
  return t ? nlohmann::json(extractors::format_rfc3339(*t)) : nlohmann::json(nullptr);
}

nlohmann::ordered_json parse_one(const std::string& path, const std::string& url,
                                 const std::string& content_type) {
  nlohmann::ordered_json out;
  out["file"] = path;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    out["ok"] = false;
    out["reason"] = "unreadable";
    out["detail"] = "cannot read " + path;
    return out;
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  auto decoded = extractors::decode_to_utf8(bytes.str(), content_type);
  if (!decoded) {
    out["ok"] = false;
    out["reason"] = extractors::reason_name(decoded.error().reason);
    out["detail"] = decoded.error().detail;
    return out;
  }
  auto feed = extractors::parse_feed(decoded->text, url.empty() ? "file://" + path : url);
  if (!feed) {
    out["ok"] = false;
    out["reason"] = extractors::reason_name(feed.error().reason);
    out["detail"] = feed.error().detail;
    return out;
  }
  if (!decoded->warning.empty()) feed->warnings.push_back(decoded->warning);
  out["ok"] = true;
  out["bozo"] = !feed->warnings.empty();
  out["warnings"] = feed->warnings;
  out["encoding"] = decoded->charset;
  out["feed"] = {{"title", feed->title}, {"link", feed->link}, {"language", feed->language}};
  auto& entries = out["entries"] = nlohmann::ordered_json::array();
  for (const auto& it : feed->items) {
    nlohmann::ordered_json e;
    e["id"] = it.id;
    e["title"] = it.title;
    e["link"] = it.link;
    e["author"] = it.author;
    e["published"] = date(it.published);
    e["updated"] = date(it.updated);
    e["summary"] = it.summary_html;
    e["content"] = it.content_html;
    e["categories"] = it.categories;
    auto& enc = e["enclosures"] = nlohmann::ordered_json::array();
    for (const auto& x : it.enclosures) enc.push_back({{"url", x.url}, {"type", x.type}});
    entries.push_back(std::move(e));
  }
  return out;
}

}  // namespace

int run_parse_feed(const ParseFeedOptions& options) {
  int failures = 0;
  auto emit = [&](const nlohmann::ordered_json& j) {
    if (!j.value("ok", false)) ++failures;
    std::string line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fputc('\n', stdout);
  };
  if (options.batch) {
    std::string line;
    while (std::getline(std::cin, line)) {
      const auto req = nlohmann::json::parse(line, nullptr, false);
      if (!req.is_object() || !req.contains("path") || !req["path"].is_string()) {
        emit({{"ok", false}, {"reason", "invalid_request"}, {"detail", line.substr(0, 200)}});
        continue;
      }
      emit(parse_one(req["path"], req.value("url", ""), req.value("content_type", "")));
    }
  } else {
    for (const auto& f : options.files) emit(parse_one(f, options.url, options.content_type));
  }
  std::fflush(stdout);
  return failures == 0 ? 0 : 1;
}

}  // namespace newsflow::daemon
