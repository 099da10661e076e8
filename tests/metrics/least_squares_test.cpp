// The non-negative least squares of the calibration's cost fit, against exact and hand-solved fits.
#include "nimbus/metrics/least_squares.h"

#include <gtest/gtest.h>

#include <vector>

namespace nimbus {
namespace {

TEST(NonNegativeLeastSquares, RecoversKnownCosts) {
  // y = 2 a + 3 b exactly.
  const std::vector<std::vector<double>> rows = {{1, 0}, {0, 1}, {1, 1}, {2, 1}};
  const std::vector<double> y = {2, 3, 5, 7};
  const std::vector<double> x = NonNegativeLeastSquares(rows, y);
  ASSERT_EQ(x.size(), 2u);
  EXPECT_NEAR(x[0], 2, 1e-12);
  EXPECT_NEAR(x[1], 3, 1e-12);
  // Unconstrained, y = 1 a - 1 b fits exactly; with b >= 0 the best is b = 0 and a the
  // least-squares slope through (1, 1), (2, 1), (3, 2): a = (1 + 2 + 6) / 14.
  const std::vector<double> constrained = NonNegativeLeastSquares({{1, 0}, {2, 1}, {3, 1}}, {1, 1, 2});
  EXPECT_NEAR(constrained[1], 0, 1e-12);
  EXPECT_NEAR(constrained[0], 9.0 / 14, 1e-12);
}

}  // namespace
}  // namespace nimbus
