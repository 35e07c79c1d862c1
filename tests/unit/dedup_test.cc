#include <gtest/gtest.h>

#include "dedup/fingerprint.h"
#include "dedup/normalize.h"
#include "dedup/stories.h"
#include "dedup/window.h"

namespace newsflow::dedup {
namespace {

TEST(Normalize, FoldsCaseTypographyAndPunctuation) {
  EXPECT_EQ(normalize_text("\xE2\x80\x9CHello,\xE2\x80\x9D  WORLD!"), "hello world");
  EXPECT_EQ(normalize_text("It\xE2\x80\x99s \xEF\xAC\x81ne \xE2\x80\x94 really"),
            "it s fine really");  // curly apostrophe and the fi ligature (NFKC)
  EXPECT_EQ(normalize_text("Stra\xC3\x9F" "e"), "strasse");  // case folding
  EXPECT_EQ(normalize_text("a\xFF" "b"), "ab");              // invalid bytes dropped
  EXPECT_EQ(normalize_text(" \n\t "), "");
}

TEST(Fingerprint, EqualNormalizedTextsHashEqual) {
  EXPECT_EQ(content_hash(normalize_text("Hello, World")), content_hash(normalize_text("hello world")));
  EXPECT_NE(content_hash("hello world"), content_hash("hello worlds"));
  EXPECT_EQ(content_hash("").hex().size(), 32u);
}

TEST(Window, ExactDuplicatePointsAtTheOriginal) {
  DedupWindow w;
  const auto h = content_hash("same text");
  EXPECT_EQ(w.observe("a", h, 100).kind, DupKind::kUnique);
  const Verdict v = w.observe("b", h, 200);
  EXPECT_EQ(v.kind, DupKind::kExact);
  EXPECT_EQ(v.of, "a");
  EXPECT_DOUBLE_EQ(v.similarity, 1.0);
  EXPECT_EQ(w.observe("c", h, 300).of, "a");
  EXPECT_EQ(w.observe("d", content_hash("other"), 300).kind, DupKind::kUnique);
}

TEST(Window, ReplayedIdRepeatsItsVerdict) {
  DedupWindow w;
  const auto h = content_hash("same text");
  w.observe("a", h, 100);
  w.observe("b", h, 200);
  EXPECT_EQ(w.observe("a", h, 100).kind, DupKind::kUnique);
  EXPECT_EQ(w.observe("b", h, 200).of, "a");
  EXPECT_EQ(w.size(), 2u);
}

TEST(Window, EntriesExpireBehindTheWatermark) {
  DedupWindow w({.window_seconds = 3600});
  const auto h = content_hash("text");
  w.observe("a", h, 0);
  w.observe("x", content_hash("other"), 3600);  // a is exactly at the horizon: kept
  EXPECT_EQ(w.observe("b", h, 3600).of, "a");
  w.observe("y", content_hash("later"), 3601 + 3600);  // a, b and x fall out
  EXPECT_EQ(w.size(), 1u);
  EXPECT_EQ(w.observe("c", h, 7300).kind, DupKind::kUnique);
}

TEST(Window, OriginalExpiringHandsOverToTheNextCopy) {
  DedupWindow w({.window_seconds = 100});
  const auto h = content_hash("text");
  w.observe("a", h, 0);
  w.observe("b", h, 90);
  const Verdict v = w.observe("c", h, 150);  // a expired (0 < 150-100), b is still there
  EXPECT_EQ(v.kind, DupKind::kExact);
  EXPECT_EQ(v.of, "b");
}

TEST(Stories, DuplicatesJoinTheirOriginalsStory) {
  StoryBook book;
  const Story& s1 = book.assign({"a", "https://x.test/a", "x.test", DupKind::kUnique}, "Title",
                                {}, 10);
  EXPECT_EQ(s1.story_id, "a");
  EXPECT_EQ(s1.version, 1u);
  const Story& s2 = book.assign({"b", "https://y.test/b", "y.test", DupKind::kExact}, "Other",
                                {DupKind::kExact, "a", 1.0}, 20);
  EXPECT_EQ(s2.story_id, "a");
  EXPECT_EQ(s2.article_count, 2u);
  EXPECT_EQ(s2.sources, 2u);
  EXPECT_EQ(s2.title, "Title");
  EXPECT_EQ(s2.last_updated, 20);
  EXPECT_EQ(s2.version, 2u);
  EXPECT_EQ(book.story_of("b"), "a");
  // Replaying b changes nothing.
  EXPECT_EQ(book.assign({"b", "https://y.test/b", "y.test", DupKind::kExact}, "Other",
                        {DupKind::kExact, "a", 1.0}, 20)
                .version,
            2u);
  const Story& s3 = book.assign({"c", "u", "z.test", DupKind::kUnique}, "New", {}, 30);
  EXPECT_EQ(s3.story_id, "c");
  const auto top = book.largest(1);
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0].story_id, "a");
}

}  // namespace
}  // namespace newsflow::dedup
