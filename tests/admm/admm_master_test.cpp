// The ADMM master and the distributed Newton master over real in-process workers: convergence
// to the optimum (checked by the optimality condition, not against nimbus's own output), the
// stop conditions, determinism.
#include "nimbus/solve/admm/admm_master.h"
#include "nimbus/solve/newton/newton_master.h"

#include <gtest/gtest.h>

#include <cmath>

#include "nimbus/data/libsvm_reader.h"
#include "nimbus/data/manifest.h"
#include "nimbus/data/synthetic.h"
#include "nimbus/runtime/threads_executor.h"
#include "support/test_support.h"

namespace nimbus {
namespace {

using testing::TempDir;

class CoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SyntheticOptions gen;
    gen.rows = 3000;
    gen.cols = 400;
    gen.nnz_per_row = 10;
    gen.seed = 11;
    ASSERT_TRUE(WriteSyntheticLibsvm(gen, dir_.File("d.svm")).ok());
    Result<Dataset> data = ReadLibsvmFile(dir_.File("d.svm"));
    ASSERT_TRUE(data.ok()) << data.status().ToString();
    data_ = *data;
  }

  ProblemSpec Spec(double l1, double l2, bool intercept) const {
    ProblemSpec spec;
    spec.rows = data_.rows();
    spec.cols = data_.cols();
    spec.regularizer = {l1, l2};
    spec.intercept = intercept;
    return spec;
  }

  std::vector<ShardSource> Shards(int workers) const {
    std::vector<ShardSource> shards;
    for (const auto& [begin, end] : PartitionRows(data_.matrix, workers)) {
      shards.push_back(ShardSource::InMemory(data_.Rows(begin, end)));
    }
    return shards;
  }

  Result<Solution> Solve(const ProblemSpec& spec, const AdmmOptions& options, int workers,
                         IterationCallback callback = nullptr, TraceSink* trace = nullptr,
                         const WorkerOptions& worker_options = {}) {
    ThreadsExecutor executor(Shards(workers), spec, worker_options);
    AdmmMaster coordinator(spec, options, &executor);
    if (callback) coordinator.SetIterationCallback(std::move(callback));
    if (trace != nullptr) coordinator.SetTraceSink(trace);
    return coordinator.Solve();
  }

  Result<Solution> SolveNewton(const ProblemSpec& spec, const NewtonOptions& options, int workers,
                               bool general_form = true, IterationCallback callback = nullptr) {
    WorkerOptions worker_options;
    worker_options.general_form = general_form;
    ThreadsExecutor executor(Shards(workers), spec, worker_options);
    NewtonMaster newton(spec, options, &executor);
    if (callback) newton.SetIterationCallback(std::move(callback));
    return newton.Solve();
  }

  double Violation(const ProblemSpec& spec, const std::vector<double>& x) const {
    return OptimalityViolation(spec, data_.matrix, data_.labels, x);
  }

  TempDir dir_;
  Dataset data_;
};

TEST_F(CoordinatorTest, ConvergesToTheOptimumForEachWorkerCount) {
  const ProblemSpec spec = Spec(2e-4, 0, false);
  AdmmOptions options;
  options.eps_rel = 1e-6;
  for (int workers : {1, 2, 3, 5}) {
    Result<Solution> solution = Solve(spec, options, workers);
    ASSERT_TRUE(solution.ok()) << solution.status().ToString();
    EXPECT_EQ(solution->summary.termination, Termination::kConverged) << workers;
    EXPECT_LT(Violation(spec, solution->model), 1e-3 * spec.regularizer.l1) << workers;
    // The summary's objective is F at the returned model, evaluated exactly.
    EXPECT_NEAR(solution->summary.objective, EvaluateObjective(spec, data_.matrix, data_.labels, solution->model), 1e-12);
    EXPECT_EQ(solution->summary.workers, workers);
    EXPECT_GT(solution->summary.nnz, 0);
    EXPECT_LT(solution->summary.nnz, spec.cols);
  }
}

TEST_F(CoordinatorTest, ElasticNetWithInterceptIsOptimal) {
  const ProblemSpec spec = Spec(1e-4, 1e-3, true);
  AdmmOptions options;
  options.eps_rel = 1e-6;
  Result<Solution> solution = Solve(spec, options, 3);
  ASSERT_TRUE(solution.ok()) << solution.status().ToString();
  ASSERT_EQ(solution->model.size(), static_cast<std::size_t>(spec.cols) + 1);
  EXPECT_LT(Violation(spec, solution->model), 1e-6);
}

TEST_F(CoordinatorTest, FixedRhoAndNoRelaxationStillConverge) {
  const ProblemSpec spec = Spec(2e-4, 0, false);
  AdmmOptions options;
  options.adaptive_rho = false;
  options.relaxation = 1.0;
  options.rho = 1e-4;
  options.eps_rel = 1e-6;
  Result<Solution> solution = Solve(spec, options, 2);
  ASSERT_TRUE(solution.ok());
  EXPECT_EQ(solution->summary.termination, Termination::kConverged);
  EXPECT_EQ(solution->summary.rho, 1e-4);
  EXPECT_EQ(solution->summary.rho_updates, 0);
  EXPECT_LT(Violation(spec, solution->model), 1e-3 * spec.regularizer.l1);
}

TEST_F(CoordinatorTest, AdaptiveRhoRecoversFromABadStart) {
  const ProblemSpec spec = Spec(2e-4, 0, false);
  AdmmOptions options;
  options.rho = 10.0;  // far too stiff for this problem
  options.eps_rel = 1e-5;
  options.max_iterations = 400;
  Result<Solution> solution = Solve(spec, options, 2);
  ASSERT_TRUE(solution.ok());
  EXPECT_EQ(solution->summary.termination, Termination::kConverged);
  EXPECT_GT(solution->summary.rho_updates, 0);
  EXPECT_LT(solution->summary.rho, 10.0);
}

TEST_F(CoordinatorTest, SameInputsGiveBitIdenticalModels) {
  const ProblemSpec spec = Spec(2e-4, 1e-4, true);
  Result<Solution> a = Solve(spec, AdmmOptions{}, 3);
  Result<Solution> b = Solve(spec, AdmmOptions{}, 3);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->model, b->model);  // exact, bit for bit
  EXPECT_EQ(a->summary.iterations, b->summary.iterations);
}

TEST_F(CoordinatorTest, IterationCapEndsWithThatManyIterations) {
  AdmmOptions options;
  options.max_iterations = 4;
  Result<Solution> solution = Solve(Spec(2e-4, 0, false), options, 2);
  ASSERT_TRUE(solution.ok());
  EXPECT_EQ(solution->summary.termination, Termination::kMaxIterations);
  EXPECT_EQ(solution->summary.iterations, 4);
  EXPECT_EQ(solution->summary.rounds, 5);
}

TEST_F(CoordinatorTest, TargetObjectiveStopsAsSoonAsReached) {
  const ProblemSpec spec = Spec(2e-4, 0, false);
  AdmmOptions tight;
  tight.eps_rel = 1e-6;
  Result<Solution> optimum = Solve(spec, tight, 2);
  ASSERT_TRUE(optimum.ok());
  AdmmOptions options;
  options.target_objective = optimum->summary.objective * (1 + 1e-3);
  Result<Solution> solution = Solve(spec, options, 2);
  ASSERT_TRUE(solution.ok());
  EXPECT_EQ(solution->summary.termination, Termination::kTargetObjective);
  EXPECT_LE(solution->summary.objective, *options.target_objective);
  EXPECT_LT(solution->summary.iterations, optimum->summary.iterations);
}

TEST_F(CoordinatorTest, CallbackSeesEachIterationAndCanStop) {
  std::vector<IterationInfo> seen;
  Result<Solution> solution = Solve(Spec(2e-4, 0, false), AdmmOptions{}, 2, [&](const IterationInfo& info) {
    seen.push_back(info);
    return info.iteration < 3;
  });
  ASSERT_TRUE(solution.ok());
  EXPECT_EQ(solution->summary.termination, Termination::kUserStopped);
  ASSERT_EQ(seen.size(), 3u);
  for (std::size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].iteration, static_cast<int>(i + 1));
    EXPECT_GT(seen[i].primal_residual, 0);
  }
  // The objective falls as ADMM proceeds from z = 0.
  EXPECT_LT(seen.back().objective, seen.front().objective);
  EXPECT_EQ(solution->summary.objective, seen.back().objective);
}

class CollectingSink : public TraceSink {
 public:
  void Write(std::string_view line) override { lines.emplace_back(line); }
  std::vector<std::string> lines;
};

TEST_F(CoordinatorTest, TraceHasSetupEveryRoundAndSummary) {
  CollectingSink sink;
  Result<Solution> solution = Solve(Spec(2e-4, 0, false), AdmmOptions{}, 2, nullptr, &sink);
  ASSERT_TRUE(solution.ok());
  ASSERT_EQ(sink.lines.size(), static_cast<std::size_t>(solution->summary.rounds) + 2);
  EXPECT_NE(sink.lines.front().find("\"event\":\"setup\""), std::string::npos);
  EXPECT_NE(sink.lines[1].find("\"event\":\"round\",\"round\":0"), std::string::npos) << sink.lines[1];
  EXPECT_NE(sink.lines.back().find("\"event\":\"summary\""), std::string::npos);
}

TEST_F(CoordinatorTest, AWorkerThatCannotLoadItsShardFailsTheStartWithItsName) {
  const ProblemSpec spec = Spec(2e-4, 0, false);
  Result<std::unique_ptr<Store>> store = OpenStore(dir_.File("shards"), true);
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(WriteShards(data_, 2, "d.svm", **store).ok());
  std::shared_ptr<Store> shared = std::move(store).value();
  std::vector<ShardSource> shards{ShardSource::InStore(shared, ShardKey(0)), ShardSource::InStore(shared, "missing.bin")};
  ThreadsExecutor executor(std::move(shards), spec, WorkerOptions{});
  AdmmMaster coordinator(spec, AdmmOptions{}, &executor);
  Result<Solution> solution = coordinator.Solve();
  ASSERT_FALSE(solution.ok());
  EXPECT_NE(solution.status().message().find("worker 1"), std::string::npos) << solution.status().ToString();
  EXPECT_NE(solution.status().message().find("missing.bin"), std::string::npos) << solution.status().ToString();
}

TEST_F(CoordinatorTest, PartialBarrierConvergesWithOneSlowWorker) {
  const ProblemSpec spec = Spec(2e-4, 0, false);
  AdmmOptions sync_options;
  sync_options.eps_rel = 1e-5;
  Result<Solution> reference = Solve(spec, sync_options, 3);
  ASSERT_TRUE(reference.ok());

  WorkerOptions slow;
  slow.faults.delay_ms = 15;  // worker 0 takes 15 ms more per round than the others' ~1 ms
  slow.faults.delay_worker = 0;
  AdmmOptions partial = sync_options;
  partial.barrier = 2;
  partial.max_staleness = 3;
  partial.max_iterations = 2000;
  Result<Solution> solution = Solve(spec, partial, 3, nullptr, nullptr, slow);
  ASSERT_TRUE(solution.ok()) << solution.status().ToString();
  EXPECT_EQ(solution->summary.termination, Termination::kConverged);
  EXPECT_GT(solution->summary.stale_replies, 0);  // the slow worker's w_i was reused
  EXPECT_NEAR(solution->summary.objective, reference->summary.objective, 1e-6 * reference->summary.objective);
  EXPECT_LT(Violation(spec, solution->model), 1e-2 * spec.regularizer.l1);
}

TEST_F(CoordinatorTest, AFullBarrierOptionLeavesTheRunUnchanged) {
  const ProblemSpec spec = Spec(2e-4, 0, false);
  AdmmOptions plain;
  AdmmOptions explicit_all = plain;
  explicit_all.barrier = 3;  // = K: a full barrier
  explicit_all.max_staleness = 5;
  Result<Solution> a = Solve(spec, plain, 3);
  Result<Solution> b = Solve(spec, explicit_all, 3);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->model, b->model);
  EXPECT_EQ(b->summary.stale_replies, 0);
}

// Checkpoint and resume: a run resumed from the master's state at round k (new workers,
// their state rebuilt from the last two replies each) ends where the uninterrupted run ends.
TEST_F(CoordinatorTest, AResumedRunEndsWhereTheUninterruptedRunEnds) {
  const ProblemSpec spec = Spec(2e-4, 1e-4, true);
  AdmmOptions options;
  options.eps_rel = 1e-5;
  for (const bool general : {false, true}) {
    SCOPED_TRACE(general ? "general form" : "dense form");
    WorkerOptions worker_options;
    worker_options.general_form = general;
    Result<Solution> plain = Solve(spec, options, 3, nullptr, nullptr, worker_options);
    ASSERT_TRUE(plain.ok()) << plain.status().ToString();

    std::vector<MasterState> states;
    ThreadsExecutor executor(Shards(3), spec, worker_options);
    AdmmMaster coordinator(spec, options, &executor);
    coordinator.SetCheckpointWriter(3, [&](const MasterState& state) {
      states.push_back(state);
      return Status::Ok();
    });
    Result<Solution> checkpointed = coordinator.Solve();
    ASSERT_TRUE(checkpointed.ok()) << checkpointed.status().ToString();
    EXPECT_EQ(checkpointed->model, plain->model);  // writing checkpoints changes nothing
    ASSERT_GE(states.size(), 2u);
    EXPECT_EQ(checkpointed->summary.checkpoints, static_cast<int>(states.size()));
    EXPECT_EQ(states[0].next_round, 3);
    EXPECT_EQ(states[1].next_round, 6);

    for (const MasterState& state : {states.front(), states.back()}) {
      ThreadsExecutor fresh(Shards(3), spec, worker_options);
      AdmmMaster resumed(spec, options, &fresh);
      resumed.ResumeFrom(state);
      Result<Solution> solution = resumed.Solve();
      ASSERT_TRUE(solution.ok()) << solution.status().ToString();
      EXPECT_EQ(solution->summary.resumed_at_round, state.next_round);
      EXPECT_EQ(solution->summary.termination, Termination::kConverged);
      EXPECT_EQ(solution->summary.iterations, plain->summary.iterations);
      double largest = 0;
      for (std::size_t j = 0; j < plain->model.size(); ++j) {
        largest = std::max(largest, std::abs(solution->model[j] - plain->model[j]));
      }
      EXPECT_LT(largest, 1e-9) << "resumed at round " << state.next_round;
      EXPECT_NEAR(solution->summary.objective, plain->summary.objective, 1e-12 * plain->summary.objective);
      EXPECT_LT(Violation(spec, solution->model), 1e-3 * spec.regularizer.l1);
    }
  }
}

TEST_F(CoordinatorTest, ACheckpointOfOtherDataOrWorkersIsRefused) {
  const ProblemSpec spec = Spec(2e-4, 0, false);
  std::vector<MasterState> states;
  ThreadsExecutor executor(Shards(3), spec, WorkerOptions{});
  AdmmMaster coordinator(spec, AdmmOptions{}, &executor);
  coordinator.SetCheckpointWriter(2, [&](const MasterState& state) {
    states.push_back(state);
    return Status::Ok();
  });
  ASSERT_TRUE(coordinator.Solve().ok());
  ASSERT_FALSE(states.empty());

  ThreadsExecutor two(Shards(2), spec, WorkerOptions{});
  AdmmMaster with_two(spec, AdmmOptions{}, &two);
  with_two.ResumeFrom(states[0]);
  Result<Solution> refused = with_two.Solve();
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("a run with 3 workers, this one has 2"), std::string::npos)
      << refused.status().ToString();

  MasterState other_data = states[0];
  other_data.workers[1].nnz += 1;
  ThreadsExecutor three(Shards(3), spec, WorkerOptions{});
  AdmmMaster with_other(spec, AdmmOptions{}, &three);
  with_other.ResumeFrom(other_data);
  refused = with_other.Solve();
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("worker 1's shard has"), std::string::npos) << refused.status().ToString();
  // (Checkpoints with a partial barrier are refused with the other option combinations, in
  // SolveOptions::Validate: tests/api/solve_test.cpp.)
}

TEST(AdmmOptions, ValidateNamesTheField) {
  auto message = [](auto mutate) {
    AdmmOptions options;
    mutate(options);
    return options.Validate().message();
  };
  EXPECT_EQ(AdmmOptions{}.Validate().ok(), true);
  EXPECT_NE(message([](AdmmOptions& o) { o.relaxation = 2.0; }).find("relaxation"), std::string::npos);
  EXPECT_NE(message([](AdmmOptions& o) { o.rho = -1; }).find("rho"), std::string::npos);
  EXPECT_NE(message([](AdmmOptions& o) { o.eps_abs = 0, o.eps_rel = 0; }).find("eps_abs"), std::string::npos);
  EXPECT_NE(message([](AdmmOptions& o) { o.max_iterations = -1; }).find("max_iterations"), std::string::npos);
  EXPECT_NE(message([](AdmmOptions& o) { o.rho_min = 10, o.rho_max = 1; }).find("rho_min"), std::string::npos);
}

TEST(InitialRho, ScalesWithTheCurvatureAndTheWorkerCount) {
  ProblemSpec spec;
  spec.rows = 100;
  spec.cols = 9;
  spec.intercept = true;  // model size 10
  std::vector<WorkerReady> one(1), two(2);
  one[0].curvature_trace = 50;
  two[0].curvature_trace = two[1].curvature_trace = 25;
  // mean diagonal = 50 / (100 * 10) = 0.05
  EXPECT_DOUBLE_EQ(InitialRho(spec, one), 0.6 * 0.05);
  EXPECT_DOUBLE_EQ(InitialRho(spec, two), 0.6 * 0.05 / std::pow(2.0, 0.7));
}

}  // namespace
}  // namespace nimbus

namespace nimbus {
namespace {

TEST_F(CoordinatorTest, NewtonReachesTheOptimumForEachWorkerCountAndForm) {
  for (const bool intercept : {false, true}) {
    const ProblemSpec spec = Spec(0, 1e-3, intercept);
    NewtonOptions options;
    options.gradient_tolerance = 1e-8;
    for (const bool general : {true, false}) {
      for (int workers : {1, 2, 3, 5}) {
        SCOPED_TRACE(std::to_string(workers) + (general ? " general" : " dense") + (intercept ? " intercept" : ""));
        Result<Solution> solution = SolveNewton(spec, options, workers, general);
        ASSERT_TRUE(solution.ok()) << solution.status().ToString();
        EXPECT_EQ(solution->summary.termination, Termination::kConverged) << solution->summary.message;
        EXPECT_EQ(solution->summary.algorithm, Algorithm::kNewton);
        EXPECT_LT(Violation(spec, solution->model), 1e-9);
        EXPECT_NEAR(solution->summary.objective, EvaluateObjective(spec, data_.matrix, data_.labels, solution->model),
                    1e-12);
        // Newton converges in few steps; every step is an evaluation plus its CG products.
        EXPECT_LT(solution->summary.iterations, 20);
        EXPECT_EQ(solution->summary.rounds, 1 + solution->summary.iterations + solution->summary.cg_iterations);
      }
    }
  }
}

// With an l1 term: the orthant-wise steps, checked by the subgradient condition directly.
TEST_F(CoordinatorTest, NewtonReachesTheL1OptimumForEachWorkerCount) {
  for (const bool intercept : {false, true}) {
    for (const double l2 : {0.0, 1e-3}) {
      const ProblemSpec spec = Spec(2e-4, l2, intercept);
      NewtonOptions options;
      options.gradient_tolerance = 1e-9;
      for (int workers : {1, 2, 5}) {
        SCOPED_TRACE(std::to_string(workers) + " workers, l2 " + std::to_string(l2) + (intercept ? ", intercept" : ""));
        Result<Solution> solution = SolveNewton(spec, options, workers);
        ASSERT_TRUE(solution.ok()) << solution.status().ToString();
        EXPECT_EQ(solution->summary.termination, Termination::kConverged) << solution->summary.message;
        EXPECT_LT(Violation(spec, solution->model), 1e-6 * spec.regularizer.l1);
        EXPECT_GT(solution->summary.nnz, 0);
        EXPECT_LT(solution->summary.nnz, spec.cols);
        EXPECT_NEAR(solution->summary.objective, EvaluateObjective(spec, data_.matrix, data_.labels, solution->model),
                    1e-12);
      }
    }
  }
}

TEST_F(CoordinatorTest, NewtonRefusesBadOptions) {
  NewtonOptions bad;
  bad.gradient_tolerance = 0;
  Result<Solution> refused = SolveNewton(Spec(0, 1e-3, false), bad, 2);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("gradient_tolerance"), std::string::npos);
}

TEST_F(CoordinatorTest, NewtonStopsAtTheTargetTheCapAndTheCallback) {
  const ProblemSpec spec = Spec(0, 1e-3, false);
  NewtonOptions options;
  options.gradient_tolerance = 1e-10;
  Result<Solution> full = SolveNewton(spec, options, 2);
  ASSERT_TRUE(full.ok());
  options.target_objective = full->summary.objective * (1 + 1e-2);
  Result<Solution> target = SolveNewton(spec, options, 2);
  ASSERT_TRUE(target.ok());
  EXPECT_EQ(target->summary.termination, Termination::kTargetObjective);
  EXPECT_LE(target->summary.objective, *options.target_objective);
  EXPECT_LT(target->summary.iterations, full->summary.iterations);
  // A target beyond where the gradient test would stop is still reached: it replaces the test.
  NewtonOptions coarse;
  coarse.gradient_tolerance = 1e-2;
  Result<Solution> loose = SolveNewton(spec, coarse, 2);
  ASSERT_TRUE(loose.ok());
  coarse.target_objective = full->summary.objective + 1e-3 * (loose->summary.objective - full->summary.objective);
  ASSERT_GT(loose->summary.objective, *coarse.target_objective);
  Result<Solution> beyond = SolveNewton(spec, coarse, 2);
  ASSERT_TRUE(beyond.ok());
  EXPECT_EQ(beyond->summary.termination, Termination::kTargetObjective) << beyond->summary.message;
  EXPECT_LE(beyond->summary.objective, *coarse.target_objective);
  options.target_objective.reset();
  options.max_iterations = 2;
  Result<Solution> capped = SolveNewton(spec, options, 2);
  ASSERT_TRUE(capped.ok());
  EXPECT_EQ(capped->summary.termination, Termination::kMaxIterations);
  EXPECT_EQ(capped->summary.iterations, 2);
  options.max_iterations = 100;
  int seen = 0;
  Result<Solution> stopped = SolveNewton(spec, options, 2, true, [&](const IterationInfo& info) {
    ++seen;
    EXPECT_EQ(info.iteration, seen);
    return seen < 3;
  });
  ASSERT_TRUE(stopped.ok());
  EXPECT_EQ(stopped->summary.termination, Termination::kUserStopped);
  EXPECT_EQ(seen, 3);
}

TEST_F(CoordinatorTest, NewtonGivesTheSameModelForTheSameInputs) {
  const ProblemSpec spec = Spec(0, 1e-3, true);
  Result<Solution> a = SolveNewton(spec, NewtonOptions{}, 3), b = SolveNewton(spec, NewtonOptions{}, 3);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->model, b->model);
}

}  // namespace
}  // namespace nimbus

namespace nimbus {
namespace {

// The algebra a replacement worker starts from, by hand: u = (w_prev - z_last) rho_prev /
// rho_last, xh = w_last - u, x = (xh - (1 - alpha) z_last) / alpha.
TEST(RebuildResumeState, UndoesTheRelaxationAndTheDualUpdateByHand) {
  const KeptAnswer previous{SharedVector(std::vector<double>{1, 2}), 2.0, 1.5, SharedVector(std::vector<double>{3, 5})};
  const KeptAnswer last{SharedVector(std::vector<double>{2, 2}), 4.0, 1.5, SharedVector(std::vector<double>{4, 1})};
  const ResumeState state = RebuildResumeState(&previous, last);
  EXPECT_EQ(state.u, (std::vector<double>{0.5, 1.5}));
  EXPECT_EQ(state.x_relaxed, (std::vector<double>{3.5, -0.5}));
  EXPECT_NEAR(state.x[0], 3.0, 1e-15);
  EXPECT_NEAR(state.x[1], 1.0 / 3.0, 1e-15);
  EXPECT_EQ(state.rho_of_u, 4.0);
  const ResumeState first = RebuildResumeState(nullptr, last);  // one answer: the dual starts at 0
  EXPECT_EQ(first.u, (std::vector<double>{0, 0}));
  EXPECT_EQ(first.x_relaxed, (std::vector<double>{4, 1}));
}

}  // namespace
}  // namespace nimbus
