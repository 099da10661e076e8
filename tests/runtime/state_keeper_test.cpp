// State kept outside the worker: a replacement resumed from the master's kept replies serves
// the next round as the worker it replaces would have.
#include "nimbus/runtime/state_keeper.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <random>

#include "nimbus/core/file_io.h"
#include "nimbus/worker/shard_worker.h"

namespace nimbus {
namespace {

// A small dense-ish logistic problem as one shard.
struct Problem {
  std::vector<int64_t> row_ptr{0};
  std::vector<uint32_t> col_idx;
  std::vector<double> values;
  std::vector<double> labels;
  ProblemSpec spec;
  Dataset shard;

  Problem() {
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> uniform(-1, 1);
    const int rows = 60, cols = 8;
    for (int r = 0; r < rows; ++r) {
      for (uint32_t j = 0; j < cols; ++j) {
        if ((r + j) % 3 == 0) continue;
        col_idx.push_back(j);
        values.push_back(uniform(rng));
      }
      row_ptr.push_back(static_cast<int64_t>(col_idx.size()));
      labels.push_back(uniform(rng) > 0 ? 1.0 : -1.0);
    }
    spec.rows = 120;
    spec.cols = cols;
    spec.intercept = true;
    shard.matrix = {rows, cols, row_ptr.data(), col_idx.data(), values.data()};
    shard.labels = labels;
  }
};

std::shared_ptr<const std::vector<double>> RandomZ(std::size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1, 1);
  auto z = std::make_shared<std::vector<double>>(n);
  for (double& v : *z) v = uniform(rng);
  return z;
}

RoundRequest Round(int64_t round, std::shared_ptr<const std::vector<double>> z, double rho) {
  RoundRequest request;
  request.round = round;
  request.z = std::move(z);
  request.rho = rho;
  request.relaxation = 1.6;
  request.inner_tolerance = 1e-12;  // exact x-updates: the comparison is then about the state
  return request;
}

double MaxDifference(std::span<const double> a, std::span<const double> b) {
  double worst = 0;
  for (std::size_t j = 0; j < a.size(); ++j) worst = std::max(worst, std::abs(a[j] - b[j]));
  return worst;
}

class StateKeeperTest : public ::testing::TestWithParam<bool> {};  // spill to disk or not

TEST_P(StateKeeperTest, AReplacementContinuesAsTheOriginalWould) {
  const bool spill = GetParam();
  Problem p;
  const std::size_t n = p.spec.model_size();
  auto keeper_holder = std::make_unique<StateKeeper>(1, n, spill ? 0 : int64_t{1} << 30, /*may_spill=*/true);
  StateKeeper& keeper = *keeper_holder;
  EXPECT_EQ(keeper.spilling(), spill);
  EXPECT_EQ(keeper.spill_directory(), "");  // made at the first spill, not before

  ShardWorker original(0, p.shard, p.spec, WorkerOptions{});
  // Rounds with rho changing, as adaptive rho does, so the kept dual must be rescaled.
  const double rhos[] = {0.5, 0.5, 2.0, 0.25, 0.25, 1.0};
  EXPECT_EQ(keeper.ResumeFor(0).value(), nullptr);  // nothing kept yet: start from zero
  for (int64_t k = 0; k < 6; ++k) {
    const RoundRequest request = Round(k, RandomZ(n, 100 + static_cast<uint64_t>(k)), rhos[k]);
    if (k >= 1) {
      // A replacement started now, resumed from the kept state, serves round k.
      Result<std::shared_ptr<const ResumeState>> resume = keeper.ResumeFor(0);
      ASSERT_TRUE(resume.ok()) << resume.status().ToString();
      ASSERT_NE(*resume, nullptr);
      ShardWorker replacement(0, p.shard, p.spec, WorkerOptions{});
      RoundRequest resumed = request;
      resumed.resume = *resume;
      const WorkerReply theirs = replacement.Serve(resumed);
      const WorkerReply ours = original.Serve(request);
      ASSERT_EQ(theirs.status, ReplyStatus::kOk) << theirs.error;
      ASSERT_EQ(ours.status, ReplyStatus::kOk);
      // The same reply and the same scalars, up to rounding in rebuilding the state.
      EXPECT_LT(MaxDifference(theirs.w, ours.w), 1e-10) << "round " << k;
      EXPECT_TRUE(theirs.scalars.valid);
      EXPECT_NEAR(theirs.scalars.primal_squared, ours.scalars.primal_squared, 1e-10 * (1 + ours.scalars.primal_squared));
      EXPECT_NEAR(theirs.scalars.u_squared, ours.scalars.u_squared, 1e-10 * (1 + ours.scalars.u_squared));
      EXPECT_NEAR(theirs.scalars.x_squared, ours.scalars.x_squared, 1e-10 * (1 + ours.scalars.x_squared));
      ASSERT_TRUE(keeper.Record(0, request, ours.w).ok());
    } else {
      const WorkerReply ours = original.Serve(request);
      ASSERT_TRUE(keeper.Record(0, request, ours.w).ok());
    }
  }
  EXPECT_EQ(keeper.bytes_in_memory() == 0, spill);
  // The spilled files' directory exists while the keeper does, and goes with it.
  const std::string directory = keeper.spill_directory();
  EXPECT_EQ(directory.empty(), !spill);
  keeper_holder.reset();
  if (spill) {
    EXPECT_FALSE(std::filesystem::exists(directory)) << directory;
  }
}

INSTANTIATE_TEST_SUITE_P(InMemoryAndSpilled, StateKeeperTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Spilled" : "InMemory"; });

TEST(StateKeeper, RefusesARecordOfTheWrongSize) {
  StateKeeper keeper(2, 5, int64_t{1} << 30, /*may_spill=*/false);
  RoundRequest request = Round(0, RandomZ(5, 1), 1.0);
  EXPECT_FALSE(keeper.Record(1, request, std::vector<double>(4)).ok());
}

}  // namespace
}  // namespace nimbus
