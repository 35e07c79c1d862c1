#include "daemon/pipeline/input.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "daemon/pipeline/extracted_simdjson.h"
#include "daemon/pipeline/input_file.h"
#include "daemon/pipeline/pipeline.h"

namespace newsflow::daemon {
namespace {

TEST(Base64, DecodesStandardAndUrlSafe) {
  EXPECT_EQ(base64_decode("aGVsbG8="), "hello");
  EXPECT_EQ(base64_decode("aGVs\nbG8"), "hello");
  EXPECT_EQ(base64_decode("-_8"), "\xFB\xFF");
  EXPECT_FALSE(base64_decode("a"));
  EXPECT_FALSE(base64_decode("a*b="));
}

// A file name of this process's own (ctest runs the tests of this file in parallel processes).
std::filesystem::path temp_file(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("newsflow_" + std::to_string(::getpid()) + "_" + name);
}

// A gzip member of `text`, as zlib writes it.
std::string gzip_member(const std::string& text) {
  const auto path = temp_file("member.gz");
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  return bytes;
}

// What InputFile reads of a file holding `bytes`, and its error.
std::pair<std::string, std::string> read_back(const std::string& bytes) {
  const auto path = temp_file("input");
  std::ofstream(path, std::ios::binary) << bytes;
  auto file = InputFile::open(path);
  EXPECT_TRUE(file.has_value());
  std::string out;
  char buf[1000];  // small reads: members and input buffers end mid-read
  std::ptrdiff_t n;
  while ((n = (*file)->read(buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  std::string error = n < 0 ? (*file)->error() : "";
  std::filesystem::remove(path);
  return {out, error};
}

TEST(InputFile, ReadsPlainAndGzipAlike) {
  std::string text;
  for (int i = 0; i < 20000; ++i)
    text += "{\"url\":\"https://example.com/" + std::to_string(i) + "\"}\n";
  EXPECT_EQ(read_back(text), std::make_pair(text, std::string()));
  EXPECT_EQ(read_back(gzip_member(text)), std::make_pair(text, std::string()));
  EXPECT_EQ(read_back(""), std::make_pair(std::string(), std::string()));
  EXPECT_EQ(read_back("x"), std::make_pair(std::string("x"), std::string()));
}

TEST(InputFile, ReadsEveryMemberAndIgnoresTrailingBytesAsGzreadDoes) {
  const std::string a(300000, 'a'), b = "second member\n";
  EXPECT_EQ(read_back(gzip_member(a) + gzip_member(b)), std::make_pair(a + b, std::string()));
  EXPECT_EQ(read_back(gzip_member(b) + std::string(10, '\0')), std::make_pair(b, std::string()));
}

TEST(InputFile, ACorruptOrTruncatedMemberIsAnError) {
  std::string text;
  for (int i = 0; i < 5000; ++i) text += std::to_string(i * 7919) + " ";
  const std::string gz = gzip_member(text);
  EXPECT_EQ(read_back(gz.substr(0, gz.size() / 2)).second, "gzip data is truncated");
  std::string bad = gz;
  bad[bad.size() - 6] ^= 0x5a;  // the trailer's CRC-32
  EXPECT_EQ(read_back(bad).second, "gzip member fails its CRC-32 or length check");
  bad = gz;
  bad[2] = 7;  // a compression method that is not deflate
  EXPECT_EQ(read_back(bad).second, "gzip member uses an unsupported compression method");
  EXPECT_FALSE(InputFile::open("/nonexistent/newsflow").has_value());
}

TEST(InputFile, PeekReadsAheadWithoutConsuming) {
  const std::string text = "WARC/1.1\r\nrest of the text";
  const std::string gz = gzip_member(text);
  const auto path = temp_file("peek.gz");
  std::ofstream(path, std::ios::binary) << gz;
  auto file = InputFile::open(path);
  ASSERT_TRUE(file.has_value());
  EXPECT_EQ((*file)->size(), gz.size());
  EXPECT_EQ((*file)->peek(8), "WARC/1.1");
  EXPECT_EQ((*file)->peek(4), "WARC");
  EXPECT_TRUE((*file)->gzip());
  std::string out;
  char buf[5];
  std::ptrdiff_t n;
  while ((n = (*file)->read(buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  EXPECT_EQ(out, text);
  // The raw position is the compressed file's: all of it once read.
  EXPECT_EQ((*file)->raw_offset(), gz.size());
  std::filesystem::remove(path);
}

TEST(InputFile, WithResumeADamagedMemberEndsASegmentNotTheFile) {
  const std::string a(5000, 'a'), b = "second member\n", c(3000, 'c');
  std::string bad = gzip_member(b + std::string(4000, 'b'));
  bad[bad.size() - 6] ^= 0x5a;  // its CRC-32
  const std::string gz_a = gzip_member(a), gz_c = gzip_member(c);
  const auto path = temp_file("damaged.gz");
  std::ofstream(path, std::ios::binary) << gz_a + bad + "junk" + gz_c;
  auto file = InputFile::open(path);
  ASSERT_TRUE(file.has_value());
  (*file)->track_members();
  (*file)->resume_after_damage();
  std::string out;
  char buf[700];
  auto read_segment = [&] {
    std::ptrdiff_t n;
    while ((n = (*file)->read(buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
    EXPECT_EQ(n, 0);
  };
  read_segment();
  ASSERT_TRUE((*file)->damage());
  EXPECT_EQ((*file)->damage()->what, "gzip member fails its CRC-32 or length check");
  EXPECT_EQ((*file)->damage()->member_offset, gz_a.size());
  EXPECT_FALSE((*file)->damage()->truncated);
  EXPECT_EQ((*file)->member_offset(0), 0u);
  EXPECT_EQ((*file)->member_offset(a.size()), gz_a.size());
  const auto [found, skipped] = (*file)->resume();
  EXPECT_TRUE(found);
  EXPECT_EQ(skipped, 4u);  // "junk"
  const std::size_t before_c = out.size();
  read_segment();
  EXPECT_FALSE((*file)->damage());
  EXPECT_EQ(out.substr(0, a.size()), a);
  EXPECT_EQ(out.substr(before_c), c);
  EXPECT_EQ((*file)->member_offset(before_c), gz_a.size() + bad.size() + 4);
  EXPECT_EQ((*file)->error(), "");
  std::filesystem::remove(path);
}

TEST(InputFile, ResumingAfterDamageNeverGoesBeforeTheBuffer) {
  // Found by fuzz_warc: igzip gave back more held input than the buffer had after a corrupt
  // member, and the position went below zero. Members of a WARC, the third one damaged.
  const auto bytes = base64_decode(
      "H4sIAAAAAAACAwt3DHLWN9Qz5OUKB7J0QypSyq0LFBOLkjPz0vKhgi6JJUBBIwMjM10DQ10DoxADYysDEysD0yheLuf8"
      "vJLUvBJdn9S89JIMKwVDM14uXq7i/LQSoCFAXRmJeSkgEV4uAJu+RbNqFAAAAAAfiwgAAAAAAAIDC3cMctY31DPk5QoH"
      "snRDKgtSrQEAYWAAAHiPFIpSC0tTi0ugYi6JJUAxIwMjM10DH4sIAAAAQ10DowMDEBMrYysD0yiYpsRXovQ=");
  ASSERT_TRUE(bytes);
  const auto path = temp_file("regression.gz");
  std::ofstream(path, std::ios::binary) << *bytes;
  auto file = InputFile::open(path);
  ASSERT_TRUE(file.has_value());
  (*file)->resume_after_damage();
  char buf[4096];
  int segments = 0;
  while (segments < 100) {
    while ((*file)->read(buf, sizeof buf) > 0) {
    }
    if (!(*file)->damage()) break;
    ++segments;
    EXPECT_LE((*file)->raw_offset(), bytes->size());
    if (!(*file)->resume().first) break;
  }
  EXPECT_GE(segments, 1);
  EXPECT_LT(segments, 100);
  EXPECT_EQ((*file)->error(), "");
  std::filesystem::remove(path);
}

TEST(ReplayLine, ReadsFieldsAndBody) {
  auto p = parse_replay_line(
      R"({"id":"x1","url":"https://a.test/1","fetched_at":"2026-11-21T10:00:00Z","html":"<p>hi</p>"})");
  ASSERT_FALSE(p.failure);
  EXPECT_EQ(p.input.id, "x1");
  EXPECT_EQ(p.input.kind, BodyKind::kHtmlText);
  EXPECT_EQ(p.input.body, "<p>hi</p>");
  EXPECT_EQ(p.input.fetched_at, 1795255200);

  auto b64 = parse_replay_line(R"({"url":"u","html_b64":"PHA+Y2Fm6TwvcD4="})");
  ASSERT_FALSE(b64.failure);
  EXPECT_EQ(b64.input.kind, BodyKind::kHtmlBytes);
  EXPECT_EQ(b64.input.body, "<p>caf\xE9</p>");

  auto text = parse_replay_line(R"({"url":"urn:x","text":"already","title":"T"})");
  ASSERT_FALSE(text.failure);
  EXPECT_EQ(text.input.kind, BodyKind::kText);
  EXPECT_EQ(text.input.title, "T");
}

TEST(ReplayLine, EscapesTypesAndRepeatsReadAsJsonSays) {
  // The fast reader (simdjson) and the general one must agree: escapes, surrogate pairs, an
  // integer id, nulls, unknown fields of any shape, a title kept only with a text body.
  auto p = parse_replay_line(
      R"({"id":42,"url":"https://a.test/\u00e9","title":"ignored","extra":{"a":[1,2,{"b":null}]},)"
      R"("published_at":null,"html":"caf\u00e9 \ud83d\ude00 \"q\" \\ \/ \n\t end"})");
  ASSERT_FALSE(p.failure);
  EXPECT_EQ(p.input.id, "42");
  EXPECT_EQ(p.input.url, "https://a.test/\xC3\xA9");
  EXPECT_EQ(p.input.body, "caf\xC3\xA9 \xF0\x9F\x98\x80 \"q\" \\ / \n\t end");
  EXPECT_TRUE(p.input.title.empty());
  EXPECT_FALSE(p.input.published_at);
  auto feed =
      parse_replay_line(R"({"url":"u","feed":"<rss/>","published_at":"2026-11-21T10:00:00Z"})");
  ASSERT_FALSE(feed.failure);
  EXPECT_EQ(feed.input.kind, BodyKind::kFeedText);
  EXPECT_EQ(feed.input.published_at, 1795255200);
  // A repeated key: the last one counts, as nlohmann reads it.
  auto repeated = parse_replay_line(R"({"url":"a","url":"b","html":"x"})");
  ASSERT_FALSE(repeated.failure);
  EXPECT_EQ(repeated.input.url, "b");
  // Trailing bytes after the object and a bad unknown field make the line invalid.
  for (const char* bad : {R"({"url":"u","html":"x"} x)", R"({"url":"u","html":"x","junk":[1,}})"}) {
    auto b = parse_replay_line(bad);
    ASSERT_TRUE(b.failure) << bad;
    EXPECT_EQ(b.failure->reason, "invalid_json") << bad;
  }
}

TEST(ReplayLine, EveryMalformedLineHasAReason) {
  const std::pair<std::string, std::string> cases[] = {
      {"not json", "invalid_json"},
      {"[1,2]", "invalid_json"},
      {R"({"html":"<p>x</p>"})", "missing_url"},
      {R"({"url":"u"})", "missing_body"},
      {R"({"url":"u","html":"a","text":"b"})", "ambiguous_body"},
      {R"({"url":"u","html":5})", "invalid_field"},
      {R"({"url":"u","html_b64":"***"})", "invalid_base64"},
      {R"({"url":"u","fetched_at":"soon","html":"x"})", "invalid_timestamp"},
      {"{\"url\":\"u\",\"html\":\"caf\xE9\"}", "invalid_utf8"},
      // Only web pages: a URL of another scheme would be a link that runs script, or a file.
      {R"({"url":"javascript:alert(document.domain)//x","html":"<p>x</p>"})", "invalid_url"},
      {R"({"url":"JavaScript:x","text":"words"})", "invalid_url"},
      {R"({"url":"data:text/html,x","html":"x"})", "invalid_url"},
      {R"({"url":"file:///etc/passwd","html":"x"})", "invalid_url"},
  };
  for (const auto& [line, reason] : cases) {
    auto p = parse_replay_line(line);
    ASSERT_TRUE(p.failure) << line;
    EXPECT_EQ(p.failure->reason, reason) << line;
  }
  // The id and url are kept for the dead-letter record even when the line is not UTF-8.
  auto p = parse_replay_line("{\"id\":\"k\",\"url\":\"https://a.test/\",\"html\":\"\xFF\"}");
  EXPECT_EQ(p.input.id, "k");
  EXPECT_EQ(p.input.url, "https://a.test/");
}

TEST(PageMessage, RawHtmlNeedsAUrlHeader) {
  auto ok = parse_page_message(
      "<p>x</p>", {{"url", "https://a.test/"}, {"content_type", "text/html; charset=latin1"}},
      1795255200);
  ASSERT_FALSE(ok.failure);
  EXPECT_EQ(ok.input.kind, BodyKind::kHtmlBytes);
  EXPECT_EQ(ok.input.fetched_at, 1795255200);
  EXPECT_EQ(ok.input.content_type, "text/html; charset=latin1");

  // The bytes are read where the message holds them, not copied.
  const std::string value = "<p>caf\xE9</p>";
  auto borrowed = parse_page_message(value, {{"url", "https://a.test/"}}, 0);
  ASSERT_FALSE(borrowed.failure);
  EXPECT_EQ(borrowed.input.bytes().data(), value.data());
  EXPECT_EQ(borrowed.input.bytes(), value);
  EXPECT_TRUE(borrowed.input.body.empty());

  auto with_time =
      parse_page_message("<p>x</p>", {{"url", "u"}, {"fetched_at", "2026-11-21T00:00:00Z"}}, 5);
  EXPECT_EQ(with_time.input.fetched_at, 1795219200);

  // A published_at header is the event time, as in a replay line (the producer sends it).
  auto published = parse_page_message(
      "<p>x</p>", {{"url", "u"}, {"published_at", "2026-11-21T00:00:00Z"}}, 1795255200);
  EXPECT_EQ(published.input.published_at, 1795219200);
  EXPECT_EQ(parse_page_message("<p>x</p>", {{"url", "u"}, {"published_at", "yesterday"}}, 5)
                .failure->reason,
            "invalid_timestamp");

  EXPECT_EQ(parse_page_message("<p>x</p>", {}, 0).failure->reason, "missing_url");
  EXPECT_EQ(parse_page_message("<p>x</p>", {{"url", "javascript:alert(1)"}}, 0).failure->reason,
            "invalid_url");
  EXPECT_FALSE(parse_page_message("<p>x</p>", {{"url", "HTTPS://a.test/x:y"}}, 0).failure);
  EXPECT_EQ(parse_page_message("", {{"url", "u"}}, 0).failure->reason, "empty_document");
}

TEST(PageMessage, JsonEnvelopeIsReadWhenDeclared) {
  auto p = parse_page_message(R"({"url":"https://a.test/e","html":"<p>x</p>","id":"e1"})",
                              {{"content_type", "application/json"}}, 0);
  ASSERT_FALSE(p.failure);
  EXPECT_EQ(p.input.id, "e1");
  EXPECT_EQ(p.input.kind, BodyKind::kHtmlText);
  // The url header fills in for an envelope without one.
  auto h =
      parse_page_message(R"({"html":"<p>x</p>"})",
                         {{"content_type", "application/json"}, {"url", "https://h.test/"}}, 0);
  ASSERT_FALSE(h.failure);
  EXPECT_EQ(h.input.url, "https://h.test/");
  EXPECT_EQ(parse_page_message("{oops", {{"content_type", "application/json"}}, 0).failure->reason,
            "invalid_json");
}

TEST(Pipeline, ABorrowedPageIsExtractedAsTheSameBytesOwned) {
  // A consumed page's payload is read in place (`Input::payload`); its charset decoded as well.
  config::Config c;
  c.fetch.enabled = false;
  const std::string value =
      "<html><head><title>Caf\xE9</title></head><body><p>The caf\xE9 on the square closed after "
      "forty years; its owner retires to the coast next week.</p></body></html>";
  const std::vector<std::pair<std::string, std::string>> headers{
      {"url", "https://a.test/cafe"}, {"content_type", "text/html; charset=iso-8859-1"}};
  auto borrowed = parse_page_message(value, headers, 1795255200);
  ASSERT_FALSE(borrowed.failure);
  Input owned = borrowed.input;
  owned.payload = {};
  owned.body = value;
  Pipeline one(c, nullptr), other(c, nullptr);
  auto a = one.process(borrowed.input);
  auto b = other.process(owned);
  ASSERT_TRUE(a);
  ASSERT_TRUE(b);
  ASSERT_EQ(a->size(), 1u);
  ASSERT_EQ(b->size(), 1u);
  EXPECT_NE((*a)[0].article.text.find("caf\xC3\xA9"), std::string::npos);
  EXPECT_EQ(article_json((*a)[0]), article_json((*b)[0]));
}

TEST(Pipeline, WhatAnExtractorHandsOverIsJudgedAsTheOriginalWouldBe) {
  // `--role extract` then `--role dedup` against `--role all`: the same article JSON, for a
  // page without an input id (the dedup side derives it) and for a feed's items.
  config::Config c;
  c.fetch.enabled = false;
  Input page;
  page.url = "https://www.a.test/story?utm_source=x";
  page.fetched_at = 1795255200;
  page.body =
      "<html><head><title>Bridge</title><meta name=\"author\" content=\"Jo Roe\"></head>"
      "<body><p>The council voted to close the bridge for repairs next week.</p></body>"
      "</html>";
  Input feed;
  feed.id = "f1";
  feed.url = "https://b.test/rss";
  feed.kind = BodyKind::kFeedText;
  feed.fetched_at = 1795255300;
  feed.body =
      "<rss><channel><language>de</language><item><title>Eins</title><link>https://b.test/1</link>"
      "<pubDate>Sat, 21 Nov 2026 09:00:00 GMT</pubDate><description>Der Rat hat am Dienstag "
      "beschlossen, die Brücke zu schließen.</description></item></channel></rss>";
  Pipeline all(c, nullptr), extractor(c, nullptr), judge(c, nullptr);
  for (const Input& in : {page, feed}) {
    auto direct = all.process(in);
    ASSERT_TRUE(direct);
    auto prepared = extractor.prepare(in);
    ASSERT_TRUE(prepared);
    std::vector<std::string> via;
    for (const auto& e : extractor.hand_over(std::move(*prepared), in)) {
      auto record = parse_extracted(extracted_json(e, in));
      ASSERT_TRUE(record) << record.error();
      std::vector<Pipeline::Extracted> one;
      one.push_back(std::move(record->first));
      for (const auto& o : judge.commit(std::move(one), record->second))
        via.push_back(article_json(o));
    }
    ASSERT_EQ(via.size(), direct->size());
    for (std::size_t i = 0; i < via.size(); ++i) EXPECT_EQ(via[i], article_json((*direct)[i]));
  }
  EXPECT_FALSE(parse_extracted("{}"));
  EXPECT_FALSE(parse_extracted(R"({"article":{"text":5},"input":{}})"));
}

TEST(Pipeline, ArticleJsonFollowsTheContract) {
  config::Config c;
  Pipeline pipeline(c, nullptr);
  Input in;
  in.url = "https://www.a.test/story";
  in.fetched_at = 1795255200;
  in.body =
      "<html><head><title>T</title></head><body><p>Some words of the story.</p></body></html>";
  auto out = pipeline.process(in);
  ASSERT_TRUE(out);
  ASSERT_EQ(out->size(), 1u);
  const auto j = nlohmann::json::parse(article_json((*out)[0]));
  for (const char* key :
       {"id", "url", "canonical_url", "source", "title", "byline", "text", "lang", "language",
        "published_at", "fetched_at", "content_hash", "dup", "story_id"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["text"], "Some words of the story.");
  EXPECT_EQ(j["source"], "a.test");
  EXPECT_EQ(j["fetched_at"], "2026-11-21T10:00:00Z");
  EXPECT_EQ(j["dup"]["kind"], "unique");
  EXPECT_TRUE(j["dup"]["of"].is_null());
  EXPECT_EQ(j["story_id"], j["id"]);
  // The derived id is stable: the same page again is the same article.
  auto again = pipeline.process(in);
  EXPECT_EQ((*again)[0].article.id, (*out)[0].article.id);

  // A copy under another URL is an exact duplicate in the same story.
  in.url = "https://b.test/copy";
  in.body = "<html><body><p>Some   words of the STORY!</p></body></html>";
  auto copy = pipeline.process(in);
  ASSERT_TRUE(copy);
  const auto k = nlohmann::json::parse(article_json((*copy)[0]));
  EXPECT_EQ(k["dup"]["kind"], "exact");
  EXPECT_EQ(k["dup"]["of"], j["id"]);
  EXPECT_EQ(k["story_id"], j["id"]);
  const auto s = nlohmann::json::parse(story_json((*copy)[0].story));
  EXPECT_EQ(s["articles"].size(), 2u);
  EXPECT_EQ(s["sources"], 2);
  EXPECT_EQ(s["copies"], 1);
  // The languages of its articles, the unknown left out.
  EXPECT_EQ(s["languages"], j["language"].is_null() ? nlohmann::json::array()
                                                    : nlohmann::json::array({j["language"]}));
}

// A crawled page of one paragraph at `url`, fetched at 2026-11-21T10:00:00Z plus `later` s.
Input page(const std::string& url, const std::string& paragraph, std::int64_t later = 0) {
  Input in;
  in.url = url;
  in.fetched_at = 1795255200 + later;
  in.body = "<html><body><p>" + paragraph + "</p></body></html>";
  return in;
}

TEST(Pipeline, StoriesGroupByTitleAndLead) {
  // Two reports of one event under unlike headlines, in different words: not duplicates, but
  // their leads share the names and facts, so they are one story.
  config::Config c;
  Pipeline pipeline(c, nullptr);
  Input one =
      page("https://a.test/1",
           "Riverton council approved the Hallam suspension bridge across the Wend river on "
           "Tuesday after mayor Ortega broke the tie; Hallam bridge construction begins in "
           "spring.");
  one.title = "Council says yes";
  Input two =
      page("https://b.test/2",
           "Mayor Ortega broke a tie: the Hallam suspension bridge over the Wend river won "
           "Riverton council approval. Construction of the Hallam bridge begins this spring.",
           3600);
  two.title = "Vote ends decade of debate";
  auto a = pipeline.process(one);
  auto b = pipeline.process(two);
  ASSERT_TRUE(a && b);
  EXPECT_EQ((*b)[0].verdict.kind, dedup::DupKind::kUnique);
  EXPECT_EQ((*b)[0].story_id, (*a)[0].story_id);
}

TEST(Pipeline, TheStoryBookIndexesOnlyWhatTheWindowHolds) {
  // A story that keeps growing (copies of one report, a minute apart) in a window bounded at 5
  // articles: the story counts every copy, but indexes (article -> story) only those the window
  // holds, and a copy still finds its story through the window. Restored from the state
  // records, the book holds the same.
  config::Config c;
  c.window.max_articles = 5;
  Pipeline pipeline(c, nullptr);
  Pipeline restored(c, nullptr);
  const std::string text =
      "The harbour bridge reopened on Monday after two years of repairs, and the first buses "
      "crossed it before dawn while workers cleared the last barriers.";
  std::string story;
  for (int i = 0; i < 40; ++i) {
    auto out = pipeline.process(page("https://a.test/" + std::to_string(i), text, 60 * i));
    ASSERT_TRUE(out && out->size() == 1u);
    if (i == 0) story = (*out)[0].story_id;
    EXPECT_EQ((*out)[0].story_id, story);
    EXPECT_EQ((*out)[0].story.article_count, static_cast<std::size_t>(i + 1));
    restored.restore((*out)[0].state);
  }
  EXPECT_EQ(pipeline.window().size(), 5u);
  EXPECT_EQ(pipeline.stories().indexed(), 5u);  // 40 before
  EXPECT_EQ(restored.stories().indexed(), 5u);
  EXPECT_EQ(restored.window().size(), 5u);
}

TEST(Pipeline, AnArticleProcessedAgainIsNotCountedTwiceInDocumentFrequencies) {
  config::Config c;  // the weighted signature is the default
  Pipeline pipeline(c, nullptr);
  Input in = page("https://a.test/one", "A story with enough words to be kept as an article.");
  ASSERT_TRUE(pipeline.process(in));
  EXPECT_EQ(pipeline.term_stats().documents(), 1u);
  ASSERT_TRUE(pipeline.process(in));  // a batch re-run after a failed delivery
  EXPECT_EQ(pipeline.term_stats().documents(), 1u);
}

// Three articles of one site (with a paragraph they share, below).
constexpr const char* kOne =
    "The harbour bridge reopened on Monday after two years of repairs, and the first buses "
    "crossed it before dawn while workers cleared the last barriers.";
constexpr const char* kTwo =
    "Rail workers voted on Tuesday to accept the new wage agreement, ending a dispute that had "
    "halted trains across the region for most of the autumn.";
constexpr const char* kThree =
    "The city library will extend its opening hours from next month, the mayor announced, after "
    "a petition signed by more than four thousand residents.";

TEST(Pipeline, AnArticleProcessedAgainIsNotCountedTwiceByTheBoilerplateFilter) {
  // Three pages of one site share a newsletter box; a paragraph on 3 other pages is furniture.
  // The first page judged again (a batch re-run, or a record extracted twice after a
  // rebalance) must not count as a third page: the third page keeps the box, as in one pass.
  config::Config c;
  c.boilerplate.min_other_pages = 3;
  const std::string box =
      "Officials said the work would cost more than planned, and a review of the budget is "
      "expected before the end of the year, according to a statement released on Sunday.";
  auto site_page = [&](const std::string& path, const char* words, std::int64_t later) {
    Input in = page("https://news.a.test/" + path, words, later);
    in.body = "<html><body><article><p>" + std::string(words) + "</p><p>" + box +
              "</p></article></body></html>";
    return in;
  };
  const Input one = site_page("one", kOne, 0);
  const Input two = site_page("two", kTwo, 60);
  const Input three = site_page("three", kThree, 120);
  auto third_text = [&](bool again) {
    Pipeline pipeline(c, nullptr);
    EXPECT_TRUE(pipeline.process(one));
    EXPECT_TRUE(pipeline.process(two));
    if (again) {
      EXPECT_TRUE(pipeline.process(one));
    }
    auto out = pipeline.process(three);
    EXPECT_TRUE(out && out->size() == 1u);
    return out && !out->empty() ? (*out)[0].content_hash : std::string();
  };
  EXPECT_EQ(third_text(true), third_text(false));
}

// What the cores make ahead of judging (paragraphs, normalized text, story terms) must give what
// judging alone gives: for pages whose furniture the filter drops (the terms are counted again),
// for pages it keeps whole, and for a feed item's page whose headline replaces its title.
TEST(Pipeline, WhatIsMadeAheadOfJudgingGivesWhatJudgingAloneGives) {
  config::Config c;
  c.fetch.enabled = false;
  c.boilerplate.min_other_pages = 2;
  const std::string box =
      "Officials said the work would cost more than planned, and a review of the budget is "
      "expected before the end of the year, according to a statement released on Sunday.";
  std::vector<Input> inputs;
  std::int64_t later = 0;
  for (const char* words : {kOne, kTwo, kThree, kOne}) {
    Input in = page("https://news.a.test/" + std::to_string(later), words, later);
    in.body = "<html><head><title>Page " + std::to_string(later) +
              "</title></head><body><article><p>" + words + "</p><p>" + box +
              "</p></article></body></html>";
    inputs.push_back(in);
    later += 60;
  }
  Input linked = page("https://news.b.test/linked", kTwo, later);
  linked.title = "The headline the feed gave";
  linked.link = "https://news.b.test/linked";
  inputs.push_back(linked);
  Pipeline ahead(c, nullptr), alone(c, nullptr);
  for (const Input& in : inputs) {
    auto made = ahead.prepare(in);
    auto bare = alone.prepare(in);
    ASSERT_TRUE(made && bare);
    for (auto& e : *bare) e.ahead = {};
    const auto a = ahead.commit(std::move(*made), in);
    const auto b = alone.commit(std::move(*bare), in);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(article_json(a[i]), article_json(b[i])) << in.url;
      EXPECT_EQ(story_json(a[i].story), story_json(b[i].story)) << in.url;
      EXPECT_EQ(dedup::encode_state(a[i].state), dedup::encode_state(b[i].state)) << in.url;
    }
  }
  EXPECT_EQ(ahead.save_state(), alone.save_state());
}

TEST(Pipeline, ARestoredArticleJudgedAgainIsNotCountedTwiceByTheBoilerplateFilter) {
  // The same through the changelog: the records of one page judged twice rebuild what a single
  // pass holds.
  config::Config c;
  c.boilerplate.min_other_pages = 3;
  const std::string box =
      "Officials said the work would cost more than planned, and a review of the budget is "
      "expected before the end of the year, according to a statement released on Sunday.";
  auto site_page = [&](const std::string& path, const char* words, std::int64_t later) {
    Input in = page("https://news.a.test/" + path, words, later);
    in.body = "<html><body><article><p>" + std::string(words) + "</p><p>" + box +
              "</p></article></body></html>";
    return in;
  };
  Pipeline live(c, nullptr);
  std::vector<dedup::ArticleState> records;
  for (const Input& in :
       {site_page("one", kOne, 0), site_page("two", kTwo, 60), site_page("one", kOne, 0)}) {
    auto out = live.process(in);
    ASSERT_TRUE(out);
    for (const auto& o : *out) records.push_back(o.state);
  }
  Pipeline restored(c, nullptr);
  for (const auto& r : records) restored.restore(r);
  const Input three = site_page("three", kThree, 120);
  auto a = live.process(three);
  auto b = restored.process(three);
  ASSERT_TRUE(a && b);
  EXPECT_EQ((*a)[0].content_hash, (*b)[0].content_hash);
  Pipeline single(c, nullptr);
  ASSERT_TRUE(single.process(site_page("one", kOne, 0)));
  ASSERT_TRUE(single.process(site_page("two", kTwo, 60)));
  auto s = single.process(three);
  ASSERT_TRUE(s);
  EXPECT_EQ((*a)[0].content_hash, (*s)[0].content_hash);
}

TEST(Pipeline, FarFutureDateDoesNotExpireTheWindow) {
  config::Config c;
  Pipeline pipeline(c, nullptr);
  Input in = page("https://a.test/one", "A first story with enough words to be kept.");
  auto first = pipeline.process(in);
  ASSERT_TRUE(first);
  // A broken CMS dates its page in 2099: the event time falls back to the fetch time.
  Input bad = in;
  bad.url = "https://b.test/two";
  bad.published_at = 4070908800;
  bad.body = "<html><body><p>Another story, about something else entirely.</p></body></html>";
  auto second = pipeline.process(bad);
  ASSERT_TRUE(second);
  EXPECT_EQ((*second)[0].event_time, *in.fetched_at);
  // The first article is still in the window, so its copy is a duplicate.
  in.url = "https://c.test/copy";
  auto copy = pipeline.process(in);
  ASSERT_TRUE(copy);
  EXPECT_EQ((*copy)[0].verdict.kind, dedup::DupKind::kExact);
  // Within the allowed lead a later date is kept.
  bad.url = "https://d.test/three";
  bad.published_at = *in.fetched_at + 1800;
  bad.body = "<html><body><p>A third story, published half an hour later.</p></body></html>";
  auto third = pipeline.process(bad);
  ASSERT_TRUE(third);
  EXPECT_EQ((*third)[0].event_time, *in.fetched_at + 1800);
}

// Articles coming faster than the window's time lets go of them: past `window.max_articles` the
// story book and the boilerplate filter shrink with the window (a story per article held, 32
// paragraphs per article held), and a restore from the state records holds the same.
TEST(Pipeline, TheStoryBookAndBoilerplateFilterAreBoundedByTheWindowsBound) {
  config::Config c;
  c.window.max_articles = 40;
  Pipeline live(c, nullptr);
  std::vector<dedup::ArticleState> records;
  std::size_t most_paragraphs = 0, most_stories = 0;
  auto site_page = [](int i) {
    const std::string n = std::to_string(i);
    std::string body = "<html><body><article>";
    for (int k = 0; k < 8; ++k) {
      const std::string m = std::to_string(i * 10 + k);
      body += "<p>Section " + m + " of report " + n + ": the council of district " + m +
              " met on the " + n + "th to weigh plan " + m + " against budget line " + n + ".</p>";
    }
    body += "<p>Subscribe to our newsletter for the morning briefing from site " +
            std::to_string(i % 10) + " every day before seven.</p></article></body></html>";
    Input in = page("https://site" + std::to_string(i % 10) + ".test/report-" + n, "", i * 60);
    in.body = body;
    return in;
  };
  for (int i = 0; i < 400; ++i) {
    auto out = live.process(site_page(i));
    ASSERT_TRUE(out) << out.error().reason << ": " << out.error().detail;
    for (const auto& o : *out) records.push_back(o.state);
    most_paragraphs = std::max(most_paragraphs, live.boilerplate().size());
    most_stories = std::max(most_stories, live.stories().size());
  }
  EXPECT_EQ(live.window().size(), 40u);
  EXPECT_LE(most_stories, 40u);
  EXPECT_GE(most_stories, 36u);  // it fills up to the bound, then keeps the newest 90%
  EXPECT_LE(most_paragraphs, 40u * 32);
  EXPECT_GT(most_paragraphs, 40u * 32 * 8 / 10);
  // The same bounds, at the same points, from the records: a restore holds what the run holds.
  Pipeline restored(c, nullptr);
  for (const auto& r : records) restored.restore(r);
  EXPECT_EQ(restored.window().size(), live.window().size());
  EXPECT_EQ(restored.stories().size(), live.stories().size());
  EXPECT_EQ(restored.boilerplate().size(), live.boilerplate().size());
  auto a = live.process(site_page(400));
  auto b = restored.process(site_page(400));
  ASSERT_TRUE(a && b);
  EXPECT_EQ((*a)[0].content_hash, (*b)[0].content_hash);
  EXPECT_EQ((*a)[0].story_id, (*b)[0].story_id);
  // Without the bound both hold every article of these hours.
  config::Config unbounded;
  unbounded.window.max_articles = 0;
  Pipeline all(unbounded, nullptr);
  for (int i = 0; i < 400; ++i) ASSERT_TRUE(all.process(site_page(i)));
  // Reports that share the sites' phrasing group into fewer stories than articles (267 at the
  // committed model's threshold), still many times the bound's 40.
  EXPECT_GT(all.stories().size(), 40u * 5);
  EXPECT_GT(all.boilerplate().size(), 3000u);
}

}  // namespace
}  // namespace newsflow::daemon

namespace newsflow::daemon {
namespace {

// What the dedup role reads of a record: the fields `extracted_json` writes, plus what is not in
// it (`language_known`).
std::string read_back(const std::pair<Pipeline::Extracted, Input>& r) {
  return extracted_json(r.first, r.second) + (r.first.language_known ? " known" : " unknown");
}

// The fast path (simdjson) reads every record as the general path (nlohmann) does, or leaves it
// to it: records as the extractor writes them, and each field of one removed, null, or of every
// other type, integers beyond int64, repeated keys (nlohmann keeps the last).
TEST(ExtractedRecord, TheFastPathReadsWhatTheGeneralPathReadsOrLeavesIt) {
  Pipeline::Extracted e;
  extractors::Article& a = e.article;
  a.id = "a1";
  a.url = "https://a.test/x";
  a.canonical_url = "https://a.test/x";
  a.source = "a.test";
  a.title = "Title \"quoted\"";
  a.text = "Text of the article.\nSecond paragraph \xe6\x97\xa5.";
  a.lang = "en";
  a.language = "en";
  a.byline = "By Jo";
  a.authors = {"Jo Roe", "Al Bo"};
  a.published_at = 1795255300;
  a.published_utc_offset = 3600;
  a.modified_at = 1795255400;
  a.description = "A description";
  a.image = extractors::LeadImage{"https://a.test/i.jpg", 640, 480, "Caption"};
  a.section = "World";
  a.tags = {"t1", "t2"};
  a.site_name = "A";
  a.paywalled = true;
  a.warnings = {"title_truncated"};
  e.event_time = 1795255000;
  e.from_feed = true;
  e.fetch_url = "https://a.test/x";
  Input in;
  in.id = "in1";
  in.url = "https://a.test/feed";
  in.title = "Feed title";
  in.published_at = 1795255100;
  in.fetched_at = 1795255200;
  in.link = "https://a.test/x";
  in.feed_url = "https://a.test/feed";
  in.feed_id = "f1";
  in.version = 2;
  const auto base = nlohmann::ordered_json::parse(extracted_json(e, in));

  std::vector<std::string> records = {base.dump()};
  const std::vector<nlohmann::ordered_json> others = {
      nullptr,
      5,
      -3,
      1.5,
      "x",
      "",
      true,
      nlohmann::ordered_json::array(),
      nlohmann::ordered_json::array({"s", 1}),
      nlohmann::ordered_json::object(),
      nlohmann::ordered_json::object({{"url", "https://a.test/j.jpg"}, {"width", "w"}}),
      std::numeric_limits<std::uint64_t>::max(),
      -86400 * 2,
      5000};
  const auto vary = [&](const std::vector<std::string>& path) {
    auto drop = base;
    nlohmann::ordered_json* parent = &drop;
    for (std::size_t i = 0; i + 1 < path.size(); ++i) parent = &(*parent)[path[i]];
    parent->erase(path.back());
    records.push_back(drop.dump());
    for (const auto& v : others) {
      auto changed = base;
      nlohmann::ordered_json* at = &changed;
      for (const auto& k : path) at = &(*at)[k];
      *at = v;
      records.push_back(changed.dump());
    }
  };
  for (const auto& [k, _] : base.items()) vary({k});
  for (const auto& [k, _] : base["article"].items()) vary({"article", k});
  for (const auto& [k, _] : base["input"].items()) vary({"input", k});
  for (const auto& [k, _] : base["article"]["image"].items()) vary({"article", "image", k});
  // Repeated keys, at each level.
  const std::string text = base.dump();
  records.push_back("{\"fetch_url\":\"https://other.test/\"," + text.substr(1));
  records.push_back(text.substr(0, text.size() - 1) + ",\"from_feed\":false}");
  for (const char* key : {"\"article\":{", "\"input\":{", "\"image\":{"}) {
    std::string twice = text;
    const auto at = twice.find(key) + std::string(key).size();
    twice.insert(at, "\"url\":\"https://other.test/\",");
    records.push_back(twice);
  }
  records.push_back("{}");
  records.push_back("[1]");
  records.push_back(text.substr(0, text.size() / 2));

  std::size_t fast = 0;
  for (const std::string& r : records) {
    const auto general = parse_extracted_general(r);
    const auto quick = read_extracted_fast(r);
    if (!quick) continue;
    ++fast;
    ASSERT_TRUE(general) << r;
    EXPECT_EQ(read_back(*quick), read_back(*general)) << r;
    const auto both = parse_extracted(r);
    ASSERT_TRUE(both);
    EXPECT_EQ(read_back(*both), read_back(*general));
  }
  // Most variations are read by the fast path; the record as written always is.
  EXPECT_TRUE(read_extracted_fast(base.dump()));
  EXPECT_GT(fast, records.size() / 2);
}

}  // namespace
}  // namespace newsflow::daemon
