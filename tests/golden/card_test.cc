// Golden article cards: tests/golden/card_cases/<name>/input.html (+ optional url.txt) must give
// the card in expected.txt: one line per field, `field<TAB>source<TAB>value` (`card_table`), or
// `DLQ <reason>`. Every page is read as fetched on 2024-06-01T12:00:00Z, so a date after that
// day is never the page's. Set NEWSFLOW_REGENERATE_GOLDEN=1 to rewrite the expectations, then
// review the diff: each value must be what a careful reader reads on the page.
#include "daemon/pipeline/card.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "daemon/pipeline/pipeline.h"

namespace fs = std::filesystem;

namespace newsflow::daemon {
namespace {

constexpr extractors::UnixSeconds kFetchedAt = 1717243200;  // 2024-06-01T12:00:00Z

const fs::path& cases_dir() {
  static const fs::path dir = fs::path(NEWSFLOW_SOURCE_DIR) / "tests/golden/card_cases";
  return dir;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(cases_dir())) {
    if (e.is_directory()) names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class GoldenCard : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenCard, GivesTheExpectedCard) {
  const fs::path dir = cases_dir() / GetParam();
  config::Config c;
  Pipeline pipeline(c, nullptr);
  Input in;
  in.url = fs::exists(dir / "url.txt") ? read_file(dir / "url.txt") : "https://card.test/";
  while (!in.url.empty() && (in.url.back() == '\n' || in.url.back() == ' ')) in.url.pop_back();
  in.kind = BodyKind::kHtmlBytes;
  in.fetched_at = kFetchedAt;
  in.body = read_file(dir / "input.html");
  auto out = pipeline.process(in);
  const std::string actual =
      out ? card_table((*out)[0].article) : "DLQ " + out.error().reason + "\n";
  if (std::getenv("NEWSFLOW_REGENERATE_GOLDEN")) {
    std::ofstream(dir / "expected.txt", std::ios::binary) << actual;
    GTEST_SKIP() << "regenerated";
  }
  EXPECT_EQ(actual, read_file(dir / "expected.txt"));
}

INSTANTIATE_TEST_SUITE_P(Cases, GoldenCard, ::testing::ValuesIn(case_names()),
                         [](const auto& param_info) { return param_info.param; });

}  // namespace
}  // namespace newsflow::daemon
