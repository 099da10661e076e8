#include "nimbus/local/augmented_objective.h"

#include <cassert>
#include <cstring>
#include <utility>

#include "nimbus/core/vector_ops.h"

namespace nimbus {

AugmentedShardObjective::AugmentedShardObjective(const CsrView& matrix, std::span<const double> labels, Loss loss,
                                                 bool intercept, int64_t total_rows, std::span<const double> weights)
    : matrix_(matrix),
      labels_(labels),
      weights_(weights),
      loss_(loss),
      intercept_(intercept),
      inverse_rows_(1.0 / static_cast<double>(total_rows)),
      size_(static_cast<std::size_t>(matrix.cols) + (intercept ? 1 : 0)),
      center_(size_, 0.0) {
  const auto rows = static_cast<std::size_t>(matrix.rows);
  first_.resize(rows);
  second_.resize(rows);
  data_gradient_.resize(size_);
  data_diagonal_.resize(size_);
}

void AugmentedShardObjective::SetCenter(std::span<const double> v, double rho) {
  assert(v.size() == size_);
  CopyInto(v, center_);
  rho_ = rho;
}

bool AugmentedShardObjective::SameX(const Point& point, std::span<const double> x) {
  return point.valid && std::memcmp(point.x.data(), x.data(), x.size() * sizeof(double)) == 0;
}

void AugmentedShardObjective::ComputeMargins(std::span<const double> x, Point* point) {
  point->x.assign(x.begin(), x.end());
  point->margins.resize(static_cast<std::size_t>(matrix_.rows));
  MultiplyRows(matrix_, x, intercept_, point->margins);
  point->loss_sum = SumLoss(loss_, labels_, point->margins, weights_);
  point->valid = true;
  ++passes_;
}

double AugmentedShardObjective::ProximalTerm(std::span<const double> x) const {
  return 0.5 * rho_ * SquaredDistance(x, center_);
}

const AugmentedShardObjective::Point& AugmentedShardObjective::MarginsAt(std::span<const double> x) {
  assert(x.size() == size_);
  if (SameX(current_, x)) return current_;
  if (!SameX(trial_, x)) ComputeMargins(x, &trial_);
  return trial_;
}

double AugmentedShardObjective::Value(std::span<const double> x) {
  return MarginsAt(x).loss_sum * inverse_rows_ + ProximalTerm(x);
}

void AugmentedShardObjective::Gradient(std::span<const double> x, std::span<double> gradient) {
  assert(x.size() == size_ && gradient.size() == size_);
  if (!SameX(current_, x)) {
    if (SameX(trial_, x)) {
      std::swap(current_, trial_);
    } else {
      ComputeMargins(x, &current_);
    }
    derivatives_valid_ = false;
  }
  if (!derivatives_valid_) {
    LossDerivatives(loss_, labels_, current_.margins, inverse_rows_, first_, second_, weights_);
    Fill(data_gradient_, 0.0);
    Fill(data_diagonal_, 0.0);
    AddTransposeProductAndSquares(matrix_, first_, second_, intercept_, data_gradient_, data_diagonal_);
    derivatives_valid_ = true;
    ++passes_;
  }
  // grad = A^T loss' / N + rho (x - v)
  for (std::size_t j = 0; j < size_; ++j) gradient[j] = data_gradient_[j] + rho_ * (x[j] - center_[j]);
}

void AugmentedShardObjective::HessianVector(std::span<const double> v, std::span<double> hv) {
  assert(derivatives_valid_);
  for (std::size_t j = 0; j < size_; ++j) hv[j] = rho_ * v[j];
  AddNormalProduct(matrix_, second_, v, intercept_, hv);
  ++passes_;
}

void AugmentedShardObjective::HessianDiagonal(std::span<double> diagonal) {
  assert(derivatives_valid_);
  for (std::size_t j = 0; j < size_; ++j) diagonal[j] = data_diagonal_[j] + rho_;
}

double AugmentedShardObjective::DataLoss(std::span<const double> x) { return MarginsAt(x).loss_sum * inverse_rows_; }

}  // namespace nimbus
