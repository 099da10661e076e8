// Dense vector kernels against plain loops, for every length from 0 to past the unrolled
// width (so the remainder loops are exercised), plus exact cases on integer-valued inputs.
#include "nimbus/core/vector_ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <vector>

namespace nimbus {
namespace {

std::vector<double> RandomVector(std::size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> dist(-2.0, 2.0);
  std::vector<double> v(n);
  for (double& x : v) x = dist(rng);
  return v;
}

// A loose bound on the rounding error of a sum of n terms of magnitude at most `scale`.
double Tolerance(std::size_t n, double scale) { return 1e-14 * static_cast<double>(n + 1) * scale; }

TEST(VectorOpsTest, DotMatchesPlainLoopForEveryLength) {
  std::mt19937_64 rng(1);
  for (std::size_t n = 0; n <= 37; ++n) {
    const std::vector<double> a = RandomVector(n, rng), b = RandomVector(n, rng);
    double expected = 0;
    for (std::size_t i = 0; i < n; ++i) expected += a[i] * b[i];
    EXPECT_NEAR(Dot(a, b), expected, Tolerance(n, 4.0)) << "n=" << n;
  }
}

TEST(VectorOpsTest, NormsMatchPlainLoopsForEveryLength) {
  std::mt19937_64 rng(2);
  for (std::size_t n = 0; n <= 37; ++n) {
    const std::vector<double> a = RandomVector(n, rng);
    double squares = 0, abs_sum = 0, max_abs = 0;
    for (double v : a) {
      squares += v * v;
      abs_sum += std::fabs(v);
      max_abs = std::fmax(max_abs, std::fabs(v));
    }
    EXPECT_NEAR(SquaredNorm(a), squares, Tolerance(n, 4.0)) << "n=" << n;
    EXPECT_NEAR(Norm(a), std::sqrt(squares), Tolerance(n, 4.0)) << "n=" << n;
    EXPECT_NEAR(Norm1(a), abs_sum, Tolerance(n, 2.0)) << "n=" << n;
    EXPECT_EQ(NormInf(a), max_abs) << "n=" << n;
  }
}

TEST(VectorOpsTest, SquaredDistanceMatchesPlainLoop) {
  std::mt19937_64 rng(3);
  for (std::size_t n = 0; n <= 37; ++n) {
    const std::vector<double> a = RandomVector(n, rng), b = RandomVector(n, rng);
    double expected = 0;
    for (std::size_t i = 0; i < n; ++i) expected += (a[i] - b[i]) * (a[i] - b[i]);
    EXPECT_NEAR(SquaredDistance(a, b), expected, Tolerance(n, 16.0)) << "n=" << n;
  }
}

TEST(VectorOpsTest, ExactResultsOnSmallIntegers) {
  const std::vector<double> a = {1, -2, 3, -4, 5, -6, 7};
  const std::vector<double> b = {7, 6, 5, 4, 3, 2, 1};
  // 7 - 12 + 15 - 16 + 15 - 12 + 7
  EXPECT_EQ(Dot(a, b), 4.0);
  EXPECT_EQ(SquaredNorm(a), 140.0);
  EXPECT_EQ(Norm1(a), 28.0);
  EXPECT_EQ(NormInf(a), 7.0);
  // (1-7)^2 + (-2-6)^2 + (3-5)^2 + (-4-4)^2 + (5-3)^2 + (-6-2)^2 + (7-1)^2
  EXPECT_EQ(SquaredDistance(a, b), 36.0 + 64 + 4 + 64 + 4 + 64 + 36);
  EXPECT_EQ(Norm(std::vector<double>{3, 4}), 5.0);
  EXPECT_EQ(Norm(std::vector<double>{}), 0.0);
}

TEST(VectorOpsTest, NormInfUsesAbsoluteValues) {
  EXPECT_EQ(NormInf(std::vector<double>{-9, 3, 8}), 9.0);
  EXPECT_EQ(NormInf(std::vector<double>{-0.5}), 0.5);
  EXPECT_EQ(NormInf(std::vector<double>{}), 0.0);
}

// A NaN entry must show in every norm: a norm that skips it would let a diverged iterate
// pass a convergence test.
TEST(VectorOpsTest, NaNPropagatesThroughEveryNorm) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const std::vector<double>& v : {std::vector<double>{nan}, std::vector<double>{1, nan, 2},
                                       std::vector<double>{3, 4, 5, 6, 7, nan}}) {
    EXPECT_TRUE(std::isnan(SquaredNorm(v)));
    EXPECT_TRUE(std::isnan(Norm(v)));
    EXPECT_TRUE(std::isnan(Norm1(v)));
    EXPECT_TRUE(std::isnan(NormInf(v))) << "NormInf ignores NaN, returns " << NormInf(v);
  }
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(NormInf(std::vector<double>{1, -inf}), inf);
  EXPECT_EQ(Norm1(std::vector<double>{1, -inf}), inf);
}

TEST(VectorOpsTest, ReductionsAreReproducible) {
  std::mt19937_64 rng(4);
  const std::vector<double> a = RandomVector(1001, rng), b = RandomVector(1001, rng);
  const double first = Dot(a, b);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Dot(a, b), first);
  EXPECT_EQ(SquaredDistance(a, b), SquaredDistance(a, b));
  // Dot is symmetric term by term, so the same fixed order gives the same bits.
  EXPECT_EQ(Dot(b, a), first);
}

TEST(VectorOpsTest, WorksOnSubspans) {
  const std::vector<double> a = {100, 1, 2, 3, 100};
  const std::vector<double> b = {100, 4, 5, 6, 100};
  const std::span<const double> sa(a), sb(b);
  EXPECT_EQ(Dot(sa.subspan(1, 3), sb.subspan(1, 3)), 32.0);
  EXPECT_EQ(SquaredNorm(sa.subspan(1, 3)), 14.0);
}

TEST(VectorOpsTest, AxpyAddsScaledVector) {
  std::mt19937_64 rng(5);
  for (std::size_t n = 0; n <= 9; ++n) {
    const std::vector<double> x = RandomVector(n, rng);
    std::vector<double> y = RandomVector(n, rng);
    const std::vector<double> y0 = y;
    Axpy(-1.5, x, y);
    for (std::size_t i = 0; i < n; ++i) EXPECT_DOUBLE_EQ(y[i], y0[i] - 1.5 * x[i]);
  }
  std::vector<double> y = {1, 2, 3};
  Axpy(2.0, std::vector<double>{10, 20, 30}, y);
  EXPECT_EQ(y, (std::vector<double>{21, 42, 63}));
  Axpy(0.0, std::vector<double>{10, 20, 30}, y);
  EXPECT_EQ(y, (std::vector<double>{21, 42, 63}));
}

TEST(VectorOpsTest, ScaleFillCopy) {
  std::vector<double> x = {1, -2, 0.5};
  Scale(-2.0, x);
  EXPECT_EQ(x, (std::vector<double>{-2, 4, -1}));
  Scale(0.0, x);
  for (double v : x) EXPECT_EQ(v, 0.0);

  std::vector<double> f(5, 1.0);
  Fill(std::span<double>(f).subspan(1, 3), 7.0);
  EXPECT_EQ(f, (std::vector<double>{1, 7, 7, 7, 1}));

  std::vector<double> to(4, 0.0);
  CopyInto(std::vector<double>{9, 8, 7, 6}, to);
  EXPECT_EQ(to, (std::vector<double>{9, 8, 7, 6}));
  Fill(std::span<double>(), 3.0);  // empty: no effect, no crash
}

TEST(VectorOpsTest, CountNonzerosCountsExactNonzeros) {
  EXPECT_EQ(CountNonzeros(std::vector<double>{}), 0u);
  EXPECT_EQ(CountNonzeros(std::vector<double>{0.0, -0.0, 0.0}), 0u);
  const double tiny = std::numeric_limits<double>::denorm_min();
  EXPECT_EQ(CountNonzeros(std::vector<double>{0.0, tiny, -1e-300, 5, 0}), 3u);
}

}  // namespace
}  // namespace nimbus
