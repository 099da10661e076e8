// Tests of the worker's x-update objective phi(x) = (1/N) sum loss + (rho/2) ||x - v||^2:
// derivatives against finite differences and dense references, caching and pass counting.
#include "nimbus/local/augmented_objective.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "local/sparse_test_problem.h"

namespace nimbus {
namespace {

using testing::MakeRandomProblem;
using testing::RefAugmentedGradient;
using testing::RefAugmentedValue;
using testing::RefDataHessian;
using testing::RefDataLoss;
using testing::SparseProblem;
using testing::RandomVector;
using testing::kAllLosses;


std::string Label(Loss loss, bool intercept) {
  return std::string(LossName(loss)) + (intercept ? " with intercept" : " without intercept");
}

// A shard of 30 rows of a problem with N = 90 rows in all, 8 features.
struct Fixture {
  Fixture(Loss loss, bool intercept) : loss(loss), intercept(intercept) {
    problem = MakeRandomProblem(30, 8, 3, 1000 + static_cast<uint64_t>(loss.kind()) * 2 + (intercept ? 1 : 0), loss);
    width = problem.Width(intercept);
    center = RandomVector(width, 77, 0.5);
    x = RandomVector(width, 78, 0.9);
  }
  AugmentedShardObjective Make() const {
    AugmentedShardObjective f(problem.View(), problem.labels, loss, intercept, kTotalRows);
    f.SetCenter(center, rho);
    return f;
  }
  static constexpr int64_t kTotalRows = 90;
  Loss loss;
  bool intercept;
  SparseProblem problem;
  std::size_t width = 0;
  double rho = 0.3;
  std::vector<double> center, x;
};

TEST(AugmentedObjectiveTest, DimensionCountsTheIntercept) {
  const SparseProblem p = MakeRandomProblem(5, 4, 2, 1, Loss::kLogistic);
  EXPECT_EQ(AugmentedShardObjective(p.View(), p.labels, Loss::kLogistic, false, 5).dimension(), 4u);
  EXPECT_EQ(AugmentedShardObjective(p.View(), p.labels, Loss::kLogistic, true, 5).dimension(), 5u);
}

TEST(AugmentedObjectiveTest, ValueAndDataLossMatchTheDenseReference) {
  for (const Loss& loss : kAllLosses) {
    for (bool intercept : {false, true}) {
      const Fixture fx(loss, intercept);
      AugmentedShardObjective f = fx.Make();
      const double expected = RefAugmentedValue(fx.problem, loss, intercept, 90.0, fx.rho, fx.center, fx.x);
      EXPECT_NEAR(f.Value(fx.x), expected, 1e-14 * (1 + std::abs(expected))) << Label(loss, intercept);
      const double data = RefDataLoss(fx.problem, loss, intercept, 90.0, fx.x);
      EXPECT_NEAR(f.DataLoss(fx.x), data, 1e-14 * (1 + data)) << Label(loss, intercept);
    }
  }
}

TEST(AugmentedObjectiveTest, HandComputedValueAndGradient) {
  // One row a = (2, 0, -1), y = 1, squared loss, N = 4, rho = 2, v = (1, 1, 1), intercept.
  SparseProblem p;
  p.cols = 3;
  p.AddRow({{0, 2.0}, {2, -1.0}}, 1.0);
  AugmentedShardObjective f(p.View(), p.labels, Loss::kSquared, true, 4);
  const std::vector<double> v = {1.0, 1.0, 1.0, 1.0};
  f.SetCenter(v, 2.0);
  const std::vector<double> x = {0.5, 0.0, 1.0, 0.5};  // margin 1 - 1 + 0.5 = 0.5, residual -0.5
  // (1/4) * 0.125 + (2/2) * (0.25 + 1 + 0 + 0.25)
  EXPECT_DOUBLE_EQ(f.Value(x), 0.03125 + 1.5);
  std::vector<double> g(4);
  f.Gradient(x, g);
  // (1/4) * (-0.5) * (2, 0, -1, 1) + 2 * (x - v)
  EXPECT_DOUBLE_EQ(g[0], -0.25 + 2 * (-0.5));
  EXPECT_DOUBLE_EQ(g[1], 0.0 + 2 * (-1.0));
  EXPECT_DOUBLE_EQ(g[2], 0.125 + 0.0);
  EXPECT_DOUBLE_EQ(g[3], -0.125 + 2 * (-0.5));
  std::vector<double> diag(4);
  f.HessianDiagonal(diag);
  EXPECT_DOUBLE_EQ(diag[0], 0.25 * 4 + 2);
  EXPECT_DOUBLE_EQ(diag[1], 0.0 + 2);
  EXPECT_DOUBLE_EQ(diag[2], 0.25 * 1 + 2);
  EXPECT_DOUBLE_EQ(diag[3], 0.25 * 1 + 2);
}

TEST(AugmentedObjectiveTest, GradientMatchesFiniteDifferencesOfValue) {
  for (const Loss& loss : kAllLosses) {
    for (bool intercept : {false, true}) {
      const Fixture fx(loss, intercept);
      AugmentedShardObjective f = fx.Make();
      std::vector<double> g(fx.width);
      f.Gradient(fx.x, g);
      const double h = 1e-6;
      for (std::size_t j = 0; j < fx.width; ++j) {
        std::vector<double> plus = fx.x, minus = fx.x;
        plus[j] += h;
        minus[j] -= h;
        const double fd = (f.Value(plus) - f.Value(minus)) / (2 * h);
        EXPECT_NEAR(g[j], fd, 1e-7) << Label(loss, intercept) << " j=" << j;
      }
      const std::vector<double> ref = RefAugmentedGradient(fx.problem, loss, intercept, 90.0, fx.rho, fx.center, fx.x);
      for (std::size_t j = 0; j < fx.width; ++j) EXPECT_NEAR(g[j], ref[j], 1e-14) << Label(loss, intercept);
    }
  }
}

TEST(AugmentedObjectiveTest, HessianVectorMatchesFiniteDifferencesOfTheGradient) {
  for (const Loss& loss : kAllLosses) {
    for (bool intercept : {false, true}) {
      const Fixture fx(loss, intercept);
      AugmentedShardObjective f = fx.Make();
      for (uint64_t trial = 0; trial < 3; ++trial) {
        const std::vector<double> direction = RandomVector(fx.width, 300 + trial, 1.0);
        const double h = 1e-6;
        std::vector<double> plus = fx.x, minus = fx.x, g_plus(fx.width), g_minus(fx.width);
        for (std::size_t j = 0; j < fx.width; ++j) {
          plus[j] += h * direction[j];
          minus[j] -= h * direction[j];
        }
        f.Gradient(plus, g_plus);
        f.Gradient(minus, g_minus);
        std::vector<double> g(fx.width), hv(fx.width);
        f.Gradient(fx.x, g);  // the point of the Hessian
        f.HessianVector(direction, hv);
        for (std::size_t j = 0; j < fx.width; ++j) {
          const double fd = (g_plus[j] - g_minus[j]) / (2 * h);
          EXPECT_NEAR(hv[j], fd, 1e-7) << Label(loss, intercept) << " j=" << j;
        }
        // ... and the dense reference (A^T D A / N + rho I) d.
        std::vector<double> hessian = RefDataHessian(fx.problem, loss, intercept, 90.0, fx.x);
        for (std::size_t i = 0; i < fx.width; ++i) {
          double expected = fx.rho * direction[i];
          for (std::size_t j = 0; j < fx.width; ++j) expected += hessian[i * fx.width + j] * direction[j];
          EXPECT_NEAR(hv[i], expected, 1e-14) << Label(loss, intercept) << " i=" << i;
        }
      }
    }
  }
}

TEST(AugmentedObjectiveTest, HessianIsTakenAtTheLastGradientPoint) {
  const Fixture fx(Loss::kLogistic, true);
  AugmentedShardObjective f = fx.Make();
  const std::vector<double> other = RandomVector(fx.width, 999, 3.0);
  const std::vector<double> direction = RandomVector(fx.width, 1000, 1.0);
  std::vector<double> g(fx.width), hv(fx.width), hv_ref(fx.width);
  f.Gradient(fx.x, g);
  f.Value(other);  // a trial point does not move the Hessian
  f.HessianVector(direction, hv);
  const std::vector<double> hessian = RefDataHessian(fx.problem, Loss::kLogistic, true, 90.0, fx.x);
  for (std::size_t i = 0; i < fx.width; ++i) {
    double expected = fx.rho * direction[i];
    for (std::size_t j = 0; j < fx.width; ++j) expected += hessian[i * fx.width + j] * direction[j];
    EXPECT_NEAR(hv[i], expected, 1e-14) << i;
  }
}

TEST(AugmentedObjectiveTest, HessianDiagonalMatchesUnitHessianVectors) {
  for (const Loss& loss : kAllLosses) {
    for (bool intercept : {false, true}) {
      const Fixture fx(loss, intercept);
      AugmentedShardObjective f = fx.Make();
      std::vector<double> g(fx.width), diag(fx.width), hv(fx.width);
      f.Gradient(fx.x, g);
      f.HessianDiagonal(diag);
      for (std::size_t j = 0; j < fx.width; ++j) {
        std::vector<double> e(fx.width, 0.0);
        e[j] = 1.0;
        f.HessianVector(e, hv);
        EXPECT_NEAR(diag[j], hv[j], 1e-14) << Label(loss, intercept) << " j=" << j;
        EXPECT_GE(diag[j], fx.rho) << Label(loss, intercept) << " j=" << j;
      }
    }
  }
}

// ---- Caching: any order of calls gives what a fresh object gives ----

struct Snapshot {
  double value = 0;
  std::vector<double> gradient, hv, diagonal;
};

// Value, gradient, H d and diag(H) at x from a brand new object.
Snapshot Fresh(const Fixture& fx, const std::vector<double>& center, double rho, const std::vector<double>& x,
               const std::vector<double>& direction) {
  AugmentedShardObjective f(fx.problem.View(), fx.problem.labels, fx.loss, fx.intercept, Fixture::kTotalRows);
  f.SetCenter(center, rho);
  Snapshot s;
  s.value = f.Value(x);
  s.gradient.resize(fx.width);
  s.hv.resize(fx.width);
  s.diagonal.resize(fx.width);
  f.Gradient(x, s.gradient);
  f.HessianVector(direction, s.hv);
  f.HessianDiagonal(s.diagonal);
  return s;
}

TEST(AugmentedObjectiveTest, CallOrderAndSetCenterDoNotChangeResults) {
  for (const Loss& loss : kAllLosses) {
    for (bool intercept : {false, true}) {
      const Fixture fx(loss, intercept);
      const std::vector<double> x1 = fx.x;
      const std::vector<double> x2 = RandomVector(fx.width, 501, 1.0);
      const std::vector<double> x3 = RandomVector(fx.width, 502, 1.0);
      const std::vector<double> d = RandomVector(fx.width, 503, 1.0);
      const std::vector<double> center2 = RandomVector(fx.width, 504, 1.0);
      const double rho2 = 1.7;
      const Snapshot a1 = Fresh(fx, fx.center, fx.rho, x1, d);
      const Snapshot a2 = Fresh(fx, fx.center, fx.rho, x2, d);
      const Snapshot a3 = Fresh(fx, fx.center, fx.rho, x3, d);
      const Snapshot b1 = Fresh(fx, center2, rho2, x1, d);
      const Snapshot b2 = Fresh(fx, center2, rho2, x2, d);
      const std::string what = Label(loss, intercept);

      AugmentedShardObjective f = fx.Make();
      std::vector<double> g(fx.width), hv(fx.width), diag(fx.width);
      // Gradient first, without a Value at that point.
      f.Gradient(x2, g);
      EXPECT_EQ(g, a2.gradient) << what;
      EXPECT_EQ(f.Value(x1), a1.value) << what;  // a trial point
      EXPECT_EQ(f.Value(x2), a2.value) << what;  // the current point
      f.HessianVector(d, hv);
      EXPECT_EQ(hv, a2.hv) << what;  // still at x2
      f.Gradient(x1, g);             // the trial point becomes current
      EXPECT_EQ(g, a1.gradient) << what;
      f.HessianVector(d, hv);
      EXPECT_EQ(hv, a1.hv) << what;
      f.HessianDiagonal(diag);
      EXPECT_EQ(diag, a1.diagonal) << what;
      EXPECT_EQ(f.Value(x2), a2.value) << what;  // the old current point, now the trial one
      EXPECT_EQ(f.Value(x3), a3.value) << what;
      EXPECT_EQ(f.Value(x1), a1.value) << what;
      f.Gradient(x2, g);
      EXPECT_EQ(g, a2.gradient) << what;
      f.Gradient(x3, g);
      EXPECT_EQ(g, a3.gradient) << what;
      f.HessianDiagonal(diag);
      EXPECT_EQ(diag, a3.diagonal) << what;
      f.Gradient(x1, g);
      EXPECT_EQ(g, a1.gradient) << what;
      EXPECT_NEAR(f.DataLoss(x2), RefDataLoss(fx.problem, loss, intercept, 90.0, x2), 1e-14) << what;
      EXPECT_EQ(f.Value(x2), a2.value) << what;

      // A new center and rho: every derivative follows them, cached or not.
      f.SetCenter(center2, rho2);
      EXPECT_EQ(f.Value(x1), b1.value) << what;
      f.Gradient(x1, g);
      EXPECT_EQ(g, b1.gradient) << what;
      f.HessianVector(d, hv);
      EXPECT_EQ(hv, b1.hv) << what;
      f.HessianDiagonal(diag);
      EXPECT_EQ(diag, b1.diagonal) << what;
      EXPECT_EQ(f.Value(x2), b2.value) << what;
      f.Gradient(x2, g);
      EXPECT_EQ(g, b2.gradient) << what;
      // And back.
      f.SetCenter(fx.center, fx.rho);
      f.Gradient(x2, g);
      EXPECT_EQ(g, a2.gradient) << what;
      EXPECT_EQ(f.Value(x1), a1.value) << what;
      f.HessianVector(d, hv);
      EXPECT_EQ(hv, a2.hv) << what;
    }
  }
}

TEST(AugmentedObjectiveTest, PointsThatDifferInOneBitAreNotConfused) {
  const Fixture fx(Loss::kLogistic, false);
  AugmentedShardObjective f = fx.Make();
  std::vector<double> x2 = fx.x;
  x2[3] = std::nextafter(x2[3], 10.0);
  std::vector<double> g(fx.width), g2(fx.width);
  f.Gradient(fx.x, g);
  const int64_t passes = f.data_passes();
  f.Value(x2);
  EXPECT_EQ(f.data_passes(), passes + 1) << "a point one bit away must not come from the cache";
  f.Gradient(x2, g2);
  EXPECT_EQ(f.data_passes(), passes + 2);
  // -0.0 and +0.0 are the same point mathematically; treating them as different is allowed,
  // but the value must be the same.
  std::vector<double> zero(fx.width, 0.0), minus_zero(fx.width, -0.0);
  EXPECT_EQ(f.Value(zero), f.Value(minus_zero));
}

// ---- Passes over the data ----

TEST(AugmentedObjectiveTest, CountsDataPasses) {
  const Fixture fx(Loss::kLogistic, true);
  AugmentedShardObjective f = fx.Make();
  const std::vector<double> x1 = fx.x;
  const std::vector<double> x2 = RandomVector(fx.width, 601, 1.0);
  std::vector<double> g(fx.width), hv(fx.width), diag(fx.width);
  EXPECT_EQ(f.data_passes(), 0);
  f.Value(x1);  // margins
  EXPECT_EQ(f.data_passes(), 1);
  f.Value(x1);  // cached
  EXPECT_EQ(f.data_passes(), 1);
  f.Gradient(x1, g);  // margins reused, derivatives: one pass
  EXPECT_EQ(f.data_passes(), 2);
  f.Gradient(x1, g);  // nothing new
  EXPECT_EQ(f.data_passes(), 2);
  f.Value(x1);
  f.HessianDiagonal(diag);  // kept from the gradient pass
  EXPECT_EQ(f.data_passes(), 2);
  f.HessianVector(x2, hv);  // one pass each
  EXPECT_EQ(f.data_passes(), 3);
  f.HessianVector(x1, hv);
  EXPECT_EQ(f.data_passes(), 4);
  f.Value(x2);  // a new trial point
  EXPECT_EQ(f.data_passes(), 5);
  f.Value(x1);  // the current point is still cached
  EXPECT_EQ(f.data_passes(), 5);
  f.DataLoss(x2);  // the trial point too
  EXPECT_EQ(f.data_passes(), 5);
  f.Gradient(x2, g);  // margins from the trial point, one derivative pass
  EXPECT_EQ(f.data_passes(), 6);
  f.Value(x1);  // the previous current point is kept as the trial point
  EXPECT_EQ(f.data_passes(), 6);
  // A new center costs nothing: the data terms do not depend on it.
  f.SetCenter(RandomVector(fx.width, 602, 1.0), 2.5);
  f.Value(x2);
  f.Gradient(x2, g);
  f.HessianDiagonal(diag);
  EXPECT_EQ(f.data_passes(), 6);
}

TEST(AugmentedObjectiveTest, GradientAtANewPointCostsTwoPasses) {
  const Fixture fx(Loss::kSquaredHinge, false);
  AugmentedShardObjective f = fx.Make();
  std::vector<double> g(fx.width);
  f.Gradient(fx.x, g);  // margins + derivatives
  EXPECT_EQ(f.data_passes(), 2);
  f.Value(fx.x);
  EXPECT_EQ(f.data_passes(), 2);
  f.DataLoss(RandomVector(fx.width, 700, 1.0));
  EXPECT_EQ(f.data_passes(), 3);
}

}  // namespace
}  // namespace nimbus
