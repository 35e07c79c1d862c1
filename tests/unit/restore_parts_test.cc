// The restore's parts of its own: the merge of the changelog's partitions by `seq`, the records
// decoded ahead on a thread of their own, and a pipeline restored through them.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "config/config.h"
#include "daemon/kafka/decode_ahead.h"
#include "daemon/kafka/seq_merge.h"
#include "daemon/pipeline/input.h"
#include "daemon/pipeline/pipeline.h"
#include "dedup/state.h"

namespace newsflow::daemon {
namespace {

TEST(SeqMerge, HandsOutTheLowestSeqOnceNoPartitionMayHoldALowerOne) {
  SeqMerge<std::string> m;
  for (const int p : {3, 1, 2}) m.add_lane(p);
  m.add(1, "1:5", 5);
  m.add(3, "3:2", 2);
  EXPECT_FALSE(m.next());  // partition 2 may still bring a lower one
  m.add(2, "2:7", 7);
  EXPECT_EQ(m.next(), "3:2");
  EXPECT_FALSE(m.next());  // partition 3 is empty and not at its end
  m.end(3);
  EXPECT_EQ(m.next(), "1:5");
  EXPECT_FALSE(m.next());  // partition 1 now
  m.add(1, "1:7", 7);      // a tie: the lower partition first
  EXPECT_EQ(m.next(), "1:7");
  m.end(1);
  EXPECT_EQ(m.next(), "2:7");
  EXPECT_FALSE(m.done());  // partition 2 is not at its end
  m.end(2);
  EXPECT_TRUE(m.done());
  EXPECT_TRUE(m.all_ended());
  // Records a partition gets after its end go in order with the others.
  m.add(2, "2:9", 9);
  m.add(1, "1:8", 8);
  EXPECT_EQ(m.next(), "1:8");
  EXPECT_EQ(m.next(), "2:9");
}

// Against sorting everything: random lanes, fed and drained in random turns.
TEST(SeqMerge, GivesWhatASortByPartitionOrderGives) {
  std::mt19937 rng(7);
  constexpr int kLanes = 40;
  std::vector<std::vector<std::uint64_t>> lanes(kLanes);
  std::vector<std::pair<std::uint64_t, int>> all;
  for (std::uint64_t seq = 1; seq <= 5000; ++seq) {
    const int p = static_cast<int>(rng() % kLanes);
    lanes[static_cast<std::size_t>(p)].push_back(seq / 3);  // ties across partitions
    all.emplace_back(seq / 3, p);
  }
  // In each lane seqs only grow (a partition holds them in the order they were written).
  std::stable_sort(all.begin(), all.end());
  SeqMerge<std::pair<std::uint64_t, int>> m;
  for (int p = 0; p < kLanes; ++p) m.add_lane(p);
  std::vector<std::size_t> fed(kLanes);
  std::vector<std::pair<std::uint64_t, int>> out;
  while (!m.done()) {
    const int p = static_cast<int>(rng() % kLanes);
    auto& lane = lanes[static_cast<std::size_t>(p)];
    auto& f = fed[static_cast<std::size_t>(p)];
    for (int k = 0; k < 5 && f < lane.size(); ++k, ++f) m.add(p, {lane[f], p}, lane[f]);
    if (f == lane.size()) m.end(p);
    while (auto r = m.next()) out.push_back(*r);
  }
  EXPECT_EQ(out, all);
}

std::vector<dedup::ArticleState> sample_states(const config::Config& config) {
  std::vector<dedup::ArticleState> states;
  Pipeline pipeline(config, nullptr);
  for (int copy = 0; copy < 3; ++copy) {
    read_lines(NEWSFLOW_SOURCE_DIR "/samples/pages.jsonl.gz", [&](std::string_view line) {
      auto p = parse_replay_line(line);
      if (p.failure) return;
      p.input.id += "-" + std::to_string(copy);
      p.input.url += "#" + std::to_string(copy);
      *p.input.fetched_at += 3600 * copy;
      if (auto out = pipeline.process(p.input)) {
        for (auto& o : *out) states.push_back(std::move(o.state));
      }
    });
  }
  return states;
}

struct Record {
  std::uint64_t seq = 0;
  std::string value;
};

// Decoded on a thread of its own, the records come back in the order they went in, each as a
// decode on this thread gives it (a record that does not decode too), whatever the batches'
// size, however the pushes and pops interleave and whether states are decoded into again; and a
// pipeline restored from them holds what one restored by decoding each in turn holds.
TEST(DecodeAhead, GivesEachRecordDecodedInTheOrderItWentIn) {
  const auto config = config::parse_config("", {});
  ASSERT_TRUE(config);
  const std::vector<dedup::ArticleState> states = sample_states(*config);
  ASSERT_GT(states.size(), 60u);
  std::vector<std::string> values;
  for (const auto& s : states) values.push_back(dedup::encode_state(s));
  values.insert(values.begin() + 10, "not a state record");
  values.insert(values.begin() + 20, "");
  for (const auto& [batch, pooled] : std::vector<std::pair<std::size_t, bool>>{
           {1, false}, {7, false}, {256, false}, {7, true}, {256, true}}) {
    SCOPED_TRACE(batch);
    SCOPED_TRACE(pooled);
    Pipeline serial(*config, nullptr), ahead(*config, nullptr);
    serial.begin_restore();
    ahead.begin_restore();
    // Pooled: each state applied is decoded into again (another record's, or none).
    StatePool pool;
    DecodeAhead<Record> decoder(batch, pooled ? &pool : nullptr);
    std::size_t popped = 0;
    auto check = [&](DecodeAhead<Record>::Item& item) {
      ASSERT_EQ(item.record.seq, popped);
      const auto expected = dedup::decode_state(values[popped]);
      ASSERT_EQ(item.state.has_value(), expected.has_value()) << popped;
      if (expected) {
        EXPECT_EQ(dedup::encode_state(*item.state), dedup::encode_state(*expected));
        serial.restore(*expected);
        ahead.restore(*item.state);
        pool.give(std::move(*item.state));
      }
      ++popped;
    };
    for (std::size_t i = 0; i < values.size(); ++i) {
      decoder.push({i, values[i]});
      if (i % 5 == 0) {
        while (auto item = decoder.pop(false)) check(*item);
      }
      if (i % 13 == 0) decoder.flush();
    }
    while (auto item = decoder.pop(true)) check(*item);
    EXPECT_EQ(popped, values.size());
    EXPECT_EQ(decoder.in_flight(), 0u);
    serial.end_restore();
    ahead.end_restore();
    EXPECT_EQ(ahead.save_state(), serial.save_state());
  }
}

// A pipeline restored with its window's bands made at the end judges what follows as one restored
// an article at a time (and the state it saves then loads into one that does).
TEST(DecodeAhead, APipelineRestoredInOneGoJudgesLikeOneRestoredArticleByArticle) {
  auto config = config::parse_config("", {});
  ASSERT_TRUE(config);
  config->window.max_articles = 50;  // articles leave the window on the way
  std::vector<Input> inputs;
  for (int copy = 0; copy < 3; ++copy) {
    read_lines(NEWSFLOW_SOURCE_DIR "/samples/pages.jsonl.gz", [&](std::string_view line) {
      auto p = parse_replay_line(line);
      if (p.failure) return;
      p.input.id += "-" + std::to_string(copy);
      p.input.url += "#" + std::to_string(copy);
      *p.input.fetched_at += 3600 * copy;
      inputs.push_back(std::move(p.input));
    });
  }
  Pipeline whole(*config, nullptr), one(*config, nullptr), bulk(*config, nullptr);
  const std::size_t half = inputs.size() * 2 / 3;
  bulk.begin_restore();
  for (std::size_t i = 0; i < half; ++i) {
    auto out = whole.process(inputs[i]);
    if (!out) continue;
    for (const auto& o : *out) {
      one.restore(o.state);
      bulk.restore(o.state);
    }
  }
  bulk.end_restore();
  std::size_t compared = 0, duplicates = 0;
  for (std::size_t i = half; i < inputs.size(); ++i) {
    auto a = one.process(inputs[i]);
    auto b = bulk.process(inputs[i]);
    ASSERT_EQ(a.has_value(), b.has_value());
    if (!a) continue;
    ASSERT_EQ(a->size(), b->size());
    for (std::size_t k = 0; k < a->size(); ++k) {
      EXPECT_EQ(article_json((*a)[k]), article_json((*b)[k]));
      EXPECT_EQ(story_json((*a)[k].story), story_json((*b)[k].story));
      duplicates += (*a)[k].verdict.kind != dedup::DupKind::kUnique;
      ++compared;
    }
  }
  EXPECT_GT(compared, 20u);
  EXPECT_GT(duplicates, 10u);
}

}  // namespace
}  // namespace newsflow::daemon
