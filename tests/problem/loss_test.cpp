// Tests of the margin losses: values at hand-computed points, derivatives against finite
// differences, the logistic loss at extreme margins, names, and the curvature at zero.
#include "nimbus/problem/loss.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace nimbus {
namespace {

const Loss kAllLosses[] = {Loss::kLogistic, Loss::kSquared, Loss::kSquaredHinge};

// ---- Values at hand-computed points ----

TEST(LossValueTest, LogisticAtHandComputedPoints) {
  EXPECT_NEAR(LossValue(Loss::kLogistic, 1.0, 0.0), 0.69314718055994531, 1e-15);   // log 2
  EXPECT_NEAR(LossValue(Loss::kLogistic, -1.0, 0.0), 0.69314718055994531, 1e-15);  // log 2
  // log(1 + e^-1) = 0.31326168751822286
  EXPECT_NEAR(LossValue(Loss::kLogistic, 1.0, 1.0), 0.31326168751822286, 1e-15);
  // y m = -2: log(1 + e^2) = 2.1269280110429727
  EXPECT_NEAR(LossValue(Loss::kLogistic, -1.0, 2.0), 2.1269280110429727, 1e-14);
  // y m = -3: log(1 + e^3) = 3.0485873515737420
  EXPECT_NEAR(LossValue(Loss::kLogistic, 1.0, -3.0), 3.0485873515737420, 1e-14);
  // y m = 3 (negative label, negative margin): log(1 + e^-3) = 0.048587351573741958
  EXPECT_NEAR(LossValue(Loss::kLogistic, -1.0, -3.0), 0.048587351573741958, 1e-15);
}

TEST(LossValueTest, SquaredAtHandComputedPoints) {
  EXPECT_DOUBLE_EQ(LossValue(Loss::kSquared, 2.0, 0.5), 1.125);  // (0.5 - 2)^2 / 2
  EXPECT_DOUBLE_EQ(LossValue(Loss::kSquared, -1.0, 3.0), 8.0);   // 4^2 / 2
  EXPECT_DOUBLE_EQ(LossValue(Loss::kSquared, 0.25, 0.25), 0.0);
  EXPECT_DOUBLE_EQ(LossValue(Loss::kSquared, 1.5, -0.5), 2.0);  // (-2)^2 / 2
}

TEST(LossValueTest, SquaredHingeAtHandComputedPoints) {
  EXPECT_DOUBLE_EQ(LossValue(Loss::kSquaredHinge, 1.0, 0.5), 0.25);    // (1 - 0.5)^2
  EXPECT_DOUBLE_EQ(LossValue(Loss::kSquaredHinge, -1.0, 0.5), 2.25);   // (1 + 0.5)^2
  EXPECT_DOUBLE_EQ(LossValue(Loss::kSquaredHinge, 1.0, -1.0), 4.0);    // (1 + 1)^2
  EXPECT_DOUBLE_EQ(LossValue(Loss::kSquaredHinge, 1.0, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(LossValue(Loss::kSquaredHinge, 1.0, 1.0), 0.0);     // on the kink
  EXPECT_DOUBLE_EQ(LossValue(Loss::kSquaredHinge, 1.0, 2.0), 0.0);     // beyond the margin
  EXPECT_DOUBLE_EQ(LossValue(Loss::kSquaredHinge, -1.0, -3.0), 0.0);
}

// LossDerivatives at the same kind of points, one row at a time.
struct Derivs {
  double sum, first, second;
};
Derivs DerivsAt(Loss loss, double y, double m, double scale = 1.0) {
  const double labels[] = {y};
  const double margins[] = {m};
  double first[1] = {std::nan("")};
  double second[1] = {std::nan("")};
  const double sum = LossDerivatives(loss, labels, margins, scale, first, second);
  return {sum, first[0], second[0]};
}

TEST(LossDerivativesTest, HandComputedPoints) {
  // logistic at m = 0: -y / 2 and 1/4.
  Derivs d = DerivsAt(Loss::kLogistic, 1.0, 0.0);
  EXPECT_NEAR(d.first, -0.5, 1e-15);
  EXPECT_NEAR(d.second, 0.25, 1e-15);
  d = DerivsAt(Loss::kLogistic, -1.0, 0.0);
  EXPECT_NEAR(d.first, 0.5, 1e-15);
  EXPECT_NEAR(d.second, 0.25, 1e-15);
  // logistic, y = 1, m = 1: -1 / (1 + e) = -0.2689414213699951, s(1) s(-1) = 0.19661193324148185
  d = DerivsAt(Loss::kLogistic, 1.0, 1.0);
  EXPECT_NEAR(d.first, -0.2689414213699951, 1e-15);
  EXPECT_NEAR(d.second, 0.19661193324148185, 1e-15);
  // logistic, y = -1, m = 1 (t = -1): +1 / (1 + e^-1) = 0.7310585786300049
  d = DerivsAt(Loss::kLogistic, -1.0, 1.0);
  EXPECT_NEAR(d.first, 0.7310585786300049, 1e-15);
  EXPECT_NEAR(d.second, 0.19661193324148185, 1e-15);

  d = DerivsAt(Loss::kSquared, 2.0, 0.5);
  EXPECT_DOUBLE_EQ(d.sum, 1.125);
  EXPECT_DOUBLE_EQ(d.first, -1.5);
  EXPECT_DOUBLE_EQ(d.second, 1.0);

  d = DerivsAt(Loss::kSquaredHinge, 1.0, 0.5);  // slack 0.5: -2 * 0.5, 2
  EXPECT_DOUBLE_EQ(d.sum, 0.25);
  EXPECT_DOUBLE_EQ(d.first, -1.0);
  EXPECT_DOUBLE_EQ(d.second, 2.0);
  d = DerivsAt(Loss::kSquaredHinge, -1.0, 0.5);  // slack 1.5: -2 * (-1) * 1.5 = 3
  EXPECT_DOUBLE_EQ(d.sum, 2.25);
  EXPECT_DOUBLE_EQ(d.first, 3.0);
  EXPECT_DOUBLE_EQ(d.second, 2.0);
  d = DerivsAt(Loss::kSquaredHinge, 1.0, 2.0);  // outside the margin: flat
  EXPECT_DOUBLE_EQ(d.sum, 0.0);
  EXPECT_DOUBLE_EQ(d.first, 0.0);
  EXPECT_DOUBLE_EQ(d.second, 0.0);
}

TEST(LossDerivativesTest, ScaleMultipliesDerivativesButNotTheSum) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> margin(-3, 3);
  for (const Loss& loss : kAllLosses) {
    std::vector<double> labels, margins;
    for (int r = 0; r < 50; ++r) {
      labels.push_back(loss == Loss::kSquared ? margin(rng) : (r % 2 == 0 ? 1.0 : -1.0));
      margins.push_back(margin(rng));
    }
    const std::size_t n = labels.size();
    std::vector<double> f1(n), s1(n), f2(n), s2(n);
    const double sum1 = LossDerivatives(loss, labels, margins, 1.0, f1, s1);
    const double sum2 = LossDerivatives(loss, labels, margins, 0.125, f2, s2);
    double expected_sum = 0;
    for (std::size_t r = 0; r < n; ++r) expected_sum += LossValue(loss, labels[r], margins[r]);
    EXPECT_NEAR(sum1, expected_sum, 1e-12 * std::abs(expected_sum)) << LossName(loss);
    EXPECT_NEAR(sum2, expected_sum, 1e-12 * std::abs(expected_sum)) << LossName(loss);
    for (std::size_t r = 0; r < n; ++r) {
      EXPECT_NEAR(f2[r], 0.125 * f1[r], 1e-15 * (1 + std::abs(f1[r]))) << LossName(loss) << " row " << r;
      EXPECT_NEAR(s2[r], 0.125 * s1[r], 1e-15 * (1 + std::abs(s1[r]))) << LossName(loss) << " row " << r;
    }
  }
}

// ---- Derivatives against central finite differences of LossValue ----

// Margins from -8 to 8 for labels +-1 (and real labels for the squared loss), away from the
// squared hinge's kink at y m = 1 (where its derivatives do not exist / jump).
void CheckDerivativesAgainstFiniteDifferences(Loss loss, const std::vector<double>& label_values) {
  std::vector<double> labels, margins;
  for (double y : label_values) {
    for (double m = -8.0; m <= 8.0; m += 0.173) {
      if (loss == Loss::kSquaredHinge && std::abs(1.0 - y * m) < 0.05) continue;
      labels.push_back(y);
      margins.push_back(m);
    }
  }
  const std::size_t n = labels.size();
  ASSERT_GT(n, 150u);
  std::vector<double> first(n), second(n);
  LossDerivatives(loss, labels, margins, 1.0, first, second);
  // Derivatives at m +- h, to difference the reported first derivative.
  const double h = 1e-5;
  std::vector<double> plus(n), minus(n), first_plus(n), first_minus(n), unused(n);
  for (std::size_t r = 0; r < n; ++r) {
    plus[r] = margins[r] + h;
    minus[r] = margins[r] - h;
  }
  LossDerivatives(loss, labels, plus, 1.0, first_plus, unused);
  LossDerivatives(loss, labels, minus, 1.0, first_minus, unused);
  for (std::size_t r = 0; r < n; ++r) {
    const double y = labels[r], m = margins[r];
    const double fd_first = (LossValue(loss, y, m + h) - LossValue(loss, y, m - h)) / (2 * h);
    EXPECT_NEAR(first[r], fd_first, 1e-8 * (1 + std::abs(fd_first)))
        << LossName(loss) << " y=" << y << " m=" << m;
    // Second differences of the value (truncation ~ H^2/12 * loss'''', rounding ~ eps |loss| / H^2).
    const double big_h = 1e-3;
    const double fd_second_value =
        (LossValue(loss, y, m + big_h) - 2 * LossValue(loss, y, m) + LossValue(loss, y, m - big_h)) / (big_h * big_h);
    EXPECT_NEAR(second[r], fd_second_value, 2e-6 * (1 + std::abs(fd_second_value)))
        << LossName(loss) << " y=" << y << " m=" << m;
    // ... and central differences of the first derivative, which are much sharper.
    const double fd_second = (first_plus[r] - first_minus[r]) / (2 * h);
    EXPECT_NEAR(second[r], fd_second, 1e-8 * (1 + std::abs(fd_second)))
        << LossName(loss) << " y=" << y << " m=" << m;
    EXPECT_GE(second[r], 0.0) << LossName(loss) << " is convex";
  }
}

// Row weights c_r: the sum is sum_r c_r loss_r (each row's loss from LossValue, one row at a
// time) and the derivatives are c_r times the unweighted ones; a weight of 0 removes the row.
TEST(LossDerivativesTest, RowWeightsScaleEachRow) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> margin(-3, 3), weight(0, 4);
  for (const Loss& loss : kAllLosses) {
    SCOPED_TRACE(LossName(loss));
    std::vector<double> labels, margins, weights;
    for (int r = 0; r < 40; ++r) {
      labels.push_back(loss == Loss::kSquared ? margin(rng) : (r % 3 == 0 ? 1.0 : -1.0));
      margins.push_back(margin(rng));
      weights.push_back(r % 5 == 0 ? 0.0 : weight(rng));
    }
    const std::size_t n = labels.size();
    std::vector<double> f(n), s(n), fw(n), sw(n);
    LossDerivatives(loss, labels, margins, 0.5, f, s);
    const double sum = LossDerivatives(loss, labels, margins, 0.5, fw, sw, weights);
    double expected = 0;
    for (std::size_t r = 0; r < n; ++r) {
      expected += weights[r] * LossValue(loss, labels[r], margins[r]);
      EXPECT_NEAR(fw[r], weights[r] * f[r], 1e-15 * (1 + std::abs(f[r])));
      EXPECT_NEAR(sw[r], weights[r] * s[r], 1e-15 * (1 + std::abs(s[r])));
    }
    EXPECT_NEAR(sum, expected, 1e-12 * expected);
    EXPECT_NEAR(SumLoss(loss, labels, margins, weights), expected, 1e-12 * expected);
  }
}

TEST(LossDerivativesTest, LogisticMatchesFiniteDifferences) {
  CheckDerivativesAgainstFiniteDifferences(Loss::kLogistic, {1.0, -1.0});
}

TEST(LossDerivativesTest, SquaredMatchesFiniteDifferences) {
  CheckDerivativesAgainstFiniteDifferences(Loss::kSquared, {1.0, -1.0, 0.0, 2.5, -3.75});
}

TEST(LossDerivativesTest, SquaredHingeMatchesFiniteDifferencesAwayFromTheKink) {
  CheckDerivativesAgainstFiniteDifferences(Loss::kSquaredHinge, {1.0, -1.0});
}

// The squared hinge's first derivative is continuous through the kink (it is 0 on both sides
// at y m = 1), only its second derivative jumps (the generalized one is 0 or 2).
TEST(LossDerivativesTest, SquaredHingeFirstDerivativeIsContinuousAtTheKink) {
  for (double y : {1.0, -1.0}) {
    const double kink = 1.0 / y;
    EXPECT_NEAR(DerivsAt(Loss::kSquaredHinge, y, kink - 1e-9).first, 0.0, 1e-8);
    EXPECT_NEAR(DerivsAt(Loss::kSquaredHinge, y, kink + 1e-9).first, 0.0, 1e-8);
    const Derivs inside = DerivsAt(Loss::kSquaredHinge, y, kink - y * 1e-3);  // slack 1e-3 > 0
    const Derivs outside = DerivsAt(Loss::kSquaredHinge, y, kink + y * 1e-3);
    EXPECT_DOUBLE_EQ(inside.second, 2.0);
    EXPECT_DOUBLE_EQ(outside.second, 0.0);
  }
}

// ---- Logistic stability at huge margins ----

TEST(LogisticStabilityTest, ValueIsFiniteAndAsymptoticAtHugeMargins) {
  const double huge[] = {30.0, 50.0, 100.0, 700.0, 710.0, 800.0, 1e4, 1e10, 1e100, 1e300,
                         std::numeric_limits<double>::max()};
  for (double t : huge) {
    for (double y : {1.0, -1.0}) {
      // y m = -t << 0: log(1 + e^t) = t + log(1 + e^-t) ~ t.
      const double big = LossValue(Loss::kLogistic, y, -y * t);
      ASSERT_TRUE(std::isfinite(big)) << "t=" << t;
      EXPECT_NEAR(big, t, 1e-14 * t) << "t=" << t;
      EXPECT_GE(big, t) << "t=" << t;
      // y m = t >> 0: log(1 + e^-t) ~ e^-t, tiny but not negative.
      const double small = LossValue(Loss::kLogistic, y, y * t);
      ASSERT_TRUE(std::isfinite(small)) << "t=" << t;
      EXPECT_GE(small, 0.0) << "t=" << t;
      EXPECT_LE(small, 1e-13) << "t=" << t;
    }
  }
  // Relative accuracy in the tail: log1p(e^-t) = e^-t (1 - e^-t / 2 + ...).
  for (double t : {20.0, 30.0, 40.0, 100.0, 700.0}) {
    EXPECT_NEAR(LossValue(Loss::kLogistic, 1.0, t) / std::exp(-t), 1.0 - 0.5 * std::exp(-t), 1e-13) << "t=" << t;
    EXPECT_NEAR(LossValue(Loss::kLogistic, 1.0, -t) - t, std::exp(-t), 1e-15 * t) << "t=" << t;
  }
  EXPECT_NEAR(LogOnePlusExpMinus(-1000.0), 1000.0, 1e-12);
  EXPECT_NEAR(LogOnePlusExpMinus(0.0), std::log(2.0), 1e-16);
  EXPECT_EQ(LogOnePlusExpMinus(1e6), 0.0);
}

TEST(LogisticStabilityTest, DerivativesAreFiniteAtHugeMargins) {
  std::vector<double> labels, margins;
  for (double t : {40.0, 700.0, 800.0, 1e10, 1e300, std::numeric_limits<double>::max()}) {
    for (double y : {1.0, -1.0}) {
      labels.push_back(y);
      margins.push_back(y * t);  // y m = t >> 0
      labels.push_back(y);
      margins.push_back(-y * t);  // y m = -t << 0
    }
  }
  const std::size_t n = labels.size();
  std::vector<double> first(n), second(n);
  const double sum = LossDerivatives(Loss::kLogistic, labels, margins, 1.0, first, second);
  EXPECT_FALSE(std::isnan(sum));
  for (std::size_t r = 0; r < n; ++r) {
    const double y = labels[r], t = labels[r] * margins[r];
    ASSERT_TRUE(std::isfinite(first[r])) << "t=" << t;
    ASSERT_TRUE(std::isfinite(second[r])) << "t=" << t;
    EXPECT_GE(second[r], 0.0);
    EXPECT_LE(second[r], std::exp(-std::abs(t)) * 1.0000001 + 1e-300);
    if (t > 0) {
      EXPECT_NEAR(first[r], 0.0, 1e-16) << "t=" << t;  // flat: correctly classified
    } else {
      EXPECT_NEAR(first[r], -y, 1e-15) << "t=" << t;  // slope -y: wrong side
    }
  }
  // Moderate tail: the sum stays exact to relative rounding.
  const double labels2[] = {1.0, 1.0};
  const double margins2[] = {-1000.0, 1000.0};
  double f2[2], s2[2];
  EXPECT_NEAR(LossDerivatives(Loss::kLogistic, labels2, margins2, 1.0, f2, s2), 1000.0, 1e-12);
}

// ---- SumLoss ----

TEST(SumLossTest, EqualsTheSumOfLossValue) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> uniform(-5, 5);
  for (const Loss& loss : kAllLosses) {
    std::vector<double> labels, margins;
    double expected = 0;
    for (int r = 0; r < 257; ++r) {
      const double y = loss == Loss::kSquared ? uniform(rng) : (uniform(rng) > 0 ? 1.0 : -1.0);
      const double m = uniform(rng);
      labels.push_back(y);
      margins.push_back(m);
      expected += LossValue(loss, y, m);
    }
    EXPECT_NEAR(SumLoss(loss, labels, margins), expected, 1e-12 * expected) << LossName(loss);
    EXPECT_EQ(SumLoss(loss, std::span<const double>(), std::span<const double>()), 0.0);
  }
}

TEST(SumLossTest, HandComputedSmallSum) {
  const double labels[] = {1.0, -1.0, 1.0};
  const double margins[] = {0.5, 0.5, 2.0};
  // squared hinge: 0.25 + 2.25 + 0
  EXPECT_DOUBLE_EQ(SumLoss(Loss::kSquaredHinge, labels, margins), 2.5);
  // squared: (0.5-1)^2/2 + (0.5+1)^2/2 + (2-1)^2/2 = 0.125 + 1.125 + 0.5
  EXPECT_DOUBLE_EQ(SumLoss(Loss::kSquared, labels, margins), 1.75);
  // logistic: log(1+e^-0.5) + log(1+e^0.5) + log(1+e^-2)
  EXPECT_NEAR(SumLoss(Loss::kLogistic, labels, margins),
              0.47407698418010669 + 0.97407698418010669 + 0.12692801104297263, 1e-14);
}

TEST(SumLossTest, LogisticSumIsFiniteAtHugeMargins) {
  const double labels[] = {1.0, -1.0, 1.0, -1.0};
  const double margins[] = {1e300, 1e300, -1e300, -1e300};
  const double sum = SumLoss(Loss::kLogistic, labels, margins);
  ASSERT_TRUE(std::isfinite(sum));
  EXPECT_NEAR(sum, 2e300, 1e286);
}

// ---- Names ----

TEST(LossNameTest, RoundTripsThroughParseLoss) {
  for (const Loss& loss : kAllLosses) {
    const Result<Loss> parsed = ParseLoss(LossName(loss));
    ASSERT_TRUE(parsed.ok()) << LossName(loss) << ": " << parsed.status().ToString();
    EXPECT_EQ(*parsed, loss);
  }
  EXPECT_STREQ(LossName(Loss::kLogistic), "logistic");
  EXPECT_STREQ(LossName(Loss::kSquared), "squared");
  EXPECT_STREQ(LossName(Loss::kSquaredHinge), "squared_hinge");
  const Result<Loss> dashed = ParseLoss("squared-hinge");
  ASSERT_TRUE(dashed.ok());
  EXPECT_EQ(*dashed, Loss::kSquaredHinge);
}

TEST(LossNameTest, UnknownNameIsAnInvalidArgumentThatNamesIt) {
  for (const std::string name : {"hinge", "", "Logistic", "logistic ", "squared_hinge2"}) {
    const Result<Loss> parsed = ParseLoss(name);
    ASSERT_FALSE(parsed.ok()) << "'" << name << "'";
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find("'" + name + "'"), std::string::npos) << parsed.status().message();
  }
}

TEST(LossNameTest, IsClassification) {
  EXPECT_TRUE(IsClassification(Loss::kLogistic));
  EXPECT_TRUE(IsClassification(Loss::kSquaredHinge));
  EXPECT_FALSE(IsClassification(Loss::kSquared));
}

// ---- CurvatureAtZero ----

TEST(CurvatureAtZeroTest, MatchesFiniteDifferencesAtZero) {
  const double h = 1e-4;
  for (const Loss& loss : kAllLosses) {
    const std::vector<double> labels =
        loss == Loss::kSquared ? std::vector<double>{1.0, -1.0, 0.0, 3.5} : std::vector<double>{1.0, -1.0};
    for (double y : labels) {
      const double fd = (LossValue(loss, y, h) - 2 * LossValue(loss, y, 0.0) + LossValue(loss, y, -h)) / (h * h);
      EXPECT_NEAR(CurvatureAtZero(loss), fd, 1e-6) << LossName(loss) << " y=" << y;
      EXPECT_NEAR(CurvatureAtZero(loss), DerivsAt(loss, y, 0.0).second, 1e-15) << LossName(loss) << " y=" << y;
    }
  }
  EXPECT_DOUBLE_EQ(CurvatureAtZero(Loss::kLogistic), 0.25);
  EXPECT_DOUBLE_EQ(CurvatureAtZero(Loss::kSquared), 1.0);
  EXPECT_DOUBLE_EQ(CurvatureAtZero(Loss::kSquaredHinge), 2.0);
}

}  // namespace
}  // namespace nimbus

// ---- A program's own losses ----

namespace nimbus {
namespace {

// exp(m) - y m (Poisson with a log link), written out.
class TestPoisson final : public CustomLoss {
 public:
  explicit TestPoisson(std::string name = "test_poisson") : CustomLoss(std::move(name), false) {}
  double Value(double y, double m) const override { return std::exp(m) - y * m; }
  void Derivatives(double y, double m, double* first, double* second) const override {
    *first = std::exp(m) - y;
    *second = std::exp(m);
  }
};

TEST(CustomLossTest, SumsAndScaledDerivativesRowByRow) {
  const Loss loss(std::make_shared<TestPoisson>());
  const std::vector<double> labels = {0, 2, 5};
  const std::vector<double> margins = {0.0, 1.0, -1.0};
  // By hand: e^0 - 0 = 1; e - 2 = 0.71828...; e^-1 + 5 = 5.36788...
  const double expected = 1.0 + (std::exp(1.0) - 2.0) + (std::exp(-1.0) + 5.0);
  EXPECT_NEAR(SumLoss(loss, labels, margins), expected, 1e-14);
  std::vector<double> first(3), second(3);
  EXPECT_NEAR(LossDerivatives(loss, labels, margins, 0.5, first, second), expected, 1e-14);
  EXPECT_NEAR(first[1], 0.5 * (std::exp(1.0) - 2.0), 1e-15);
  EXPECT_NEAR(second[2], 0.5 * std::exp(-1.0), 1e-15);
  EXPECT_NEAR(CurvatureAtZero(loss), 1.0, 1e-15);  // e^0 at (y, m) = (1, 0)
  EXPECT_FALSE(IsClassification(loss));
  EXPECT_STREQ(LossName(loss), "test_poisson");
  EXPECT_EQ(loss.kind(), LossKind::kCustom);
}

// With row weights the custom loss's own sums (which know no weights) are passed by: its rows
// are weighed one by one.
TEST(CustomLossTest, RowWeightsWeighItsRows) {
  const Loss loss(std::make_shared<TestPoisson>());
  const std::vector<double> labels = {0, 2, 5}, margins = {0.0, 1.0, -1.0}, weights = {2, 0, 0.5};
  const double expected = 2 * 1.0 + 0.5 * (std::exp(-1.0) + 5.0);
  EXPECT_NEAR(SumLoss(loss, labels, margins, weights), expected, 1e-14);
  std::vector<double> first(3), second(3);
  EXPECT_NEAR(LossDerivatives(loss, labels, margins, 0.5, first, second, weights), expected, 1e-14);
  EXPECT_NEAR(first[0], 0.5 * 2 * (1.0 - 0.0), 1e-15);
  EXPECT_EQ(first[1], 0.0);
  EXPECT_NEAR(second[2], 0.5 * 0.5 * std::exp(-1.0), 1e-15);
}

TEST(CustomLossTest, RegisteredByNameAndFoundByParseLoss) {
  auto poisson = std::make_shared<TestPoisson>("registered_poisson");
  ASSERT_TRUE(RegisterLoss(poisson).ok());
  ASSERT_TRUE(RegisterLoss(poisson).ok());  // the same object again: nothing changes
  const Result<Loss> parsed = ParseLoss("registered_poisson");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->custom(), poisson.get());
  EXPECT_EQ(*parsed, Loss(poisson));
  // Another object under that name, or a name of nimbus's own, is refused.
  EXPECT_FALSE(RegisterLoss(std::make_shared<TestPoisson>("registered_poisson")).ok());
  const Status builtin = RegisterLoss(std::make_shared<TestPoisson>("logistic"));
  EXPECT_NE(builtin.message().find("one of nimbus's own losses"), std::string::npos) << builtin.message();
  // Unknown names list what there is.
  const Result<Loss> unknown = ParseLoss("gamma");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("registered_poisson"), std::string::npos) << unknown.status().message();
}

TEST(CustomLossTest, AFamilyMakesItsMembersFromTheirNames) {
  ASSERT_TRUE(RegisterLossFamily("scaled_poisson", [](const std::string& parameter)
                                                       -> Result<std::shared_ptr<const CustomLoss>> {
                if (parameter == "bad") return InvalidArgument("no such member");
                if (parameter == "renamed") return std::shared_ptr<const CustomLoss>(std::make_shared<TestPoisson>("x"));
                return std::shared_ptr<const CustomLoss>(std::make_shared<TestPoisson>("scaled_poisson:" + parameter));
              }).ok());
  const Result<Loss> member = ParseLoss("scaled_poisson:2");
  ASSERT_TRUE(member.ok()) << member.status().ToString();
  EXPECT_STREQ(LossName(*member), "scaled_poisson:2");
  const Result<Loss> bad = ParseLoss("scaled_poisson:bad");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("loss 'scaled_poisson:bad': no such member"), std::string::npos)
      << bad.status().message();
  EXPECT_FALSE(ParseLoss("scaled_poisson:renamed").ok());
  EXPECT_FALSE(RegisterLossFamily("with:colon", [](const std::string&) { return Result<std::shared_ptr<const CustomLoss>>(nullptr); }).ok());
}

}  // namespace
}  // namespace nimbus
