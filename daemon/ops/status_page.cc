#include "daemon/ops/status_page.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "dedup/window.h"

namespace newsflow::daemon {
namespace {

// UTC time of `unix_seconds` in strftime `format`.
std::string utc(std::int64_t unix_seconds, const char* format) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

std::string clock_time(std::int64_t unix_seconds) { return utc(unix_seconds, "%H:%M:%S"); }
std::string date_time(std::int64_t unix_seconds) { return utc(unix_seconds, "%Y-%m-%d %H:%M"); }

std::string count(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string duration(std::int64_t seconds) {
  char buf[64];
  if (seconds < 120) {
    std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(seconds));
  } else if (seconds < 7200) {
    std::snprintf(buf, sizeof buf, "%lldm", static_cast<long long>(seconds / 60));
  } else {
    std::snprintf(buf, sizeof buf, "%lldh %lldm", static_cast<long long>(seconds / 3600),
                  static_cast<long long>(seconds / 60 % 60));
  }
  return buf;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// Inputs/s and articles/s between neighbouring samples as an inline SVG bar chart.
std::string throughput_chart(const std::deque<StatusSnapshot::Sample>& samples) {
  struct Rate {
    double inputs, articles, dead;
  };
  std::vector<Rate> rates;
  for (std::size_t i = 1; i < samples.size(); ++i) {
    const double dt =
        static_cast<double>(std::max<std::int64_t>(1, samples[i].at - samples[i - 1].at));
    rates.push_back(
        {static_cast<double>(samples[i].consumed - samples[i - 1].consumed) / dt,
         static_cast<double>(samples[i].articles - samples[i - 1].articles) / dt,
         static_cast<double>(samples[i].dead_letters - samples[i - 1].dead_letters) / dt});
  }
  if (rates.empty()) {
    return "<p class=muted>Throughput appears after the first 10 seconds of running.</p>";
  }
  double top = 1;
  for (const Rate& r : rates) top = std::max({top, r.inputs, r.articles});
  const int width = 720, height = 140, slots = static_cast<int>(StatusSnapshot::kMaxSamples - 1);
  const double bar = static_cast<double>(width) / slots;
  std::string svg =
      "<svg role=img aria-label=\"inputs per second\" width=" + std::to_string(width) +
      " height=" + std::to_string(height + 20) + " viewBox=\"0 0 " + std::to_string(width) + " " +
      std::to_string(height + 20) + "\">";
  const double x0 = width - bar * static_cast<double>(rates.size());
  for (std::size_t i = 0; i < rates.size(); ++i) {
    const double x = x0 + bar * static_cast<double>(i);
    const double h_in = rates[i].inputs / top * height;
    const double h_art = rates[i].articles / top * height;
    const double h_dead = rates[i].dead / top * height;
    svg += "<rect class=in x=" + fixed(x, 1) + " y=" + fixed(height - h_in, 1) +
           " width=" + fixed(bar * 0.9, 1) + " height=" + fixed(h_in, 1) + "><title>" +
           fixed(rates[i].inputs, 1) + " inputs/s</title></rect>";
    svg += "<rect class=art x=" + fixed(x + bar * 0.2, 1) + " y=" + fixed(height - h_art, 1) +
           " width=" + fixed(bar * 0.5, 1) + " height=" + fixed(h_art, 1) + "></rect>";
    if (h_dead > 0) {
      svg += "<rect class=dead x=" + fixed(x, 1) + " y=" + fixed(height - h_dead, 1) +
             " width=" + fixed(bar * 0.9, 1) + " height=" + fixed(h_dead, 1) + "></rect>";
    }
  }
  svg += "<text x=2 y=12>" + fixed(top, 0) + "/s</text><text x=2 y=" + std::to_string(height + 16) +
         ">" + duration((samples.back().at - samples.front().at)) +
         " ago</text><text x=" + std::to_string(width - 30) + " y=" + std::to_string(height + 16) +
         ">now</text></svg>";
  const Rate& last = rates.back();
  return svg + "<p>Last 10 s: <b>" + fixed(last.inputs, 1) + "</b> inputs/s, <b>" +
         fixed(last.articles, 1) + "</b> articles/s, <b>" + fixed(last.dead, 2) +
         "</b> dead letters/s. <span class=legend><i class=in></i>inputs <i class=art></i>"
         "articles <i class=dead></i>dead letters</span></p>";
}

}  // namespace

bool is_web_url(std::string_view url) {
  const auto starts_ci = [url](std::string_view prefix) {
    if (url.size() <= prefix.size()) return false;
    for (std::size_t i = 0; i < prefix.size(); ++i) {
      char c = url[i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
      if (c != prefix[i]) return false;
    }
    return true;
  };
  if (!starts_ci("http://") && !starts_ci("https://")) return false;
  // Browsers drop tabs and newlines inside a URL and read "\\" as "/": none belongs in one.
  return std::none_of(url.begin(), url.end(), [](char c) {
    return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f || c == '\\';
  });
}

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

// The document's head and the page header (title, version, uptime, state, links); both pages
// reload themselves every 10 s.
std::string page_head(const StatusSnapshot& s, const char* title) {
  std::string html;
  html +=
      "<!doctype html><html lang=en><head><meta charset=utf-8>"
      "<meta http-equiv=refresh content=10>"
      "<meta name=viewport content=\"width=device-width, initial-scale=1\">"
      "<title>";
  html += title;
  html +=
      "</title><style>"
      "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em auto;max-width:64em;color:#222;"
      "padding:0 1em}h1{font-size:1.4em;margin:0}h2{font-size:1.1em;margin:1.5em 0 .5em;"
      "border-bottom:1px solid #ddd}.muted{color:#777}.ok{color:#070}.bad{color:#b00}"
      ".kpi{display:flex;gap:2em;flex-wrap:wrap;margin:.8em 0}.kpi div b{display:block;"
      "font-size:1.3em}ol.stories>li{margin:.6em 0}ul.members{margin:.2em 0;padding-left:1.2em;"
      "font-size:.9em}.kind{font-size:.8em;padding:0 .4em;border-radius:.3em;background:#eee}"
      ".kind.exact,.kind.near,.kind.contained{background:#fde8c8}table{border-collapse:collapse;"
      "width:100%}td,th{text-align:left;padding:.2em .5em;border-bottom:1px solid #eee;"
      "vertical-align:top}svg text{font-size:10px;fill:#777}rect.in{fill:#9bc4e2}"
      "rect.art{fill:#2b6a9e}rect.dead{fill:#c33}.legend i{display:inline-block;width:.8em;"
      "height:.8em;margin:0 .3em 0 .8em}.legend i.in{background:#9bc4e2}.legend i.art{"
      "background:#2b6a9e}.legend i.dead{background:#c33}a{color:#2b6a9e}"
      "ul.facts{list-style:none;padding:0;margin:.1em 0;font-size:.9em;color:#555}"
      "ul.facts li{display:inline;margin-right:1em}img.card{float:right;max-width:9em;"
      "max-height:6em;margin:0 0 .4em 1em;border-radius:.3em}p.description{margin:.2em 0;"
      "color:#444}ol.stories>li{overflow:auto}"
      "</style></head><body>";
  html += "<header><h1>newsflow</h1><p class=muted>version " + html_escape(s.version) +
          " &middot; up " + duration(s.now - s.started) + " &middot; " + clock_time(s.now) +
          " UTC &middot; <span class=" + (s.ready ? "ok>consuming" : "bad>not ready") +
          "</span> &middot; <a href=/>status</a> &middot; <a href=/stories>stories</a> &middot; "
          "<a href=/metrics>metrics</a></p></header>";
  return html;
}

// A list of stories: headline, counts, outlets, languages, the stories of other languages it is
// related to (headlines from `related`), and up to `members` of its articles.
std::string story_list(const std::vector<dedup::Story>& stories, std::size_t members,
                       const std::map<std::string, StatusSnapshot::Related>& related) {
  if (stories.empty()) return "<p class=muted>No stories yet.</p>";
  std::string html = "<ol class=stories>";
  for (const dedup::Story& story : stories) {
    html += "<li data-story-id=\"" + html_escape(story.story_id) +
            "\" data-articles=" + std::to_string(story.article_count) +
            " data-copies=" + std::to_string(story.copies) + "><b class=headline>" +
            html_escape(story.title.empty() ? "(untitled)" : story.title) +
            "</b> <span class=muted>" + count(story.article_count, "article", "articles") + ", " +
            count(story.copies, "copy", "copies") + ", " +
            count(story.sources, "source", "sources") + ", latest " +
            date_time(story.last_updated) + " UTC</span>";
    // The card: the representative's image (an http(s) URL only, loaded by the browser without
    // a referrer) and description.
    if (!story.image_url.empty() && is_web_url(story.image_url)) {
      html += "<img class=card src=\"" + html_escape(story.image_url) +
              "\" alt=\"\" loading=lazy referrerpolicy=no-referrer>";
    }
    if (!story.description.empty()) {
      html += "<p class=description>" + html_escape(story.description) + "</p>";
    }
    std::vector<std::string_view> outlets;
    for (const dedup::StoryMember& m : story.articles) {
      if (!m.source().empty() &&
          std::find(outlets.begin(), outlets.end(), m.source()) == outlets.end())
        outlets.push_back(m.source());
    }
    html += "<ul class=facts><li class=languages>";
    if (story.languages.empty()) html += "language unknown";
    for (std::size_t i = 0; i < story.languages.size(); ++i) {
      html += (i ? " " : "") + std::string("<span class=lang>") + html_escape(story.languages[i]) +
              "</span>";
    }
    html += "</li><li class=outlets>";
    for (std::size_t i = 0; i < outlets.size() && i < 6; ++i) {
      html += (i ? ", " : "") + html_escape(outlets[i]);
    }
    if (outlets.size() > 6) html += " and " + std::to_string(outlets.size() - 6) + " more";
    html += "</li>";
    bool any = false;
    for (const std::string& id : story.related_stories) {
      const auto r = related.find(id);
      if (r == related.end()) continue;  // gone since
      html += any ? ", " : "<li class=related>in other languages: ";
      any = true;
      html += "<span data-story-id=\"" + html_escape(id) + "\"><span class=lang>" +
              html_escape(r->second.language) + "</span> " +
              html_escape(r->second.title.empty() ? "(untitled)" : r->second.title) + "</span>";
    }
    if (any) html += "</li>";
    html += "</ul>";
    if (members > 0) {
      html += "<ul class=members>";
      std::size_t shown = 0;
      for (const dedup::StoryMember& m : story.articles) {
        if (++shown > members) {
          html += "<li class=muted>and " + std::to_string(story.articles.size() - members) +
                  " more</li>";
          break;
        }
        const std::string kind(dedup::dup_kind_name(m.kind()));
        const std::string url = m.url();
        const std::string shown_url = html_escape(
            url.size() > 90 ? std::string(url.substr(0, 87)) + "..." : std::string(url));
        // Only a web URL becomes a link: a javascript: or data: one would run on this origin.
        html += "<li>" + html_escape(m.source()) + " " +
                (is_web_url(url)
                     ? "<a href=\"" + html_escape(url) + "\" rel=noreferrer>" + shown_url + "</a>"
                     : "<span class=url>" + shown_url + "</span>") +
                " <span class=\"kind " + kind + "\">" + kind + "</span></li>";
      }
      html += "</ul>";
    }
    html += "</li>";
  }
  return html + "</ol>";
}

}  // namespace

std::string render_status_page(const StatusSnapshot& s) {
  std::string html;
  html.reserve(16384);
  html += page_head(s, "newsflow status");
  const std::uint64_t consumed = s.samples.empty() ? 0 : s.samples.back().consumed;
  const std::uint64_t articles = s.samples.empty() ? 0 : s.samples.back().articles;
  const std::uint64_t dups = s.samples.empty() ? 0 : s.samples.back().duplicates;
  const std::uint64_t dead = s.samples.empty() ? 0 : s.samples.back().dead_letters;
  html += "<section class=kpi><div><b>" + std::to_string(consumed) + "</b>inputs</div><div><b>" +
          std::to_string(articles) + "</b>articles</div><div><b>" + std::to_string(dups) +
          "</b>duplicates</div><div><b>" + std::to_string(dead) + "</b>dead letters</div><div><b>" +
          std::to_string(s.stories_active) + "</b>stories</div><div><b>" +
          std::to_string(s.window_articles) + "</b>in window (" +
          fixed(static_cast<double>(s.window_bytes) / (1 << 20), 1) + " MiB)</div></section>";

  html += "<h2>Throughput</h2>" + throughput_chart(s.samples);

  html += "<h2>Biggest stories</h2>" + story_list(s.stories, 8, s.related);

  html += "<h2>Recent dead letters</h2>";
  if (s.dead_letters.empty()) {
    html += "<p class=muted>None.</p>";
  } else {
    html += "<table><tr><th>time</th><th>reason</th><th>source</th><th>detail</th></tr>";
    for (const auto& d : s.dead_letters) {
      html += "<tr><td>" + clock_time(d.at) + "</td><td><b>" + html_escape(d.reason) +
              "</b></td><td>" + html_escape(d.topic) + "/" + std::to_string(d.partition) + "@" +
              std::to_string(d.offset) + "</td><td>" +
              html_escape(d.detail.size() > 160 ? d.detail.substr(0, 157) + "..." : d.detail) +
              "</td></tr>";
    }
    html += "</table>";
  }
  html += "</body></html>\n";
  return html;
}

std::string render_stories_page(const StatusSnapshot& s) {
  std::string html = page_head(s, "newsflow stories");
  html += "<p class=muted>" + count(s.stories_active, "story", "stories") +
          " in the window &middot; " + count(s.window_articles, "article", "articles") + "</p>";
  html += "<section id=largest><h2>Largest stories</h2>" + story_list(s.stories, 4, s.related) +
          "</section>";
  html += "<section id=newest><h2>Newest stories</h2>" + story_list(s.newest, 4, s.related) +
          "</section>";
  html += "</body></html>\n";
  return html;
}

}  // namespace newsflow::daemon
