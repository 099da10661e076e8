// The threads runtime as an Executor: starting, rounds, deadlines and failures as values.
#include "nimbus/runtime/threads_executor.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "nimbus/data/libsvm_reader.h"
#include "nimbus/data/manifest.h"
#include "nimbus/data/synthetic.h"
#include "support/test_support.h"

namespace nimbus {
namespace {

using testing::TempDir;

class ThreadsExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SyntheticOptions gen;
    gen.rows = 2000;
    gen.cols = 300;
    gen.nnz_per_row = 8;
    ASSERT_TRUE(WriteSyntheticLibsvm(gen, dir_.File("d.svm")).ok());
    data_ = *ReadLibsvmFile(dir_.File("d.svm"));
    spec_.rows = data_.rows();
    spec_.cols = data_.cols();
    spec_.regularizer.l1 = 1e-3;
    Result<std::unique_ptr<Store>> store = OpenStore(dir_.File("shards"), true);
    ASSERT_TRUE(store.ok());
    store_ = std::move(store).value();
    Result<Manifest> manifest = WriteShards(data_, 3, "d.svm", *store_);
    ASSERT_TRUE(manifest.ok());
    manifest_ = *manifest;
  }

  std::vector<ShardSource> StoreShards() const {
    std::vector<ShardSource> shards;
    for (const ShardEntry& entry : manifest_.shards) shards.push_back(ShardSource::InStore(store_, entry.key));
    return shards;
  }

  RoundRequest Round(int64_t round, std::size_t size) const {
    RoundRequest request;
    request.round = round;
    request.z = std::make_shared<std::vector<double>>(size, 0.0);
    request.rho = 1e-3;
    request.inner_relative_tolerance = 0.1;
    return request;
  }

  TempDir dir_;
  Dataset data_;
  ProblemSpec spec_;
  std::shared_ptr<Store> store_;
  Manifest manifest_;
};

TEST_F(ThreadsExecutorTest, WorkersLoadTheirShardsAndReportReady) {
  ThreadsExecutor executor(StoreShards(), spec_, WorkerOptions{});
  EXPECT_EQ(executor.name(), "threads");
  EXPECT_EQ(executor.workers(), 3);
  Result<std::vector<WorkerReady>> ready = executor.Start(Deadline::After(60));
  ASSERT_TRUE(ready.ok()) << ready.status().ToString();
  ASSERT_EQ(ready->size(), 3u);
  int64_t rows = 0, nnz = 0;
  for (std::size_t i = 0; i < ready->size(); ++i) {
    EXPECT_EQ((*ready)[i].worker, static_cast<int>(i));
    EXPECT_EQ((*ready)[i].rows, manifest_.shards[i].rows);
    EXPECT_GE((*ready)[i].load_seconds, 0);
    rows += (*ready)[i].rows;
    nnz += (*ready)[i].nnz;
  }
  EXPECT_EQ(rows, data_.rows());
  EXPECT_EQ(nnz, data_.nnz());
}

TEST_F(ThreadsExecutorTest, RepliesComeInWorkerOrderForTheRound) {
  ThreadsExecutor executor(StoreShards(), spec_, WorkerOptions{});
  ASSERT_TRUE(executor.Start(Deadline::After(60)).ok());
  for (int64_t round = 0; round < 3; ++round) {
    const std::vector<WorkerReply> replies = executor.RunRound(Round(round, spec_.model_size()), Deadline::After(60));
    ASSERT_EQ(replies.size(), 3u);
    for (std::size_t i = 0; i < replies.size(); ++i) {
      EXPECT_EQ(replies[i].status, ReplyStatus::kOk) << replies[i].error;
      EXPECT_EQ(replies[i].worker, static_cast<int>(i));
      EXPECT_EQ(replies[i].round, round);
      EXPECT_EQ(replies[i].w.size(), spec_.model_size());
      EXPECT_EQ(replies[i].scalars.valid, round > 0);
    }
  }
  executor.Stop();
  executor.Stop();  // idempotent
}

TEST_F(ThreadsExecutorTest, AMalformedRoundIsAFailedReplyNotACrash) {
  ThreadsExecutor executor(StoreShards(), spec_, WorkerOptions{});
  ASSERT_TRUE(executor.Start(Deadline::After(60)).ok());
  const std::vector<WorkerReply> replies = executor.RunRound(Round(0, 7), Deadline::After(60));
  for (const WorkerReply& reply : replies) {
    EXPECT_EQ(reply.status, ReplyStatus::kFailed);
    EXPECT_NE(reply.error.find("z has 7 entries"), std::string::npos) << reply.error;
  }
  // The workers are still there for a good round.
  for (const WorkerReply& reply : executor.RunRound(Round(1, spec_.model_size()), Deadline::After(60))) {
    EXPECT_EQ(reply.status, ReplyStatus::kOk) << reply.error;
  }
}

TEST_F(ThreadsExecutorTest, AMissedDeadlineIsATimedOutReply) {
  WorkerOptions slow;
  slow.faults.delay_ms = 300;  // round 0 of every worker takes at least 0.3 s
  slow.faults.delay_probability = 1;
  ThreadsExecutor executor(StoreShards(), spec_, slow);
  ASSERT_TRUE(executor.Start(Deadline::After(60)).ok());
  const std::vector<WorkerReply> late = executor.RunRound(Round(0, spec_.model_size()), Deadline::After(0.05));
  for (const WorkerReply& reply : late) {
    EXPECT_EQ(reply.status, ReplyStatus::kTimedOut);
    EXPECT_NE(reply.error.find("deadline"), std::string::npos);
  }
  // Late replies to round 0 are dropped; round 1 gets its own.
  for (const WorkerReply& reply : executor.RunRound(Round(1, spec_.model_size()), Deadline::After(60))) {
    EXPECT_EQ(reply.status, ReplyStatus::kOk);
    EXPECT_EQ(reply.round, 1);
  }
}

TEST_F(ThreadsExecutorTest, AConcurrencyLimitRunsTheWorkersOneAtATimeWithTheSameResults) {
  WorkerOptions slow;
  slow.faults.delay_ms = 20;  // long enough that overlapping computations would show
  slow.faults.delay_probability = 1;
  ThreadsExecutor limited(StoreShards(), spec_, slow, /*concurrency=*/1);
  ThreadsExecutor free(StoreShards(), spec_, slow);
  ASSERT_TRUE(limited.Start(Deadline::After(60)).ok());
  ASSERT_TRUE(free.Start(Deadline::After(60)).ok());
  for (int64_t round = 0; round < 2; ++round) {
    std::vector<WorkerReply> one_at_a_time = limited.RunRound(Round(round, spec_.model_size()), Deadline::After(60));
    const std::vector<WorkerReply> together = free.RunRound(Round(round, spec_.model_size()), Deadline::After(60));
    ASSERT_EQ(one_at_a_time.size(), 3u);
    ASSERT_EQ(together.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(one_at_a_time[i].status, ReplyStatus::kOk) << one_at_a_time[i].error;
      EXPECT_EQ(one_at_a_time[i].w, together[i].w);
    }
    // No two computations overlap: sorted by start, each begins after the one before ended.
    std::sort(one_at_a_time.begin(), one_at_a_time.end(),
              [](const WorkerReply& a, const WorkerReply& b) { return a.timings.start_wall < b.timings.start_wall; });
    for (std::size_t i = 1; i < 3; ++i) {
      EXPECT_GE(one_at_a_time[i].timings.start_wall, one_at_a_time[i - 1].timings.end_wall) << "round " << round;
    }
  }
}

TEST_F(ThreadsExecutorTest, AShardWithMoreFeaturesThanTheProblemIsRefused) {
  ProblemSpec narrow = spec_;
  narrow.cols = 10;
  ThreadsExecutor executor(StoreShards(), narrow, WorkerOptions{});
  Result<std::vector<WorkerReady>> ready = executor.Start(Deadline::After(60));
  ASSERT_FALSE(ready.ok());
  EXPECT_NE(ready.status().message().find("worker 0"), std::string::npos) << ready.status().ToString();
  EXPECT_NE(ready.status().message().find("features"), std::string::npos);
}

}  // namespace
}  // namespace nimbus
