// The dead-letter reasons are one list (`Metrics::dead_letter_reasons`, whose labels are
// pre-registered at zero): every reason the daemon's code writes is in it, every reason of the
// extractors and the fetcher too, and docs/contracts.md's table names exactly those. A typo in
// a reason would otherwise be a new dead-letter reason and a new metric label that no dashboard
// knows.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "daemon/ops/metrics.h"
#include "extractors/error.h"

namespace newsflow::daemon {
namespace {

// Reasons only `newsflow replay` writes (its input is a file, not a topic).
const std::set<std::string> kReplayOnly{"empty_line"};

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::set<std::string> listed() {
  const auto& reasons = Metrics::dead_letter_reasons();
  std::set<std::string> out(reasons.begin(), reasons.end());
  EXPECT_EQ(out.size(), reasons.size()) << "a reason is listed twice";
  return out;
}

TEST(DeadLetterReasons, ContractsNamesEveryReasonOfTheList) {
  const std::string doc = read(NEWSFLOW_SOURCE_DIR "/docs/contracts.md");
  const auto begin = doc.find("Reasons (`error_reason`");
  ASSERT_NE(begin, std::string::npos);
  const auto end = doc.find("\n## ", begin);
  std::istringstream table(doc.substr(begin, end - begin));
  std::set<std::string> documented;
  const std::regex name("`([a-z0-9_]+)`");
  for (std::string line; std::getline(table, line);) {
    if (!line.starts_with("| `")) continue;
    const std::string first = line.substr(0, line.find(" | ", 2));
    for (std::sregex_iterator it(first.begin(), first.end(), name), e; it != e; ++it) {
      documented.insert((*it)[1]);
    }
  }
  std::set<std::string> expected = listed();
  expected.insert(kReplayOnly.begin(), kReplayOnly.end());
  EXPECT_EQ(documented, expected);
}

TEST(DeadLetterReasons, TheExtractorsAndTheFetcherUseListedReasons) {
  const std::set<std::string> reasons = listed();
  for (auto r = extractors::ExtractReason::kEmpty; r <= extractors::ExtractReason::kConsentWall;
       r = static_cast<extractors::ExtractReason>(static_cast<int>(r) + 1)) {
    const std::string name(extractors::reason_name(r));
    EXPECT_TRUE(reasons.count(name)) << name;
  }
  // A failed fetch is "fetch_" and the fetcher's outcome.
  const std::string fetcher = read(NEWSFLOW_SOURCE_DIR "/daemon/pipeline/fetcher.cc");
  const std::regex outcome(R"re(outcome = "([a-z0-9_]+)")re");
  for (std::sregex_iterator it(fetcher.begin(), fetcher.end(), outcome), e; it != e; ++it) {
    if ((*it)[1] == "ok") continue;
    EXPECT_TRUE(reasons.count("fetch_" + std::string((*it)[1]))) << (*it)[1];
  }
}

TEST(DeadLetterReasons, TheDaemonWritesOnlyListedReasons) {
  std::set<std::string> reasons = listed();
  reasons.insert(kReplayOnly.begin(), kReplayOnly.end());
  // A reason written as a literal: Failure{"...", a failure's fail("..."), a retry's reason (not
  // a WARC record's skip_reason), a dead letter counted by name.
  const std::regex written(
      R"re((?:Failure\{|fail\(|\breason = |dead_letter\(|Failure\{invalid_utf8 \? )"([a-z0-9_]+)")re");
  std::size_t seen = 0;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(NEWSFLOW_SOURCE_DIR "/daemon")) {
    const auto ext = entry.path().extension();
    if (ext != ".cc" && ext != ".h") continue;
    const std::string text = read(entry.path());
    for (std::sregex_iterator it(text.begin(), text.end(), written), e; it != e; ++it) {
      const std::string reason = (*it)[1];
      if (reason == "fetch_") continue;  // "fetch_" + the fetcher's outcome, checked above
      ++seen;
      EXPECT_TRUE(reasons.count(reason))
          << entry.path().filename().string() << " writes the unlisted reason " << reason;
    }
  }
  EXPECT_GE(seen, 20u);  // the scan found the daemon's reasons
}

}  // namespace
}  // namespace newsflow::daemon
