// Tests of ShardDerivatives: a shard's data term and its derivatives at points named by
// rounds, checked against the dense references of sparse_test_problem.h (which share no code
// with the library), and the rules for which points are held.
#include "nimbus/worker/shard_derivatives.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "local/sparse_test_problem.h"

namespace nimbus {
namespace {

using testing::MakeRandomProblem;
using testing::RandomVector;
using testing::RefDataGradient;
using testing::RefDataHessian;
using testing::RefDataLoss;
using testing::RefMaxAbsDiff;
using testing::kAllLosses;

constexpr double kTotalRows = 200;  // N of the whole problem: the shard is a part of it

std::vector<double> DenseProduct(const std::vector<double>& h, const std::vector<double>& v) {
  std::vector<double> out(v.size(), 0.0);
  for (std::size_t i = 0; i < v.size(); ++i) {
    for (std::size_t j = 0; j < v.size(); ++j) out[i] += h[i * v.size() + j] * v[j];
  }
  return out;
}

TEST(ShardDerivatives, EvaluateAndProductsMatchTheDenseReferences) {
  for (const Loss& loss : kAllLosses) {
    for (const bool intercept : {false, true}) {
      SCOPED_TRACE(std::string(LossName(loss)) + (intercept ? " with intercept" : ""));
      const auto p = MakeRandomProblem(60, 12, 4, 7, loss);
      ShardDerivatives shard(p.View(), p.labels, loss, intercept, static_cast<int64_t>(kTotalRows));
      const std::size_t n = p.Width(intercept);
      ASSERT_EQ(shard.dimension(), n);
      const std::vector<double> x = RandomVector(n, 3, 0.5);
      std::vector<double> gd(2 * n);
      const double value = shard.Evaluate(4, x, gd);
      EXPECT_NEAR(value, RefDataLoss(p, loss, intercept, kTotalRows, x), 1e-12);
      const std::vector<double> gradient(gd.begin(), gd.begin() + static_cast<std::ptrdiff_t>(n));
      EXPECT_LT(RefMaxAbsDiff(gradient, RefDataGradient(p, loss, intercept, kTotalRows, x)), 1e-12);
      const std::vector<double> h = RefDataHessian(p, loss, intercept, kTotalRows, x);
      for (std::size_t j = 0; j < n; ++j) EXPECT_NEAR(gd[n + j], h[j * n + j], 1e-12) << "diagonal " << j;
      const std::vector<double> v = RandomVector(n, 5, 1.0);
      std::vector<double> hv(n);
      ASSERT_TRUE(shard.HessianVector(4, {}, v, hv).ok());
      EXPECT_LT(RefMaxAbsDiff(hv, DenseProduct(h, v)), 1e-12);
    }
  }
}

TEST(ShardDerivatives, ProductsAtTheIterateAfterARejectedTrialNeedNoPoint) {
  const auto p = MakeRandomProblem(50, 10, 3, 9, Loss::kLogistic);
  ShardDerivatives shard(p.View(), p.labels, Loss::kLogistic, false, 50);
  const std::vector<double> iterate = RandomVector(10, 1, 0.5), trial = RandomVector(10, 2, 0.5);
  std::vector<double> gd(20), hv(10);
  shard.Evaluate(0, iterate, gd);
  shard.Evaluate(1, trial, gd);  // the trial, rejected: products go on at round 0's point
  const std::vector<double> v = RandomVector(10, 3, 1.0);
  ASSERT_TRUE(shard.HessianVector(0, {}, v, hv).ok());
  EXPECT_LT(RefMaxAbsDiff(hv, DenseProduct(RefDataHessian(p, Loss::kLogistic, false, 50, iterate), v)), 1e-12);
  // Another trial replaces the rejected one, not the iterate in use.
  shard.Evaluate(2, RandomVector(10, 4, 0.5), gd);
  EXPECT_TRUE(shard.Holds(0));
  EXPECT_FALSE(shard.Holds(1));
  EXPECT_TRUE(shard.Holds(2));
}

TEST(ShardDerivatives, APointNotHeldMustComeWithTheRequest) {
  const auto p = MakeRandomProblem(50, 10, 3, 9, Loss::kLogistic);
  ShardDerivatives fresh(p.View(), p.labels, Loss::kLogistic, true, 50);  // a replacement: holds nothing
  const std::vector<double> point = RandomVector(11, 6, 0.5), v = RandomVector(11, 7, 1.0);
  std::vector<double> hv(11);
  const Status missing = fresh.HessianVector(3, {}, v, hv);
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("round 3"), std::string::npos) << missing.message();
  ASSERT_TRUE(fresh.HessianVector(3, point, v, hv).ok());
  EXPECT_LT(RefMaxAbsDiff(hv, DenseProduct(RefDataHessian(p, Loss::kLogistic, true, 50, point), v)), 1e-12);
  EXPECT_TRUE(fresh.Holds(3));
  EXPECT_EQ(fresh.data_passes(), 2);  // the point's margins, then the product
  // Given once, the point is held: the next product needs it no more and costs one pass.
  ASSERT_TRUE(fresh.HessianVector(3, {}, v, hv).ok());
  EXPECT_EQ(fresh.data_passes(), 3);
}

// L1 Newton's products on a working set: exact where the direction has an entry (and the
// intercept), 0 elsewhere, from the working columns chosen once; a point inside them takes its
// margins from them too. The columns are a copy, or (a worker under a memory limit that the
// copy would pass, with rows of its own) each row's entries reordered in place: the same
// figures, and every pass over the whole data after it too.
void ExpectProductsOnTheSupport(bool in_place) {
  for (const Loss& loss : kAllLosses) {
    SCOPED_TRACE(std::string(LossName(loss)) + (in_place ? ", in place" : ", a copy"));
    auto p = MakeRandomProblem(80, 40, 4, 11, loss);
    const CsrView matrix = p.View();
    const CsrArraysToChange own = in_place ? CsrArraysToChange{p.col_idx.data(), p.values.data(), nullptr}
                                           : CsrArraysToChange{};
    // A limit of a byte: no copy fits.
    ShardDerivatives shard(std::make_shared<const DataTerm>(matrix, p.labels, loss, true),
                           static_cast<int64_t>(kTotalRows), own, in_place ? 1 : 0);
    const auto reference = MakeRandomProblem(80, 40, 4, 11, loss);  // the rows as they were
    const std::size_t n = reference.Width(true);
    auto on = [&](std::vector<double> x, std::vector<std::size_t> keep) {
      std::vector<double> out(n, 0.0);
      for (const std::size_t j : keep) out[j] = x[j];
      return out;
    };
    const std::vector<std::size_t> working{2, 9, 17, 30, 40};  // 40: the intercept
    const std::vector<double> x = on(RandomVector(n, 3, 0.5), working);
    std::vector<double> gd(2 * n), hv(n);
    shard.Evaluate(0, x, gd);
    const std::vector<double> h = RefDataHessian(reference, loss, true, kTotalRows, x);
    const std::vector<double> v = on(RandomVector(n, 5, 1.0), {2, 9, 17, 40});  // a zero in W
    ASSERT_TRUE(shard.HessianVector(0, {}, v, hv, true).ok());
    const std::vector<double> expected = DenseProduct(h, v);
    for (std::size_t j = 0; j < n; ++j) {
      const bool in_support = j == 2 || j == 9 || j == 17 || j == 40;
      EXPECT_NEAR(hv[j], in_support ? expected[j] : 0.0, 1e-12) << "entry " << j;
    }
    EXPECT_EQ(shard.data_passes(), 4);  // the evaluation's two, the choice of the columns and the product
    EXPECT_EQ(p.col_idx != reference.col_idx, in_place);  // the rows reordered, or left alone
    // A narrower direction inside the kept columns: no new choice, and hv on its features alone.
    const std::vector<double> narrow = on(v, {9, 40});
    ASSERT_TRUE(shard.HessianVector(0, {}, narrow, hv, true).ok());
    EXPECT_EQ(shard.data_passes(), 5);
    const std::vector<double> narrow_expected = DenseProduct(h, narrow);
    for (std::size_t j = 0; j < n; ++j) {
      EXPECT_NEAR(hv[j], j == 9 || j == 40 ? narrow_expected[j] : 0.0, 1e-12) << "entry " << j << ", narrower";
    }
    // A point inside the working columns: its value and gradient, the margins from them.
    const std::vector<double> inside = on(RandomVector(n, 7, 0.5), {9, 17, 40});
    EXPECT_NEAR(shard.Evaluate(1, inside, gd), RefDataLoss(reference, loss, true, kTotalRows, inside), 1e-12);
    const std::vector<double> gradient(gd.begin(), gd.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_LT(RefMaxAbsDiff(gradient, RefDataGradient(reference, loss, true, kTotalRows, inside)), 1e-12);
    // One outside them: the whole data, every row's entries read whatever their order.
    const std::vector<double> outside = RandomVector(n, 8, 0.5);
    EXPECT_NEAR(shard.Evaluate(2, outside, gd), RefDataLoss(reference, loss, true, kTotalRows, outside), 1e-12);
    const std::vector<double> whole_gradient(gd.begin(), gd.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_LT(RefMaxAbsDiff(whole_gradient, RefDataGradient(reference, loss, true, kTotalRows, outside)), 1e-12);
    ASSERT_TRUE(shard.HessianVector(2, {}, v, hv).ok());
    EXPECT_LT(RefMaxAbsDiff(hv, DenseProduct(RefDataHessian(reference, loss, true, kTotalRows, outside), v)), 1e-12);
  }
}

TEST(ShardDerivatives, ProductsOnTheSupportMatchTheDenseReferenceThere) { ExpectProductsOnTheSupport(false); }

TEST(ShardDerivatives, ProductsOnTheSupportInPlaceMatchTheDenseReferenceThere) { ExpectProductsOnTheSupport(true); }

// Under a memory limit the copy would pass, rows the worker may not reorder are read whole;
// the product still leaves only the direction's features (a reply that travels as its nonzeros).
TEST(ShardDerivatives, WithoutRoomForACopyOrRowsOfItsOwnTheProductsReadTheWholeShard) {
  const auto p = MakeRandomProblem(80, 40, 4, 11, Loss::kLogistic);
  ShardDerivatives shard(std::make_shared<const DataTerm>(p.View(), p.labels, Loss::kLogistic, false),
                         static_cast<int64_t>(kTotalRows), CsrArraysToChange{}, 1);
  std::vector<double> v(40, 0.0), hv(40), gd(80);
  v[3] = 1.0;
  shard.Evaluate(0, std::vector<double>(40, 0.0), gd);
  ASSERT_TRUE(shard.HessianVector(0, {}, v, hv, true).ok());
  EXPECT_EQ(shard.data_passes(), 3);  // no pass to choose columns: the product read every entry
  const std::vector<double> expected = DenseProduct(RefDataHessian(p, Loss::kLogistic, false, kTotalRows,
                                                                   std::vector<double>(40, 0.0)), v);
  for (std::size_t j = 0; j < 40; ++j) EXPECT_NEAR(hv[j], j == 3 ? expected[j] : 0.0, 1e-12) << "entry " << j;
  EXPECT_NE(expected[5], 0.0);  // the whole product has entries the reply leaves out
}

// A direction whose features hold most of the shard's entries: the product reads the whole
// shard (no working columns), and leaves hv on the direction's features and the intercept.
TEST(ShardDerivatives, AProductOnAWideSupportLeavesOnlyItsFeaturesAndTheIntercept) {
  for (const Loss& loss : kAllLosses) {
    SCOPED_TRACE(LossName(loss));
    const auto p = MakeRandomProblem(80, 40, 4, 11, loss);
    ShardDerivatives shard(std::make_shared<const DataTerm>(p.View(), p.labels, loss, true),
                           static_cast<int64_t>(kTotalRows));
    const std::size_t n = p.Width(true);  // 40 features and the intercept
    std::vector<double> v = RandomVector(n, 5, 1.0), hv(n), gd(2 * n);
    for (std::size_t j = 32; j < 40; ++j) v[j] = 0.0;  // 32 of 40 features: most of the entries
    const std::vector<double> x = RandomVector(n, 3, 0.5);
    shard.Evaluate(0, x, gd);
    ASSERT_TRUE(shard.HessianVector(0, {}, v, hv, true).ok());
    EXPECT_EQ(shard.data_passes(), 3);  // the evaluation's two and one product over the whole shard
    const std::vector<double> expected = DenseProduct(RefDataHessian(p, loss, true, kTotalRows, x), v);
    for (std::size_t j = 0; j < n; ++j) {
      const bool kept = j < 32 || j == 40;
      EXPECT_NEAR(hv[j], kept ? expected[j] : 0.0, 1e-12) << "entry " << j;
    }
  }
}

}  // namespace
}  // namespace nimbus
