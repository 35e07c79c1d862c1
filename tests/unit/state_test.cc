#include "dedup/state.h"

#include <gtest/gtest.h>

#include <cmath>

#include "config/config.h"
#include "daemon/kafka/changelog_tail.h"
#include "daemon/kafka/ordered_stage.h"
#include "daemon/pipeline/input.h"
#include "daemon/pipeline/pipeline.h"

namespace newsflow {
namespace {

dedup::ArticleState sample_state() {
  dedup::ArticleState s;
  s.seq = 123456789;
  s.id = "a1";
  s.event_time = -5;  // before the epoch: signed varints
  s.fp.exact = {0x0123456789abcdefULL, 0xfedcba9876543210ULL};
  for (std::size_t i = 0; i < s.fp.sketch.size(); ++i)
    s.fp.sketch[i] = static_cast<std::uint16_t>(i * 977);
  s.fp.phrases = 321;
  s.fp.simhash = 42;
  s.verdict = {dedup::DupKind::kContained, "orig", 0.875};
  s.url = "https://a.test/x";
  s.source = "a.test";
  s.title = "Title \xC3\xA9";
  s.story_id = "s1";
  s.merged_from = {"s2", "s3"};
  s.story_terms = {{"river", 3.0f}, {"2026", 1.0f}};
  s.df_terms = {7, 4000000000u, 7, 12};
  s.paragraphs = {1, UINT64_MAX};
  s.link = "https://a.test/post";
  s.from_feed = true;
  s.language = "zh-Hant";
  s.image_url = "https://a.test/lead.jpg";
  s.description = "What happened, in one line.";
  return s;
}

TEST(StateRecord, RoundTripsEveryField) {
  const dedup::ArticleState s = sample_state();
  const std::string bytes = dedup::encode_state(s);
  EXPECT_EQ(dedup::state_seq(bytes), s.seq);
  const auto d = dedup::decode_state(bytes);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->seq, s.seq);
  EXPECT_EQ(d->id, s.id);
  EXPECT_EQ(d->event_time, s.event_time);
  EXPECT_EQ(d->fp.exact, s.fp.exact);
  EXPECT_EQ(d->fp.sketch, s.fp.sketch);
  EXPECT_EQ(d->fp.phrases, s.fp.phrases);
  EXPECT_EQ(d->fp.simhash, s.fp.simhash);
  EXPECT_EQ(d->verdict.kind, s.verdict.kind);
  EXPECT_EQ(d->verdict.of, s.verdict.of);
  EXPECT_EQ(d->verdict.similarity, s.verdict.similarity);
  EXPECT_EQ(d->title, s.title);
  EXPECT_EQ(d->merged_from, s.merged_from);
  EXPECT_EQ(d->story_terms, s.story_terms);
  // The multiset of the bits the counters read, sorted.
  EXPECT_EQ(d->df_terms, (std::vector<std::uint32_t>{7, 7, 12, 4000000000u & 0xFFFFF}));
  // The 56 bits the boilerplate filter keeps.
  EXPECT_EQ(d->paragraphs, (std::vector<std::uint64_t>{1, 0x00FFFFFFFFFFFFFFULL}));
  EXPECT_EQ(d->link, s.link);
  EXPECT_TRUE(d->from_feed);
  EXPECT_EQ(d->language, s.language);
  EXPECT_EQ(d->image_url, s.image_url);
  EXPECT_EQ(d->description, s.description);
  // Weights of counted terms travel as their counts, any other weight as it is, to the bit.
  dedup::ArticleState weighted = s;
  weighted.story_terms = {{"five", 1 + std::log(5.0f)},
                          {"half", 1.5f},
                          {"many", 1 + std::log(3e6f)},
                          {"one", 1.0f},
                          {"odd", std::nextafter(1 + std::log(2.0f), 9.0f)}};
  const auto w = dedup::decode_state(dedup::encode_state(weighted));
  ASSERT_TRUE(w);
  EXPECT_EQ(w->story_terms, weighted.story_terms);
}

// A record of the layout before (`NFS1`, written by the last version: `sample_state()` as it
// encoded it) still reads, so a restart across the upgrade restores from the records on the
// topic; and the new record is smaller.
TEST(StateRecord, ReadsTheLayoutBefore) {
  const std::string hex =
      "4e465331959aef3a02613109efcdab89674523011032547698badcfe0000d103a207730b440f1513e616b71a"
      "881e59222a26fb29cc2d9d316e353f39103de140b2448348544c2550f653c757985b695f3a630b67dc6aad6e"
      "7e724f76207af17dc28193856489358d0691d794a898799c4aa01ba4eca7bdab8eaf5fb330b701bbd2bea3c2"
      "74c645ca16cee7d1b8d589d95add2be1fce4cde89eec6ff0c1022a0000000000000003046f72696700000000"
      "0000ec3f1068747470733a2f2f612e746573742f7806612e74657374085469746c6520c3a902733102027332"
      "027333020572697665720000404004323032360000803f04070005f4cfacf30e020100000000000000ffffff"
      "ffffffffff1368747470733a2f2f612e746573742f706f737401077a682d48616e74";
  std::string v1;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    v1 += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  const dedup::ArticleState s = sample_state();
  EXPECT_EQ(dedup::state_seq(v1), s.seq);
  const auto d = dedup::decode_state(v1);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->id, s.id);
  EXPECT_EQ(d->event_time, s.event_time);
  EXPECT_EQ(d->fp.exact, s.fp.exact);
  EXPECT_EQ(d->fp.sketch, s.fp.sketch);
  EXPECT_EQ(d->fp.phrases, s.fp.phrases);
  EXPECT_EQ(d->fp.simhash, s.fp.simhash);
  EXPECT_EQ(d->verdict.of, s.verdict.of);
  EXPECT_EQ(d->story_terms, s.story_terms);
  EXPECT_EQ(d->df_terms, (std::vector<std::uint32_t>{7, 7, 12, 4000000000u}));
  EXPECT_EQ(d->paragraphs, s.paragraphs);
  EXPECT_EQ(d->language, s.language);
  // Read again and written in the new layout, it says the same to the window, the counters and
  // the boilerplate filter, in fewer bytes.
  const std::string v3 = dedup::encode_state(*d);
  EXPECT_EQ(v3.substr(0, 4), "NFS3");
  EXPECT_LT(v3.size(), v1.size());
  EXPECT_EQ(dedup::encode_state(*dedup::decode_state(v3)), v3);
}

// A record of the layout before the story card (`NFS2`: the same fields without the image URL
// and the description at the end) still reads, with no card.
TEST(StateRecord, ReadsTheLayoutBeforeTheStoryCard) {
  dedup::ArticleState s = sample_state();
  s.image_url.clear();
  s.description.clear();
  std::string v2 = dedup::encode_state(s);
  ASSERT_EQ(v2.substr(0, 4), "NFS3");
  ASSERT_EQ(v2.substr(v2.size() - 2), std::string(2, '\0'));  // two empty strings
  v2 = "NFS2" + v2.substr(4, v2.size() - 6);
  const auto d = dedup::decode_state(v2);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->id, s.id);
  EXPECT_EQ(d->language, s.language);
  EXPECT_EQ(d->story_terms, s.story_terms);
  EXPECT_TRUE(d->image_url.empty());
  EXPECT_TRUE(d->description.empty());
  // The card's strings are not read from an NFS2 record: one there is refused as trailing bytes.
  EXPECT_FALSE(dedup::decode_state(v2 + std::string(2, '\0')));
}

// Decoded into a state that held another record (more terms, a card, a SimHash), a record
// gives what decoding it into a new one gives: every field written.
TEST(StateRecord, DecodedIntoAUsedStateGivesWhatANewOneDoes) {
  dedup::ArticleState big = sample_state();
  big.story_terms.resize(70, {"a-long-term-that-is-not-in-place", 2.5f});
  big.merged_from.resize(5, "merged");
  big.df_terms.resize(400, 9);
  big.paragraphs.resize(50, 3);
  dedup::ArticleState small;
  small.seq = 5;
  small.id = "b";
  small.story_terms = {{"x", 1.0f}};
  const std::string v2 = [&] {  // the layout before the card: no card to read
    std::string b = dedup::encode_state(small);
    return "NFS2" + b.substr(4, b.size() - 6);
  }();
  for (const std::string& bytes : {dedup::encode_state(small), v2}) {
    dedup::ArticleState used = *dedup::decode_state(dedup::encode_state(big));
    ASSERT_TRUE(dedup::decode_state_into(bytes, used));
    EXPECT_EQ(dedup::encode_state(used), dedup::encode_state(*dedup::decode_state(bytes)));
    EXPECT_TRUE(used.image_url.empty());
    EXPECT_EQ(used.fp.simhash, 0u);
  }
}

TEST(StateRecord, RefusesWhatItDidNotWrite) {
  const std::string bytes = dedup::encode_state(sample_state());
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    EXPECT_FALSE(dedup::decode_state(bytes.substr(0, cut))) << "cut at " << cut;
  }
  EXPECT_FALSE(dedup::decode_state(bytes + "x"));
  EXPECT_FALSE(dedup::decode_state("{\"id\":\"a\"}"));
  EXPECT_FALSE(dedup::state_seq(""));
  for (const char* magic : {"NFS1", "NFS2", "NFS3"}) {
    std::string huge = magic;
    huge += std::string(12, '\xff');  // a varint longer than 64 bits
    EXPECT_FALSE(dedup::decode_state(huge));
  }
  // A time no article has (it would overflow the window's arithmetic).
  dedup::ArticleState far = sample_state();
  far.event_time = std::int64_t{1} << 50;
  EXPECT_FALSE(dedup::decode_state(dedup::encode_state(far)));
}

// The sample pages three times, each copy an hour later under new ids, in event-time order:
// copies within the window and stories that grow.
std::vector<daemon::Input> sample_inputs() {
  std::vector<daemon::Input> inputs;
  for (int copy = 0; copy < 3; ++copy) {
    daemon::read_lines(NEWSFLOW_SOURCE_DIR "/samples/pages.jsonl.gz", [&](std::string_view line) {
      auto p = daemon::parse_replay_line(line);
      if (p.failure) return;
      if (copy > 0) {
        p.input.id += "-" + std::to_string(copy);
        p.input.url += "#" + std::to_string(copy);
        *p.input.fetched_at += 3600 * copy;
      }
      inputs.push_back(std::move(p.input));
    });
  }
  std::stable_sort(inputs.begin(), inputs.end(),
                   [](const auto& a, const auto& b) { return *a.fetched_at < *b.fetched_at; });
  return inputs;
}

// Judges inputs[from..] with both pipelines, which must give the same number of outputs for each,
// and calls `check` on each pair.
template <class Check>
void judge_both(daemon::Pipeline& one, daemon::Pipeline& other,
                const std::vector<daemon::Input>& inputs, std::size_t from, Check check) {
  for (std::size_t i = from; i < inputs.size(); ++i) {
    auto a = one.process(inputs[i]);
    auto b = other.process(inputs[i]);
    ASSERT_EQ(a.has_value(), b.has_value());
    if (!a) continue;
    ASSERT_EQ(a->size(), b->size());
    for (std::size_t k = 0; k < a->size(); ++k) check((*a)[k], (*b)[k]);
  }
}

// A pipeline restored from the state records of the first half of a stream judges the second
// half exactly as the pipeline that saw the whole stream: the window, the document frequencies,
// the boilerplate filter and the stories come back without the text.
TEST(StateRecord, RestoredPipelineJudgesLikeAnUninterruptedOne) {
  const std::vector<daemon::Input> inputs = sample_inputs();
  ASSERT_GT(inputs.size(), 60u);
  const auto config = config::parse_config("", {});
  ASSERT_TRUE(config);
  daemon::Pipeline whole(*config, nullptr), restored(*config, nullptr);
  const std::size_t half = inputs.size() / 2;
  for (std::size_t i = 0; i < half; ++i) {
    auto out = whole.process(inputs[i]);
    if (!out) continue;
    for (const auto& o : *out) {
      // Through the wire format, as a restart reads it.
      restored.restore(*dedup::decode_state(dedup::encode_state(o.state)));
    }
  }
  EXPECT_EQ(restored.window().size(), whole.window().size());
  EXPECT_EQ(restored.stories().size(), whole.stories().size());
  std::size_t compared = 0, duplicates = 0;
  judge_both(whole, restored, inputs, half, [&](const daemon::Output& x, const daemon::Output& y) {
    EXPECT_EQ(x.verdict.kind, y.verdict.kind) << x.article.id;
    EXPECT_EQ(x.verdict.of, y.verdict.of) << x.article.id;
    EXPECT_DOUBLE_EQ(x.verdict.similarity, y.verdict.similarity) << x.article.id;
    EXPECT_EQ(x.story_id, y.story_id) << x.article.id;
    EXPECT_EQ(x.content_hash, y.content_hash);
    EXPECT_EQ(x.state.seq, y.state.seq);
    ++compared;
    duplicates += x.verdict.kind != dedup::DupKind::kUnique;
  });
  EXPECT_GT(compared, 40u);
  EXPECT_GT(duplicates, 30u);
}

// The whole judging state saved and loaded (what a snapshot gives a restore, without applying
// records one by one): the loaded pipeline publishes byte for byte what the saved one does, with
// the window, story book and boilerplate filter under their bounds and without.
TEST(StateSnapshot, ALoadedPipelinePublishesWhatTheSavedOneDoes) {
  const std::vector<daemon::Input> inputs = sample_inputs();
  for (const std::uint64_t bound : {std::uint64_t{0}, std::uint64_t{40}}) {
    auto config = config::parse_config("", {});
    ASSERT_TRUE(config);
    config->window.max_articles = bound;
    daemon::Pipeline whole(*config, nullptr), loaded(*config, nullptr);
    const std::size_t half = inputs.size() / 2;
    for (std::size_t i = 0; i < half; ++i) (void)whole.process(inputs[i]);
    const std::string snapshot = whole.save_state();
    // Bytes that are not a saved state are refused and change nothing.
    EXPECT_FALSE(loaded.load_state(snapshot.substr(0, snapshot.size() / 2)));
    EXPECT_FALSE(loaded.load_state("NFP5 not a state"));
    EXPECT_EQ(loaded.window().size(), 0u);
    // Made a chunk at a time, the same bytes (what the daemon writes to the changelog).
    std::string chunked;
    std::size_t chunks = 0, lasts = 0;
    whole.save_state(4096, [&](std::string_view part, bool last) {
      EXPECT_TRUE(last || part.size() == 4096);
      chunked.append(part);
      ++chunks;
      lasts += last;
    });
    EXPECT_EQ(chunked, snapshot);
    EXPECT_EQ(lasts, 1u);
    EXPECT_EQ(chunks, snapshot.size() / 4096 + 1);
    ASSERT_TRUE(loaded.load_state(snapshot));
    EXPECT_EQ(loaded.window().size(), whole.window().size());
    EXPECT_EQ(loaded.stories().size(), whole.stories().size());
    EXPECT_EQ(loaded.boilerplate().size(), whole.boilerplate().size());
    std::size_t compared = 0, duplicates = 0, joined = 0;
    judge_both(whole, loaded, inputs, half, [&](const daemon::Output& x, const daemon::Output& y) {
      EXPECT_EQ(daemon::article_json(x), daemon::article_json(y));
      EXPECT_EQ(daemon::story_json(x.story), daemon::story_json(y.story));
      EXPECT_EQ(dedup::encode_state(x.state), dedup::encode_state(y.state));
      ++compared;
      duplicates += x.verdict.kind != dedup::DupKind::kUnique;
      joined += x.story.article_count > 1;
    });
    EXPECT_GT(compared, 40u);
    EXPECT_GT(duplicates, 20u);
    EXPECT_GT(joined, 20u);
    if (bound > 0) {
      EXPECT_EQ(whole.window().size(), bound);
    }
  }
}

// Judged in two stages on two threads as the daemon judges (each article against the window
// here while the one before joins its story on the grouping thread), the stream gives byte for
// byte what `commit` gives on one, with a window bound so that articles leave the window (and
// the story book's index) on the way.
TEST(StateRecord, JudgingAndGroupingOnTwoThreadsGiveWhatCommitGives) {
  const std::vector<daemon::Input> inputs = sample_inputs();
  auto config = config::parse_config("", {});
  ASSERT_TRUE(config);
  config->window.max_articles = 30;
  daemon::Pipeline one(*config, nullptr), two(*config, nullptr);
  std::vector<std::vector<daemon::Output>> expected(inputs.size()), outputs(inputs.size());
  std::vector<std::vector<daemon::Pipeline::Judged>> judged(inputs.size());
  daemon::OrderedStage grouping;
  grouping.start([&](std::size_t i) { outputs[i] = two.group(std::move(judged[i])); });
  std::size_t articles = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    auto a = one.prepare(inputs[i]);
    auto b = two.prepare(inputs[i]);
    ASSERT_EQ(a.has_value(), b.has_value());
    if (a) {
      expected[i] = one.commit(std::move(*a), inputs[i]);
      judged[i] = two.judge(std::move(*b), inputs[i]);
      articles += judged[i].size();
    }
    grouping.release(i + 1);
  }
  grouping.wait();
  std::size_t duplicates = 0, joined = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    ASSERT_EQ(expected[i].size(), outputs[i].size()) << inputs[i].url;
    for (std::size_t k = 0; k < outputs[i].size(); ++k) {
      const daemon::Output& x = expected[i][k];
      const daemon::Output& y = outputs[i][k];
      EXPECT_EQ(daemon::article_json(x), daemon::article_json(y));
      EXPECT_EQ(daemon::story_json(x.story), daemon::story_json(y.story));
      EXPECT_EQ(dedup::encode_state(x.state), dedup::encode_state(y.state));
      duplicates += x.verdict.kind != dedup::DupKind::kUnique;
      joined += x.story.article_count > 1;
    }
  }
  EXPECT_EQ(one.save_state(), two.save_state());
  EXPECT_GT(articles, 60u);
  EXPECT_GT(duplicates, 20u);
  EXPECT_GT(joined, 20u);
  EXPECT_EQ(two.window().size(), 30u);  // articles left the window on the way
}

}  // namespace
}  // namespace newsflow

namespace newsflow::daemon {
namespace {

TEST(StateAdmission, ARecordIsStateOnlyOnceItsInputIsCommitted) {
  const std::vector<std::string> inputs{"newsflow.pages", "newsflow.feeds"};
  const CommittedOffsets committed{{{"newsflow.pages", 0}, 40}, {{"newsflow.pages", 1}, 0}};
  EXPECT_EQ(input_header("newsflow.pages", 3, 17), "newsflow.pages/3/17");
  // Below the commit: applied; at or past it: waited for, or dropped when commits are final.
  EXPECT_EQ(admit_state_record("newsflow.pages/0/39", inputs, committed, false), Admission::kApply);
  EXPECT_EQ(admit_state_record("newsflow.pages/0/40", inputs, committed, false), Admission::kWait);
  EXPECT_EQ(admit_state_record("newsflow.pages/0/41", inputs, committed, true), Admission::kDrop);
  EXPECT_EQ(admit_state_record("newsflow.pages/1/0", inputs, committed, true), Admission::kDrop);
  // A partition the group never committed: all of it is read again.
  EXPECT_EQ(admit_state_record("newsflow.feeds/0/0", inputs, committed, true), Admission::kDrop);
  // Records from before the header, of another role's input, or unreadable: applied.
  EXPECT_EQ(admit_state_record("", inputs, committed, true), Admission::kApply);
  EXPECT_EQ(admit_state_record("newsflow.extracted/0/5", inputs, committed, true),
            Admission::kApply);
  EXPECT_EQ(admit_state_record("newsflow.pages/x/5", inputs, committed, true), Admission::kApply);
  EXPECT_EQ(admit_state_record("/0/5", inputs, committed, true), Admission::kApply);
  EXPECT_EQ(admit_state_record("5", inputs, committed, true), Admission::kApply);
}

}  // namespace
}  // namespace newsflow::daemon
