// The dead-letter reasons are one list (`Metrics::dead_letter_reasons`, whose labels are
// pre-registered at zero): every reason the daemon's code writes is in it, every reason of the
// extractors and the fetcher too, and docs/contracts.md's table names exactly those. A typo in
// a reason would otherwise be a new dead-letter reason and a new metric label that no dashboard
// knows.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

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

// The names of [a-z0-9_] characters that follow each `prefix` in `text` and end with `end`
// (std::regex is avoided: GCC 12 warns inside it under the sanitizers' -O2).
std::vector<std::string> names_after(std::string_view text, std::string_view prefix,
                                     char end = '"') {
  std::vector<std::string> out;
  for (auto at = text.find(prefix); at != std::string_view::npos; at = text.find(prefix, at + 1)) {
    std::size_t i = at + prefix.size(), j = i;
    while (j < text.size() &&
           (std::islower(static_cast<unsigned char>(text[j])) ||
            std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == '_')) {
      ++j;
    }
    if (j > i && j < text.size() && text[j] == end) out.emplace_back(text.substr(i, j - i));
  }
  return out;
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
  for (std::string line; std::getline(table, line);) {
    if (!line.starts_with("| `")) continue;
    const std::string first = line.substr(0, line.find(" | ", 2));
    for (auto& n : names_after(first, "`", '`')) documented.insert(n);
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
  for (const auto& o : names_after(fetcher, "outcome = \"")) {
    if (o == "ok") continue;
    EXPECT_TRUE(reasons.count("fetch_" + o)) << o;
  }
}

TEST(DeadLetterReasons, TheDaemonWritesOnlyListedReasons) {
  std::set<std::string> reasons = listed();
  reasons.insert(kReplayOnly.begin(), kReplayOnly.end());
  // A reason written as a literal: Failure{"...", a failure's fail("..."), a retry's reason (not
  // a WARC record's skip_reason), a dead letter counted by name.
  std::size_t seen = 0;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(NEWSFLOW_SOURCE_DIR "/daemon")) {
    const auto ext = entry.path().extension();
    if (ext != ".cc" && ext != ".h") continue;
    const std::string text = read(entry.path());
    std::vector<std::string> found;
    for (const char* prefix : {"Failure{\"", "fail(\"", " reason = \"", ".reason = \"",
                               "dead_letter(\"", "invalid_utf8 ? \""}) {
      for (auto& n : names_after(text, prefix)) found.push_back(std::move(n));
    }
    for (const std::string& reason : found) {
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
