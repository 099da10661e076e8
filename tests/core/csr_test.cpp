// CSR kernels against plain dense computations on small random matrices, with and without
// an intercept, on whole matrices and on row-range views whose row_ptr does not start at 0.
#include "nimbus/core/csr.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace nimbus {
namespace {

// A random sparse matrix held both as CSR arrays and as a dense row-major copy.
struct TestMatrix {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<int64_t> row_ptr;
  std::vector<uint32_t> col_idx;
  std::vector<double> values;
  std::vector<double> dense;  // rows x cols

  CsrView View() const {
    CsrView v;
    v.rows = rows;
    v.cols = cols;
    v.row_ptr = row_ptr.data();
    v.col_idx = col_idx.data();
    v.values = values.data();
    return v;
  }
  double At(int64_t r, int64_t c) const { return dense[static_cast<std::size_t>(r * cols + c)]; }
};

// Row lengths cycle through 0..cols so that empty rows, single entries and the odd/even
// remainders of the unrolled loops all occur.
TestMatrix RandomMatrix(int64_t rows, int64_t cols, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(-3.0, 3.0);
  TestMatrix m;
  m.rows = rows;
  m.cols = cols;
  m.dense.assign(static_cast<std::size_t>(rows * cols), 0.0);
  m.row_ptr.push_back(0);
  std::vector<uint32_t> all(static_cast<std::size_t>(cols));
  for (int64_t c = 0; c < cols; ++c) all[static_cast<std::size_t>(c)] = static_cast<uint32_t>(c);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t length = (r * 7 + static_cast<int64_t>(rng() % 3)) % (cols + 1);
    std::shuffle(all.begin(), all.end(), rng);
    std::vector<uint32_t> picked(all.begin(), all.begin() + length);
    std::sort(picked.begin(), picked.end());
    for (uint32_t c : picked) {
      const double v = value(rng);
      m.col_idx.push_back(c);
      m.values.push_back(v);
      m.dense[static_cast<std::size_t>(r * cols + c)] = v;
    }
    m.row_ptr.push_back(static_cast<int64_t>(m.values.size()));
  }
  return m;
}

std::vector<double> RandomVector(std::size_t n, uint64_t seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = dist(rng);
  return v;
}

void ExpectVectorsNear(const std::vector<double>& actual, const std::vector<double>& expected, const char* what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], 1e-12 * (1.0 + std::fabs(expected[i]))) << what << " entry " << i;
  }
}

// Rows [begin, end) of m, as the kernels see them through a view.
struct Case {
  int64_t begin;
  int64_t end;
  bool intercept;
};

class CsrKernelTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    m_ = RandomMatrix(23, 9, 17);
    const Case c = GetParam();
    view_ = m_.View().RowRange(c.begin, c.end);
    rows_ = c.end - c.begin;
    intercept_ = c.intercept;
    size_ = static_cast<std::size_t>(m_.cols) + (intercept_ ? 1 : 0);
  }
  // Entry j of row i of the view, with the constant feature 1 at j == cols when intercepted.
  double A(int64_t i, std::size_t j) const {
    if (static_cast<int64_t>(j) == m_.cols) return 1.0;
    return m_.At(GetParam().begin + i, static_cast<int64_t>(j));
  }

  TestMatrix m_;
  CsrView view_;
  int64_t rows_ = 0;
  bool intercept_ = false;
  std::size_t size_ = 0;
};

TEST_P(CsrKernelTest, ViewShape) {
  const Case c = GetParam();
  EXPECT_EQ(view_.rows, c.end - c.begin);
  EXPECT_EQ(view_.cols, m_.cols);
  int64_t nnz = 0;
  for (int64_t r = c.begin; r < c.end; ++r) {
    for (int64_t j = 0; j < m_.cols; ++j) nnz += m_.At(r, j) != 0.0 ? 1 : 0;
  }
  EXPECT_EQ(view_.nnz(), nnz);
}

TEST_P(CsrKernelTest, MultiplyRows) {
  const std::vector<double> x = RandomVector(size_, 1);
  std::vector<double> y(static_cast<std::size_t>(rows_), 123.0);  // overwritten, not added to
  MultiplyRows(view_, x, intercept_, y);
  std::vector<double> expected(static_cast<std::size_t>(rows_), 0.0);
  for (int64_t i = 0; i < rows_; ++i) {
    for (std::size_t j = 0; j < size_; ++j) expected[static_cast<std::size_t>(i)] += A(i, j) * x[j];
  }
  ExpectVectorsNear(y, expected, "MultiplyRows");
}

TEST_P(CsrKernelTest, AddTransposeProduct) {
  std::vector<double> w = RandomVector(static_cast<std::size_t>(rows_), 2);
  if (!w.empty()) w[0] = 0.0;  // a zero weight still counts towards the intercept sum (as 0)
  std::vector<double> out = RandomVector(size_, 3);  // accumulated into
  std::vector<double> expected = out;
  for (int64_t i = 0; i < rows_; ++i) {
    for (std::size_t j = 0; j < size_; ++j) expected[j] += A(i, j) * w[static_cast<std::size_t>(i)];
  }
  AddTransposeProduct(view_, w, intercept_, out);
  ExpectVectorsNear(out, expected, "AddTransposeProduct");
}

TEST_P(CsrKernelTest, AddTransposeProductAndSquares) {
  const std::vector<double> w = RandomVector(static_cast<std::size_t>(rows_), 4);
  std::vector<double> d = RandomVector(static_cast<std::size_t>(rows_), 5, 0.0, 1.0);
  if (d.size() > 2) d[2] = 0.0;
  std::vector<double> out = RandomVector(size_, 6);
  std::vector<double> squares = RandomVector(size_, 7);
  std::vector<double> expected_out = out, expected_squares = squares;
  for (int64_t i = 0; i < rows_; ++i) {
    for (std::size_t j = 0; j < size_; ++j) {
      expected_out[j] += A(i, j) * w[static_cast<std::size_t>(i)];
      expected_squares[j] += A(i, j) * A(i, j) * d[static_cast<std::size_t>(i)];
    }
  }
  AddTransposeProductAndSquares(view_, w, d, intercept_, out, squares);
  ExpectVectorsNear(out, expected_out, "out");
  ExpectVectorsNear(squares, expected_squares, "squares");
}

TEST_P(CsrKernelTest, AddNormalProduct) {
  std::vector<double> d = RandomVector(static_cast<std::size_t>(rows_), 8, 0.0, 1.0);
  for (std::size_t i = 0; i < d.size(); i += 3) d[i] = 0.0;  // rows that contribute nothing
  const std::vector<double> v = RandomVector(size_, 9);
  std::vector<double> out = RandomVector(size_, 10);
  // expected = out + A^T diag(d) A v, as two dense products.
  std::vector<double> av(static_cast<std::size_t>(rows_), 0.0);
  for (int64_t i = 0; i < rows_; ++i) {
    for (std::size_t j = 0; j < size_; ++j) av[static_cast<std::size_t>(i)] += A(i, j) * v[j];
  }
  std::vector<double> expected = out;
  for (int64_t i = 0; i < rows_; ++i) {
    for (std::size_t j = 0; j < size_; ++j) {
      expected[j] += A(i, j) * d[static_cast<std::size_t>(i)] * av[static_cast<std::size_t>(i)];
    }
  }
  AddNormalProduct(view_, d, v, intercept_, out);
  ExpectVectorsNear(out, expected, "AddNormalProduct");
}

TEST_P(CsrKernelTest, SumOfSquaredRowNorms) {
  double expected = 0;
  for (int64_t i = 0; i < rows_; ++i) {
    for (std::size_t j = 0; j < size_; ++j) expected += A(i, j) * A(i, j);
  }
  EXPECT_NEAR(SumOfSquaredRowNorms(view_, intercept_), expected, 1e-12 * (1 + expected));
}

INSTANTIATE_TEST_SUITE_P(
    Views, CsrKernelTest,
    ::testing::Values(Case{0, 23, false}, Case{0, 23, true},     // the whole matrix
                      Case{5, 17, false}, Case{5, 17, true},     // an inner block: row_ptr[0] != 0
                      Case{22, 23, false}, Case{22, 23, true},   // the last row alone
                      Case{0, 1, true}, Case{9, 9, false},       // the first row; an empty view
                      Case{9, 9, true}, Case{13, 23, true}),     // empty with intercept; a tail
    [](const ::testing::TestParamInfo<Case>& info) {
      return "Rows" + std::to_string(info.param.begin) + "To" + std::to_string(info.param.end) +
             (info.param.intercept ? "WithIntercept" : "NoIntercept");
    });

TEST(CsrViewTest, RowRangePointsIntoTheSameArrays) {
  const TestMatrix m = RandomMatrix(10, 6, 3);
  const CsrView full = m.View();
  const CsrView part = full.RowRange(4, 8);
  EXPECT_EQ(part.rows, 4);
  EXPECT_EQ(part.cols, 6);
  EXPECT_EQ(part.row_ptr, m.row_ptr.data() + 4);
  EXPECT_EQ(part.col_idx, m.col_idx.data());
  EXPECT_EQ(part.values, m.values.data());
  EXPECT_EQ(part.nnz(), m.row_ptr[8] - m.row_ptr[4]);
  // A view of a view is a view of the original.
  const CsrView inner = part.RowRange(1, 3);
  EXPECT_EQ(inner.rows, 2);
  EXPECT_EQ(inner.row_ptr, m.row_ptr.data() + 5);
  EXPECT_EQ(inner.nnz(), m.row_ptr[7] - m.row_ptr[5]);
}

TEST(ColumnSubsetTest, SelectsTheColumnsAndCompactsModels) {
  // [1 0 2 0]
  // [0 3 0 4]
  // [5 6 0 7]
  const std::vector<int64_t> row_ptr{0, 2, 4, 7};
  const std::vector<uint32_t> col_idx{0, 2, 1, 3, 0, 1, 3};
  const std::vector<double> values{1, 2, 3, 4, 5, 6, 7};
  const CsrView a{3, 4, row_ptr.data(), col_idx.data(), values.data()};
  EXPECT_EQ(ColumnNonzeros(a), (std::vector<int64_t>{2, 2, 1, 2}));
  const ColumnSubset s = SelectColumns(a, {1, 3});
  EXPECT_EQ(s.row_ptr, (std::vector<int64_t>{0, 0, 2, 4}));
  EXPECT_EQ(s.col_idx, (std::vector<uint32_t>{0, 1, 0, 1}));
  EXPECT_EQ(s.values, (std::vector<double>{3, 4, 6, 7}));
  EXPECT_EQ(s.view().cols, 2);
  EXPECT_EQ(s.nnz(), 4);
  // Two classes, interleaved, then their intercepts.
  const std::vector<double> full{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  std::vector<double> compact;
  s.Compact(full, 2, true, compact);
  EXPECT_EQ(compact, (std::vector<double>{3, 4, 7, 8, 9, 10}));
  std::vector<double> back(10, -1.0);
  s.Expand(compact, 2, true, back);
  EXPECT_EQ(back, (std::vector<double>{0, 0, 3, 4, 0, 0, 7, 8, 9, 10}));
  // The subset's product is the whole matrix's for x zero outside its columns: rows 2 and 3
  // are 3 x1 + 4 x3 and 6 x1 + 7 x3.
  std::vector<double> y(3);
  MultiplyRows(s.view(), std::vector<double>{1.0, 2.0}, false, y);
  EXPECT_EQ(y, (std::vector<double>{0.0, 11.0, 20.0}));
}

// The same subset of a matrix whose values are floats, or none (every value 1): the copy holds
// them as the matrix does.
TEST(ColumnSubsetTest, KeepsTheMatrixsKindOfValues) {
  const std::vector<int64_t> row_ptr{0, 2, 4, 7};
  const std::vector<uint32_t> col_idx{0, 2, 1, 3, 0, 1, 3};
  const std::vector<float> floats{1, 2, 3, 4, 5, 6, 7};
  CsrView a{3, 4, row_ptr.data(), col_idx.data(), nullptr, floats.data(), CsrValues::kFloat};
  ColumnSubset s = SelectColumns(a, {1, 3});
  EXPECT_EQ(s.values32, (std::vector<float>{3, 4, 6, 7}));
  EXPECT_TRUE(s.values.empty());
  std::vector<double> y(3);
  MultiplyRows(s.view(), std::vector<double>{1.0, 2.0}, false, y);
  EXPECT_EQ(y, (std::vector<double>{0.0, 11.0, 20.0}));
  a.values32 = nullptr;
  a.value_kind = CsrValues::kOnes;
  s = SelectColumns(a, {1, 3});
  EXPECT_TRUE(s.values.empty() && s.values32.empty());
  EXPECT_EQ(s.view().value_kind, CsrValues::kOnes);
  MultiplyRows(s.view(), std::vector<double>{1.0, 2.0}, false, y);
  EXPECT_EQ(y, (std::vector<double>{0.0, 3.0, 3.0}));
  EXPECT_GE(s.MemoryBytes(), s.col_idx.size() * sizeof(uint32_t) + s.row_ptr.size() * sizeof(int64_t));
}

// Rows partitioned in place by columns: each row keeps its entries, those of the chosen
// columns first (both parts in their order), and the view of those first entries gives the
// products of a model zero outside them, as the whole matrix (partitioned or not) does.
TEST(RowPartitionTest, TheChosenColumnsComeFirstAndTheirViewReadsThemAlone) {
  TestMatrix m = RandomMatrix(40, 11, 5);
  const TestMatrix original = m;
  const CsrView a = m.View();
  std::vector<char> selected(11, 0);
  for (const uint32_t j : {1u, 4u, 5u, 9u}) selected[j] = 1;
  RowPartition partition;
  const CsrArraysToChange arrays{m.col_idx.data(), m.values.data(), nullptr};
  ASSERT_TRUE(arrays.AreAllOf(a));
  PartitionRows(a, arrays, selected, partition);
  int64_t chosen = 0;
  for (int64_t r = 0; r < a.rows; ++r) {
    std::vector<std::pair<uint32_t, double>> first, rest;
    for (int64_t k = original.row_ptr[r]; k < original.row_ptr[r + 1]; ++k) {
      (selected[original.col_idx[k]] != 0 ? first : rest).emplace_back(original.col_idx[k], original.values[k]);
    }
    std::vector<std::pair<uint32_t, double>> now;
    for (int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) now.emplace_back(m.col_idx[k], m.values[k]);
    first.insert(first.end(), rest.begin(), rest.end());
    EXPECT_EQ(now, first) << "row " << r;
    EXPECT_EQ(partition.row_end[static_cast<std::size_t>(r)] - a.row_ptr[r],
              static_cast<int64_t>(first.size() - rest.size())) << "row " << r;
    chosen += static_cast<int64_t>(first.size() - rest.size());
  }
  EXPECT_EQ(partition.nnz, chosen);
  // A model zero outside the columns: the view's products are the whole matrix's (as it was).
  std::vector<double> x = RandomVector(12, 3);
  for (std::size_t j = 0; j < 11; ++j) x[j] = selected[j] != 0 ? x[j] : 0.0;
  std::vector<double> on_view(40), whole(40), before(40);
  MultiplyRows(partition.view(a), x, true, on_view);
  MultiplyRows(a, x, true, whole);
  MultiplyRows(original.View(), x, true, before);
  ExpectVectorsNear(on_view, before, "margins on the chosen columns");
  ExpectVectorsNear(whole, before, "margins of the partitioned matrix");
  const std::vector<double> d = RandomVector(40, 4, 0.1, 1.0);
  std::vector<double> product(12, 0.0), expected(12, 0.0);
  AddNormalProduct(partition.view(a), d, x, true, product);
  AddNormalProduct(original.View(), d, x, true, expected);
  for (std::size_t j = 0; j < 11; ++j) expected[j] = selected[j] != 0 ? expected[j] : 0.0;
  ExpectVectorsNear(product, expected, "the curvature product on the chosen columns");
  // A matrix of another's arrays is not this one's to change.
  EXPECT_FALSE(CsrArraysToChange{}.AreAllOf(a));
  EXPECT_FALSE((CsrArraysToChange{m.col_idx.data(), nullptr, nullptr}).AreAllOf(a));
}

TEST(CsrViewTest, EmptyMatrix) {
  const int64_t row_ptr[1] = {0};
  CsrView empty;
  empty.cols = 4;
  empty.row_ptr = row_ptr;
  EXPECT_EQ(empty.nnz(), 0);
  EXPECT_EQ(SumOfSquaredRowNorms(empty, false), 0.0);
  EXPECT_EQ(SumOfSquaredRowNorms(empty, true), 0.0);
  std::vector<double> out(5, 1.0);
  AddTransposeProduct(empty, {}, true, out);
  EXPECT_EQ(out, std::vector<double>(5, 1.0));
  CsrView defaulted;  // no arrays at all
  EXPECT_EQ(defaulted.nnz(), 0);
}

// A hand-computed case, so the dense reference itself is checked once.
TEST(CsrKernelHandTest, SmallKnownMatrix) {
  // [1 0 2]
  // [0 0 0]
  // [0 3 4]
  const int64_t row_ptr[] = {0, 2, 2, 4};
  const uint32_t col_idx[] = {0, 2, 1, 2};
  const double values[] = {1, 2, 3, 4};
  CsrView a;
  a.rows = 3;
  a.cols = 3;
  a.row_ptr = row_ptr;
  a.col_idx = col_idx;
  a.values = values;

  std::vector<double> y(3);
  MultiplyRows(a, std::vector<double>{1, 10, 100}, false, y);
  EXPECT_EQ(y, (std::vector<double>{201, 0, 430}));
  MultiplyRows(a, std::vector<double>{1, 10, 100, 0.5}, true, y);
  EXPECT_EQ(y, (std::vector<double>{201.5, 0.5, 430.5}));

  std::vector<double> out(4, 0.0);
  AddTransposeProduct(a, std::vector<double>{1, 5, -1}, true, out);
  EXPECT_EQ(out, (std::vector<double>{1, -3, -2, 5}));

  std::vector<double> g(4, 0.0), s(4, 0.0);
  AddTransposeProductAndSquares(a, std::vector<double>{1, 5, -1}, std::vector<double>{2, 3, 0.5}, true, g, s);
  EXPECT_EQ(g, (std::vector<double>{1, -3, -2, 5}));
  EXPECT_EQ(s, (std::vector<double>{2, 4.5, 16, 5.5}));

  // A^T diag(d) A v with v = (1, 1, 1), no intercept: A v = (3, 0, 7); d A v = (3, 0, 3.5).
  std::vector<double> h(3, 0.0);
  AddNormalProduct(a, std::vector<double>{1, 9, 0.5}, std::vector<double>{1, 1, 1}, false, h);
  EXPECT_EQ(h, (std::vector<double>{3, 10.5, 20}));

  EXPECT_EQ(SumOfSquaredRowNorms(a, false), 30.0);
  EXPECT_EQ(SumOfSquaredRowNorms(a, true), 33.0);
  EXPECT_EQ(SumOfSquaredRowNorms(a.RowRange(1, 3), false), 25.0);
  EXPECT_EQ(SumOfSquaredRowNorms(a.RowRange(1, 3), true), 27.0);
}

}  // namespace
}  // namespace nimbus
