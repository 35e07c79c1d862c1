// The daemon's parts that hold logic without a broker: the drain limits, the loop's status and
// the state store's bookkeeping (which records are state, the handover ledger, when a snapshot
// is due).

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>

#include "daemon/kafka/drain.h"
#include "daemon/kafka/loop_status.h"
#include "daemon/kafka/state_store.h"
#include "daemon/ops/metrics.h"
#include "daemon/ops/notify.h"
#include "daemon/pipeline/pipeline.h"

namespace newsflow::daemon {
namespace {

using namespace std::chrono_literals;

TEST(Drain, BeforeTheStopEveryWaitHasItsConfiguredLimit) {
  config::KafkaConfig kafka;
  kafka.flush_timeout_ms = 30000;
  kafka.drain_timeout_ms = 20000;
  const Drain drain(kafka);
  EXPECT_FALSE(drain.started());
  EXPECT_FALSE(drain.over());
  EXPECT_EQ(drain.flush_timeout_ms(), 30000);
  EXPECT_EQ(drain.close_timeout(), 20000ms);
}

TEST(Drain, AfterTheStopAWaitTakesWhatIsLeftAndAConsumerCloseAtLeastFiveSeconds) {
  config::KafkaConfig kafka;
  kafka.flush_timeout_ms = 30000;
  kafka.drain_timeout_ms = 20000;
  Drain drain(kafka);
  drain.start();
  EXPECT_TRUE(drain.started());
  EXPECT_FALSE(drain.over());
  // What is left of the drain limit, never the longer flush limit.
  EXPECT_LE(drain.flush_timeout_ms(), 20000);
  EXPECT_GT(drain.flush_timeout_ms(), 19000);
  EXPECT_LE(drain.close_timeout(), 20000ms);

  kafka.drain_timeout_ms = 0;  // the limit already passed
  Drain passed(kafka);
  passed.start();
  std::this_thread::sleep_for(2ms);
  EXPECT_TRUE(passed.over());
  EXPECT_EQ(passed.flush_timeout_ms(), 0);
  EXPECT_EQ(passed.close_timeout(), 5000ms);
}

TEST(LoopStatus, IsLiveUntilTheLoopStopsTurningAndKeepsTheLastDeadLetters) {
  config::Config c;
  Metrics metrics;
  Pipeline pipeline(c, nullptr);
  Progress progress;
  LoopStatus status(metrics, pipeline, progress);
  EXPECT_TRUE(status.live(1ms));  // the loop has not started
  status.tick(/*ready=*/false, 0);
  EXPECT_TRUE(status.live(10s));
  std::this_thread::sleep_for(5ms);
  EXPECT_FALSE(status.live(1ms));

  for (std::size_t i = 0; i < StatusSnapshot::kMaxDeadLetters + 3; ++i) {
    status.dead_letter(
        {1, "invalid_json", std::to_string(i), "newsflow.pages", 0, static_cast<std::int64_t>(i)});
  }
  progress.consumed = 7;
  status.refresh(/*ready=*/true, /*force=*/true);
  const StatusSnapshot s = status.snapshot();
  EXPECT_TRUE(s.ready);
  ASSERT_EQ(s.dead_letters.size(), StatusSnapshot::kMaxDeadLetters);
  EXPECT_EQ(s.dead_letters.front().offset,
            static_cast<std::int64_t>(StatusSnapshot::kMaxDeadLetters + 2));  // newest first
  ASSERT_FALSE(s.samples.empty());
  EXPECT_EQ(s.samples.back().consumed, 7u);
}

struct StoreFixture {
  explicit StoreFixture(config::Role role, std::int64_t snapshot_every = 2) {
    c.role = role;
    c.kafka.state_snapshot_articles = snapshot_every;
  }
  config::Config c;
  Metrics metrics;
  Pipeline pipeline{c, nullptr};
  SystemdNotifier notifier;
  std::atomic<bool> stop{false};
  StateStore store{c, metrics, pipeline, notifier, stop};

  void judge(const std::string& url, const std::string& words) {
    Input in;
    in.url = url;
    in.fetched_at = 1795255200;
    in.body = "<html><body><p>" + words + "</p></body></html>";
    ASSERT_TRUE(pipeline.process(in));
  }
};

TEST(StateStore, TheDedupRoleLedgerKnowsAnInputHandedOverAgain) {
  StoreFixture f(config::Role::kDedup);
  const std::string extracted = f.c.topics.extracted;
  f.store.note_judged("newsflow.pages/0/10", extracted + "/3/100", "article-10");
  // Input 5 of the same partition, handed over after input 10 was judged: a repeat.
  EXPECT_TRUE(f.store.ledger().repeat({"newsflow.pages", 0, 5}, 3, 101));
  EXPECT_FALSE(f.store.ledger().repeat({"newsflow.pages", 0, 11}, 3, 101));
  // Input 10's article handed over again: a repeat; another article of it is not.
  EXPECT_TRUE(f.store.ledger().repeat({"newsflow.pages", 0, 10}, 3, 101, "article-10"));
  EXPECT_FALSE(f.store.ledger().repeat({"newsflow.pages", 0, 10}, 3, 101, "article-11"));
  // A record not of the extracted topic, or headers that do not parse, are not noted.
  f.store.note_judged("newsflow.pages/1/10", "other/3/100", "a");
  f.store.note_judged("nonsense", extracted + "/3/100", "a");
  EXPECT_EQ(f.store.ledger().size(), 1u);

  StoreFixture all(config::Role::kAll);  // only the dedup role keeps a ledger
  all.store.note_judged("newsflow.pages/0/10", extracted + "/3/100", "a");
  EXPECT_EQ(all.store.ledger().size(), 0u);
}

TEST(StateStore, AStateRecordOfAnInputNotCommittedWaitsOrIsDropped) {
  StoreFixture f(config::Role::kAll);
  // Nothing committed yet: a record of an input is not state yet.
  EXPECT_EQ(f.store.admit(std::string(f.c.topics.pages) + "/0/0", false), Admission::kWait);
  EXPECT_EQ(f.store.admit(std::string(f.c.topics.pages) + "/0/0", true), Admission::kDrop);
  EXPECT_EQ(f.store.admit("", true), Admission::kApply);  // from before the header
}

TEST(StateStore, ASnapshotIsDueEveryIntervalOfArticlesAndLaterWhenPostponed) {
  StoreFixture f(config::Role::kAll, /*snapshot_every=*/2);
  EXPECT_FALSE(f.store.snapshot_due());
  f.judge("https://a.test/1", "The first story of the day, with enough words to be one.");
  EXPECT_FALSE(f.store.snapshot_due());
  f.judge("https://b.test/2", "A second story about something else entirely, told at length.");
  EXPECT_TRUE(f.store.snapshot_due());
  f.store.snapshot_later();  // outputs on their way: a few batches later
  EXPECT_FALSE(f.store.snapshot_due());
  f.judge("https://c.test/3", "A third story, of another kind again, for the interval's sake.");
  EXPECT_TRUE(f.store.snapshot_due());

  StoreFixture extract(config::Role::kExtract, 1);  // an extractor holds no state
  extract.judge("https://a.test/1", "The first story of the day, with enough words to be one.");
  EXPECT_FALSE(extract.store.snapshot_due());
  StoreFixture off(config::Role::kAll, 0);  // snapshots off
  off.judge("https://a.test/1", "The first story of the day, with enough words to be one.");
  EXPECT_FALSE(off.store.snapshot_due());
}

}  // namespace
}  // namespace newsflow::daemon
