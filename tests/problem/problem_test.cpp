// Tests of the regularizer, its prox, the objective, its smooth gradient, the optimality
// measure and the problem's validation.
#include "nimbus/problem/problem.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "local/sparse_test_problem.h"

namespace nimbus {
namespace {

using testing::MakeRandomProblem;
using testing::RefDataGradient;
using testing::SolveDense;
using testing::SparseProblem;

const Loss kAllLosses[] = {Loss::kLogistic, Loss::kSquared, Loss::kSquaredHinge};

// ---- Regularizer::Prox ----

double SoftThresholdShrink(double v, double t, double l1, double l2) {
  const double magnitude = std::abs(v) - t * l1;
  if (magnitude <= 0) return 0.0;
  return (v > 0 ? magnitude : -magnitude) / (1.0 + t * l2);
}

// argmin_z t (l1 |z| + l2/2 z^2) + (z - v)^2 / 2 over a grid of step `step` that covers
// [min(v, 0), max(v, 0)] (the minimizer lies between 0 and v) with some margin.
double BruteForceProx(double v, double t, double l1, double l2, double step) {
  const double lo = std::min(v, 0.0) - 0.5;
  const double hi = std::max(v, 0.0) + 0.5;
  double best_z = lo, best = std::numeric_limits<double>::infinity();
  const auto count = static_cast<int64_t>((hi - lo) / step) + 1;
  for (int64_t k = 0; k <= count; ++k) {
    const double z = lo + static_cast<double>(k) * step;
    const double objective = t * (l1 * std::abs(z) + 0.5 * l2 * z * z) + 0.5 * (z - v) * (z - v);
    if (objective < best) {
      best = objective;
      best_z = z;
    }
  }
  return best_z;
}

struct ProxCase {
  const char* name;
  double l1, l2;
};
constexpr ProxCase kProxCases[] = {{"l1 only", 0.7, 0.0}, {"l2 only", 0.0, 1.3}, {"elastic net", 0.4, 0.9}};

TEST(RegularizerTest, ProxMatchesClosedFormAndBruteForce) {
  const std::vector<double> inputs = {-3.1, -1.2, -0.5, -0.27, -0.05, 0.0, 0.05, 0.2, 0.35, 0.8, 1.7, 2.9};
  const double step = 1e-5;
  for (const ProxCase& c : kProxCases) {
    for (double t : {0.5, 1.0, 2.0}) {
      Regularizer reg{c.l1, c.l2};
      // The last entry is an intercept: it must come back untouched.
      std::vector<double> x = inputs;
      x.push_back(-2.5);
      reg.Prox(t, x, inputs.size());
      ASSERT_EQ(x.size(), inputs.size() + 1);
      EXPECT_EQ(x.back(), -2.5) << c.name << ": the intercept is not regularized";
      for (std::size_t j = 0; j < inputs.size(); ++j) {
        const double v = inputs[j];
        EXPECT_NEAR(x[j], SoftThresholdShrink(v, t, c.l1, c.l2), 1e-15) << c.name << " t=" << t << " v=" << v;
        EXPECT_NEAR(x[j], BruteForceProx(v, t, c.l1, c.l2, step), 1.01 * step) << c.name << " t=" << t << " v=" << v;
      }
    }
  }
}

TEST(RegularizerTest, ScalarProxIsTheVectorProxBitForBit) {
  // The general form's z-update applies the one-entry prox; the dense form, the vector one.
  const std::vector<double> inputs = {-3.1, -1.2, -0.5, -0.35, -0.05, -0.0, 0.0, 0.05, 0.2, 0.35, 0.8, 1.7, 2.9, -1e-300};
  for (const ProxCase& c : kProxCases) {
    for (double t : {0.0, 0.5, 1.0, 2.0}) {
      const Regularizer reg{c.l1, c.l2};
      std::vector<double> x = inputs;
      reg.Prox(t, x, x.size());
      const Regularizer::ScalarProx prox = reg.ProxOf(t);
      for (std::size_t j = 0; j < inputs.size(); ++j) {
        const double one = prox(inputs[j]);
        EXPECT_EQ(std::memcmp(&one, &x[j], sizeof one), 0) << c.name << " t=" << t << " v=" << inputs[j];
        EXPECT_EQ(reg.Prox(t, inputs[j]), x[j]);
        if (one == 0 && inputs[j] != 0) {
          EXPECT_FALSE(std::signbit(one)) << "a thresholded entry is +0";
        }
      }
    }
  }
}

TEST(RegularizerTest, ProxHandComputedValues) {
  Regularizer reg{1.0, 1.0};
  std::vector<double> x = {3.0, -3.0, 0.5, -1.0, 7.0};
  reg.Prox(0.5, x, 4);  // threshold 0.5, shrink 1 / 1.5
  EXPECT_DOUBLE_EQ(x[0], 2.5 / 1.5);
  EXPECT_DOUBLE_EQ(x[1], -2.5 / 1.5);
  EXPECT_EQ(x[2], 0.0);  // exactly on the threshold
  EXPECT_DOUBLE_EQ(x[3], -0.5 / 1.5);
  EXPECT_EQ(x[4], 7.0);
}

TEST(RegularizerTest, ProxWithZeroStepOrZeroRegularizerIsTheIdentity) {
  const std::vector<double> v = {-2.0, -0.1, 0.0, 0.3, 4.0};
  std::vector<double> x = v;
  Regularizer{0.5, 2.0}.Prox(0.0, x, x.size());
  EXPECT_EQ(x, v);
  x = v;
  Regularizer{0.0, 0.0}.Prox(3.0, x, x.size());
  EXPECT_EQ(x, v);
}

TEST(RegularizerTest, ProxOnlyTouchesTheRegularizedPrefix) {
  std::vector<double> x = {5.0, 5.0, 5.0, 5.0};
  Regularizer{1.0, 0.0}.Prox(1.0, x, 2);
  EXPECT_EQ(x, (std::vector<double>{4.0, 4.0, 5.0, 5.0}));
  Regularizer{1.0, 0.0}.Prox(1.0, x, 0);
  EXPECT_EQ(x, (std::vector<double>{4.0, 4.0, 5.0, 5.0}));
}

// ---- Regularizer::Value ----

TEST(RegularizerTest, ValueByHand) {
  const std::vector<double> x = {1.0, -2.0, 3.0, 10.0};  // 10 is the intercept
  // l1 * 6 + l2/2 * 14 over the first three entries.
  EXPECT_DOUBLE_EQ((Regularizer{0.5, 0.2}.Value(x, 3)), 0.5 * 6 + 0.1 * 14);
  EXPECT_DOUBLE_EQ((Regularizer{0.5, 0.0}.Value(x, 3)), 3.0);
  EXPECT_DOUBLE_EQ((Regularizer{0.0, 2.0}.Value(x, 3)), 14.0);
  EXPECT_DOUBLE_EQ((Regularizer{0.5, 0.2}.Value(x, 4)), 0.5 * 16 + 0.1 * 114);
  EXPECT_DOUBLE_EQ((Regularizer{0.5, 0.2}.Value(x, 0)), 0.0);
  EXPECT_DOUBLE_EQ((Regularizer{0.0, 0.0}.Value(x, 4)), 0.0);
}

// ---- EvaluateObjective on a hand-made data set ----

// 3 rows x 2 columns:
//   row 0: a = (1, 2),   y = +1
//   row 1: a = (0, -1),  y = -1
//   row 2: a = (0.5, 0), y = +1
SparseProblem TinyProblem() {
  SparseProblem p;
  p.cols = 2;
  p.AddRow({{0, 1.0}, {1, 2.0}}, 1.0);
  p.AddRow({{1, -1.0}}, -1.0);
  p.AddRow({{0, 0.5}}, 1.0);
  return p;
}

ProblemSpec TinySpec(Loss loss, bool intercept, double l1, double l2) {
  ProblemSpec spec;
  spec.loss = loss;
  spec.regularizer = Regularizer{l1, l2};
  spec.intercept = intercept;
  spec.rows = 3;
  spec.cols = 2;
  return spec;
}

TEST(EvaluateObjectiveTest, HandComputedWithoutIntercept) {
  const SparseProblem p = TinyProblem();
  const std::vector<double> x = {0.4, -0.3};
  // margins: 0.4 - 0.6 = -0.2, 0.3, 0.2;  ||x||_1 = 0.7, ||x||^2 = 0.25
  const double reg = 0.1 * 0.7 + 0.5 * 0.2 * 0.25;
  // logistic: y m = -0.2, -0.3, 0.2
  const double logistic = (std::log(1 + std::exp(0.2)) + std::log(1 + std::exp(0.3)) + std::log(1 + std::exp(-0.2))) / 3;
  EXPECT_NEAR(EvaluateObjective(TinySpec(Loss::kLogistic, false, 0.1, 0.2), p.View(), p.labels, x), logistic + reg,
              1e-15);
  // squared: residuals -1.2, 1.3, -0.8 -> (1.44 + 1.69 + 0.64) / 2 / 3
  EXPECT_NEAR(EvaluateObjective(TinySpec(Loss::kSquared, false, 0.1, 0.2), p.View(), p.labels, x),
              3.77 / 6 + reg, 1e-15);
  // squared hinge: slacks 1.2, 1.3, 0.8 -> (1.44 + 1.69 + 0.64) / 3
  EXPECT_NEAR(EvaluateObjective(TinySpec(Loss::kSquaredHinge, false, 0.1, 0.2), p.View(), p.labels, x),
              3.77 / 3 + reg, 1e-15);
  // no regularization
  EXPECT_NEAR(EvaluateObjective(TinySpec(Loss::kSquaredHinge, false, 0, 0), p.View(), p.labels, x), 3.77 / 3, 1e-15);
}

TEST(EvaluateObjectiveTest, HandComputedWithInterceptWhichIsNotRegularized) {
  const SparseProblem p = TinyProblem();
  const std::vector<double> x = {0.4, -0.3, 0.1};  // b = 0.1
  // margins: -0.1, 0.4, 0.3;  regularizer sees (0.4, -0.3) only
  const double reg = 1.0 * 0.7 + 0.5 * 3.0 * 0.25;
  // squared: residuals -1.1, 1.4, -0.7 -> (1.21 + 1.96 + 0.49) / 6 = 0.61
  EXPECT_NEAR(EvaluateObjective(TinySpec(Loss::kSquared, true, 1.0, 3.0), p.View(), p.labels, x), 0.61 + reg, 1e-15);
  // squared hinge: y m = -0.1, -0.4, 0.3 -> slacks 1.1, 1.4, 0.7 -> 3.66 / 3 = 1.22
  EXPECT_NEAR(EvaluateObjective(TinySpec(Loss::kSquaredHinge, true, 1.0, 3.0), p.View(), p.labels, x), 1.22 + reg,
              1e-15);
  const double logistic = (std::log(1 + std::exp(0.1)) + std::log(1 + std::exp(0.4)) + std::log(1 + std::exp(-0.3))) / 3;
  EXPECT_NEAR(EvaluateObjective(TinySpec(Loss::kLogistic, true, 1.0, 3.0), p.View(), p.labels, x), logistic + reg,
              1e-15);
  // A large intercept costs nothing in the regularizer: only the loss changes.
  const std::vector<double> x_big_b = {0.0, 0.0, 100.0};
  // squared: residuals 99, 101, 99 -> (9801 + 10201 + 9801) / 6
  EXPECT_NEAR(EvaluateObjective(TinySpec(Loss::kSquared, true, 1.0, 3.0), p.View(), p.labels, x_big_b),
              29803.0 / 6, 1e-9);
}

// ---- SmoothGradient against finite differences of EvaluateObjective ----

TEST(SmoothGradientTest, MatchesFiniteDifferencesOfTheObjective) {
  for (const Loss& loss : kAllLosses) {
    for (bool intercept : {false, true}) {
      const SparseProblem p = MakeRandomProblem(25, 7, 3, 101 + static_cast<int>(loss.kind()), loss);
      ProblemSpec spec;
      spec.loss = loss;
      spec.intercept = intercept;
      spec.rows = p.rows;
      spec.cols = p.cols;
      std::mt19937_64 rng(5);
      std::uniform_real_distribution<double> uniform(-0.8, 0.8);
      std::vector<double> x(spec.model_size());
      for (double& v : x) v = uniform(rng);
      std::vector<double> g(x.size(), 123.0);  // garbage in: must be overwritten
      SmoothGradient(spec, p.View(), p.labels, x, g);
      const double h = 1e-6;
      for (std::size_t j = 0; j < x.size(); ++j) {
        std::vector<double> plus = x, minus = x;
        plus[j] += h;
        minus[j] -= h;
        const double fd = (EvaluateObjective(spec, p.View(), p.labels, plus) -
                           EvaluateObjective(spec, p.View(), p.labels, minus)) /
                          (2 * h);
        EXPECT_NEAR(g[j], fd, 1e-7) << LossName(loss) << " intercept=" << intercept << " j=" << j;
      }
      // ... and against the dense reference.
      const std::vector<double> ref = RefDataGradient(p, loss, intercept, static_cast<double>(p.rows), x);
      for (std::size_t j = 0; j < x.size(); ++j) EXPECT_NEAR(g[j], ref[j], 1e-14) << LossName(loss) << " j=" << j;
    }
  }
}

TEST(SmoothGradientTest, IgnoresTheRegularizer) {
  const SparseProblem p = MakeRandomProblem(10, 4, 2, 3, Loss::kLogistic);
  ProblemSpec spec;
  spec.rows = p.rows;
  spec.cols = p.cols;
  const std::vector<double> x = {0.5, -0.25, 1.0, 0.0};
  std::vector<double> g0(4), g1(4);
  SmoothGradient(spec, p.View(), p.labels, x, g0);
  spec.regularizer = Regularizer{0.3, 0.7};
  SmoothGradient(spec, p.View(), p.labels, x, g1);
  EXPECT_EQ(g0, g1);
}

// ---- OptimalityViolation ----

// The solution of min (1/2N) ||A x + b - y||^2 + (l2/2) ||x||^2 (b unregularized) from the
// normal equations, with a dense solver.
std::vector<double> RidgeSolution(const SparseProblem& p, bool intercept, double l2) {
  const std::vector<double> a = p.Dense(intercept);
  const std::size_t width = p.Width(intercept);
  const double n = static_cast<double>(p.rows);
  std::vector<double> m(width * width, 0.0), rhs(width, 0.0);
  for (std::size_t r = 0; r < static_cast<std::size_t>(p.rows); ++r) {
    for (std::size_t i = 0; i < width; ++i) {
      rhs[i] += a[r * width + i] * p.labels[r] / n;
      for (std::size_t j = 0; j < width; ++j) m[i * width + j] += a[r * width + i] * a[r * width + j] / n;
    }
  }
  for (std::size_t i = 0; i < static_cast<std::size_t>(p.cols); ++i) m[i * width + i] += l2;
  return SolveDense(m, rhs);
}

TEST(OptimalityViolationTest, ZeroAtTheRidgeOptimumAndPositiveElsewhere) {
  for (bool intercept : {false, true}) {
    const SparseProblem p = MakeRandomProblem(40, 8, 3, 17, Loss::kSquared);
    ProblemSpec spec;
    spec.loss = Loss::kSquared;
    spec.regularizer = Regularizer{0.0, 0.05};
    spec.intercept = intercept;
    spec.rows = p.rows;
    spec.cols = p.cols;
    const std::vector<double> x = RidgeSolution(p, intercept, 0.05);
    ASSERT_EQ(x.size(), spec.model_size());
    EXPECT_LT(OptimalityViolation(spec, p.View(), p.labels, x), 1e-12) << "intercept=" << intercept;
    const double f_star = EvaluateObjective(spec, p.View(), p.labels, x);
    for (std::size_t j = 0; j < x.size(); ++j) {
      std::vector<double> moved = x;
      moved[j] += 1e-3;
      EXPECT_GT(OptimalityViolation(spec, p.View(), p.labels, moved), 1e-5) << "j=" << j;
      EXPECT_GT(EvaluateObjective(spec, p.View(), p.labels, moved), f_star) << "j=" << j;
    }
  }
}

TEST(OptimalityViolationTest, ZeroAtAOneFeatureLassoOptimum) {
  // min (1/2N) sum (a_r x - y_r)^2 + l1 |x| has x* = soft(a.y / N, l1) / (a.a / N).
  SparseProblem p;
  p.cols = 1;
  const double a[] = {1.0, -0.5, 2.0, 0.3};
  const double y[] = {1.5, -0.2, 2.5, 0.0};
  for (int r = 0; r < 4; ++r) p.AddRow({{0, a[r]}}, y[r]);
  double ay = 0, aa = 0;
  for (int r = 0; r < 4; ++r) {
    ay += a[r] * y[r] / 4;
    aa += a[r] * a[r] / 4;
  }
  ProblemSpec spec;
  spec.loss = Loss::kSquared;
  spec.rows = 4;
  spec.cols = 1;
  for (double l1 : {0.1, 0.5, 1.0, 2.0}) {
    spec.regularizer = Regularizer{l1, 0.0};
    const std::vector<double> x = {SoftThresholdShrink(ay, 1.0, l1, 0.0) / aa};
    EXPECT_LT(OptimalityViolation(spec, p.View(), p.labels, x), 1e-14) << "l1=" << l1 << " x=" << x[0];
    const std::vector<double> off = {x[0] + 0.01};
    EXPECT_GT(OptimalityViolation(spec, p.View(), p.labels, off), 1e-3) << "l1=" << l1;
  }
}

TEST(OptimalityViolationTest, ZeroAtTheOriginWhenL1DominatesTheGradient) {
  for (const Loss& loss : kAllLosses) {
    const SparseProblem p = MakeRandomProblem(30, 6, 3, 23, loss);
    ProblemSpec spec;
    spec.loss = loss;
    spec.rows = p.rows;
    spec.cols = p.cols;
    const std::vector<double> zero(6, 0.0);
    const std::vector<double> g = RefDataGradient(p, loss, false, 30.0, zero);
    double g_max = 0;
    for (double v : g) g_max = std::max(g_max, std::abs(v));
    ASSERT_GT(g_max, 0.0);
    spec.regularizer = Regularizer{g_max * 1.001, 0.5};
    EXPECT_EQ(OptimalityViolation(spec, p.View(), p.labels, zero), 0.0) << LossName(loss);
    // Just below: the largest coordinate violates by g_max - l1.
    spec.regularizer = Regularizer{g_max * 0.9, 0.5};
    EXPECT_NEAR(OptimalityViolation(spec, p.View(), p.labels, zero), 0.1 * g_max, 1e-14) << LossName(loss);
  }
}

TEST(OptimalityViolationTest, MatchesItsDefinitionAtAMixedPoint) {
  // Some coordinates zero, some not, and an intercept; each term from the documented formula
  // with an independently computed gradient.
  const SparseProblem p = MakeRandomProblem(30, 6, 3, 29, Loss::kLogistic);
  ProblemSpec spec;
  spec.loss = Loss::kLogistic;
  spec.intercept = true;
  spec.rows = p.rows;
  spec.cols = p.cols;
  spec.regularizer = Regularizer{0.02, 0.3};
  const std::vector<double> x = {0.0, 0.7, 0.0, -0.4, 0.0, 1.1, 0.25};
  const std::vector<double> g = RefDataGradient(p, Loss::kLogistic, true, 30.0, x);
  double expected = 0;
  for (std::size_t j = 0; j < 6; ++j) {
    const double gj = g[j] + 0.3 * x[j];
    const double v = x[j] != 0 ? std::abs(gj + (x[j] > 0 ? 0.02 : -0.02)) : std::max(0.0, std::abs(gj) - 0.02);
    expected = std::max(expected, v);
  }
  expected = std::max(expected, std::abs(g[6]));
  EXPECT_NEAR(OptimalityViolation(spec, p.View(), p.labels, x), expected, 1e-14);
  EXPECT_GT(expected, 0.0);
}

TEST(OptimalityViolationTest, CountsTheInterceptGradient) {
  // x = 0 with an l1 weight no feature gradient can beat: only the intercept can violate,
  // by |g_b| = |(1/N) sum_r loss'(y_r, b)|, and not at all where that sum is zero.
  for (const Loss& loss : kAllLosses) {
    const SparseProblem p = MakeRandomProblem(30, 6, 3, 31, loss);
    ProblemSpec spec;
    spec.loss = loss;
    spec.intercept = true;
    spec.rows = p.rows;
    spec.cols = p.cols;
    spec.regularizer = Regularizer{1e3, 0.0};
    const double b = 0.3;
    std::vector<double> x(7, 0.0);
    x[6] = b;
    double g_b = 0;
    for (double y : p.labels) g_b += testing::RefLossFirst(loss, y, b) / 30.0;
    ASSERT_GT(std::abs(g_b), 1e-3) << LossName(loss);
    EXPECT_NEAR(OptimalityViolation(spec, p.View(), p.labels, x), std::abs(g_b), 1e-14) << LossName(loss);
  }
  // Squared loss: g_b = mean(b - y) vanishes at b = mean(y).
  const SparseProblem p = MakeRandomProblem(30, 6, 3, 32, Loss::kSquared);
  ProblemSpec spec;
  spec.loss = Loss::kSquared;
  spec.intercept = true;
  spec.rows = p.rows;
  spec.cols = p.cols;
  spec.regularizer = Regularizer{1e3, 0.0};
  std::vector<double> x(7, 0.0);
  for (double y : p.labels) x[6] += y / 30.0;
  EXPECT_LT(OptimalityViolation(spec, p.View(), p.labels, x), 1e-15);
}

// ---- ProblemSpec::Validate ----

ProblemSpec GoodSpec() {
  ProblemSpec spec;
  spec.rows = 10;
  spec.cols = 5;
  spec.regularizer = Regularizer{0.1, 0.2};
  return spec;
}

void ExpectInvalid(const ProblemSpec& spec, const std::string& field) {
  const Status status = spec.Validate();
  ASSERT_FALSE(status.ok()) << field;
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << field;
  EXPECT_EQ(status.message().rfind(field + ":", 0), 0u) << "message should start with '" << field
                                                         << ":', got: " << status.message();
}

TEST(ProblemSpecTest, ValidateAcceptsAGoodSpecAndNamesTheBadField) {
  EXPECT_TRUE(GoodSpec().Validate().ok());
  ProblemSpec zero_reg = GoodSpec();
  zero_reg.regularizer = Regularizer{0.0, 0.0};
  zero_reg.cols = 0;
  EXPECT_TRUE(zero_reg.Validate().ok());

  ProblemSpec spec = GoodSpec();
  spec.regularizer.l1 = -0.5;
  ExpectInvalid(spec, "l1");
  EXPECT_NE(spec.Validate().message().find("-0.5"), std::string::npos) << spec.Validate().message();
  spec.regularizer.l1 = std::numeric_limits<double>::quiet_NaN();
  ExpectInvalid(spec, "l1");
  spec.regularizer.l1 = std::numeric_limits<double>::infinity();
  ExpectInvalid(spec, "l1");

  spec = GoodSpec();
  spec.regularizer.l2 = -1.0;
  ExpectInvalid(spec, "l2");
  spec.regularizer.l2 = std::numeric_limits<double>::quiet_NaN();
  ExpectInvalid(spec, "l2");
  spec.regularizer.l2 = std::numeric_limits<double>::infinity();
  ExpectInvalid(spec, "l2");

  spec = GoodSpec();
  spec.rows = 0;
  ExpectInvalid(spec, "rows");
  spec.rows = -3;
  ExpectInvalid(spec, "rows");

  spec = GoodSpec();
  spec.cols = -1;
  ExpectInvalid(spec, "cols");
}

TEST(ProblemSpecTest, ModelSizeCountsTheIntercept) {
  ProblemSpec spec = GoodSpec();
  EXPECT_EQ(spec.model_size(), 5u);
  spec.intercept = true;
  EXPECT_EQ(spec.model_size(), 6u);
}

}  // namespace
}  // namespace nimbus

// ---- A program's own regularizer ----

namespace nimbus {
namespace {

// (lambda/2) x^2 + mu |x| written out: smooth only without mu.
class WrittenOut final : public CustomRegularizer {
 public:
  WrittenOut(double lambda, double mu) : CustomRegularizer("written_out"), lambda_(lambda), mu_(mu) {}
  double Value(double x) const override { return 0.5 * lambda_ * x * x + mu_ * std::abs(x); }
  double Prox(double t, double x) const override {
    return std::copysign(std::max(std::abs(x) - t * mu_, 0.0), x) / (1.0 + t * lambda_);
  }
  bool smooth() const override { return mu_ == 0; }
  void Derivatives(double x, double* first, double* second) const override {
    *first = lambda_ * x;
    *second = lambda_;
  }

 private:
  double lambda_, mu_;
};

TEST(CustomRegularizerTest, ValueProxAndDerivativesOverTheRegularizedPrefix) {
  const Regularizer g(0, 0, std::make_shared<WrittenOut>(2.0, 0.0));
  const std::vector<double> x = {1.0, -3.0, 0.5, 7.0};  // the last entry is the intercept
  EXPECT_DOUBLE_EQ(g.Value(x, 3), 0.5 * 2.0 * (1.0 + 9.0 + 0.25));
  EXPECT_TRUE(g.smooth());
  std::vector<double> gradient(4, 1.0), diagonal(4, 0.0), product(4, 0.0);
  g.AddGradient(x, 3, gradient);
  EXPECT_EQ(gradient, (std::vector<double>{3.0, -5.0, 2.0, 1.0}));
  g.AddCurvature(x, 3, diagonal);
  EXPECT_EQ(diagonal, (std::vector<double>{2.0, 2.0, 2.0, 0.0}));
  g.AddCurvatureProduct(x, std::vector<double>{1, 2, 3, 4}, 3, product);
  EXPECT_EQ(product, (std::vector<double>{2.0, 4.0, 6.0, 0.0}));
  std::vector<double> proxed = x;
  g.Prox(0.5, proxed, 3);
  EXPECT_EQ(proxed, (std::vector<double>{0.5, -1.5, 0.25, 7.0}));  // x / (1 + 0.5 * 2), the intercept kept
  EXPECT_DOUBLE_EQ(g.ProxOf(0.5)(-3.0), -1.5);
}

TEST(CustomRegularizerTest, ReplacesL1AndL2AndItsViolationIsTheProxGradientStep) {
  ProblemSpec spec;
  spec.rows = 1;
  spec.cols = 1;
  spec.loss = Loss::kSquared;
  spec.regularizer = Regularizer(0.1, 0, std::make_shared<WrittenOut>(0, 0.5));
  EXPECT_NE(spec.Validate().message().find("replaces l1 and l2"), std::string::npos);
  spec.regularizer.l1 = 0;
  ASSERT_TRUE(spec.Validate().ok());
  EXPECT_FALSE(spec.regularizer.smooth());
  // One row a = 1, y = 0.3: g(x) = (x - 0.3) at x, F = (x - 0.3)^2 / 2 + 0.5 |x|: the
  // optimum is 0 (|g(0)| = 0.3 <= 0.5); at x = 0.2 the step is |0.2 - prox(0.2 - (-0.1))| = 0.2.
  const std::vector<int64_t> row_ptr = {0, 1};
  const std::vector<uint32_t> col_idx = {0};
  const std::vector<double> values = {1.0}, labels = {0.3};
  const CsrView matrix{1, 1, row_ptr.data(), col_idx.data(), values.data()};
  EXPECT_DOUBLE_EQ(OptimalityViolation(spec, matrix, labels, std::vector<double>{0.0}), 0.0);
  EXPECT_NEAR(OptimalityViolation(spec, matrix, labels, std::vector<double>{0.2}), 0.2, 1e-15);
}

}  // namespace
}  // namespace nimbus
