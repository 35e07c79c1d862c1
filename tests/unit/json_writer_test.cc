#include "daemon/pipeline/json_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

namespace newsflow::daemon {
namespace {

// What the records were written with before the writer: its bytes are the contract.
std::string reference(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string written(std::string_view s) {
  JsonWriter w;
  w.string(s);
  return w.take();
}

TEST(JsonWriter, EscapesStringsAsNlohmannDoes) {
  const std::vector<std::string> cases = {
      "",
      "plain words",
      "quote \" backslash \\ slash /",
      std::string("nul \0 inside", 12),
      "\b\f\n\r\t\x01\x1f\x7f",
      "ünïcödé 日本語 😀 \u2028\u2029",
      // Not UTF-8: lone continuation, truncated sequences, overlong forms, surrogates, beyond
      // U+10FFFF, Latin-1 bytes.
      "\x80 x",
      "a \xc3",
      "\xe2\x82 b",
      "\xc0\xaf \xe0\x80\xaf",
      "\xed\xa0\x80 \xed\xbf\xbf",
      "\xf4\x90\x80\x80 \xf8\x88\x80\x80\x80",
      "caf\xe9 na\xefve \xff\xfe",
      "ok \xe6\x97\xa5 then bad \xe6\x97 end",
  };
  for (const std::string& s : cases) {
    EXPECT_EQ(written(s), reference(s)) << s;
  }
}

TEST(JsonWriter, EscapesRandomBytesAsNlohmannDoes) {
  std::mt19937 rng(20261128);
  // Bytes drawn mostly from where escapes and UTF-8 decisions lie.
  const std::vector<unsigned char> alphabet = {0x00, 0x01, 0x08, 0x09, 0x0a, 0x1f, 0x20, 0x22,
                                               0x41, 0x5c, 0x7f, 0x80, 0x9f, 0xbf, 0xc2, 0xc3,
                                               0xdf, 0xe0, 0xe2, 0xed, 0xef, 0xf0, 0xf4, 0xff};
  for (int n = 0; n < 5000; ++n) {
    std::string s(rng() % 12, '\0');
    for (char& c : s) c = static_cast<char>(alphabet[rng() % alphabet.size()]);
    ASSERT_EQ(written(s), reference(s))
        << nlohmann::json(s).dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  }
}

TEST(JsonWriter, WritesNumbersAsNlohmannDoes) {
  for (const double x :
       {0.0, -0.0, 1.0, 0.5, 0.1, 1.0 / 3, 0.8571428571428571, 1e-7, 12345678.9, 1e300,
        std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    JsonWriter w;
    w.number(x);
    EXPECT_EQ(w.take(), reference(x)) << x;
  }
  for (const std::int64_t n : {std::int64_t{0}, std::int64_t{-1}, std::int64_t{1} << 40,
                               std::numeric_limits<std::int64_t>::min()}) {
    JsonWriter w;
    w.integer(n);
    EXPECT_EQ(w.take(), reference(n));
  }
  JsonWriter w;
  w.unsigned_integer(std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(w.take(), reference(std::numeric_limits<std::uint64_t>::max()));
}

TEST(JsonWriter, WritesADocumentAsNlohmannDoes) {
  nlohmann::ordered_json j;
  j["id"] = "a1";
  j["empty"] = nlohmann::ordered_json::array();
  j["tags"] = {"x", "y \"z\""};
  j["none"] = nullptr;
  j["ok"] = true;
  j["no"] = false;
  j["dup"] = {{"kind", "near"}, {"of", nullptr}, {"similarity", 0.75}};
  j["list"] = nlohmann::ordered_json::array();
  j["list"].push_back({{"id", "m1"}, {"n", 2}});
  j["list"].push_back({{"id", "m2"}, {"n", 3}});
  j["nested"] = {{"inner", {{"deep", nlohmann::ordered_json::array()}}}};
  j["end"] = 7;

  JsonWriter w;
  w.begin_object();
  w.key("id").string("a1");
  w.key("empty").strings({});
  w.key("tags").strings({"x", "y \"z\""});
  w.key("none").null();
  w.key("ok").boolean(true);
  w.key("no").boolean(false);
  w.key("dup").begin_object().key("kind").string("near").key("of").string_or_null("");
  w.key("similarity").number(0.75).end_object();
  w.key("list").begin_array();
  for (int i = 1; i <= 2; ++i) {
    w.begin_object().key("id").string("m" + std::to_string(i)).key("n").integer(i + 1);
    w.end_object();
  }
  w.end_array();
  w.key("nested").begin_object().key("inner").begin_object().key("deep").begin_array();
  w.end_array().end_object().end_object();
  w.key("end").integer(7);
  w.end_object();
  EXPECT_EQ(w.take(), reference(j));
}

}  // namespace
}  // namespace newsflow::daemon
