#include "nimbus/columns/column_block.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <span>
#include <utility>
#include <vector>

#include "local/sparse_test_problem.h"
#include "nimbus/problem/problem.h"

namespace nimbus {
namespace {

using testing::MakeRandomProblem;
using testing::RandomVector;
using testing::RefDataGradient;
using testing::RefDataHessian;
using testing::RefLossFirst;
using testing::RefLossSecond;
using testing::RefMargins;
using testing::SolveDense;
using testing::SparseProblem;

// The rows' derivatives at x, from the test's own formulas: g_r = loss'/N, h_r = loss''/N.
RowDerivatives DerivativesAt(const SparseProblem& p, Loss loss, bool intercept, const std::vector<double>& x) {
  const std::vector<double> m = RefMargins(p, intercept, x);
  RowDerivatives at;
  for (std::size_t r = 0; r < m.size(); ++r) {
    at.first.push_back(RefLossFirst(loss, p.labels[r], m[r]) / static_cast<double>(p.rows));
    at.second.push_back(RefLossSecond(loss, p.labels[r], m[r]) / static_cast<double>(p.rows));
  }
  return at;
}

// The model's gradient at delta: grad f(x) + H delta + l2 (x + delta) on the features.
std::vector<double> ModelGradient(const SparseProblem& p, Loss loss, bool intercept, const std::vector<double>& x,
                                  const std::vector<double>& delta, double l2) {
  std::vector<double> g = RefDataGradient(p, loss, intercept, static_cast<double>(p.rows), x);
  const std::vector<double> h = RefDataHessian(p, loss, intercept, static_cast<double>(p.rows), x);
  const std::size_t n = g.size();
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) g[i] += h[i * n + j] * delta[j];
    if (!(intercept && i + 1 == n)) g[i] += l2 * (x[i] + delta[i]);
  }
  return g;
}

TEST(ColumnBlock, HoldsItsRangeOfColumnsColumnByColumn) {
  const SparseProblem p = MakeRandomProblem(30, 9, 4, 1, Loss::kLogistic);
  const ColumnBlock block = ColumnBlock::Of(p.View(), 3, 7, /*intercept=*/false);
  const std::vector<double> dense = p.Dense(false);
  ASSERT_EQ(block.size(), 4u);
  std::vector<double> seen(30 * 9, 0.0);
  int64_t inside = 0;
  for (std::size_t r = 0; r < 30; ++r) {
    for (std::size_t j = 3; j < 7; ++j) inside += dense[r * 9 + j] != 0;
  }
  EXPECT_EQ(block.nnz(), inside);
  for (std::size_t j = 0; j < 4; ++j) {
    for (int64_t k = block.col_ptr[j]; k < block.col_ptr[j + 1]; ++k) {
      if (k > block.col_ptr[j]) {
        EXPECT_LT(block.row_idx[k - 1], block.row_idx[k]);
      }
      EXPECT_EQ(block.values[k], dense[block.row_idx[k] * 9 + 3 + j]);
    }
  }
}

// Built on two threads, each over a run of the rows (a matrix of 2^20 entries and more; here a
// view of rows 7 on, whose first row does not start at entry 0), a block holds the entries the
// rows hold, each column's rows ascending: each entry is found in its row's own entries.
TEST(ColumnBlock, BuiltOnThreadsHoldsEachColumnsEntriesInRowOrder) {
  const SparseProblem p = MakeRandomProblem(21000, 300, 50, 6, Loss::kLogistic);
  const CsrView rows = p.View().RowRange(7, 21000);
  ASSERT_GE(rows.nnz(), int64_t{1} << 20);
  const ColumnBlock block = ColumnBlock::Of(rows, 20, 290, /*intercept=*/false, {}, 2);
  int64_t inside = 0;
  for (int64_t r = 0; r < rows.rows; ++r) {
    for (int64_t k = rows.row_ptr[r]; k < rows.RowEnd(r); ++k) inside += rows.col_idx[k] >= 20 && rows.col_idx[k] < 290;
  }
  ASSERT_EQ(block.nnz(), inside);
  for (std::size_t j = 0; j < 270; ++j) {
    for (int64_t k = block.col_ptr[j]; k < block.col_ptr[j + 1]; ++k) {
      if (k > block.col_ptr[j]) {
        ASSERT_LT(block.row_idx[k - 1], block.row_idx[k]) << "column " << j;
      }
      const int64_t r = block.row_idx[k];
      const uint32_t* end = rows.col_idx + rows.RowEnd(r);
      const uint32_t* at = std::find(rows.col_idx + rows.row_ptr[r], end, static_cast<uint32_t>(20 + j));
      ASSERT_NE(at, end) << "column " << j << ", row " << r;
      EXPECT_EQ(block.values[k], rows.values[at - rows.col_idx]);
    }
  }
}

// A fold's block from the whole's: the entries of the kept rows alone, renumbered in order, each
// the dense matrix's at its row of origin, the columns' rows still ascending.
TEST(ColumnBlock, OnRowsHoldsTheKeptRowsEntriesAlone) {
  const SparseProblem p = MakeRandomProblem(30, 9, 4, 2, Loss::kLogistic);
  const ColumnBlock whole = ColumnBlock::Of(p.View(), 2, 8, /*intercept=*/true);
  std::vector<uint32_t> new_row(30, ColumnBlock::kDroppedRow);
  std::vector<std::size_t> origin;  // kept row -> row of the whole
  for (std::size_t r = 0; r < 30; ++r) {
    if (r % 3 == 1) continue;
    new_row[r] = static_cast<uint32_t>(origin.size());
    origin.push_back(r);
  }
  const ColumnBlock kept = ColumnBlock::OnRows(whole, new_row, static_cast<int64_t>(origin.size()));
  EXPECT_EQ(kept.rows, 20);
  EXPECT_EQ(kept.begin, 2u);
  EXPECT_EQ(kept.end, 8u);
  EXPECT_TRUE(kept.intercept);
  const std::vector<double> dense = p.Dense(false);
  int64_t inside = 0;
  for (const std::size_t r : origin) {
    for (std::size_t j = 2; j < 8; ++j) inside += dense[r * 9 + j] != 0;
  }
  EXPECT_EQ(kept.nnz(), inside);
  ASSERT_EQ(kept.col_ptr.size(), 7u);
  for (std::size_t j = 0; j < 6; ++j) {
    for (int64_t k = kept.col_ptr[j]; k < kept.col_ptr[j + 1]; ++k) {
      ASSERT_LT(kept.row_idx[k], origin.size());
      if (k > kept.col_ptr[j]) {
        EXPECT_LT(kept.row_idx[k - 1], kept.row_idx[k]);
      }
      EXPECT_EQ(kept.values[k], dense[origin[kept.row_idx[k]] * 9 + 2 + j]);
    }
  }
}

// A model whose l1 is strong: its minimum is 0 on every weight.
BlockModelOptions StrongL1() {
  BlockModelOptions model;
  model.l1 = 1.0;
  model.max_passes = 50;
  return model;
}

// z: the step on the first `weights` coordinates where it sets them to zero (x_j + delta_j = 0),
// 0 elsewhere, as long as x.
std::vector<double> ZeroedPart(const BlockStep& step, const std::vector<double>& x, std::size_t weights) {
  std::vector<double> z(x.size(), 0.0);
  for (std::size_t j = 0; j < weights; ++j) {
    if (step.delta[j] != 0 && x[j] + step.delta[j] == 0) z[j] = step.delta[j];
  }
  return z;
}

// A step that sets weights to zero reports their margins' change, A z (z_j = -x_j on those
// weights), against the test's own dense product; a step that zeroes none reports nothing.
TEST(ColumnBlock, AStepThatZeroesWeightsReportsTheirMarginsChange) {
  const SparseProblem p = MakeRandomProblem(40, 8, 4, 9, Loss::kLogistic);
  const ColumnBlock block = ColumnBlock::Of(p.View(), 0, 8, /*intercept=*/false);
  const std::vector<double> x = {0.3, -0.2, 0.0, 0.1, 0.0, 0.0, -0.4, 0.2};
  const RowDerivatives at = DerivativesAt(p, Loss::kLogistic, false, x);
  const BlockModelOptions model = StrongL1();
  const BlockStep step = MinimizeBlockModel(block, at, x, model);
  const std::vector<double> z = ZeroedPart(step, x, 8);
  ASSERT_NE(z, std::vector<double>(8, 0.0));
  const std::vector<double> expected = RefMargins(p, false, z);
  ASSERT_EQ(step.zero_margin_change.size(), 40u);
  for (std::size_t r = 0; r < 40; ++r) EXPECT_NEAR(step.zero_margin_change[r], expected[r], 1e-12) << "row " << r;
  const BlockStep none = MinimizeBlockModel(block, at, std::vector<double>(8, 0.0), model);
  EXPECT_TRUE(none.zero_margin_change.empty());
  EXPECT_EQ(step.zero_intercept_change, 0);  // no intercept: nothing centred
}

// With an intercept the columns are centred, z's directions e_j - m_j e_b: the zeroed weights'
// share of the intercept, -sum_j m_j z_j with m_j = sum_r h_r a_rj / sum_r h_r, is reported
// beside A z and in it, in every row.
TEST(ColumnBlock, ACentredStepThatZeroesWeightsReportsTheirShareOfTheIntercept) {
  const SparseProblem p = MakeRandomProblem(40, 8, 4, 9, Loss::kLogistic);
  const ColumnBlock block = ColumnBlock::Of(p.View(), 0, 8, /*intercept=*/true);
  const std::vector<double> x = {0.3, -0.2, 0.0, 0.1, 0.0, 0.0, -0.4, 0.2, 0.1};
  const RowDerivatives at = DerivativesAt(p, Loss::kLogistic, true, x);
  const BlockStep step = MinimizeBlockModel(block, at, x, StrongL1());
  std::vector<double> z = ZeroedPart(step, x, 8);
  ASSERT_NE(z, std::vector<double>(9, 0.0));
  // m_j from the test's own dense sums.
  std::vector<double> weight(8, 0.0);
  double total = 0;
  for (int64_t r = 0; r < p.rows; ++r) {
    total += at.second[r];
    for (int64_t k = p.row_ptr[r]; k < p.row_ptr[r + 1]; ++k) weight[p.col_idx[k]] += at.second[r] * p.values[k];
  }
  double share = 0;
  for (std::size_t j = 0; j < 8; ++j) share -= weight[j] / total * z[j];
  EXPECT_NEAR(step.zero_intercept_change, share, 1e-12);
  z[8] = share;
  const std::vector<double> expected = RefMargins(p, true, z);
  ASSERT_EQ(step.zero_margin_change.size(), 40u);
  for (std::size_t r = 0; r < 40; ++r) EXPECT_NEAR(step.zero_margin_change[r], expected[r], 1e-12) << "row " << r;
}

// Blocks that together cover the columns and the intercept add up to A x + b, the test's own
// dense product (what the column method's workers send for a resumed run's margins).
TEST(ColumnBlock, BlocksMarginsAddUpToTheWholeProduct) {
  const SparseProblem p = MakeRandomProblem(40, 9, 4, 3, Loss::kLogistic);
  const std::vector<double> x = RandomVector(10, 5, 1.0);  // 9 weights, the intercept last
  const std::vector<double> expected = RefMargins(p, /*intercept=*/true, x);
  std::vector<double> margins(40, 0.0);
  const ColumnBlock first = ColumnBlock::Of(p.View(), 0, 4, false);
  const ColumnBlock second = ColumnBlock::Of(p.View(), 4, 9, true);
  AddBlockMargins(first, std::span(x).first(4), margins);
  AddBlockMargins(second, std::span(x).subspan(4), margins);
  for (std::size_t r = 0; r < margins.size(); ++r) EXPECT_NEAR(margins[r], expected[r], 1e-12) << "row " << r;
}

TEST(ColumnBlock, WithoutL1ItsPassesSolveTheNewtonSystem) {
  for (const bool intercept : {false, true}) {
    for (const auto& [sigma, mu] : {std::pair{1.0, 0.0}, std::pair{3.0, 0.0}, std::pair{1.0, 0.2}}) {
      const SparseProblem p = MakeRandomProblem(50, 7, 3, 2, Loss::kLogistic);
      const double l2 = 0.05;
      const std::vector<double> x = RandomVector(7 + intercept, 3, 0.5);
      const ColumnBlock block = ColumnBlock::Of(p.View(), 0, 7, intercept);
      const BlockStep step = MinimizeBlockModel(block, DerivativesAt(p, Loss::kLogistic, intercept, x), x,
                                                {.l1 = 0.0,
                                                 .l2 = l2,
                                                 .max_passes = 5000,
                                                 .inner_ratio = 0.0,
                                                 .curvature_scale = sigma,
                                                 .damping = mu});
      // (sigma H + l2 I + mu I) delta = -(grad f + l2 x), the intercept unregularized (its
      // damping included: mu holds back every coordinate's step).
      std::vector<double> h = RefDataHessian(p, Loss::kLogistic, intercept, 50.0, x);
      std::vector<double> rhs = RefDataGradient(p, Loss::kLogistic, intercept, 50.0, x);
      const std::size_t n = rhs.size();
      for (double& v : h) v *= sigma;
      for (std::size_t j = 0; j < n; ++j) h[j * n + j] += mu;
      for (std::size_t j = 0; j < 7; ++j) {
        h[j * n + j] += l2;
        rhs[j] += l2 * x[j];
      }
      for (double& v : rhs) v = -v;
      const std::vector<double> expected = SolveDense(h, rhs);
      for (std::size_t j = 0; j < n; ++j) {
        EXPECT_NEAR(step.delta[j], expected[j], 1e-8) << "coordinate " << j << ", sigma " << sigma << ", mu " << mu;
      }
      // And r = A delta.
      const std::vector<double> change = RefMargins(p, intercept, step.delta);
      for (std::size_t r = 0; r < change.size(); ++r) EXPECT_NEAR(step.margin_change[r], change[r], 1e-12);
    }
  }
}

TEST(ColumnBlock, WithL1ItReachesTheModelsMinimum) {
  for (const Loss& loss : {Loss::kLogistic, Loss::kSquared}) {
    const SparseProblem p = MakeRandomProblem(60, 8, 3, 4, loss);
    const double l1 = 0.02, l2 = 0.01;
    std::vector<double> x = RandomVector(8, 5, 0.5);
    x[2] = x[5] = 0;  // some coordinates start at zero
    const ColumnBlock block = ColumnBlock::Of(p.View(), 0, 8, false);
    const BlockStep step = MinimizeBlockModel(block, DerivativesAt(p, loss, false, x), x, {l1, l2, 5000, 0.0});
    const std::vector<double> gradient = ModelGradient(p, loss, false, x, step.delta, l2);
    for (std::size_t j = 0; j < 8; ++j) {
      EXPECT_NEAR(MinimumNormSubgradient(x[j] + step.delta[j], gradient[j], l1), 0.0, 1e-9)
          << LossName(loss) << " coordinate " << j;
    }
  }
}

// Columns of one sign (pixels, counts) share an offset with the intercept; plain coordinate
// descent trades it between them pass after pass. Centred under the rows' curvature, the columns
// are orthogonal to the intercept and a few passes reach the model's minimum.
TEST(ColumnBlock, ColumnsOfOneSignWithTheInterceptReachTheMinimumInFewPasses) {
  SparseProblem p = MakeRandomProblem(80, 6, 6, 7, Loss::kLogistic);  // every row has every column
  for (double& v : p.values) v = 4.0 + std::abs(v);                    // each column's mean about 4.5
  const double l1 = 0.001, l2 = 0.01;
  std::vector<double> x = RandomVector(7, 9, 0.3);  // 6 weights, the intercept last
  x[1] = 0;
  const ColumnBlock block = ColumnBlock::Of(p.View(), 0, 6, /*intercept=*/true);
  const BlockStep step =
      MinimizeBlockModel(block, DerivativesAt(p, Loss::kLogistic, true, x), x, {l1, l2, /*max_passes=*/40, 0.0});
  const std::vector<double> gradient = ModelGradient(p, Loss::kLogistic, true, x, step.delta, l2);
  for (std::size_t j = 0; j < 7; ++j) {
    EXPECT_NEAR(MinimumNormSubgradient(x[j] + step.delta[j], gradient[j], j < 6 ? l1 : 0.0), 0.0, 1e-9)
        << "coordinate " << j << " after " << step.passes << " passes";
  }
  const std::vector<double> change = RefMargins(p, true, step.delta);
  for (std::size_t r = 0; r < change.size(); ++r) EXPECT_NEAR(step.margin_change[r], change[r], 1e-12);
}

// Dense columns (pixels) are read in two sides of the rows, on two threads: the step reaches
// the model's minimum, its margins are A delta, and it is the same bits as on one thread. Two
// sparse columns among them are read whole between the sided ones (the other thread's last
// step applied first).
TEST(ColumnBlock, DenseColumnsStepOnTwoThreadsToTheModelsMinimumAndTheSameBits) {
  SparseProblem p;
  p.cols = 8;
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (int64_t r = 0; r < 9000; ++r) {
    std::vector<std::pair<uint32_t, double>> entries;
    for (uint32_t j = 0; j < 8; ++j) {
      const bool present = j < 6 || (j == 6 && r % 50 == 0) || (j == 7 && r % 97 == 3);
      if (present) entries.emplace_back(j, 2 * uniform(rng) + (j % 2 == 0 ? 1.0 : -0.5));
    }
    p.AddRow(entries, uniform(rng) < 0.4 ? 1.0 : -1.0);
  }
  const double l1 = 0.002, l2 = 0.001;
  for (const bool intercept : {false, true}) {
    // (No weight at zero: one whose gradient at x lies inside [-l1, l1] is left out of the passes.)
    const std::vector<double> x = RandomVector(intercept ? 9 : 8, 23, 0.2);
    const ColumnBlock block = ColumnBlock::Of(p.View(), 0, 8, intercept);
    const RowDerivatives at = DerivativesAt(p, Loss::kLogistic, intercept, x);
    const BlockModelOptions model{l1, l2, /*max_passes=*/5000, /*inner_ratio=*/1e-12};
    const BlockStep one = MinimizeBlockModel(block, at, x, model, {}, 1);
    const BlockStep two = MinimizeBlockModel(block, at, x, model, {}, 2);
    const std::vector<double> gradient = ModelGradient(p, Loss::kLogistic, intercept, x, two.delta, l2);
    for (std::size_t j = 0; j < x.size(); ++j) {
      EXPECT_NEAR(MinimumNormSubgradient(x[j] + two.delta[j], gradient[j], j < 8 ? l1 : 0.0), 0.0, 1e-9)
          << "coordinate " << j << (intercept ? " with the intercept" : "");
    }
    const std::vector<double> change = RefMargins(p, intercept, two.delta);
    for (std::size_t r = 0; r < change.size(); ++r) ASSERT_NEAR(two.margin_change[r], change[r], 1e-12) << r;
    EXPECT_EQ(two.delta, one.delta);
    EXPECT_EQ(two.margin_change, one.margin_change);
    EXPECT_EQ(two.passes, one.passes);
  }
}

// A block centred against an intercept that another block holds steps its columns as the
// intercept's own block would (a centred column's derivative does not change with the
// intercept's own steps), and its change of the intercept is its columns' share,
// -sum_j m_j delta_j with m_j = sum_r h_r a_rj / sum_r h_r.
TEST(ColumnBlock, ABlockWithoutTheInterceptStepsItsCentredColumnsAsTheInterceptsBlockWould) {
  SparseProblem p = MakeRandomProblem(80, 6, 6, 11, Loss::kLogistic);
  for (double& v : p.values) v = 2.0 + std::abs(v);
  const double l1 = 0.001, l2 = 0.01;
  const std::vector<double> x = {0.3, -0.2, 0.1, 0.25, -0.15, 0.05, 0.4};  // the intercept last
  const RowDerivatives at = DerivativesAt(p, Loss::kLogistic, true, x);
  const BlockStep holding = MinimizeBlockModel(ColumnBlock::Of(p.View(), 0, 6, /*intercept=*/true), at, x,
                                               {l1, l2, /*max_passes=*/8, /*inner_ratio=*/0.0});
  BlockModelOptions centred{l1, l2, 8, 0.0};
  centred.centred = true;
  const ColumnBlock columns = ColumnBlock::Of(p.View(), 0, 6, /*intercept=*/false);
  const BlockStep step = MinimizeBlockModel(columns, at, std::span<const double>(x).first(6), centred);
  ASSERT_EQ(step.delta.size(), 6u);
  double h_total = 0;
  for (const double h : at.second) h_total += h;
  const std::vector<double> dense = p.Dense(false);
  double expected_change = 0;
  for (std::size_t j = 0; j < 6; ++j) {
    EXPECT_NEAR(step.delta[j], holding.delta[j], 1e-12) << "weight " << j;
    double weight = 0;  // sum_r h_r a_rj
    for (std::size_t r = 0; r < 80; ++r) weight += at.second[r] * dense[r * 6 + j];
    expected_change -= weight / h_total * step.delta[j];
  }
  EXPECT_NE(step.delta[0], 0.0);
  EXPECT_NEAR(step.intercept_change, expected_change, 1e-12);
  std::vector<double> with_intercept = step.delta;
  with_intercept.push_back(step.intercept_change);
  const std::vector<double> change = RefMargins(p, true, with_intercept);
  for (std::size_t r = 0; r < change.size(); ++r) EXPECT_NEAR(step.margin_change[r], change[r], 1e-12);
  // Not centred, the same block's columns step otherwise, and leave the intercept alone.
  const BlockStep plain = MinimizeBlockModel(columns, at, std::span<const double>(x).first(6), {l1, l2, 8, 0.0});
  EXPECT_EQ(plain.intercept_change, 0.0);
  EXPECT_GT(std::abs(plain.delta[0] - step.delta[0]), 1e-3);
}

TEST(ColumnBlock, ReportsFsSubgradientAtXAndLeavesOptimalZerosOut) {
  const SparseProblem p = MakeRandomProblem(40, 6, 3, 6, Loss::kLogistic);
  const double l1 = 0.03;
  std::vector<double> x(6, 0.0);
  x[1] = 0.4;
  const ColumnBlock block = ColumnBlock::Of(p.View(), 0, 6, false);
  const BlockStep step = MinimizeBlockModel(block, DerivativesAt(p, Loss::kLogistic, false, x), x, {l1, 0.0, 1, 0.0});
  const std::vector<double> gradient = RefDataGradient(p, Loss::kLogistic, false, 40.0, x);
  double squared = 0;
  std::size_t active = 0;
  for (std::size_t j = 0; j < 6; ++j) {
    const double v = MinimumNormSubgradient(x[j], gradient[j], l1);
    squared += v * v;
    active += x[j] != 0 || std::abs(gradient[j]) > l1;
    if (x[j] == 0 && std::abs(gradient[j]) <= l1) {
      EXPECT_EQ(step.delta[j], 0.0) << "coordinate " << j;
    }
  }
  EXPECT_NEAR(step.subgradient_squared, squared, 1e-15);
  EXPECT_EQ(step.active, active);
  EXPECT_LT(step.active, 6u);  // this problem has zeros that are optimal under the l1
  EXPECT_EQ(step.passes, 1);
}

}  // namespace
}  // namespace nimbus
