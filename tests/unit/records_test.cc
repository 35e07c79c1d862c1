// The extracted record's fields are listed once (daemon/pipeline/record_fields.h): the writer
// writes exactly the listed keys in the listed order, and both readers (the general one and the
// fast one) read back every listed field, and refuse a record without a required one.
#include "daemon/pipeline/records.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "daemon/pipeline/extracted_simdjson.h"
#include "daemon/pipeline/record_fields.h"

namespace newsflow::daemon {
namespace {

using records::Need;

// The keys of a field list, each with the path of objects it is in and whether it is required.
struct Key {
  std::string path;
  bool required = false;
};

class KeyLister {
 public:
  explicit KeyLister(std::vector<Key>& out, std::string prefix = "")
      : out_(out), prefix_(std::move(prefix)) {}
  template <class T>
  void string(const char* key, T&, Need need) {
    add(key, need == Need::kRequired);
  }
  template <class T>
  void strings(const char* key, T&) {
    add(key);
  }
  template <class T>
  void seconds(const char* key, T&) {
    add(key);
  }
  template <class T>
  void clamped(const char* key, T&, std::int64_t, std::int64_t) {
    add(key);
  }
  template <class T>
  void dimension(const char* key, T&) {
    add(key);
  }
  template <class T>
  void boolean(const char* key, T&) {
    add(key);
  }
  template <class T>
  void image(const char* key, T&) {
    add(key);
    KeyLister nested(out_, prefix_ + key + "/");
    extractors::LeadImage image;
    records::image_fields(nested, image);
  }
  template <class Fields>
  void object(const char* key, const Fields& fields) {
    add(key, true);
    KeyLister nested(out_, prefix_ + key + "/");
    fields(nested);
  }
  bool when(bool) const { return true; }

 private:
  void add(const char* key, bool required = false) { out_.push_back({prefix_ + key, required}); }
  std::vector<Key>& out_;
  std::string prefix_;
};

std::vector<Key> listed_keys() {
  std::vector<Key> keys;
  KeyLister lister(keys);
  Extracted e;
  Input in;
  records::extracted_fields(lister, e, in);
  return keys;
}

// The keys of a written record, in the order written, with their paths.
void written_keys(const nlohmann::ordered_json& j, const std::string& prefix,
                  std::vector<std::string>& out) {
  for (const auto& [k, v] : j.items()) {
    out.push_back(prefix + k);
    if (v.is_object()) written_keys(v, prefix + k + "/", out);
  }
}

// A record with every field set to something other than its default.
std::pair<Extracted, Input> full_record() {
  std::pair<Extracted, Input> r;
  extractors::Article& a = r.first.article;
  a.id = "a1";
  a.url = "https://a.test/1?utm_source=x";
  a.canonical_url = "https://a.test/1";
  a.source = "a.test";
  a.title = "Title";
  a.text = "The text of the article.";
  a.lang = "en";
  a.language = "en";
  a.byline = "By Jo Roe";
  a.authors = {"Jo Roe", "Al Doe"};
  a.credit = "Agency";
  a.published_at = 1795255200;
  a.published_utc_offset = 3600;
  a.modified_at = 1795258800;
  a.modified_utc_offset = -7200;
  a.description = "A description.";
  a.image = extractors::LeadImage{"https://a.test/i.jpg", 640, 480, "A caption"};
  a.section = "World";
  a.tags = {"t1", "t2"};
  a.site_name = "A Test";
  a.paywalled = true;
  a.warnings = {"text_truncated"};
  r.first.event_time = 1795255100;
  r.first.from_feed = true;
  r.first.fetch_url = "https://a.test/1";
  Input& in = r.second;
  in.id = "in1";
  in.url = "https://a.test/feed";
  in.title = "Feed title";
  in.published_at = 1795255000;
  in.fetched_at = 1795255300;
  in.link = "https://a.test/1";
  in.feed_url = "https://a.test/feed";
  in.feed_id = "feed1";
  in.version = 2;
  return r;
}

TEST(ExtractedRecord, TheWriterWritesTheListedFieldsInTheirOrder) {
  const auto [e, in] = full_record();
  const auto j = nlohmann::ordered_json::parse(extracted_json(e, in));
  std::vector<std::string> written;
  written_keys(j, "", written);
  std::vector<std::string> listed;
  for (const Key& k : listed_keys()) listed.push_back(k.path);
  EXPECT_EQ(written, listed);
  EXPECT_EQ(listed.size(), 22u + 4u + 5u + 9u);  // article, image, record, input
}

TEST(ExtractedRecord, BothReadersReadBackEveryField) {
  const auto [e, in] = full_record();
  const std::string json = extracted_json(e, in);
  const auto general = parse_extracted_general(json);
  ASSERT_TRUE(general) << general.error();
  const auto fast = read_extracted_fast(json);
  ASSERT_TRUE(fast);
  // Written again, each gives the same record: no field is lost or changed on the way.
  EXPECT_EQ(extracted_json(general->first, general->second), json);
  EXPECT_EQ(extracted_json(fast->first, fast->second), json);
  EXPECT_TRUE(general->first.language_known);
  EXPECT_TRUE(fast->first.language_known);
}

TEST(ExtractedRecord, BothReadersRefuseARecordWithoutARequiredField) {
  const auto [e, in] = full_record();
  const auto base = nlohmann::ordered_json::parse(extracted_json(e, in));
  std::size_t required = 0;
  for (const Key& k : listed_keys()) {
    if (!k.required || k.path.starts_with("article/image/")) continue;  // an image's URL: no image
    ++required;
    auto without = base;
    nlohmann::ordered_json* parent = &without;
    std::string path = k.path;
    for (auto slash = path.find('/'); slash != std::string::npos; slash = path.find('/')) {
      parent = &(*parent)[path.substr(0, slash)];
      path = path.substr(slash + 1);
    }
    parent->erase(path);
    EXPECT_FALSE(parse_extracted_general(without.dump())) << k.path;
    EXPECT_FALSE(read_extracted_fast(without.dump())) << k.path;
  }
  EXPECT_EQ(required, 9u + 1u + 3u + 2u);  // article strings, fetch_url, input strings, objects
  // An image without its URL is no image, for both.
  auto no_url = base;
  no_url["article"]["image"].erase("url");
  const auto general = parse_extracted_general(no_url.dump());
  const auto fast = read_extracted_fast(no_url.dump());
  ASSERT_TRUE(general);
  ASSERT_TRUE(fast);
  EXPECT_FALSE(general->first.article.image);
  EXPECT_FALSE(fast->first.article.image);
}

TEST(ExtractedRecord, TheInputsLaterFieldsAreWrittenOnlyForAFetchedPage) {
  auto [e, in] = full_record();
  in.link.clear();
  const auto j = nlohmann::json::parse(extracted_json(e, in));
  EXPECT_FALSE(j["input"].contains("link"));
  EXPECT_FALSE(j["input"].contains("version"));
  const auto back = parse_extracted(extracted_json(e, in));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->second.version, 1);
  EXPECT_TRUE(back->second.feed_url.empty());
}

}  // namespace
}  // namespace newsflow::daemon
