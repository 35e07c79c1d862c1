// The dead-letter reasons are one list (`Reason` and its names, `kReasons`), from which the
// metric labels (`Metrics::dead_letter_reasons`, pre-registered at zero) come: every reason of
// the extractors and the fetcher is in it, no failure is made from a string, and
// docs/contracts.md's table names exactly those. A typo in a reason would otherwise be a new
// dead-letter reason and a new metric label that no dashboard knows.
#include "daemon/pipeline/reasons.h"

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
#include "daemon/pipeline/document.h"
#include "extractors/error.h"

namespace newsflow::daemon {
namespace {

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

// Every reason's name.
std::set<std::string> listed() {
  std::set<std::string> out;
  for (const ReasonName& r : kReasons) out.emplace(r.name);
  EXPECT_EQ(out.size(), kReasons.size()) << "a name is given twice";
  return out;
}

TEST(DeadLetterReasons, EachReasonHasItsOwnName) {
  for (std::size_t i = 0; i < kReasons.size(); ++i) {
    const Reason r = static_cast<Reason>(i);
    EXPECT_EQ(kReasons[i].reason, r) << i;  // the table is in the enum's order
    EXPECT_EQ(reason_named(reason_name(r)), r) << reason_name(r);
    EXPECT_EQ(Failure(r, "detail").reason, reason_name(r));
  }
  EXPECT_FALSE(reason_named("no_such_reason"));
  EXPECT_EQ(reason_name(Reason::kFetchHttp5xx), "fetch_http_5xx");
  EXPECT_EQ(reason_name(Reason::kEmptyLine), "empty_line");
}

TEST(DeadLetterReasons, TheMetricLabelsAreTheReasonsTheDaemonGives) {
  std::vector<std::string> expected;
  for (const ReasonName& r : kReasons) {
    if (r.on_topics) expected.emplace_back(r.name);
  }
  EXPECT_EQ(Metrics::dead_letter_reasons(), expected);
  // Only replay's blank line is not the daemon's.
  EXPECT_EQ(expected.size() + 1, kReasons.size());
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
  EXPECT_EQ(documented, listed());
}

TEST(DeadLetterReasons, TheExtractorsAndTheFetcherUseListedReasons) {
  const std::set<std::string> reasons = listed();
  for (auto r = extractors::ExtractReason::kEmpty; r <= extractors::ExtractReason::kConsentWall;
       r = static_cast<extractors::ExtractReason>(static_cast<int>(r) + 1)) {
    const std::string name(extractors::reason_name(r));
    EXPECT_TRUE(reasons.count(name)) << name;
    EXPECT_EQ(reason_name(reason_of(r)), name);
  }
  // A failed fetch is "fetch_" and the fetcher's outcome.
  const std::string fetcher = read(NEWSFLOW_SOURCE_DIR "/daemon/pipeline/fetcher.cc");
  for (const auto& o : names_after(fetcher, "outcome = \"")) {
    if (o == "ok") continue;
    EXPECT_TRUE(reasons.count("fetch_" + o)) << o;
    EXPECT_EQ(reason_name(fetch_reason(o)), "fetch_" + o);
  }
}

TEST(DeadLetterReasons, TheDaemonMakesNoFailureFromAString) {
  // A failure is made from a `Reason` (a reason written as a literal would be the old way back
  // to typos); the dead letters of retries name theirs through `reason_name` too.
  std::size_t files = 0;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(NEWSFLOW_SOURCE_DIR "/daemon")) {
    const auto ext = entry.path().extension();
    if (ext != ".cc" && ext != ".h") continue;
    ++files;
    const std::string text = read(entry.path());
    for (const char* prefix : {"Failure{\"", "Failure(\"", "fail(\"", " reason = \"",
                               ".reason = \"", "dead_letter(\"", "invalid_utf8 ? \""}) {
      for (const auto& n : names_after(text, prefix)) {
        ADD_FAILURE() << entry.path().filename().string() << " writes the reason " << n
                      << " as a string";
      }
    }
  }
  EXPECT_GE(files, 50u);  // the scan read the daemon's sources
}

}  // namespace
}  // namespace newsflow::daemon
