// Golden extraction tests: tests/golden/cases/<name>/input.html (+ optional url.txt) must extract
// to expected.txt (title on the first line, a blank line, then the text). Set
// NEWSFLOW_REGENERATE_GOLDEN=1 to rewrite the expectations, then review the diff.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "daemon/pipeline/pipeline.h"

namespace fs = std::filesystem;

namespace newsflow::daemon {
namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const auto& e :
       fs::directory_iterator(fs::path(NEWSFLOW_SOURCE_DIR) / "tests/golden/cases")) {
    if (e.is_directory()) names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(Golden, ExtractsTheExpectedText) {
  const fs::path dir = fs::path(NEWSFLOW_SOURCE_DIR) / "tests/golden/cases" / GetParam();
  config::Config c;
  Pipeline pipeline(c, nullptr);
  Input in;
  in.url = fs::exists(dir / "url.txt") ? read_file(dir / "url.txt") : "https://golden.test/";
  while (!in.url.empty() && (in.url.back() == '\n' || in.url.back() == ' ')) in.url.pop_back();
  in.kind = BodyKind::kHtmlBytes;  // raw bytes: charset detection is part of the test
  in.body = read_file(dir / "input.html");
  auto out = pipeline.process(in);
  std::string actual;
  if (out) {
    actual = (*out)[0].article.title + "\n\n" + (*out)[0].article.text + "\n";
  } else {
    actual = "DLQ " + out.error().reason + "\n";
  }
  if (std::getenv("NEWSFLOW_REGENERATE_GOLDEN")) {
    std::ofstream(dir / "expected.txt", std::ios::binary) << actual;
    GTEST_SKIP() << "regenerated";
  }
  EXPECT_EQ(actual, read_file(dir / "expected.txt"));
}

INSTANTIATE_TEST_SUITE_P(Cases, Golden, ::testing::ValuesIn(case_names()),
                         [](const auto& param_info) { return param_info.param; });

}  // namespace
}  // namespace newsflow::daemon
