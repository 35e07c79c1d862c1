#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <iterator>
#include <map>
#include <numeric>
#include <random>

#include "dedup/boilerplate.h"
#include "dedup/fingerprint.h"
#include "dedup/internal/article_index.h"
#include "dedup/internal/codec.h"
#include "dedup/internal/id_pair.h"
#include "dedup/internal/packed_strings.h"
#include "dedup/internal/slot_list.h"
#include "dedup/internal/slot_table.h"
#include "dedup/internal/term_table.h"
#include "dedup/normalize.h"
#include "dedup/signature.h"
#include "dedup/stories.h"
#include "dedup/window.h"

namespace newsflow::dedup {
namespace {

TEST(Normalize, FoldsCaseTypographyAndPunctuation) {
  EXPECT_EQ(normalize_text("\xE2\x80\x9CHello,\xE2\x80\x9D  WORLD!"), "hello world");
  EXPECT_EQ(normalize_text("It\xE2\x80\x99s \xEF\xAC\x81ne \xE2\x80\x94 really"),
            "it s fine really");  // curly apostrophe and the fi ligature (NFKC)
  EXPECT_EQ(normalize_text("Stra\xC3\x9F"
                           "e"),
            "strasse");  // case folding
  EXPECT_EQ(normalize_text("a\xFF"
                           "b"),
            "ab");  // invalid bytes dropped
  EXPECT_EQ(normalize_text(" \n\t "), "");
}

TEST(Normalize, CutsChineseJapaneseAndThaiIntoWords) {
  // Without spaces between words, a whole clause used to be one "word". The cuts are those of
  // ICU's dictionaries (Debian 12: ICU 72).
  EXPECT_EQ(normalize_text("新华社北京电"), "新华社 北京 电");
  EXPECT_EQ(segment_words("東京都は大雨"), "東京 都 は 大雨");
  EXPECT_EQ(normalize_text("ภาษาไทยง่ายนิดเดียว"), "ภาษา ไทย ง่าย นิด เดียว");
  // Latin words are left as they are, also next to Chinese; punctuation still breaks.
  EXPECT_EQ(normalize_text("Windows系统，Linux内核。"), "windows 系统 linux 内 核");
  EXPECT_EQ(normalize_text("Hello, World"), "hello world");
}

TEST(Normalize, ChineseCopiesWithAFewCharactersChangedStaySimilar) {
  // Two reports that differ in two phrases (the held-out failure: similarity 0.0 when the
  // clauses between punctuation were the words).
  const std::string a =
      "国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入比上年同期名义增长百分之六点三"
      "，"
      "扣除价格因素实际增长百分之五点九。城镇居民人均可支配收入增长百分之五点二，农村居民人均可支配"
      "收入增长百分之七点三。分析人士认为，就业形势总体稳定，消费市场持续恢复，居民收入增长与经济增"
      "长"
      "基本同步。专家表示，下一步应继续稳定就业，拓宽居民增收渠道，促进消费持续扩大。";
  std::string b = a;
  auto replace = [&b](const std::string& from, const std::string& to) {
    b.replace(b.find(from), from.size(), to);
  };
  replace("今天发布", "周三公布");
  replace("持续恢复", "逐步回暖");
  const SignatureOptions shingles{SignatureScheme::kShingles, 5, 2};
  const auto pa = phrase_hashes(a, shingles), pb = phrase_hashes(b, shingles);
  std::vector<std::uint64_t> common;
  std::set_intersection(pa.begin(), pa.end(), pb.begin(), pb.end(), std::back_inserter(common));
  const double jaccard = static_cast<double>(common.size()) /
                         static_cast<double>(pa.size() + pb.size() - common.size());
  EXPECT_GT(jaccard, 0.5) << normalize_text(b);
}

TEST(Fingerprint, EqualNormalizedTextsHashEqual) {
  EXPECT_EQ(content_hash(normalize_text("Hello, World")),
            content_hash(normalize_text("hello world")));
  EXPECT_NE(content_hash("hello world"), content_hash("hello worlds"));
  EXPECT_EQ(content_hash("").hex().size(), 32u);
}

Fingerprint fp(std::string_view text) { return make_fingerprint(text, {}); }

// A text of `n` distinct sentences, deterministic.
std::string article(int n, int seed = 0) {
  static const char* kWords[] = {"river",  "council", "bridge", "vote",   "mayor", "spring",
                                 "detour", "estate",  "banks",  "debate", "years", "plan"};
  std::string out;
  for (int i = 0; i < n; ++i) {
    for (int w = 0; w < 9; ++w) {
      out += kWords[(i * 7 + w * 5 + seed * 3 + (i * w) % 11) % 12];
      out += std::to_string((i + seed * 100) % 1000);
      out += ' ';
    }
    out += ". ";
  }
  return out;
}

TEST(Signature, ShinglesAndSpotSigs) {
  SignatureOptions shingles{SignatureScheme::kShingles, 5, 2};
  EXPECT_EQ(phrase_hashes("a b c d e f", shingles).size(), 2u);  // two 5-word shingles
  EXPECT_EQ(phrase_hashes("a b", shingles).size(), 1u);          // shorter than one phrase
  EXPECT_TRUE(phrase_hashes("", shingles).empty());
  SignatureOptions spot{SignatureScheme::kSpotSigs, 5, 2};
  // "the" and "was" are antecedents; "of" is skipped as a stopword.
  EXPECT_EQ(phrase_hashes("the mayor of town was happy today", spot).size(), 2u);
}

TEST(TermStats, CountsDocumentsOverTheWindowAndForgetsOldSlices) {
  TermStats stats(800, 8, 10);  // slices of 100 s
  const std::uint64_t common = 11, rare = 22;
  for (int i = 0; i < 10; ++i) stats.add({common}, i * 10);
  stats.add({common, rare}, 150);
  stats.add({common, common}, 160);  // callers pass distinct terms; a repeat counts again
  EXPECT_EQ(stats.documents(), 12u);
  EXPECT_EQ(stats.df(rare), 1u);
  EXPECT_EQ(stats.df(common), 13u);
  EXPECT_LT(stats.idf(common), 0.1);
  EXPECT_GT(stats.idf(rare), 1.5);
  EXPECT_EQ(stats.df(33), 0u);
  // At 850 s the window reaches back to 50 s: the first slice (0-99 s) is gone (slices leave
  // whole, so the window is up to one slice shorter), the second (100-199 s) stays.
  stats.add({rare}, 850);
  EXPECT_EQ(stats.documents(), 3u);
  EXPECT_EQ(stats.df(common), 3u);  // 150 s once, 160 s twice
  EXPECT_EQ(stats.df(rare), 2u);
  // Far later only the newest slice counts; a document older than the window is not counted.
  stats.add({rare}, 5000);
  stats.add({common}, 100);
  EXPECT_EQ(stats.documents(), 1u);
  EXPECT_EQ(stats.df(common), 0u);
}

TEST(TermStats, ASliceLeavingTheWindowTakesOnlyItsOwnCounts) {
  TermStats stats(800, 8, 10);  // slices of 100 s
  stats.add({11}, 0);           // epoch 0
  stats.add({11}, 750);         // epoch 7
  stats.add({12}, 950);         // epoch 9: epochs 0 and 1 have left; epoch 7 has not
  EXPECT_EQ(stats.df(11), 1u);
  EXPECT_EQ(stats.df(12), 1u);
  EXPECT_EQ(stats.documents(), 2u);
}

TEST(Signature, WeightedShinglesFollowDocumentFrequency) {
  TermStats stats;
  // "the" opens shingles in every document, "zephyr" in none.
  for (int i = 0; i < 50; ++i) {
    stats.add(term_hashes("the cat sat on the mat number " + std::to_string(i)), i);
  }
  const SignatureOptions options{SignatureScheme::kWeighted, 3, 2};
  // "the a b": weight 0; "zephyr a b": weight round(ln 51) = 4.
  EXPECT_TRUE(weighted_phrase_hashes("the a b", options, stats).empty());
  EXPECT_EQ(weighted_phrase_hashes("zephyr a b", options, stats).size(), 4u);
  // The weighted Jaccard of texts that share their rare-word shingles is high even when the
  // common-word shingles differ.
  const std::string a = "zephyr winds blow the kites over the hills and the sea";
  const std::string b = "zephyr winds blow the boats over the bay and the sea";
  std::vector<std::uint64_t> terms;
  const Fingerprint fa = make_fingerprint(a, options, &stats, &terms);
  EXPECT_EQ(terms, term_hashes(normalize_text(a)));
  const Fingerprint fb = make_fingerprint(b, options, &stats);
  EXPECT_GT(fa.phrases, 0u);
  EXPECT_GT(estimate_jaccard(fa.sketch, fb.sketch), 0.2);
  // The first article of a stream (no statistics yet) is weighted too, so a copy that comes
  // next is comparable with it.
  TermStats fresh;
  const std::string first = article(120, 7);
  std::vector<std::uint64_t> first_terms;
  const Fingerprint f1 = make_fingerprint(first, options, &fresh, &first_terms);
  EXPECT_GT(f1.phrases, weighted_phrase_hashes(first, options, TermStats()).size() / 2);
  fresh.add(first_terms, 0);
  const Fingerprint f2 = make_fingerprint(first + " One more line.", options, &fresh);
  EXPECT_GT(estimate_jaccard(f1.sketch, f2.sketch), 0.6);
  // Without statistics the weighted scheme is plain shingles.
  EXPECT_EQ(make_fingerprint(a, options).phrases,
            phrase_hashes(a, {SignatureScheme::kShingles, 3, 2}).size());
}

// Shingles made ahead (on another thread) give what the weighted scheme makes of the text,
// whatever the text's length: the phrases, the terms and the fingerprint.
TEST(Signature, ShinglesMadeAheadGiveTheWeightedFingerprintOfTheText) {
  TermStats stats;
  for (int i = 0; i < 30; ++i) stats.add(term_hashes(normalize_text(article(40, i))), i);
  const SignatureOptions options{SignatureScheme::kWeighted, 7, 2};
  for (const std::string& text :
       {std::string(), std::string("two words"), std::string("the the the"), article(5, 3),
        article(120, 9), article(40, 2) + " " + article(40, 2)}) {
    const std::string normalized = normalize_text(text);
    const Shingles shingles = make_shingles(normalized, options);
    std::vector<std::uint64_t> terms;
    EXPECT_EQ(weighted_phrase_hashes(shingles, stats),
              weighted_phrase_hashes(normalized, options, stats, &terms));
    EXPECT_EQ(shingles.terms, terms);
    EXPECT_EQ(plain_phrase_hashes(shingles), phrase_hashes_of_normalized(normalized, options));
    const TermStats none;  // every weight the same: as plain shingles
    for (const TermStats* s : {static_cast<const TermStats*>(&stats), &none}) {
      const Fingerprint ahead = fingerprint_of_shingles(normalized, shingles, *s);
      const Fingerprint direct = make_fingerprint(text, options, s);
      EXPECT_EQ(ahead.exact.hex(), direct.exact.hex());
      EXPECT_EQ(ahead.sketch, direct.sketch);
      EXPECT_EQ(ahead.phrases, direct.phrases);
    }
  }
}

TEST(Signature, SentencesAndSimHash) {
  SignatureOptions sentences{SignatureScheme::kSentences, 5, 2};
  // Two sentences of four or more words; "Short one." is too short to count.
  EXPECT_EQ(
      phrase_hashes("The first sentence is here. Short one.\nAnd the second one too!", sentences)
          .size(),
      2u);
  EXPECT_EQ(phrase_hashes("The first sentence is here.", sentences),
            phrase_hashes("THE FIRST sentence, is here!", sentences));
  std::vector<std::uint64_t> a;
  for (std::uint64_t i = 0; i < 200; ++i) a.push_back(i * 0x9E3779B97F4A7C15ULL);
  auto b = a;
  b[0] ^= 1;  // one phrase of 200 differs
  EXPECT_LE(std::popcount(simhash(a) ^ simhash(b)), 3);
  std::vector<std::uint64_t> c;
  for (std::uint64_t i = 1000; i < 1200; ++i) c.push_back(i * 0x9E3779B97F4A7C15ULL);
  EXPECT_GT(std::popcount(simhash(a) ^ simhash(c)), 16);
}

TEST(Window, SimHashSchemeFindsNearIdenticalCopies) {
  WindowOptions options;
  options.simhash = true;
  DedupWindow w(options);
  SignatureOptions s{SignatureScheme::kSimHash, 5, 2};
  const std::string original = article(40);
  std::string edited = original;
  edited.replace(edited.find("river"), 5, "creek");
  EXPECT_EQ(w.observe("a", make_fingerprint(original, s), 0).kind, DupKind::kUnique);
  const Verdict v = w.observe("b", make_fingerprint(edited, s), 1);
  EXPECT_EQ(v.kind, DupKind::kNear);
  EXPECT_EQ(v.of, "a");
  EXPECT_EQ(w.observe("c", make_fingerprint(article(40, 5), s), 2).kind, DupKind::kUnique);
  // The SimHash kept in the slot's sketch survives a save and a load, and leaves the bands when
  // its article leaves the window.
  internal::Writer out;
  w.save(out);
  const std::string bytes = out.take();
  DedupWindow loaded(options);
  internal::Reader in(bytes, bytes.size());
  ASSERT_TRUE(loaded.load(in));
  std::string other_edit = original;
  other_edit.replace(other_edit.find("river"), 5, "brook");
  EXPECT_EQ(loaded.observe("d", make_fingerprint(other_edit, s), 3).kind, DupKind::kNear);
  options.max_articles = 1;
  DedupWindow one(options);
  one.observe("a", make_fingerprint(original, s), 0);
  one.observe("c", make_fingerprint(article(40, 5), s), 1);  // "a" leaves
  EXPECT_EQ(one.observe("b", make_fingerprint(edited, s), 2).kind, DupKind::kUnique);
}

TEST(Signature, SketchEstimatesJaccard) {
  std::vector<std::uint64_t> a, b;
  for (std::uint64_t i = 0; i < 1000; ++i) a.push_back(i * 2654435761u);
  for (std::uint64_t i = 500; i < 1500; ++i) b.push_back(i * 2654435761u);  // J = 500/1500
  const double j = estimate_jaccard(minhash_sketch(a), minhash_sketch(b));
  EXPECT_NEAR(j, 1.0 / 3, 0.15);
  EXPECT_EQ(estimate_jaccard(minhash_sketch(a), minhash_sketch(a)), 1.0);
  EXPECT_NEAR(estimate_containment(0.2, 100, 500), 1.0, 1e-9);  // 100 inside 500: J = 0.2
}

TEST(Window, ExactDuplicatePointsAtTheOriginal) {
  DedupWindow w;
  const auto h = fp("same text");
  EXPECT_EQ(w.observe("a", h, 100).kind, DupKind::kUnique);
  const Verdict v = w.observe("b", h, 200);
  EXPECT_EQ(v.kind, DupKind::kExact);
  EXPECT_EQ(v.of, "a");
  EXPECT_DOUBLE_EQ(v.similarity, 1.0);
  EXPECT_EQ(w.observe("c", h, 300).of, "a");
  EXPECT_EQ(w.observe("d", fp("other"), 300).kind, DupKind::kUnique);
}

TEST(Window, ReplayedIdRepeatsItsVerdict) {
  DedupWindow w;
  const auto h = fp("same text");
  w.observe("a", h, 100);
  w.observe("b", h, 200);
  EXPECT_EQ(w.observe("a", h, 100).kind, DupKind::kUnique);
  EXPECT_EQ(w.observe("b", h, 200).of, "a");
  EXPECT_EQ(w.size(), 2u);
}

TEST(Window, AForgottenArticleIsFoundByNoLaterOne) {
  DedupWindow w({.window_seconds = 3600});
  w.track_left();
  const auto h = fp("same text");
  w.observe("a", h, 100);
  w.observe("b", h, 200);  // exact of a
  w.observe("x", fp("other"), 150);
  EXPECT_TRUE(w.forget("a"));
  EXPECT_FALSE(w.forget("a"));
  EXPECT_FALSE(w.contains("a"));
  EXPECT_EQ(w.size(), 2u);
  EXPECT_TRUE(w.take_left().empty());  // it did not leave: it was never judged
  // The next copy finds b, the copy still held, and nothing finds a.
  EXPECT_EQ(w.observe("c", h, 300).of, "b");
  // Expiry goes on in time order over the entries left (x, then b and c).
  w.observe("y", fp("later"), 3600 + 160);
  EXPECT_FALSE(w.contains("x"));
  EXPECT_TRUE(w.contains("b"));
  w.observe("z", fp("latest"), 3600 + 301);
  EXPECT_FALSE(w.contains("b"));
  EXPECT_FALSE(w.contains("c"));
  EXPECT_EQ(w.take_left(), (std::vector<std::string>{"x", "b", "c"}));
}

TEST(Window, EntriesExpireBehindTheWatermark) {
  DedupWindow w({.window_seconds = 3600});
  const auto h = fp("text");
  w.observe("a", h, 0);
  w.observe("x", fp("other"), 3600);  // a is exactly at the horizon: kept
  EXPECT_EQ(w.observe("b", h, 3600).of, "a");
  w.observe("y", fp("later"), 3601 + 3600);  // a, b and x fall out
  EXPECT_EQ(w.size(), 1u);
  EXPECT_EQ(w.observe("c", h, 7300).kind, DupKind::kUnique);
}

TEST(Window, MemoryEstimateGrowsWithArticlesAndShrinksBackAfterExpiry) {
  DedupWindow w({.window_seconds = 100});
  const std::size_t empty = w.memory_bytes();
  for (int i = 0; i < 1000; ++i) {
    w.observe("a-rather-long-article-id-" + std::to_string(i), fp("text " + std::to_string(i)), 0);
  }
  const std::size_t full = w.memory_bytes();
  EXPECT_GT(full, empty + 1000 * (sizeof(Fingerprint) + 2 * 26));
  EXPECT_LT(full, empty + 1000 * 2048);
  w.observe("late", fp("late text"), 1000);  // everything else expires; capacity stays
  EXPECT_EQ(w.size(), 1u);
  EXPECT_LT(w.memory_bytes(), full);
}

TEST(Window, OriginalExpiringHandsOverToTheNextCopy) {
  DedupWindow w({.window_seconds = 100});
  const auto h = fp("text");
  w.observe("a", h, 0);
  w.observe("b", h, 90);
  const Verdict v = w.observe("c", h, 150);  // a expired (0 < 150-100), b is still there
  EXPECT_EQ(v.kind, DupKind::kExact);
  EXPECT_EQ(v.of, "b");
}

TEST(Window, TheBandsHoldOneCopyOfATextAndHandItOnWhenItLeaves) {
  // Exact copies share one place in the bands (the oldest's); a near copy still finds each of
  // them, the oldest of the best first, and the next copy when the oldest leaves, also after a
  // save and a load.
  DedupWindow w({.window_seconds = 100});
  const std::string original = article(30);
  std::string edited = original;
  edited.replace(edited.find("river"), 5, "creek");
  w.observe("p", fp(original), 80);
  w.observe("q", fp(original), 10);  // older, but a later copy in the chain
  w.observe("r", fp(original), 60);
  EXPECT_EQ(w.judge(fp(edited)).of, "q");  // the earliest of equal scores
  internal::Writer out;
  w.save(out);
  const std::string bytes = out.take();
  for (const bool loaded : {false, true}) {
    SCOPED_TRACE(loaded ? "loaded" : "as saved");
    DedupWindow v({.window_seconds = 100});
    if (loaded) {
      internal::Reader in(bytes, bytes.size());
      ASSERT_TRUE(v.load(in));
    } else {
      v = w;
    }
    v.advance(115);  // q leaves (10 < 15), the oldest copy p stays in the bands
    EXPECT_EQ(v.judge(fp(edited)).of, "r");
    v.advance(175);  // r leaves (60 < 75)
    EXPECT_EQ(v.judge(fp(edited)).of, "p");
    v.advance(185);  // p leaves: nothing is left to find
    EXPECT_EQ(v.judge(fp(edited)).kind, DupKind::kUnique);
    EXPECT_EQ(v.size(), 0u);
  }
  // The oldest copy leaving first hands the bands to the next one.
  DedupWindow x({.window_seconds = 100});
  x.observe("a", fp(original), 0);
  x.observe("b", fp(original), 50);
  x.advance(120);  // a leaves
  EXPECT_EQ(x.judge(fp(edited)).of, "b");
}

// Restored from the records alone, a window makes its LSH bands once at the end
// (`defer_bands`): articles that left on the way (by time and by the bound), copies whose oldest
// left, all judge later articles as a window restored one article at a time; and one already
// holding articles does not defer.
TEST(Window, BandsMadeAtTheEndOfARestoreJudgeAsOnesMadeOneAtATime) {
  const WindowOptions options{.window_seconds = 100, .max_articles = 40};
  std::vector<std::pair<std::string, Fingerprint>> texts;
  for (int i = 0; i < 30; ++i) texts.emplace_back("t" + std::to_string(i), fp(article(20, i)));
  auto edited = [&](int i) {
    std::string t = article(20, i);
    t.replace(t.find(' '), 1, " creek ");
    return fp(t);
  };
  DedupWindow one(options), deferred(options);
  deferred.defer_bands();
  for (int i = 0; i < 120; ++i) {
    // Every text three times (copies), in time order with a step that lets the oldest leave.
    const auto& [name, f] = texts[static_cast<std::size_t>(i % 30)];
    const std::string id = name + "-" + std::to_string(i);
    const Verdict v =
        i < 30 ? Verdict{} : Verdict{DupKind::kExact, name + "-" + std::to_string(i % 30), 1};
    one.restore(id, f, i * 2, v);
    deferred.restore(id, f, i * 2, v);
  }
  EXPECT_EQ(deferred.size(), one.size());
  EXPECT_EQ(deferred.size(), 40u);  // the bound, and time, made some leave
  for (int i = 0; i < 30; ++i) {
    const Verdict a = one.judge(edited(i));
    const Verdict b = deferred.judge(edited(i));  // makes the bands first
    EXPECT_EQ(a.kind, b.kind) << i;
    EXPECT_EQ(a.of, b.of) << i;
    EXPECT_EQ(a.similarity, b.similarity) << i;
  }
  // Later articles find the same (a copy, then a near copy of it).
  for (DedupWindow* w : {&one, &deferred}) {
    EXPECT_EQ(w->observe("later", fp(article(20, 29)), 240).kind, DupKind::kExact);
  }
  EXPECT_EQ(one.judge(edited(29)).of, deferred.judge(edited(29)).of);
  // A window that holds articles goes on one at a time.
  DedupWindow held(options);
  held.restore("x", texts[0].second, 0, {});
  held.defer_bands();
  held.restore("y", texts[1].second, 1, {});
  EXPECT_EQ(held.judge(edited(1)).of, "y");
}

// A slot's id that is no short hex lives in a heap block whose pointer the slot keeps at an
// aligned offset: LeakSanitizer (the asan preset) finds blocks through aligned words only, and a
// window held to the end of the process (as the fuzz targets hold their pipeline) had its ids
// reported as leaks when the pointer sat unaligned.
TEST(Window, AnIdOnTheHeapStaysReachableFromItsSlot) {
  static DedupWindow* const held = new DedupWindow();
  held->observe("not-hex: id 1", fp("some text"), 0);
  held->observe("not-hex: id 2", fp("some text"), 1);
  EXPECT_EQ(held->judge(fp("some text")).of, "not-hex: id 1");
}

TEST(Window, EditedCopyIsNearAndTruncatedCopyIsContained) {
  DedupWindow w;
  const std::string original = article(30);
  EXPECT_EQ(w.observe("orig", fp(original), 0).kind, DupKind::kUnique);
  // A few words changed in two sentences.
  std::string edited = original;
  edited.replace(edited.find("river"), 5, "creek");
  edited.replace(edited.rfind("mayor"), 5, "chief");
  const Verdict near = w.observe("edited", fp(edited), 10);
  EXPECT_EQ(near.kind, DupKind::kNear);
  EXPECT_EQ(near.of, "orig");
  EXPECT_GT(near.similarity, 0.6);
  // The first half only.
  const Verdict cut = w.observe("cut", fp(original.substr(0, original.size() / 2)), 20);
  EXPECT_EQ(cut.kind, DupKind::kContained);
  EXPECT_EQ(cut.of, "orig");
  // A different article on the same words is not a duplicate.
  EXPECT_EQ(w.observe("other", fp(article(30, 7)), 30).kind, DupKind::kUnique);
}

TEST(Stories, DifferentArticlesOnOneEventShareAStory) {
  StoryBook book;
  const Verdict unique;
  book.assign({"a", "u1", "x.test", DupKind::kUnique, ""},
              "Doobie Brothers announce 50th anniversary tour", unique, 0,
              "The Doobie Brothers will tour North America next year with Michael McDonald.");
  book.assign({"z", "u9", "z.test", DupKind::kUnique, ""}, "Council approves river bridge", unique,
              10, "The town council voted to approve a new bridge across the river.");
  const Story& s =
      book.assign({"b", "u2", "y.test", DupKind::kUnique, ""},
                  "Doobie Brothers reunite with Michael McDonald for tour", unique, 3600,
                  "Michael McDonald rejoins the Doobie Brothers for their anniversary tour.");
  EXPECT_EQ(s.story_id, "a");
  EXPECT_EQ(book.story_of("z"), "z");
  // Days later the same words start a new story (time decay).
  const Story& late =
      book.assign({"c", "u3", "w.test", DupKind::kUnique, ""}, "Doobie Brothers tour", unique,
                  40 * 86400, "The Doobie Brothers anniversary tour with Michael McDonald.");
  EXPECT_EQ(late.story_id, "c");
  // A restored article goes where it was.
  EXPECT_EQ(
      book.assign({"d", "u4", "v.test", DupKind::kUnique, ""}, "x", unique, 40 * 86400, "", "z")
          .story_id,
      "z");
}

TEST(Stories, TimeCountsFromAStorysLatestReportNotItsLatestCopy) {
  // Copies of a report syndicated a day and a half later keep its story updated, but the event
  // is no newer: a report arriving then, here in the same words, is weighed against the
  // report's time, as the model is trained (the time between two reports), and 37 hours on at
  // a 12-hour decay begins a story of its own.
  StoryOptions o;
  o.decay_hours = 12;
  const Verdict unique;
  const std::string text =
      "Riverton council approved the Hallam bridge across the Wend after mayor Ortega broke the "
      "tie; works on the Hallam bridge begin in spring.";
  const auto place = [&](StoryBook& book, std::int64_t copies_at) {
    book.assign({"a", "u1", "x.test", DupKind::kUnique, "en"}, "Riverton approves Hallam bridge",
                unique, 0, text);
    for (int k = 0; k < 3; ++k) {
      const std::string id = "copy" + std::to_string(k);
      book.assign({id, "u-" + id, "y.test", DupKind::kNear, "en"},
                  "UPDATE 1-Riverton approves Hallam bridge", {DupKind::kNear, "a", 0.9},
                  copies_at + k * 600, text);
    }
    return book
        .assign({"b", "u2", "z.test", DupKind::kUnique, "en"}, "Hallam bridge works begin", unique,
                copies_at + 3600, text)
        .story_id;
  };
  StoryBook early(o);
  EXPECT_EQ(place(early, 2 * 3600), "a");  // copies and the report three hours after it
  StoryBook late(o);
  const std::string b = place(late, 36 * 3600);
  EXPECT_EQ(b, "b");
  const Story* a = late.find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->last_report, 0);
  EXPECT_EQ(a->last_updated, 36 * 3600 + 1200);
  // A saved book keeps the time: loaded, it places the next article as the one saved.
  internal::Writer out;
  late.save(out);
  const std::string bytes = out.take();
  StoryBook loaded(o);
  internal::Reader in(bytes, bytes.size());
  ASSERT_TRUE(loaded.load(in));
  ASSERT_NE(loaded.find("b"), nullptr);
  EXPECT_EQ(loaded.find("b")->last_report, 37 * 3600);
  for (StoryBook* book : {&late, &loaded}) {
    EXPECT_EQ(book->assign({"c", "u3", "w.test", DupKind::kUnique, "en"},
                           "Riverton approves Hallam bridge", unique, 36 * 3600 + 7200, text)
                  .story_id,
              "b");
  }
}

// A story's card is its representative's image and description: a later report that takes the
// representative's place brings its own, a copy never does, and a saved book keeps them.
TEST(Stories, TheCardIsTheRepresentatives) {
  const Verdict unique{DupKind::kUnique, "", 0};
  const std::string text =
      "Riverton council voted on Tuesday to approve the Hallam bridge, ending a two-year fight "
      "over its cost. The bridge will link the old town with the harbour district.";
  StoryBook book;
  const Story& first = book.assign({"a", "u1", "x.test", DupKind::kUnique, "en"},
                                   "Riverton approves Hallam bridge", unique, 0, text, {},
                                   {"https://x.test/a.jpg", "The council approved the bridge."});
  EXPECT_EQ(first.representative, "a");
  EXPECT_EQ(first.image_url, "https://x.test/a.jpg");
  EXPECT_EQ(first.description, "The council approved the bridge.");
  // A copy joins and changes nothing of the card.
  const Story& copied =
      book.assign({"c", "u2", "y.test", DupKind::kExact, "en"}, "Riverton approves Hallam bridge",
                  {DupKind::kExact, "a", 1.0}, 60, text, {}, {"https://y.test/c.jpg", "Copy."});
  EXPECT_EQ(copied.image_url, "https://x.test/a.jpg");
  internal::Writer out;
  book.save(out);
  const std::string bytes = out.take();
  StoryBook loaded;
  internal::Reader in(bytes, bytes.size());
  ASSERT_TRUE(loaded.load(in));
  const Story* kept = loaded.find("a");
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(kept->image_url, "https://x.test/a.jpg");
  EXPECT_EQ(kept->description, "The council approved the bridge.");
}

TEST(Stories, TermsAreStemsOfTitleAndText) {
  // Inflections meet in one term (a word's first five characters); numbers and words of
  // scripts written without spaces stay whole; stopwords and short words count nothing.
  const StoryBook book;
  const auto terms = book.terms_of("Wahlen in Sachsen", "Die Wahl der Wahlkommission 2026.");
  EXPECT_TRUE(terms.count("wahle"));
  EXPECT_TRUE(terms.count("wahlk"));
  EXPECT_TRUE(terms.count("sachs"));
  EXPECT_TRUE(terms.count("2026"));
  EXPECT_FALSE(terms.count("die"));
  EXPECT_FALSE(terms.count("in"));
  const auto counted = book.terms_of("Elections", "Elections, elections and an election.");
  ASSERT_TRUE(counted.count("elect"));
  EXPECT_EQ(counted.size(), 1u);
  // The title twice, the text thrice, all of it in the lead (twice).
  EXPECT_NEAR(counted.at("elect"), 1 + std::log(2.0 + 3.0 * 2), 1e-5);
  StoryOptions whole;
  whole.stem_chars = 0;
  EXPECT_TRUE(StoryBook(whole).terms_of("Elections", "").count("elections"));
  // Chinese and Thai: ICU's words, none cut to five characters (Thai words are longer).
  bool longer_than_a_stem = false;
  for (const std::string text :
       {"气象部门发布暴雨预警信号，华南地区出现强降雨天气", "กรุงเทพมหานครประกาศเตือนภัยน้ำท่วม"}) {
    const std::string words = " " + normalize_text(text) + " ";
    const auto unspaced = book.terms_of("", text);
    ASSERT_FALSE(unspaced.empty());
    for (const auto& [t, w] : unspaced) {
      EXPECT_NE(words.find(" " + t + " "), std::string::npos) << t;
      longer_than_a_stem = longer_than_a_stem || t.size() > 5 * 3;
    }
  }
  EXPECT_TRUE(longer_than_a_stem);
}

TEST(Stories, DocumentFrequenciesAreCountedPerLanguage) {
  // "yang" is in every Indonesian article: common in Indonesian, however rare in the whole mix
  // of languages. An Indonesian article keeping one term keeps its rare word, not "yang".
  StoryOptions o;
  o.terms_per_article = 1;
  StoryBook book(o);
  for (int i = 0; i < 20; ++i) {
    book.count_terms({{"council" + std::to_string(i), 1.0f}, {"bridge", 1.0f}}, i, "en");
  }
  for (int i = 0; i < 5; ++i) {
    book.count_terms({{"yang", 1.0f}, {"kata" + std::to_string(i), 1.0f}}, i, "id");
  }
  const auto kept = book.terms_of("", "yang yang yang kucingku", {}, "id");
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept.begin()->first, "kucin");
  // In English "yang" is as rare as any unseen word: its count decides.
  EXPECT_EQ(book.terms_of("", "yang yang yang kucingku", {}, "en").begin()->first, "yang");
}

TEST(Stories, AStoryKeepsToOneLanguage) {
  // A German and an English report share the names and the numbers; by default the German one
  // begins a story of its own. Unknown languages and the two Chinese scripts group as before.
  const Verdict unique;
  for (const bool within : {true, false}) {
    StoryOptions options;
    options.within_language = within;
    StoryBook book(options);
    book.assign({"en1", "u1", "x.test", DupKind::kUnique, "en"},
                "Doobie Brothers announce 50th anniversary tour with Michael McDonald", unique, 0,
                "The Doobie Brothers will tour North America in 2026 with Michael McDonald.");
    const Story& de = book.assign(
        {"de1", "u2", "y.test", DupKind::kUnique, "de"},
        "Doobie Brothers: 50th anniversary Tour mit Michael McDonald", unique, 600,
        "Die Doobie Brothers gehen 2026 mit Michael McDonald auf Tour durch Nordamerika.");
    EXPECT_EQ(de.story_id, within ? "de1" : "en1");
    EXPECT_EQ(de.language, within ? "de" : "en");
    const Story& unknown =
        book.assign({"x1", "u3", "z.test", DupKind::kUnique, ""},
                    "Doobie Brothers anniversary tour with Michael McDonald", unique, 900,
                    "The Doobie Brothers tour with Michael McDonald in 2026.");
    EXPECT_EQ(unknown.story_id, "en1");
  }
  StoryBook book;
  book.assign({"s", "u1", "x.test", DupKind::kUnique, "zh-Hans"}, "华南地区 出现 强降雨 天气",
              unique, 0, "气象部门 发布 暴雨 预警");
  EXPECT_EQ(book.assign({"t", "u2", "y.test", DupKind::kUnique, "zh-Hant"},
                        "华南地区 出现 强降雨 天气", unique, 60, "气象部门 发布 暴雨 预警")
                .story_id,
            "s");
}

TEST(Stories, ReportsInOtherLanguagesAreLinkedAsRelatedStoriesWhenAsked) {
  // An English and a German report share names and numbers; a German report of another event
  // shares none. With the links on, each of the first two lists the other, the third neither;
  // off (the default), no story lists any, and none moves an article between stories.
  const Verdict unique;
  for (const bool on : {false, true}) {
    StoryOptions options;
    options.related_across_languages = on;
    options.related_threshold = 0.1;
    StoryBook book(options);
    const Story en = book.assign(
        {"en1", "u1", "x.test", DupKind::kUnique, "en"},
        "Doobie Brothers announce 50th anniversary tour with Michael McDonald", unique, 0,
        "The Doobie Brothers will tour North America in 2026 with Michael McDonald.");
    EXPECT_TRUE(en.related_stories.empty());  // nothing in another language yet
    const Story other = book.assign({"de2", "u3", "z.test", DupKind::kUnique, "de"},
                                    "Stadtrat beschliesst neuen Haushalt", unique, 300,
                                    "Der Stadtrat von Kiel hat am Dienstag den Haushalt fuer "
                                    "Schulen und Strassen beschlossen.");
    const Story de = book.assign(
        {"de1", "u2", "y.test", DupKind::kUnique, "de"},
        "Doobie Brothers: 50th anniversary Tour mit Michael McDonald", unique, 600,
        "Die Doobie Brothers gehen 2026 mit Michael McDonald auf Tour durch Nordamerika.");
    EXPECT_EQ(de.story_id, "de1");
    EXPECT_EQ(other.story_id, "de2");
    EXPECT_TRUE(other.related_stories.empty());
    if (!on) {
      EXPECT_TRUE(de.related_stories.empty());
      continue;
    }
    EXPECT_EQ(de.related_stories, std::vector<std::string>{"en1"});
    // The English story lists the German one from its next update on.
    const Story again = book.assign({"en2", "u4", "w.test", DupKind::kUnique, "en"},
                                    "Doobie Brothers add dates to the 2026 tour", unique, 900,
                                    "Michael McDonald joins the Doobie Brothers on the 2026 tour.");
    EXPECT_EQ(again.story_id, "en1");
    EXPECT_EQ(again.related_stories, std::vector<std::string>{"de1"});
    // A restored article (its story given) searches no links: they come with the next update.
    StoryBook restored(options);
    restored.assign({"en1", "u1", "x.test", DupKind::kUnique, "en"}, en.title, unique, 0,
                    "The Doobie Brothers will tour North America in 2026 with Michael McDonald.",
                    "en1");
    EXPECT_TRUE(restored
                    .assign({"de1", "u2", "y.test", DupKind::kUnique, "de"}, de.title, unique, 600,
                            "Die Doobie Brothers gehen 2026 mit Michael McDonald auf Tour durch "
                            "Nordamerika.",
                            "de1")
                    .related_stories.empty());
  }
}

TEST(Boilerplate, ParagraphsRepeatedOnASitesOtherPagesAreDropped) {
  BoilerplateFilter f;
  const std::string furniture = "Trending now\n\nSubscribe to our newsletter";
  EXPECT_EQ(f.filter("a.test", "https://a.test/1", "Story one.\n\n" + furniture, 0),
            "Story one.\n\n" + furniture);
  EXPECT_EQ(f.filter("a.test", "https://a.test/2", "Story two.\n\n" + furniture, 1),
            "Story two.\n\n" + furniture);
  // Seen on two other pages of a.test: furniture now.
  EXPECT_EQ(f.filter("a.test", "https://a.test/3", "Story three.\n\n" + furniture, 2),
            "Story three.");
  // Another site, and a re-crawl of a page already counted, keep everything.
  EXPECT_EQ(f.filter("b.test", "https://b.test/1", "Story one.\n\n" + furniture, 3),
            "Story one.\n\n" + furniture);
  EXPECT_EQ(f.filter("", "urn:x", furniture, 4), furniture);
}

TEST(Boilerplate, APageThatIsAllFurnitureIsKnownByItsTitle) {
  // Extraction kept only a site's sidebar on several pages: they must not become exact copies
  // of each other, and a re-crawl of one of them must still match it.
  BoilerplateFilter f;
  const std::string sidebar = "Trending now\n\nThe koala rescued from the bushfire";
  for (int i = 0; i < 3; ++i) {
    f.filter("a.test", "https://a.test/" + std::to_string(i),
             "Story " + std::to_string(i) + " text.\n\n" + sidebar, i);
  }
  EXPECT_EQ(f.filter("a.test", "https://a.test/x", sidebar, 10, " Bridge vote delayed "),
            "Bridge vote delayed");
  EXPECT_EQ(f.filter("a.test", "https://a.test/y", sidebar, 11, "Storm closes the harbour"),
            "Storm closes the harbour");
  EXPECT_EQ(f.filter("a.test", "https://a.test/x", sidebar, 12, "Bridge vote delayed"),
            "Bridge vote delayed");
  EXPECT_EQ(f.filter("a.test", "https://a.test/z", sidebar, 13, "  "), sidebar);
}

TEST(Boilerplate, TeasersCutMidWordAreNotArticleText) {
  EXPECT_TRUE(
      is_teaser("In the run-up to the event next month, the maker is running a big sale "
                "on the whole range, from the small one to the big one. The range is seei..."));
  EXPECT_TRUE(
      is_teaser("The most interesting mainstream laptop of the last twelve months is "
                "still the same one, dressed in leather, which can be a tablet or a tent m\u2026"));
  EXPECT_FALSE(is_teaser("He paused. \"And then...\""));  // short: a quote trailing off
  EXPECT_FALSE(
      is_teaser("The list of things the council still has to decide is long, and the "
                "mayor named only a few of them: the bridge, the ferry, the road ..."));
  EXPECT_FALSE(
      is_teaser("A plain paragraph of the article that ends the way sentences end, with "
                "a full stop and nothing else."));
  BoilerplateFilter f;
  const std::string teaser =
      "Deal alert: the most interesting mainstream laptop of the last twelve months is still on "
      "sale for a few more days at the big sto...";
  EXPECT_EQ(f.filter("a.test", "https://a.test/1", "Story one.\n\n" + teaser, 0), "Story one.");
}

// A page's paragraphs are made on any thread before judging: the text they normalize to must be
// the whole text's, and the filter on them must keep what it keeps on the text, with the
// normalized form of what it keeps, whatever the paragraphs hold.
TEST(Boilerplate, ParagraphsMadeAheadFilterAndNormalizeAsTheTextDoes) {
  const std::vector<std::string> texts = {
      "",
      "One paragraph, no break.",
      "\n\nLeading breaks.\n\n\nA triple break\n\nand a trailing one\n\n",
      "Caf\u00e9 cr\u00e8me.\n\n\u0301 a combining accent opens this paragraph.",
      "\u65b0\u534e\u793e\u5317\u4eac\u7535\n\nEnglish words after "
      "it.\n\n\u0e20\u0e32\u0e29\u0e32\u0e44\u0e17\u0e22",
      "Invalid \xC3 bytes \xFF here.\n\n\xE2\x80 and here.",
      "!!! ---\n\nOnly punctuation above.\n\n\u201cQuoted,\u201d she said.",
      "Menu\n\nStory text of the page.\n\nMenu",
  };
  for (const std::string& text : texts) {
    const PageParagraphs page("a.test", text);
    EXPECT_EQ(page.normalized(), normalize_text(text)) << text;
    EXPECT_TRUE(page.of("a.test", text));
    EXPECT_FALSE(page.of("b.test", text));
    EXPECT_FALSE(page.of("a.test", text + "x"));
  }
  EXPECT_FALSE(PageParagraphs().of("", ""));
  // Two filters fed the same pages, one with the text and one with the paragraphs made ahead.
  for (const std::string site : {"a.test", ""}) {
    BoilerplateFilter by_text, by_paragraphs;
    for (int i = 0; i < 12; ++i) {
      const std::string& text = texts[static_cast<std::size_t>(i) % texts.size()];
      const std::string url = "https://a.test/" + std::to_string(i % 5);
      const std::string title = i % 3 == 0 ? "" : "Title " + std::to_string(i);
      std::vector<std::uint64_t> keys_text, keys_paragraphs;
      std::string normalized;
      const std::string core = by_text.filter(site, url, text, i, title, &keys_text);
      EXPECT_EQ(by_paragraphs.filter(PageParagraphs(site, text), url, text, i, title,
                                     &keys_paragraphs, true, &normalized),
                core);
      EXPECT_EQ(keys_paragraphs, keys_text);
      EXPECT_EQ(normalized, normalize_text(core)) << core;
    }
  }
}

TEST(Boilerplate, ForgetsWhatTheWindowNoLongerHolds) {
  BoilerplateFilter f({.enabled = true, .min_other_pages = 2, .window_seconds = 100});
  for (int i = 0; i < 3; ++i) {
    f.filter("a.test", "https://a.test/" + std::to_string(i), "Menu\n\nStory " + std::to_string(i),
             i);
  }
  EXPECT_EQ(f.filter("a.test", "https://a.test/x", "Menu\n\nStory x", 10), "Story x");
  EXPECT_EQ(f.filter("a.test", "https://a.test/y", "Menu", 11), "Menu");  // all furniture, no title
  f.filter("b.test", "https://b.test/y", "Other", 1000);  // far later: a.test's entries expire
  EXPECT_EQ(f.filter("a.test", "https://a.test/z", "Menu\n\nStory z", 1000), "Menu\n\nStory z");
}

// Its flat table grows as pages come and shrinks when they leave the window; what it knows of
// a site's furniture survives each rebuild.
TEST(Boilerplate, TheTableShrinksWithTheWindowAndKeepsWhatItKnows) {
  BoilerplateFilter f({.enabled = true, .min_other_pages = 2, .window_seconds = 800});
  const std::size_t fixed = f.memory_bytes();  // the parts' headers
  auto page = [&f](int i) {
    const std::string n = std::to_string(i);
    return f.filter("a.test", "https://a.test/" + n,
                    "Menu\n\nFirst of " + n + "\n\nSecond of " + n + "\n\nThird of " + n, i);
  };
  for (int i = 0; i < 3; ++i) page(i);
  for (int i = 3; i < 5000; ++i)
    EXPECT_EQ(page(i), "First of " + std::to_string(i) + "\n\nSecond of " + std::to_string(i) +
                           "\n\nThird of " + std::to_string(i));
  // Three paragraphs of their own per page over the last 800-900 seconds, and the menu.
  EXPECT_LE(f.size(), 3u * 900 + 1);
  const std::size_t full = f.memory_bytes() - fixed;
  EXPECT_LE(full, 4000u * 20 * 3);
  // Later pages of another site only: a.test's entries all leave, and the table shrinks.
  for (int i = 0; i < 20; ++i) {
    f.filter("b.test", "https://b.test/" + std::to_string(i), "Elsewhere", 10000 + i * 200);
  }
  EXPECT_LE(f.size(), 5u);
  EXPECT_LT(f.memory_bytes() - fixed, full / 3);
  EXPECT_EQ(f.filter("a.test", "https://a.test/new", "Menu\n\nNews", 14000), "Menu\n\nNews");
}

// Bounded, it forgets the paragraphs seen longest ago, and stays bounded when every page has the
// same second (no oldest to tell apart).
TEST(Boilerplate, ABoundForgetsThoseSeenLongestAgo) {
  BoilerplateFilter f({.enabled = true, .min_other_pages = 2, .max_entries = 100});
  for (int i = 0; i < 1000; ++i) {
    f.filter("a.test", "https://a.test/" + std::to_string(i), "Menu\n\nStory " + std::to_string(i),
             i);
    ASSERT_LE(f.size(), 100u);
  }
  // The menu, seen on every page, is still furniture; an old page's paragraph is forgotten.
  EXPECT_EQ(f.filter("a.test", "https://a.test/x", "Menu\n\nStory x", 1000), "Story x");
  EXPECT_EQ(f.filter("a.test", "https://a.test/y", "Story 3\n\nMore", 1001), "Story 3\n\nMore");
  BoilerplateFilter same_second({.enabled = true, .min_other_pages = 2, .max_entries = 100});
  for (int i = 0; i < 1000; ++i) {
    same_second.filter("a.test", "https://a.test/" + std::to_string(i),
                       "Story " + std::to_string(i), 5);
    ASSERT_LE(same_second.size(), 100u);
  }
}

// The page count saturates below the highest bound a config allows, so a bound of 254 still
// works and a paragraph on more pages than the counter holds stays furniture.
TEST(Boilerplate, TheHighestBoundAndMorePagesThanTheCounterHolds) {
  BoilerplateFilter f({.enabled = true, .min_other_pages = 254});
  auto page = [&f](int i) {
    return f.filter("a.test", "https://a.test/" + std::to_string(i), "Menu\n\nStory", i, "T");
  };
  for (int i = 0; i < 254; ++i) ASSERT_EQ(page(i), "Menu\n\nStory") << i;
  for (int i = 254; i < 600; ++i) ASSERT_EQ(page(i), "T") << i;
}

// Strings in one block: empty ones (alone and among others), sizes past one varint byte, binary
// bytes, copies that own their block and moves that take it.
TEST(PackedStrings, GiveBackWhatTheyWereMadeOf) {
  const std::string big(300, 'x'), binary("a\0b\xFF", 4);
  internal::PackedStrings<3> none({"", "", ""});
  EXPECT_EQ(none.size_bytes(), 0u);
  EXPECT_EQ(none.heap_bytes(), 0u);
  EXPECT_EQ(none[2], "");
  internal::PackedStrings<3> some({"", big, binary});
  EXPECT_EQ(some[0], "");
  EXPECT_EQ(some[1], big);
  EXPECT_EQ(some[2], binary);
  EXPECT_EQ(some.size_bytes(), 1 + 2 + 300 + 1 + 4u);
  EXPECT_GE(some.heap_bytes(), some.size_bytes());
  internal::PackedStrings<3> copy = some;
  some = none;
  EXPECT_EQ(some[1], "");
  EXPECT_EQ(copy[1], big);
  EXPECT_EQ(copy[2], binary);
  internal::PackedStrings<3> moved = std::move(copy);
  EXPECT_EQ(moved[1], big);
  copy = moved;
  EXPECT_EQ(copy[2], binary);
  StoryMember m("id-1", big, "example.com", DupKind::kNear, "de");
  const StoryMember n = m;
  EXPECT_EQ(n.id(), "id-1");
  EXPECT_EQ(n.url(), big);
  EXPECT_EQ(n.source(), "example.com");
  EXPECT_EQ(n.kind(), DupKind::kNear);
  EXPECT_EQ(n.language(), "de");
  EXPECT_EQ(StoryMember().url(), "");
  // Ids of lowercase hex are kept two digits a byte, any others as they came.
  for (const std::string id : {"0123456789abcdef", "abc", "", "ABC", "id-1", "0a\xff"}) {
    const StoryMember member(id, "https://example.com/a", "example.com", DupKind::kExact, "fr");
    EXPECT_EQ(member.id(), id);
    EXPECT_EQ(StoryMember(member).url(), "https://example.com/a");
    EXPECT_EQ(member.language(), "fr");
  }
  // A URL on the source's host is kept without its beginning, and given back whole.
  for (const std::string url :
       {"https://www.example.com/a/b?c=d", "https://example.com/a", "http://www.example.com",
        "http://example.com.other.org/x", "https://news.example.com/a", "ftp://example.com/a",
        "HTTPS://example.com/a", "", "example.com/a"}) {
    EXPECT_EQ(StoryMember("id", url, "example.com").url(), url);
    EXPECT_EQ(StoryMember("id", url, "").url(), url);
  }
}

// Ids of up to 16 lowercase hex digits in place, any others in a block; copies and moves keep
// them, and `equals` tells them apart without a copy.
TEST(IdPair, GivesBackWhatItWasMadeOf) {
  const std::string hex16 = "0123456789abcdef", long_hex = "0123456789abcdef0";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {hex16, ""},     {hex16, "fedcba9876543210"},
      {"abc", "1"},    {"", ""},
      {"ABC", hex16},  {hex16, long_hex},
      {"id-1", ""},    {"g", "0"},
      {"0a0", "a0a0"}, {std::string("a\0b", 3), hex16}};
  for (const auto& [a, b] : cases) {
    SCOPED_TRACE(a + " / " + b);
    internal::IdPair p(a, b);
    EXPECT_EQ(p.get(0), a);
    EXPECT_EQ(p.get(1), b);
    EXPECT_TRUE(p.equals(0, a));
    EXPECT_TRUE(p.equals(1, b));
    EXPECT_FALSE(p.equals(0, a + "0"));
    EXPECT_FALSE(p.equals(1, "x" + b));
    if (!a.empty()) {
      std::string other = a;
      other.back() = other.back() == '0' ? '1' : '0';
      EXPECT_FALSE(p.equals(0, other));
    }
    const bool in_place = a.size() <= 16 && b.size() <= 16 &&
                          (a + b).find_first_not_of("0123456789abcdef") == std::string::npos;
    EXPECT_EQ(p.heap_bytes() == 0, in_place);
    internal::IdPair copy = p;
    internal::IdPair moved = std::move(p);
    p = copy;
    copy = internal::IdPair(hex16, "");
    EXPECT_EQ(moved.get(0), a);
    EXPECT_EQ(p.get(1), b);
    EXPECT_EQ(copy.get(0), hex16);
    moved = p;
    EXPECT_EQ(moved.get(1), b);
  }
}

// A slot list against a vector: in place up to two, on the heap past them, copies and moves on
// their own, the last of equal numbers taken out.
TEST(SlotList, HoldsWhatAVectorHolds) {
  internal::SlotList list;
  std::vector<std::uint32_t> model;
  auto same = [&](const internal::SlotList& l) {
    return std::vector<std::uint32_t>(l.begin(), l.end()) == model;
  };
  for (std::uint32_t v : {7u, 9u}) {
    list.push_back(v);
    model.push_back(v);
  }
  EXPECT_TRUE(same(list));
  EXPECT_EQ(list.heap_bytes(), 0u);
  for (std::uint32_t v = 0; v < 100; ++v) {
    list.push_back(v % 10);
    model.push_back(v % 10);
  }
  EXPECT_TRUE(same(list));
  EXPECT_GT(list.heap_bytes(), 0u);
  const internal::SlotList copy = list;
  list.remove_last(3);  // the 3 of 93 goes; the last number (9) takes its place
  model[95] = model.back();
  model.pop_back();
  EXPECT_TRUE(same(list));
  list.remove_last(12345);  // not held
  EXPECT_TRUE(same(list));
  internal::SlotList moved = std::move(list);
  EXPECT_TRUE(same(moved));
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(copy.size(), 102u);
  EXPECT_EQ(copy.back(), 9u);
  moved.assign(std::vector<std::uint32_t>{4});
  model = {4};
  EXPECT_TRUE(same(moved));
  EXPECT_EQ(moved.heap_bytes(), 0u);
  list = moved;
  list.push_back(5);
  list.push_back(6);
  model = {4, 5, 6};
  EXPECT_TRUE(same(list));
  list.clear();
  EXPECT_TRUE(list.empty());
}

// A multimap table (`SlotTable`) holds under each of `keys` the slots `model` does.
template <class Table>
void expect_holds(const Table& table, const std::multimap<std::uint32_t, std::uint32_t>& model,
                  const std::vector<std::uint32_t>& keys) {
  ASSERT_EQ(table.size(), model.size());
  for (const std::uint32_t key : keys) {
    std::vector<std::uint32_t> got, want;
    table.for_each(key, [&](std::uint32_t slot) { got.push_back(slot); });
    for (auto [it, end] = model.equal_range(key); it != end; ++it) want.push_back(it->second);
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    ASSERT_EQ(got, want) << "key " << key;
  }
}

// The LSH bands' table against a model multimap: keys over all 32 bits (every part), slots past
// 16 bits, one key with thousands of slots (a story copied thousands of times), erases of held
// and unheld pairs, parts that empty and give their entries back, and a save/load round trip.
// The story book's terms: a term is held while used, a number freed is given out again, and the
// table comes back from its bytes as it was (and not from bytes that name a slot it cannot have).
TEST(TermTable, HoldsTermsWhileUsedAndComesBackFromItsBytes) {
  internal::TermTable t;
  const auto bridge = t.intern("bridg");
  const auto vote = t.intern("vote");
  EXPECT_EQ(t.intern("bridg"), bridge);
  EXPECT_NE(bridge, vote);
  t.use(bridge);
  t.use(bridge);
  t.use(vote);
  t.stories(bridge).push_back(3);
  t.release(vote);  // its last use: forgotten, its number free
  EXPECT_FALSE(t.find("vote"));
  const auto storm = t.intern("storm");
  EXPECT_EQ(storm, vote);  // the freed number, given out again
  t.use(storm);
  t.release(bridge);  // one use of two left
  ASSERT_TRUE(t.find("bridg"));
  EXPECT_EQ(*t.find("bridg"), bridge);

  internal::Writer out;
  t.save(out);
  const std::string bytes = out.take();
  internal::TermTable loaded;
  internal::Reader in(bytes, bytes.size());
  ASSERT_TRUE(loaded.load(in));
  EXPECT_TRUE(in.done());
  EXPECT_EQ(loaded.size(), t.size());
  EXPECT_EQ(loaded.find("bridg"), t.find("bridg"));
  EXPECT_EQ(loaded.find("storm"), t.find("storm"));
  EXPECT_EQ(loaded.text(storm), "storm");
  ASSERT_EQ(loaded.stories(bridge).size(), 1u);
  EXPECT_EQ(loaded.stories(bridge).back(), 3u);
  EXPECT_TRUE(loaded.valid(4));
  EXPECT_FALSE(loaded.valid(3));  // slot 3 is not below 3
  internal::Writer again;
  loaded.save(again);
  EXPECT_EQ(again.take(), bytes);
  // Cut short: refused, and the table it was loaded into is unchanged.
  internal::Reader cut(std::string_view(bytes).substr(0, bytes.size() - 1), bytes.size());
  EXPECT_FALSE(loaded.load(cut));
  EXPECT_EQ(loaded.find("storm"), t.find("storm"));
}

TEST(SlotTable, HoldsWhatAMultimapHolds) {
  internal::SlotTable table;
  const std::size_t empty = table.memory_bytes();
  std::multimap<std::uint32_t, std::uint32_t> model;
  std::mt19937 rng(13);
  std::vector<std::uint32_t> keys(4000);
  for (auto& k : keys) k = static_cast<std::uint32_t>(rng());
  keys[0] = 0;
  keys[1] = UINT32_MAX;
  auto check = [&] { expect_holds(table, model, keys); };
  for (std::uint32_t i = 0; i < 200000; ++i) {
    const std::uint32_t key = i % 40 == 0 ? keys[2] : keys[rng() % keys.size()];
    const std::uint32_t slot = i * 70001u % internal::SlotTable::kFreeSlot;  // past 16 bits
    table.insert(key, slot);
    model.emplace(key, slot);
  }
  check();
  {
    internal::SlotTable copy = table;  // a copy holds the same, on its own
    std::swap(copy, table);
    check();
    std::swap(copy, table);
  }
  const std::size_t full = table.memory_bytes() - empty;
  EXPECT_LE(full, 200000 * 5 * 10 / 6 + 5 * 8 * 65536);  // at least 60% full, or a small part
  std::vector<std::pair<std::uint32_t, std::uint32_t>> held(model.begin(), model.end());
  std::shuffle(held.begin(), held.end(), rng);
  for (std::size_t i = 0; i < 190000; ++i) {
    table.erase(held[i].first, held[i].second);
    table.erase(held[i].first, held[i].second ^ 0x10000);  // never held
    auto [it, end] = model.equal_range(held[i].first);
    while (it->second != held[i].second) ++it;
    model.erase(it);
  }
  check();
  EXPECT_LT(table.memory_bytes() - empty, full / 5) << "the parts shrink with what they hold";
  internal::Writer w;
  table.save(w);
  const std::string bytes = w.take();
  internal::SlotTable loaded;
  internal::Reader r(bytes, bytes.size());
  ASSERT_TRUE(loaded.load(r));
  std::swap(table, loaded);
  check();
  for (const auto& [key, slot] : held) table.erase(key, slot);
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.memory_bytes(), empty) << "empty parts hold nothing";
  internal::SlotTable refused;
  const std::string half = bytes.substr(0, bytes.size() / 2);
  internal::Reader junk(half, half.size());
  EXPECT_FALSE(refused.load(junk));
}

// The story book's index of articles against a model map: placing, moving, forgetting, keeping
// by story, every story id kept once while an article names it, and a save/load round trip.
TEST(ArticleIndex, HoldsWhatAMapHolds) {
  internal::ArticleIndex index;
  std::map<std::string, std::string> model;
  std::mt19937 rng(11);
  auto check = [&] {
    ASSERT_EQ(index.size(), model.size());
    for (int a = 0; a < 6000; ++a) {
      const std::string id = "article-" + std::to_string(a);
      const std::string* story = index.find(id);
      const auto it = model.find(id);
      ASSERT_EQ(story != nullptr, it != model.end()) << id;
      if (story) {
        ASSERT_EQ(*story, it->second) << id;
      }
    }
  };
  for (int a = 0; a < 5000; ++a) {
    const std::string id = "article-" + std::to_string(a);
    const std::string story = "story-" + std::to_string(rng() % 300);
    index.set(id, story);
    model[id] = story;
  }
  check();
  for (int k = 0; k < 2000; ++k) {
    const std::string id = "article-" + std::to_string(rng() % 6000);
    if (k % 2) {
      index.erase(id);
      model.erase(id);
    } else {
      index.set(id, "moved-" + std::to_string(k % 7));
      model[id] = "moved-" + std::to_string(k % 7);
    }
  }
  check();
  auto odd = [](const std::string& story) { return story.back() % 2 == 1; };
  index.retain(odd);
  std::erase_if(model, [&](const auto& kv) { return !odd(kv.second); });
  check();
  internal::Writer w;
  index.save(w);
  const std::string bytes = w.take();
  internal::ArticleIndex loaded;
  internal::Reader r(bytes, bytes.size());
  ASSERT_TRUE(loaded.load(r));
  std::swap(index, loaded);
  check();
  // Every article gone, the names go too: a later story of the same id starts from nothing.
  for (const auto& [id, story] : model) index.erase(id);
  model.clear();
  check();
  index.set("x", "story-1");
  model["x"] = "story-1";
  check();
}

StoryOptions merging() {
  StoryOptions o;
  o.similarity_threshold = 0.3;
  o.merge_threshold = 0.3;
  return o;
}

TEST(Stories, AnArticleThatMatchesTwoStoriesMergesThem) {
  StoryBook book(merging());
  const Verdict unique;
  book.assign({"a", "u1", "x.test", DupKind::kUnique, ""}, "Riverton approves Hallam bridge",
              unique, 0, "Riverton council approved the Hallam bridge on Tuesday.");
  book.assign({"b", "u2", "y.test", DupKind::kUnique, ""}, "Wend ferry operators protest", unique,
              60, "Ferry operators on the Wend protested outside the town hall.");
  EXPECT_EQ(book.story_of("b"), "b");
  const Story& s = book.assign(
      {"c", "u3", "z.test", DupKind::kUnique, ""},
      "Hallam bridge approved as Wend ferry operators protest", unique, 120,
      "Riverton council approved the Hallam bridge while Wend ferry operators protested at the "
      "town hall.");
  EXPECT_EQ(s.story_id, "a");  // the older story absorbs the younger
  ASSERT_EQ(s.merged_from.size(), 1u);
  EXPECT_EQ(s.merged_from[0], "b");
  EXPECT_EQ(s.article_count, 3u);
  EXPECT_EQ(book.story_of("b"), "a");
  EXPECT_EQ(book.size(), 1u);
  // The next update of the story merges nothing more.
  const Story& again = book.assign({"d", "u4", "w.test", DupKind::kExact, ""}, "x",
                                   {DupKind::kExact, "b", 1.0}, 130);
  EXPECT_EQ(again.story_id, "a");
  EXPECT_TRUE(again.merged_from.empty());

  // After a restart the merge comes back from the articles, in whatever order they are read.
  StoryBook restored(merging());
  restored.assign({"b", "u2", "y.test", DupKind::kUnique, ""}, "t", unique, 60, "", "b");
  restored.assign({"a", "u1", "x.test", DupKind::kUnique, ""}, "t", unique, 0, "", "a");
  restored.assign({"c", "u3", "z.test", DupKind::kUnique, ""}, "t", unique, 120, "", "a");
  restored.restore_merge("b", "a");
  restored.assign({"d", "u4", "w.test", DupKind::kExact, ""}, "t", {DupKind::kExact, "b", 1.0}, 130,
                  "", "b");
  EXPECT_EQ(restored.size(), 1u);
  EXPECT_EQ(restored.story_of("b"), "a");
  EXPECT_EQ(restored.story_of("d"), "a");
  EXPECT_EQ(restored.largest(1)[0].article_count, 4u);
}

TEST(Stories, AStoryCountsItsCopiesAndLanguagesAndTheNewestComeFirst) {
  StoryBook book;
  book.assign({"a", "u1", "x.test", DupKind::kUnique, "zh-Hant"}, "A", {}, 10);
  book.assign({"b", "u2", "y.test", DupKind::kExact, "zh-Hans"}, "B", {DupKind::kExact, "a", 1.0},
              20);
  const Story& s =
      book.assign({"c", "u3", "z.test", DupKind::kNear, ""}, "C", {DupKind::kNear, "a", 0.9}, 30);
  EXPECT_EQ(s.copies, 2u);
  EXPECT_EQ(s.languages, (std::vector<std::string>{"zh-Hans", "zh-Hant"}));  // unknown left out
  book.assign({"d", "u4", "w.test", DupKind::kUnique, "en"}, "Other", {}, 25);
  const auto newest = book.newest(2);
  ASSERT_EQ(newest.size(), 2u);
  EXPECT_EQ(newest[0].story_id, "a");  // updated at 30
  EXPECT_EQ(newest[1].story_id, "d");
  EXPECT_EQ(book.largest(1)[0].story_id, "a");

  // A merge sums the copies and joins the languages.
  StoryBook merging_book(merging());
  merging_book.assign({"p", "u1", "x.test", DupKind::kUnique, "en"},
                      "Riverton approves Hallam bridge", {}, 0,
                      "Riverton council approved the Hallam bridge on Tuesday.");
  merging_book.assign({"q", "u2", "y.test", DupKind::kExact, "en-GB"}, "copy",
                      {DupKind::kExact, "p", 1.0}, 10);
  merging_book.assign({"r", "u3", "z.test", DupKind::kUnique, ""}, "Wend ferry operators protest",
                      {}, 60, "Ferry operators on the Wend protested outside the town hall.");
  const Story& m = merging_book.assign(
      {"t", "u4", "v.test", DupKind::kUnique, "en"},
      "Hallam bridge approved as Wend ferry operators protest", {}, 120,
      "Riverton council approved the Hallam bridge while Wend ferry operators protested at the "
      "town hall.");
  ASSERT_EQ(m.merged_from.size(), 1u);
  EXPECT_EQ(m.article_count, 4u);
  EXPECT_EQ(m.copies, 1u);
  EXPECT_EQ(m.languages, (std::vector<std::string>{"en", "en-GB"}));
}

TEST(Stories, TheTitleIsTheMostCentralReportsHeadline) {
  // The first report strays into the budget; the next two tell the bridge vote the story is
  // about: the title becomes one of theirs. A copy never takes the title.
  StoryOptions o;
  o.similarity_threshold = 0.3;
  o.merge_threshold = 0.3;
  StoryBook book(o);
  const Verdict unique;
  book.assign({"a", "u1", "x.test", DupKind::kUnique, "en"}, "Council meeting notes", unique, 0,
              "Riverton council approved the Hallam bridge. The council also argued about the "
              "library budget, the parking fees, the summer festival and the school buses.");
  book.assign({"b", "u2", "y.test", DupKind::kUnique, "en"}, "Riverton approves Hallam bridge",
              unique, 60,
              "Riverton council approved the Hallam bridge across the Wend after mayor Ortega "
              "broke the tie; Hallam bridge works begin in spring.");
  const Story& s = book.assign(
      {"c", "u3", "z.test", DupKind::kUnique, "en"}, "Hallam bridge wins Riverton vote", unique,
      120,
      "Mayor Ortega broke the tie and Riverton council approved the Hallam bridge over the Wend; "
      "works on the Hallam bridge begin in spring.");
  ASSERT_EQ(s.article_count, 3u);
  EXPECT_NE(s.representative, "a");
  EXPECT_NE(s.title, "Council meeting notes");
  const std::string title = s.title;
  const Story& copy =
      book.assign({"d", "u4", "w.test", DupKind::kExact, "en"}, "UPDATE 1-Hallam bridge",
                  {DupKind::kExact, s.representative, 1.0}, 130);
  EXPECT_EQ(copy.title, title);
}

TEST(Stories, DuplicatesJoinTheirOriginalsStory) {
  StoryBook book;
  const Story& s1 =
      book.assign({"a", "https://x.test/a", "x.test", DupKind::kUnique, ""}, "Title", {}, 10);
  EXPECT_EQ(s1.story_id, "a");
  EXPECT_EQ(s1.version, 1u);
  const Story& s2 = book.assign({"b", "https://y.test/b", "y.test", DupKind::kExact, ""}, "Other",
                                {DupKind::kExact, "a", 1.0}, 20);
  EXPECT_EQ(s2.story_id, "a");
  EXPECT_EQ(s2.article_count, 2u);
  EXPECT_EQ(s2.sources, 2u);
  EXPECT_EQ(s2.title, "Title");
  EXPECT_EQ(s2.last_updated, 20);
  EXPECT_EQ(s2.version, 2u);
  EXPECT_EQ(book.story_of("b"), "a");
  // Replaying b changes nothing.
  EXPECT_EQ(book.assign({"b", "https://y.test/b", "y.test", DupKind::kExact, ""}, "Other",
                        {DupKind::kExact, "a", 1.0}, 20)
                .version,
            2u);
  const Story& s3 = book.assign({"c", "u", "z.test", DupKind::kUnique, ""}, "New", {}, 30);
  EXPECT_EQ(s3.story_id, "c");
  const auto top = book.largest(1);
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0].story_id, "a");
}

}  // namespace
}  // namespace newsflow::dedup

namespace newsflow::dedup {
namespace {

// A text of its own for every seed: numbered words that no other seed uses.
std::string distinct_article(int seed) {
  std::string out;
  for (int i = 0; i < 120; ++i) out += "w" + std::to_string(seed * 1000 + i) + (i % 9 ? " " : ". ");
  return out;
}

TEST(Window, HoldsAtMostMaxArticlesOldestLeavingFirst) {
  WindowOptions options;
  options.max_articles = 100;
  DedupWindow w(options);
  std::size_t peak_bytes = 0;
  for (int i = 0; i < 1000; ++i) {
    w.observe("a" + std::to_string(i), make_fingerprint(distinct_article(i), {}), 1000 + i);
    ASSERT_LE(w.size(), 100u);
    if (i >= 200) peak_bytes = std::max(peak_bytes, w.memory_bytes());
  }
  EXPECT_EQ(w.evicted(), 900u);
  EXPECT_FALSE(w.contains("a899"));
  EXPECT_TRUE(w.contains("a900"));
  // Memory stays where a full window put it: slots are reused, not added.
  EXPECT_LE(w.memory_bytes(), peak_bytes);
  // A copy of an evicted article is not found; one of a held article is.
  EXPECT_EQ(w.observe("c1", make_fingerprint(distinct_article(5), {}), 3000).kind,
            DupKind::kUnique);
  EXPECT_EQ(w.observe("c2", make_fingerprint(distinct_article(990), {}), 3000).kind,
            DupKind::kExact);
}

TEST(Window, ALowWatermarkHoldsExpiryBack) {
  DedupWindow w({.window_seconds = 3600});
  const auto h = fp("a text filed early");
  w.observe("a", h, 1000);
  // A later article from a fast partition while a slow one may still deliver time 1500.
  w.observe("x", fp("something else entirely"), 1000 + 7200, /*low_watermark=*/1500);
  EXPECT_TRUE(w.contains("a"));
  EXPECT_EQ(w.observe("b", h, 1500, 1500).kind, DupKind::kExact);
  // Without the hold the original leaves.
  w.observe("y", fp("and one more different text"), 1000 + 7300);
  EXPECT_FALSE(w.contains("a"));
}

}  // namespace
}  // namespace newsflow::dedup
