// Tests of the L-BFGS solver on x-update objectives of small sparse problems, against dense
// independent solutions and against Newton-CG.
#include "nimbus/local/lbfgs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "local/sparse_test_problem.h"
#include "nimbus/local/augmented_objective.h"
#include "nimbus/local/newton_cg.h"

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




TEST(LbfgsTest, SquaredLossMinimizerSolvesTheNormalEquations) {
  for (bool intercept : {false, true}) {
    for (double rho : {1e-2, 0.1, 2.0}) {
      const SparseProblem p = ShardProblem(Loss::kSquared, 42);
      const std::size_t n = p.Width(intercept);
      AugmentedShardObjective f(p.View(), p.labels, Loss::kSquared, intercept, 120);
      const std::vector<double> v = RandomVector(n, 7, 1.0);
      f.SetCenter(v, rho);
      std::vector<double> x(n, 0.0);
      const LbfgsOptions options;  // gradient_tolerance 1e-8
      const LocalSolveStats stats = MinimizeLbfgs(f, x, options);
      const std::string what = Label(Loss::kSquared, intercept, rho);
      EXPECT_TRUE(stats.converged) << what << " final " << stats.final_gradient_norm;
      EXPECT_LE(stats.final_gradient_norm, 1e-8) << what;
      EXPECT_GT(stats.iterations, 0) << what;
      EXPECT_GE(stats.evaluations, stats.iterations + 1) << what;
      const std::vector<double> g = RefAugmentedGradient(p, Loss::kSquared, intercept, kTotalRows, rho, v, x);
      EXPECT_LE(RefNorm(g), 1e-8 * (1 + 1e-6)) << what;
      const std::vector<double> expected = RefSquaredLossMinimizer(p, intercept, kTotalRows, rho, v);
      EXPECT_LE(RefMaxAbsDiff(x, expected), RefNorm(g) / rho * (1 + 1e-6) + 1e-13) << what;
    }
  }
}

TEST(LbfgsTest, AgreesWithNewtonCgAndADenseSolutionForEveryLoss) {
  for (const Loss& loss : kAllLosses) {
    for (bool intercept : {false, true}) {
      for (double rho : {1e-2, 0.5}) {
        const SparseProblem p = ShardProblem(loss, 200 + static_cast<uint64_t>(loss.kind()));
        const std::size_t n = p.Width(intercept);
        const std::vector<double> v = RandomVector(n, 8, 2.0);
        const std::vector<double> x0 = RandomVector(n, 9, 1.0);
        const std::string what = Label(loss, intercept, rho);

        AugmentedShardObjective f(p.View(), p.labels, loss, intercept, 120);
        f.SetCenter(v, rho);
        std::vector<double> x = x0;
        const LbfgsOptions options;
        const LocalSolveStats stats = MinimizeLbfgs(f, x, options);
        EXPECT_TRUE(stats.converged) << what << " final " << stats.final_gradient_norm;
        EXPECT_LE(RefNorm(RefAugmentedGradient(p, loss, intercept, kTotalRows, rho, v, x)), 1e-8 * (1 + 1e-6)) << what;

        AugmentedShardObjective g(p.View(), p.labels, loss, intercept, 120);
        g.SetCenter(v, rho);
        std::vector<double> x_newton = x0;
        (void)MinimizeNewtonCg(g, x_newton, NewtonCgOptions());  // its own tests check its convergence
        const double g_lbfgs = RefNorm(RefAugmentedGradient(p, loss, intercept, kTotalRows, rho, v, x));
        const double g_newton = RefNorm(RefAugmentedGradient(p, loss, intercept, kTotalRows, rho, v, x_newton));
        EXPECT_LE(g_newton, 1e-7) << what;

        // Each within ||grad|| / rho of the minimizer, so within the sum of each other.
        EXPECT_LE(RefMaxAbsDiff(x, x_newton), (g_lbfgs + g_newton) / rho * (1 + 1e-6) + 1e-13) << what;
        const std::vector<double> expected = RefAugmentedMinimizer(p, loss, intercept, kTotalRows, rho, v);
        EXPECT_LE(RefMaxAbsDiff(x, expected), g_lbfgs / rho * (1 + 1e-6) + 1e-13) << what;
      }
    }
  }
}

TEST(LbfgsTest, WarmStartFromTheSolutionTakesNoIterations) {
  for (const Loss& loss : kAllLosses) {
    const SparseProblem p = ShardProblem(loss, 57);
    AugmentedShardObjective f(p.View(), p.labels, loss, true, 120);
    const std::vector<double> v = RandomVector(16, 58, 1.0);
    f.SetCenter(v, 0.2);
    std::vector<double> x(16, 0.0);
    const LbfgsOptions options;
    ASSERT_TRUE(MinimizeLbfgs(f, x, options).converged) << LossName(loss);
    const std::vector<double> solution = x;
    const int64_t passes = f.data_passes();
    const LocalSolveStats again = MinimizeLbfgs(f, x, options);
    EXPECT_EQ(again.iterations, 0) << LossName(loss);
    EXPECT_TRUE(again.converged) << LossName(loss);
    EXPECT_EQ(x, solution) << LossName(loss);
    EXPECT_EQ(f.data_passes(), passes) << LossName(loss) << ": the solution is the cached point";
  }
}

TEST(LbfgsTest, RelativeToleranceStopsEarlier) {
  const SparseProblem p = ShardProblem(Loss::kLogistic, 79);
  const std::vector<double> v = RandomVector(15, 80, 3.0);
  const double rho = 1e-2;
  const std::vector<double> x0(15, 0.0);
  const double g0 = RefNorm(RefAugmentedGradient(p, Loss::kLogistic, false, kTotalRows, rho, v, x0));

  AugmentedShardObjective tight_f(p.View(), p.labels, Loss::kLogistic, false, 120);
  tight_f.SetCenter(v, rho);
  std::vector<double> tight_x = x0;
  const LbfgsOptions tight;
  const LocalSolveStats tight_stats = MinimizeLbfgs(tight_f, tight_x, tight);
  ASSERT_TRUE(tight_stats.converged);

  AugmentedShardObjective f(p.View(), p.labels, Loss::kLogistic, false, 120);
  f.SetCenter(v, rho);
  std::vector<double> x = x0;
  LbfgsOptions loose;
  loose.gradient_tolerance = 0.0;
  loose.relative_tolerance = 1e-2;
  const LocalSolveStats stats = MinimizeLbfgs(f, x, loose);
  EXPECT_TRUE(stats.converged);
  EXPECT_NEAR(stats.initial_gradient_norm, g0, 1e-14 * g0);
  EXPECT_LE(stats.final_gradient_norm, 1e-2 * g0);
  EXPECT_LE(RefNorm(RefAugmentedGradient(p, Loss::kLogistic, false, kTotalRows, rho, v, x)), 1e-2 * g0 * (1 + 1e-9));
  EXPECT_LT(stats.iterations, tight_stats.iterations);
  EXPECT_GT(stats.final_gradient_norm, 1e-8);
}

TEST(LbfgsTest, RunningOutOfIterationsIsAnOutcome) {
  const SparseProblem p = ShardProblem(Loss::kLogistic, 93);
  AugmentedShardObjective f(p.View(), p.labels, Loss::kLogistic, false, 120);
  const std::vector<double> v = RandomVector(15, 94, 3.0);
  f.SetCenter(v, 1e-3);
  std::vector<double> x(15, 0.0);
  LbfgsOptions options;
  options.max_iterations = 0;
  LocalSolveStats stats = MinimizeLbfgs(f, x, options);
  EXPECT_EQ(stats.iterations, 0);
  EXPECT_FALSE(stats.converged);
  EXPECT_EQ(x, std::vector<double>(15, 0.0));
  EXPECT_EQ(stats.final_gradient_norm, stats.initial_gradient_norm);
  options.max_iterations = 3;
  stats = MinimizeLbfgs(f, x, options);
  EXPECT_EQ(stats.iterations, 3);
  EXPECT_FALSE(stats.converged);
  EXPECT_LT(stats.final_gradient_norm, stats.initial_gradient_norm);
}

TEST(LbfgsTest, WorksWithTheSmallestMemory) {
  const SparseProblem p = ShardProblem(Loss::kLogistic, 95);
  AugmentedShardObjective f(p.View(), p.labels, Loss::kLogistic, true, 120);
  const std::vector<double> v = RandomVector(16, 96, 1.0);
  f.SetCenter(v, 0.1);
  std::vector<double> x(16, 0.0);
  LbfgsOptions options;
  options.memory = 1;
  options.max_iterations = 2000;
  const LocalSolveStats stats = MinimizeLbfgs(f, x, options);
  EXPECT_TRUE(stats.converged) << stats.final_gradient_norm;
  const double g = RefNorm(RefAugmentedGradient(p, Loss::kLogistic, true, kTotalRows, 0.1, v, x));
  EXPECT_LE(g, 1e-8 * (1 + 1e-6));
  EXPECT_LE(RefMaxAbsDiff(x, RefAugmentedMinimizer(p, Loss::kLogistic, true, kTotalRows, 0.1, v)), g / 0.1 * (1 + 1e-6) + 1e-13);
}

TEST(LbfgsTest, MinimizesAnIllConditionedDenseQuadratic) {
  std::vector<double> scales;
  for (int i = 0; i < 10; ++i) scales.push_back(std::pow(10.0, i % 3 - 1.0));
  testing::DenseQuadratic q = MakeScaledQuadratic(10, 3, scales);
  std::vector<double> x(10, 0.0);
  LbfgsOptions options;
  options.gradient_tolerance = 1e-7;
  options.max_iterations = 2000;
  const LocalSolveStats stats = MinimizeLbfgs(q, x, options);
  EXPECT_TRUE(stats.converged) << stats.final_gradient_norm;
  const std::vector<double> expected = q.Minimizer();
  // Q = S (B^T B + I/2) S has lambda_min >= min(s)^2 / 2, so ||x - x*|| <= ||g|| / lambda_min.
  EXPECT_LE(RefMaxAbsDiff(x, expected), 1e-7 * (1 + 1e-6) / (0.5 * 0.01));
  std::vector<double> g(10);
  q.Gradient(x, g);
  EXPECT_LE(RefNorm(g), 1e-7 * (1 + 1e-6));
  EXPECT_EQ(q.values, stats.evaluations);
}

// The Rosenbrock function: non-convex, curved valley, minimum 0 at (1, 1). L-BFGS needs only
// values and gradients; a Hessian call would be a bug.
class Rosenbrock final : public SmoothFunction {
 public:
  std::size_t dimension() const override { return 2; }
  double Value(std::span<const double> x) override {
    return 100 * (x[1] - x[0] * x[0]) * (x[1] - x[0] * x[0]) + (1 - x[0]) * (1 - x[0]);
  }
  void Gradient(std::span<const double> x, std::span<double> g) override {
    g[0] = -400 * x[0] * (x[1] - x[0] * x[0]) - 2 * (1 - x[0]);
    g[1] = 200 * (x[1] - x[0] * x[0]);
  }
  void HessianVector(std::span<const double>, std::span<double>) override { ADD_FAILURE() << "HessianVector"; }
  void HessianDiagonal(std::span<double>) override { ADD_FAILURE() << "HessianDiagonal"; }
};

TEST(LbfgsTest, MinimizesRosenbrock) {
  Rosenbrock f;
  std::vector<double> x = {-1.2, 1.0};
  LbfgsOptions options;
  options.max_iterations = 1000;
  const LocalSolveStats stats = MinimizeLbfgs(f, x, options);
  EXPECT_TRUE(stats.converged) << stats.final_gradient_norm;
  EXPECT_NEAR(x[0], 1.0, 1e-6);
  EXPECT_NEAR(x[1], 1.0, 1e-6);
}

// ---- Options ----

void ExpectInvalid(const LbfgsOptions& options, const std::string& field) {
  const Status status = options.Validate();
  ASSERT_FALSE(status.ok()) << field;
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message().rfind(field + ":", 0), 0u) << status.message();
}

TEST(LbfgsOptionsTest, ValidateNamesTheBadField) {
  EXPECT_TRUE(LbfgsOptions().Validate().ok());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  LbfgsOptions o;
  o.gradient_tolerance = -1.0;
  ExpectInvalid(o, "gradient_tolerance");
  o.gradient_tolerance = nan;
  ExpectInvalid(o, "gradient_tolerance");
  o = LbfgsOptions();
  o.relative_tolerance = -1e-9;
  ExpectInvalid(o, "relative_tolerance");
  o.relative_tolerance = 1.0;
  ExpectInvalid(o, "relative_tolerance");
  o = LbfgsOptions();
  o.max_iterations = -5;
  ExpectInvalid(o, "max_iterations");
  o = LbfgsOptions();
  o.memory = 0;
  ExpectInvalid(o, "memory");
  o = LbfgsOptions();
  o.max_line_search_steps = 0;
  ExpectInvalid(o, "max_line_search_steps");
  o = LbfgsOptions();
  o.armijo = 0.0;
  ExpectInvalid(o, "armijo");
  o.armijo = 0.5;
  ExpectInvalid(o, "armijo");
  o.armijo = nan;
  ExpectInvalid(o, "armijo");
  o = LbfgsOptions();
  o.memory = 1;
  o.max_line_search_steps = 1;
  o.armijo = 0.49;
  o.max_iterations = 0;
  EXPECT_TRUE(o.Validate().ok());
}

}  // namespace
}  // namespace nimbus
