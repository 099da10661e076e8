// Tests of the data term over C class blocks (one-vs-rest and softmax), alone and in
// cross-validation copies (rows held out in a copy's fold weigh 0, the others its scale;
// binary data too): the block kernels
// against a dense product, the loss against its formula written here, the gradient and the
// Hessian-vector products against finite differences, the diagonal against products with unit
// vectors, and the curvature trace against that diagonal.
#include "nimbus/problem/data_term.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "local/sparse_test_problem.h"

namespace nimbus {
namespace {

using testing::MakeRandomProblem;
using testing::RandomVector;
using testing::SparseProblem;

constexpr int64_t kClasses = 4;

struct Case {
  std::string name;
  bool multinomial = false;
  bool intercept = false;
  bool weighted = false;  // class weights and sample weights
  int64_t copies = 1;     // more: cross-validation's, row r held out in fold r % (copies - 1)
  bool binary = false;    // one block per copy, labels -1/+1
};

class DataTermTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    problem_ = MakeRandomProblem(40, 9, 4, 17, Loss::kLogistic);
    classes_ = GetParam().binary ? 1 : kClasses;
    if (!GetParam().binary) {
      std::mt19937_64 rng(5);
      for (double& y : problem_.labels) y = static_cast<double>(rng() % kClasses);  // class indices
    }
    spec_.loss = Loss::kLogistic;
    spec_.rows = 100;  // N of a larger problem: the shard's share is over N
    spec_.cols = problem_.cols;
    spec_.classes = classes_;
    spec_.multinomial = GetParam().multinomial;
    spec_.intercept = GetParam().intercept;
    spec_.copies = GetParam().copies;
    if (spec_.copies > 1) {
      for (int64_t k = 0; k < spec_.copies; ++k) spec_.copy_scales.push_back(1.0 + 0.5 * static_cast<double>(k));
      for (int64_t r = 0; r < problem_.rows; ++r) folds_.push_back(static_cast<uint8_t>(r % (spec_.copies - 1)));
    }
    if (GetParam().weighted) {
      spec_.class_weights = GetParam().binary ? std::vector<double>{0.5, 2.0} : std::vector<double>{0.5, 2.0, 1.0, 3.0};
      sample_weights_ = RandomVector(static_cast<std::size_t>(problem_.rows), 9, 1.0);
      for (double& s : sample_weights_) s = std::abs(s) + 0.1;
    }
  }

  DataTerm Term() const {
    return DataTerm::ForProblem(spec_, problem_.View(), problem_.labels, sample_weights_, folds_);
  }
  std::size_t Blocks() const { return static_cast<std::size_t>(spec_.blocks()); }
  std::size_t Size() const { return spec_.model_size(); }
  std::vector<double> Point(uint64_t seed) const { return RandomVector(Size(), seed, 0.8); }

  // Each row's B margins from the dense matrix, entry j B + b of x being feature j's in block b.
  std::vector<double> DenseMargins(std::span<const double> x) const {
    const std::vector<double> dense = problem_.Dense(spec_.intercept);
    const std::size_t width = problem_.Width(spec_.intercept), b_count = Blocks();
    std::vector<double> margins(static_cast<std::size_t>(problem_.rows) * b_count, 0.0);
    for (std::size_t r = 0; r < static_cast<std::size_t>(problem_.rows); ++r) {
      for (std::size_t j = 0; j < width; ++j) {
        for (std::size_t b = 0; b < b_count; ++b) margins[r * b_count + b] += dense[r * width + j] * x[j * b_count + b];
      }
    }
    return margins;
  }

  // The loss written from its formula, per copy k (its rows' weights times the copy's scale,
  // 0 for the rows held out in fold k): the binary logistic loss, one-vs-rest's with
  // liblinear's weights (own rows W_c s_r, the others s_r), or the softmax's c_r (log sum exp
  // m - m_y).
  double ReferenceLoss(std::span<const double> x) const {
    const std::vector<double> m = DenseMargins(x);
    const std::size_t c_count = static_cast<std::size_t>(classes_), b_count = Blocks();
    double sum = 0;
    for (std::size_t r = 0; r < problem_.labels.size(); ++r) {
      const double label = problem_.labels[r];
      const std::size_t y = ClassIndex(label);
      const double s = sample_weights_.empty() ? 1.0 : sample_weights_[r];
      const double w = spec_.class_weights.empty() ? 1.0 : spec_.class_weights[y];
      for (std::size_t k = 0; k < static_cast<std::size_t>(spec_.copies); ++k) {
        const double scale = folds_.empty() ? 1.0 : folds_[r] == k ? 0.0 : spec_.copy_scales[k];
        const double* mk = m.data() + r * b_count + k * c_count;
        if (GetParam().binary) {
          sum += scale * w * s * std::log(1.0 + std::exp(-label * mk[0]));
        } else if (spec_.multinomial) {
          double exp_sum = 0;
          for (std::size_t c = 0; c < c_count; ++c) exp_sum += std::exp(mk[c]);
          sum += scale * w * s * (std::log(exp_sum) - mk[y]);
        } else {
          for (std::size_t c = 0; c < c_count; ++c) {
            sum += scale * (c == y ? w : 1.0) * s * std::log(1.0 + std::exp(-(c == y ? 1.0 : -1.0) * mk[c]));
          }
        }
      }
    }
    return sum;
  }

  double LossAt(const DataTerm& term, std::span<const double> x) const {
    std::vector<double> margins(term.margin_count());
    term.Margins(x, margins);
    return term.LossSum(margins);
  }

  // The gradient (scale 1) and, if asked, the diagonal and the curvature at x.
  std::vector<double> Gradient(const DataTerm& term, std::span<const double> x, DataCurvature* curvature,
                               std::vector<double>* diagonal = nullptr) const {
    std::vector<double> margins(term.margin_count()), first(term.margin_count()), g(Size(), 0.0);
    term.Margins(x, margins);
    term.Derivatives(margins, 1.0, first, curvature);
    if (diagonal != nullptr) diagonal->assign(Size(), 0.0);
    term.AddGradient(first, curvature, g, diagonal != nullptr ? std::span<double>(*diagonal) : std::span<double>());
    return g;
  }

  SparseProblem problem_;
  int64_t classes_ = kClasses;
  ProblemSpec spec_;
  std::vector<double> sample_weights_;
  std::vector<uint8_t> folds_;
};

TEST_P(DataTermTest, MarginsAndLossMatchTheFormula) {
  const DataTerm term = Term();
  EXPECT_EQ(term.model_size(), Size());
  const std::vector<double> x = Point(1);
  std::vector<double> margins(term.margin_count());
  term.Margins(x, margins);
  const std::vector<double> expected = DenseMargins(x);
  for (std::size_t k = 0; k < margins.size(); ++k) EXPECT_NEAR(margins[k], expected[k], 1e-12) << k;
  EXPECT_NEAR(term.LossSum(margins), ReferenceLoss(x), 1e-10 * std::abs(ReferenceLoss(x)));
  // Its terms, a group's at a time: a term per margin, or per row and copy for the softmax.
  const std::size_t groups = spec_.multinomial ? margins.size() / static_cast<std::size_t>(classes_) : margins.size();
  ASSERT_EQ(term.group_count(), groups);
  std::vector<double> losses(groups);
  term.GroupLosses(margins, losses);
  double sum = 0;
  for (const double loss : losses) sum += loss;
  EXPECT_NEAR(sum, ReferenceLoss(x), 1e-10 * std::abs(ReferenceLoss(x)));
  DataCurvature curvature;
  std::vector<double> first(term.margin_count());
  EXPECT_NEAR(term.Derivatives(margins, 0.5, first, &curvature), ReferenceLoss(x), 1e-10 * std::abs(ReferenceLoss(x)));
}

TEST_P(DataTermTest, GradientMatchesFiniteDifferences) {
  const DataTerm term = Term();
  const std::vector<double> x = Point(2);
  DataCurvature curvature;
  const std::vector<double> g = Gradient(term, x, &curvature);
  const double h = 1e-6;
  for (std::size_t j = 0; j < Size(); ++j) {
    std::vector<double> plus = x, minus = x;
    plus[j] += h;
    minus[j] -= h;
    const double numeric = (ReferenceLoss(plus) - ReferenceLoss(minus)) / (2 * h);
    EXPECT_NEAR(g[j], numeric, 1e-6 * std::max(1.0, std::abs(numeric))) << "entry " << j;
  }
}

TEST_P(DataTermTest, HessianProductsAndDiagonalMatchFiniteDifferences) {
  const DataTerm term = Term();
  const std::vector<double> x = Point(3);
  DataCurvature curvature;
  std::vector<double> diagonal;
  Gradient(term, x, &curvature, &diagonal);
  const std::vector<double> v = RandomVector(Size(), 4, 1.0);
  std::vector<double> hv(Size(), 0.0);
  term.AddCurvatureProduct(curvature, v, hv);
  // H v = (g(x + h v) - g(x - h v)) / 2h.
  const double h = 1e-5;
  std::vector<double> plus = x, minus = x;
  for (std::size_t j = 0; j < Size(); ++j) plus[j] += h * v[j], minus[j] -= h * v[j];
  DataCurvature unused;
  const std::vector<double> g_plus = Gradient(term, plus, &unused), g_minus = Gradient(term, minus, &unused);
  for (std::size_t j = 0; j < Size(); ++j) {
    const double numeric = (g_plus[j] - g_minus[j]) / (2 * h);
    EXPECT_NEAR(hv[j], numeric, 1e-6 * std::max(1.0, std::abs(numeric))) << "entry " << j;
  }
  // diag H = e_j' H e_j.
  for (std::size_t j = 0; j < Size(); ++j) {
    std::vector<double> unit(Size(), 0.0), column(Size(), 0.0);
    unit[j] = 1.0;
    term.AddCurvatureProduct(curvature, unit, column);
    EXPECT_NEAR(diagonal[j], column[j], 1e-12 * std::max(1.0, std::abs(column[j]))) << "entry " << j;
  }
}

TEST_P(DataTermTest, CurvatureTraceIsTheDiagonalsSumAtZero) {
  const DataTerm term = Term();
  DataCurvature curvature;
  std::vector<double> diagonal;
  Gradient(term, std::vector<double>(Size(), 0.0), &curvature, &diagonal);
  double trace = 0;
  for (const double d : diagonal) trace += d;
  EXPECT_NEAR(term.CurvatureTraceAtZero(), trace, 1e-12 * trace);
}

// For a point and a direction that are zero outside some columns (L1 Newton's working set),
// the margins and the curvature product from those columns alone are the whole data's.
TEST_P(DataTermTest, MarginsAndProductsOnColumnsMatchTheWholeData) {
  const DataTerm term = Term();
  const ColumnSubset columns = SelectColumns(problem_.View(), {1, 4, 7});
  const std::size_t b_count = Blocks(), cols = static_cast<std::size_t>(problem_.cols);
  auto zero_elsewhere = [&](std::vector<double> x) {
    for (std::size_t j = 0; j < cols; ++j) {
      if (j == 1 || j == 4 || j == 7) continue;
      for (std::size_t b = 0; b < b_count; ++b) x[j * b_count + b] = 0.0;
    }
    return x;
  };
  const std::vector<double> x = zero_elsewhere(Point(21)), v = zero_elsewhere(Point(22));
  std::vector<double> compact;
  columns.Compact(x, spec_.blocks(), spec_.intercept, compact);
  std::vector<double> margins(term.margin_count());
  term.MarginsOn(columns.view(), compact, margins);
  const std::vector<double> expected = DenseMargins(x);
  for (std::size_t k = 0; k < margins.size(); ++k) EXPECT_NEAR(margins[k], expected[k], 1e-12) << "margin " << k;

  DataCurvature curvature;
  Gradient(term, x, &curvature);
  std::vector<double> whole(Size(), 0.0), on_columns(Size(), 0.0);
  term.AddCurvatureProduct(curvature, v, whole);
  columns.Compact(v, spec_.blocks(), spec_.intercept, compact);
  std::vector<double> compact_product(compact.size(), 0.0);
  term.AddCurvatureProductOn(columns.view(), curvature, compact, compact_product);
  columns.Expand(compact_product, spec_.blocks(), spec_.intercept, on_columns);
  const std::vector<double> selected = zero_elsewhere(whole);  // other columns' entries are not computed
  for (std::size_t k = 0; k < Size(); ++k) EXPECT_NEAR(on_columns[k], selected[k], 1e-12) << "entry " << k;
}

INSTANTIATE_TEST_SUITE_P(Classes, DataTermTest,
                         ::testing::Values(Case{"ovr", false, false, false}, Case{"ovr_intercept_weighted", false, true, true},
                                           Case{"softmax", true, false, false},
                                           Case{"softmax_intercept_weighted", true, true, true},
                                           Case{"binary_copies", false, true, true, 4, true},
                                           Case{"ovr_copies", false, false, true, 3},
                                           Case{"softmax_copies_intercept", true, true, false, 3}),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

// One class block is the binary data term: -1/+1 labels, each row's c_r from class and
// sample weights.
TEST(DataTermBinary, OneBlockIsTheBinaryLoss) {
  SparseProblem p = MakeRandomProblem(30, 6, 3, 8, Loss::kLogistic);
  ProblemSpec spec;
  spec.rows = 30;
  spec.cols = 6;
  spec.class_weights = {2.0, 0.5};
  const DataTerm term = DataTerm::ForProblem(spec, p.View(), p.labels, {});
  const std::vector<double> x = RandomVector(6, 3, 1.0);
  std::vector<double> margins(term.margin_count());
  term.Margins(x, margins);
  double expected = 0;
  for (std::size_t r = 0; r < p.labels.size(); ++r) {
    expected += (p.labels[r] > 0 ? 0.5 : 2.0) * std::log(1.0 + std::exp(-p.labels[r] * margins[r]));
  }
  EXPECT_NEAR(term.LossSum(margins), expected, 1e-12 * expected);
}

}  // namespace
}  // namespace nimbus
