// The x-update objective of one ADMM worker:
//
//   phi(x) = (1/N) sum_{r in shard} loss(y_r, a_r . x [+ b])  +  (rho/2) ||x - v||^2
//
// with v = z - u_i. Its Hessian is A^T D A / N + rho I (D = loss'' per row), so it is
// smooth and rho-strongly convex.
//
// Work is measured in passes over the shard's nonzeros. The margins A x, the data gradient
// and the Hessian diagonal are cached at the last Gradient() point and survive SetCenter():
// a new round that warm-starts from the previous x pays no pass to evaluate it.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "nimbus/core/csr.h"
#include "nimbus/local/smooth_function.h"
#include "nimbus/problem/data_term.h"
#include "nimbus/problem/loss.h"

namespace nimbus {

class AugmentedShardObjective final : public SmoothFunction {
 public:
  // `total_rows` is N of the whole problem. `weights`: each row's c_r (empty: all 1). The
  // matrix, labels and weights must outlive this object.
  AugmentedShardObjective(const CsrView& matrix, std::span<const double> labels, Loss loss, bool intercept,
                          int64_t total_rows, std::span<const double> weights = {});
  // Any data term (multiclass ones too), perhaps shared with another user of the shard.
  AugmentedShardObjective(std::shared_ptr<const DataTerm> term, int64_t total_rows);

  // Sets rho and v; keeps the cached data terms.
  void SetCenter(std::span<const double> v, double rho);

  std::size_t dimension() const override { return size_; }
  double Value(std::span<const double> x) override;
  void Gradient(std::span<const double> x, std::span<double> gradient) override;
  void HessianVector(std::span<const double> v, std::span<double> hv) override;
  void HessianDiagonal(std::span<double> diagonal) override;

  // (1/N) sum_r c_r loss(y_r, a_r . x): the shard's share of the loss term (one pass unless x is
  // a cached point; x becomes the cached trial point).
  double DataLoss(std::span<const double> x);

  const DataTerm& term() const { return *term_; }

  // Passes over the shard's nonzeros so far.
  int64_t data_passes() const { return passes_; }

 private:
  struct Point {
    std::vector<double> x;
    std::vector<double> margins;
    double loss_sum = 0;
    bool valid = false;
  };
  void ComputeMargins(std::span<const double> x, Point* point);
  const Point& MarginsAt(std::span<const double> x);
  static bool SameX(const Point& point, std::span<const double> x);
  double ProximalTerm(std::span<const double> x) const;

  std::shared_ptr<const DataTerm> term_;
  double inverse_rows_;
  std::size_t size_;

  std::vector<double> center_;
  double rho_ = 1.0;

  Point current_;  // the last Gradient() point, with its derivative caches
  Point trial_;    // the last Value() point not yet made current
  std::vector<double> first_;          // loss' per margin, times 1/N
  DataCurvature curvature_;            // loss'' per margin, times 1/N
  std::vector<double> data_gradient_;  // A^T first
  std::vector<double> data_diagonal_;  // (A.^2)^T second
  bool derivatives_valid_ = false;
  int64_t passes_ = 0;
};

}  // namespace nimbus
