// Tests of the trust-region Newton-CG solver on x-update objectives of small sparse problems,
// checked against dense independent solutions.
#include "nimbus/local/newton_cg.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "local/sparse_test_problem.h"
#include "nimbus/local/augmented_objective.h"

namespace nimbus {
namespace {

using testing::MakeRandomProblem;
using testing::MakeScaledQuadratic;
using testing::RefAugmentedGradient;
using testing::RefAugmentedMinimizer;
using testing::RefMaxAbsDiff;
using testing::RefNorm;
using testing::RefSquaredLossMinimizer;
using testing::SparseProblem;
using testing::RandomVector;
using testing::kAllLosses;
using testing::kTotalRows;
using testing::Label;
using testing::ShardProblem;




TEST(NewtonCgTest, SquaredLossMinimizerSolvesTheNormalEquations) {
  for (bool intercept : {false, true}) {
    for (double rho : {1e-3, 0.1, 2.0}) {
      const SparseProblem p = ShardProblem(Loss::kSquared, 42);
      const std::size_t n = p.Width(intercept);
      AugmentedShardObjective f(p.View(), p.labels, Loss::kSquared, intercept, 120);
      const std::vector<double> v = RandomVector(n, 7, 1.0);
      f.SetCenter(v, rho);
      std::vector<double> x(n, 0.0);
      const NewtonCgOptions options;  // gradient_tolerance 1e-8
      const LocalSolveStats stats = MinimizeNewtonCg(f, x, options);
      const std::string what = Label(Loss::kSquared, intercept, rho);
      EXPECT_TRUE(stats.converged) << what << ": stopped after " << stats.iterations << " steps at ||g|| = "
                                   << stats.final_gradient_norm;
      EXPECT_LE(stats.final_gradient_norm, 1e-8) << what;
      EXPECT_GT(stats.iterations, 0) << what;
      EXPECT_GE(stats.cg_iterations, stats.iterations) << what;
      EXPECT_GE(stats.evaluations, stats.iterations + 1) << what;
      // The gradient, computed independently, is at the tolerance too.
      const std::vector<double> g = RefAugmentedGradient(p, Loss::kSquared, intercept, kTotalRows, rho, v, x);
      EXPECT_LE(RefNorm(g), 1e-8 * (1 + 1e-6)) << what;
      EXPECT_NEAR(stats.final_gradient_norm, RefNorm(g), 1e-13) << what;
      // ||x - x*|| <= ||g|| / rho (the objective is rho-strongly convex): x is as close to the
      // normal equations' solution as its own gradient says.
      const std::vector<double> expected = RefSquaredLossMinimizer(p, intercept, kTotalRows, rho, v);
      EXPECT_LE(RefMaxAbsDiff(x, expected), RefNorm(g) / rho * (1 + 1e-6) + 1e-13) << what;
    }
  }
}

TEST(NewtonCgTest, MatchesADenseNewtonSolutionForEveryLoss) {
  for (const Loss& loss : kAllLosses) {
    for (bool intercept : {false, true}) {
      for (double rho : {1e-2, 0.5}) {
        const SparseProblem p = ShardProblem(loss, 100 + static_cast<uint64_t>(loss.kind()));
        const std::size_t n = p.Width(intercept);
        AugmentedShardObjective f(p.View(), p.labels, loss, intercept, 120);
        const std::vector<double> v = RandomVector(n, 8, 2.0);
        f.SetCenter(v, rho);
        std::vector<double> x = RandomVector(n, 9, 1.0);
        const NewtonCgOptions options;  // gradient_tolerance 1e-8
        const LocalSolveStats stats = MinimizeNewtonCg(f, x, options);
        const std::string what = Label(loss, intercept, rho);
        EXPECT_TRUE(stats.converged) << what << ": stopped after " << stats.iterations << " steps at ||g|| = "
                                     << stats.final_gradient_norm;
        EXPECT_LE(stats.final_gradient_norm, 1e-8) << what;
        const std::vector<double> g = RefAugmentedGradient(p, loss, intercept, kTotalRows, rho, v, x);
        EXPECT_LE(RefNorm(g), 1e-8 * (1 + 1e-6)) << what;
        EXPECT_NEAR(stats.final_gradient_norm, RefNorm(g), 1e-13) << what;
        const std::vector<double> expected = RefAugmentedMinimizer(p, loss, intercept, kTotalRows, rho, v);
        EXPECT_LE(RefMaxAbsDiff(x, expected), RefNorm(g) / rho * (1 + 1e-6) + 1e-13) << what;
      }
    }
  }
}

TEST(NewtonCgTest, ConvergesFromAFarStartingPoint) {
  // Huge margins at the start: the trust region has to shrink and grow again.
  for (const Loss& loss : kAllLosses) {
    const SparseProblem p = ShardProblem(loss, 300);
    AugmentedShardObjective f(p.View(), p.labels, loss, true, 120);
    const std::vector<double> v(16, 0.0);
    f.SetCenter(v, 1e-3);
    std::vector<double> x = RandomVector(16, 301, 50.0);
    const NewtonCgOptions options;
    const LocalSolveStats stats = MinimizeNewtonCg(f, x, options);
    EXPECT_TRUE(stats.converged) << LossName(loss) << " final " << stats.final_gradient_norm;
    const std::vector<double> g = RefAugmentedGradient(p, loss, true, kTotalRows, 1e-3, v, x);
    EXPECT_LE(RefNorm(g), 1e-8 * (1 + 1e-6)) << LossName(loss);
    const std::vector<double> expected = RefAugmentedMinimizer(p, loss, true, kTotalRows, 1e-3, v);
    EXPECT_LE(RefMaxAbsDiff(x, expected), RefNorm(g) / 1e-3 * (1 + 1e-6) + 1e-12) << LossName(loss);
  }
}

TEST(NewtonCgTest, WarmStartFromTheSolutionTakesNoIterations) {
  for (const Loss& loss : kAllLosses) {
    const SparseProblem p = ShardProblem(loss, 55);
    AugmentedShardObjective f(p.View(), p.labels, loss, true, 120);
    const std::vector<double> v = RandomVector(16, 56, 1.0);
    f.SetCenter(v, 0.2);
    std::vector<double> x(16, 0.0);
    // A tolerance the solver reaches on every loss (see ReachesAbsoluteTolerancesFarAboveRounding
    // for the default one): this test is about the warm start.
    NewtonCgOptions options;
    options.gradient_tolerance = 1e-6;
    ASSERT_TRUE(MinimizeNewtonCg(f, x, options).converged) << LossName(loss);
    const std::vector<double> solution = x;
    // Same object (cached point) and a fresh one.
    const LocalSolveStats again = MinimizeNewtonCg(f, x, options);
    EXPECT_EQ(again.iterations, 0) << LossName(loss);
    EXPECT_EQ(again.cg_iterations, 0) << LossName(loss);
    EXPECT_TRUE(again.converged) << LossName(loss);
    EXPECT_EQ(x, solution) << LossName(loss);
    AugmentedShardObjective fresh(p.View(), p.labels, loss, true, 120);
    fresh.SetCenter(v, 0.2);
    const LocalSolveStats fresh_stats = MinimizeNewtonCg(fresh, x, options);
    EXPECT_EQ(fresh_stats.iterations, 0) << LossName(loss);
    EXPECT_TRUE(fresh_stats.converged) << LossName(loss);
    EXPECT_EQ(x, solution) << LossName(loss);
    // Warm-started on the cached point: no pass over the data at all.
    const int64_t passes = f.data_passes();
    (void)MinimizeNewtonCg(f, x, options);
    EXPECT_EQ(f.data_passes(), passes) << LossName(loss);
  }
}

TEST(NewtonCgTest, RelativeToleranceStopsEarlier) {
  const SparseProblem p = ShardProblem(Loss::kLogistic, 77);
  const std::vector<double> v = RandomVector(15, 78, 3.0);
  const double rho = 1e-2;
  const std::vector<double> x0(15, 0.0);
  const double g0 = RefNorm(RefAugmentedGradient(p, Loss::kLogistic, false, kTotalRows, rho, v, x0));

  AugmentedShardObjective tight_f(p.View(), p.labels, Loss::kLogistic, false, 120);
  tight_f.SetCenter(v, rho);
  std::vector<double> tight_x = x0;
  NewtonCgOptions tight;
  tight.gradient_tolerance = 1e-8;
  const LocalSolveStats tight_stats = MinimizeNewtonCg(tight_f, tight_x, tight);
  ASSERT_TRUE(tight_stats.converged);

  AugmentedShardObjective f(p.View(), p.labels, Loss::kLogistic, false, 120);
  f.SetCenter(v, rho);
  std::vector<double> x = x0;
  NewtonCgOptions loose;
  loose.gradient_tolerance = 0.0;
  loose.relative_tolerance = 0.1;
  const LocalSolveStats stats = MinimizeNewtonCg(f, x, loose);
  EXPECT_TRUE(stats.converged);
  EXPECT_NEAR(stats.initial_gradient_norm, g0, 1e-14 * g0);
  EXPECT_LE(stats.final_gradient_norm, 0.1 * g0);
  EXPECT_LE(RefNorm(RefAugmentedGradient(p, Loss::kLogistic, false, kTotalRows, rho, v, x)), 0.1 * g0 * (1 + 1e-9));
  EXPECT_LT(stats.iterations, tight_stats.iterations);
  // The looser answer is not the tight one (the test would be vacuous otherwise).
  EXPECT_GT(stats.final_gradient_norm, 1e-8);

  // The larger of the two tolerances wins.
  std::vector<double> x2 = x0;
  AugmentedShardObjective f2(p.View(), p.labels, Loss::kLogistic, false, 120);
  f2.SetCenter(v, rho);
  NewtonCgOptions both;
  both.gradient_tolerance = 0.5 * g0;
  both.relative_tolerance = 1e-6;
  const LocalSolveStats both_stats = MinimizeNewtonCg(f2, x2, both);
  EXPECT_TRUE(both_stats.converged);
  EXPECT_LE(both_stats.final_gradient_norm, 0.5 * g0);
  EXPECT_LE(both_stats.iterations, stats.iterations);
}

TEST(NewtonCgTest, RunningOutOfIterationsIsAnOutcome) {
  const SparseProblem p = ShardProblem(Loss::kLogistic, 91);
  AugmentedShardObjective f(p.View(), p.labels, Loss::kLogistic, false, 120);
  const std::vector<double> v = RandomVector(15, 92, 3.0);
  f.SetCenter(v, 1e-3);
  std::vector<double> x(15, 0.0);
  NewtonCgOptions options;
  options.max_iterations = 0;
  LocalSolveStats stats = MinimizeNewtonCg(f, x, options);
  EXPECT_EQ(stats.iterations, 0);
  EXPECT_FALSE(stats.converged);
  EXPECT_EQ(x, std::vector<double>(15, 0.0));
  EXPECT_EQ(stats.final_gradient_norm, stats.initial_gradient_norm);
  EXPECT_NEAR(stats.initial_gradient_norm,
              RefNorm(RefAugmentedGradient(p, Loss::kLogistic, false, kTotalRows, 1e-3, v, x)), 1e-15);

  options.max_iterations = 1;
  stats = MinimizeNewtonCg(f, x, options);
  EXPECT_EQ(stats.iterations, 1);
  EXPECT_FALSE(stats.converged);
  EXPECT_LT(stats.final_gradient_norm, stats.initial_gradient_norm);
}

TEST(NewtonCgTest, MinimizesAnIllConditionedDenseQuadratic) {
  // A SmoothFunction not built on data, with a diagonal spanning eight orders of magnitude:
  // the Jacobi preconditioner and the trust region have to cope.
  std::vector<double> scales;
  for (int i = 0; i < 12; ++i) scales.push_back(std::pow(10.0, i % 5 - 2.0));
  testing::DenseQuadratic q = MakeScaledQuadratic(12, 5, scales);
  std::vector<double> x(12, 1.0);
  NewtonCgOptions options;
  options.max_cg_iterations = 100;
  const LocalSolveStats stats = MinimizeNewtonCg(q, x, options);
  EXPECT_TRUE(stats.converged) << "stopped after " << stats.iterations << " steps (" << stats.cg_iterations
                               << " CG) at ||g|| = " << stats.final_gradient_norm << ", f = " << q.Value(x);
  // Q = S (B^T B + I/2) S has lambda_min >= min(s)^2 / 2, so ||x - x*|| <= ||g|| / lambda_min.
  const std::vector<double> expected = q.Minimizer();
  std::vector<double> g(12);
  q.Gradient(x, g);
  EXPECT_LE(RefNorm(g), 1e-8 * (1 + 1e-6));
  EXPECT_LE(RefMaxAbsDiff(x, expected), RefNorm(g) * (1 + 1e-6) / (0.5 * 1e-4));
}

TEST(NewtonCgTest, SolvesAWellConditionedQuadraticInOneNewtonStep) {
  // With CG run to a tight forcing term, a quadratic needs one accepted Newton step (the
  // first trust region is the preconditioned gradient's length, so allow a few).
  testing::DenseQuadratic q = MakeScaledQuadratic(6, 11, std::vector<double>(6, 1.0));
  std::vector<double> x(6, 0.0);
  NewtonCgOptions options;
  options.cg_forcing = 1e-12;
  const LocalSolveStats stats = MinimizeNewtonCg(q, x, options);
  EXPECT_TRUE(stats.converged);
  EXPECT_LE(stats.iterations, 4);
  EXPECT_LE(RefMaxAbsDiff(x, q.Minimizer()), 1e-8 / 0.5);
}

TEST(NewtonCgTest, JacobiPreconditionerMakesADiagonalHessianOneCgStep) {
  // With the Hessian's diagonal as preconditioner, CG on a diagonal quadratic is exact after
  // one iteration, however badly the diagonal is scaled.
  const std::size_t n = 8;
  std::vector<double> q(n * n, 0.0), b(n);
  for (std::size_t i = 0; i < n; ++i) {
    q[i * n + i] = std::pow(10.0, static_cast<double>(i) - 4.0);
    b[i] = 1.0 + static_cast<double>(i);
  }
  testing::DenseQuadratic f(q, b);
  std::vector<double> x(n, 0.0);
  NewtonCgOptions options;
  options.gradient_tolerance = 1e-6;
  const LocalSolveStats stats = MinimizeNewtonCg(f, x, options);
  EXPECT_TRUE(stats.converged) << stats.final_gradient_norm;
  EXPECT_GE(stats.iterations, 1);
  EXPECT_EQ(stats.cg_iterations, stats.iterations);
  for (std::size_t i = 0; i < n; ++i) EXPECT_NEAR(x[i], b[i] / q[i * n + i], 1e-6 / q[i * n + i]) << i;
}

// Two independent quadratics of 5 coordinates each, interleaved (coordinate k is block k % 2's,
// as a one-vs-rest model's classes), with spectra far apart. One CG recurrence per block
// solves each in at most its 5 dimensions; one recurrence over both needs up to 10.
TEST(NewtonCgTest, IndependentBlocksEachConvergeInTheirOwnDimension) {
  const std::size_t n = 10, half = 5;
  const testing::DenseQuadratic first = MakeScaledQuadratic(half, 3, std::vector<double>(half, 1.0));
  const testing::DenseQuadratic second = MakeScaledQuadratic(half, 4, std::vector<double>(half, 30.0));
  std::vector<double> q(n * n, 0.0), b(n);
  for (std::size_t i = 0; i < half; ++i) {
    b[2 * i] = first.b()[i];
    b[2 * i + 1] = second.b()[i];
    for (std::size_t j = 0; j < half; ++j) {
      q[(2 * i) * n + 2 * j] = first.q()[i * half + j];
      q[(2 * i + 1) * n + 2 * j + 1] = second.q()[i * half + j];
    }
  }
  testing::DenseQuadratic f(q, b);
  const std::vector<uint32_t> block_of = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1};
  for (const int blocks : {1, 2}) {
    SCOPED_TRACE(std::to_string(blocks) + " blocks");
    std::vector<double> x(n, 0.0);
    NewtonCgOptions options;
    options.cg_forcing = 1e-12;
    options.initial_radius = 1e10;  // no boundary: one Newton step solves a quadratic
    options.gradient_tolerance = 1e-9;
    options.blocks = blocks;
    if (blocks > 1) options.block_of = block_of;
    const LocalSolveStats stats = MinimizeNewtonCg(f, x, options);
    EXPECT_TRUE(stats.converged);
    EXPECT_LE(RefMaxAbsDiff(x, f.Minimizer()), 1e-7);
    if (blocks == 2) {
      EXPECT_LE(stats.cg_iterations, static_cast<int>(half) + 1) << stats.iterations << " steps";
    } else {
      EXPECT_GT(stats.cg_iterations, static_cast<int>(half) + 1) << stats.iterations << " steps";
    }
  }
}

// An absolute gradient tolerance far above rounding must be reachable. On a quadratic (the
// squared loss) the gradient can be computed to ~1e-15 and each inexact Newton step cuts it
// by the CG forcing factor, so 1e-11 is four orders of magnitude from any rounding limit; and
// the default tolerance 1e-8 must not depend on the size of the objective's value (targets
// of scale 10 make F ~ 100 but change nothing about how well the minimizer can be found).
TEST(NewtonCgTest, ReachesAbsoluteTolerancesFarAboveRounding) {
  for (double target_scale : {1.0, 10.0}) {
    SparseProblem p = ShardProblem(Loss::kSquared, 42);
    for (std::size_t r = 0; r < p.labels.size(); ++r) p.labels[r] = target_scale * (p.labels[r] + (r % 2 == 0 ? 1.0 : 0.0));
    const std::vector<double> v(15, 0.3);
    const double rho = 0.1;
    const std::vector<double> expected = RefSquaredLossMinimizer(p, false, kTotalRows, rho, v);
    ASSERT_LE(RefNorm(RefAugmentedGradient(p, Loss::kSquared, false, kTotalRows, rho, v, expected)), 1e-13)
        << "the dense solution is exact to rounding";
    AugmentedShardObjective f(p.View(), p.labels, Loss::kSquared, false, 120);
    f.SetCenter(v, rho);
    std::vector<double> x(15, 0.0);
    NewtonCgOptions options;
    options.gradient_tolerance = target_scale == 1.0 ? 1e-11 : 1e-8;
    const LocalSolveStats stats = MinimizeNewtonCg(f, x, options);
    std::ostringstream what_stream;
    what_stream << "targets x" << target_scale << ", tolerance " << options.gradient_tolerance << ", F = " << f.Value(x);
    const std::string what = what_stream.str();
    EXPECT_TRUE(stats.converged) << what << ": stopped after " << stats.iterations << " steps at ||g|| = "
                                 << stats.final_gradient_norm;
    EXPECT_LE(RefNorm(RefAugmentedGradient(p, Loss::kSquared, false, kTotalRows, rho, v, x)),
              options.gradient_tolerance * (1 + 1e-6))
        << what;
    EXPECT_LE(RefMaxAbsDiff(x, expected), options.gradient_tolerance / rho) << what;
  }
}

// ---- Options ----

void ExpectInvalid(const NewtonCgOptions& options, const std::string& field) {
  const Status status = options.Validate();
  ASSERT_FALSE(status.ok()) << field;
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message().rfind(field + ":", 0), 0u) << status.message();
}

TEST(NewtonCgOptionsTest, ValidateNamesTheBadField) {
  EXPECT_TRUE(NewtonCgOptions().Validate().ok());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  NewtonCgOptions o;
  o.gradient_tolerance = -1e-3;
  ExpectInvalid(o, "gradient_tolerance");
  o.gradient_tolerance = nan;
  ExpectInvalid(o, "gradient_tolerance");
  o = NewtonCgOptions();
  o.relative_tolerance = -0.1;
  ExpectInvalid(o, "relative_tolerance");
  o.relative_tolerance = 1.0;
  ExpectInvalid(o, "relative_tolerance");
  o.relative_tolerance = nan;
  ExpectInvalid(o, "relative_tolerance");
  o = NewtonCgOptions();
  o.max_iterations = -1;
  ExpectInvalid(o, "max_iterations");
  o = NewtonCgOptions();
  o.max_cg_iterations = 0;
  ExpectInvalid(o, "max_cg_iterations");
  o = NewtonCgOptions();
  o.cg_forcing = 0.0;
  ExpectInvalid(o, "cg_forcing");
  o.cg_forcing = 1.0;
  ExpectInvalid(o, "cg_forcing");
  o.cg_forcing = nan;
  ExpectInvalid(o, "cg_forcing");
  // Boundaries that are fine.
  o = NewtonCgOptions();
  o.gradient_tolerance = 0.0;
  o.relative_tolerance = 0.0;
  o.max_iterations = 0;
  o.max_cg_iterations = 1;
  o.cg_forcing = 0.999;
  EXPECT_TRUE(o.Validate().ok());
}

}  // namespace
}  // namespace nimbus
