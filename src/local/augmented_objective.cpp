#include "nimbus/local/augmented_objective.h"

#include <cassert>
#include <cstring>
#include <utility>

#include "nimbus/core/vector_ops.h"

namespace nimbus {

AugmentedShardObjective::AugmentedShardObjective(const CsrView& matrix, std::span<const double> labels, Loss loss,
                                                 bool intercept, int64_t total_rows, std::span<const double> weights)
    : AugmentedShardObjective(std::make_shared<const DataTerm>(matrix, labels, std::move(loss), intercept, weights), total_rows) {}

AugmentedShardObjective::AugmentedShardObjective(std::shared_ptr<const DataTerm> term, int64_t total_rows)
    : term_(std::move(term)),
      inverse_rows_(1.0 / static_cast<double>(total_rows)),
      size_(term_->model_size()),
      center_(size_, 0.0) {
  first_.resize(term_->margin_count());
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
  point->margins.resize(term_->margin_count());
  term_->Margins(x, point->margins);
  point->loss_sum = term_->LossSum(point->margins);
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
    term_->Derivatives(current_.margins, inverse_rows_, first_, &curvature_);
    Fill(data_gradient_, 0.0);
    Fill(data_diagonal_, 0.0);
    term_->AddGradient(first_, &curvature_, data_gradient_, data_diagonal_);
    derivatives_valid_ = true;
    ++passes_;
  }
  // grad = A^T loss' / N + rho (x - v)
  for (std::size_t j = 0; j < size_; ++j) gradient[j] = data_gradient_[j] + rho_ * (x[j] - center_[j]);
}

void AugmentedShardObjective::HessianVector(std::span<const double> v, std::span<double> hv) {
  assert(derivatives_valid_);
  for (std::size_t j = 0; j < size_; ++j) hv[j] = rho_ * v[j];
  term_->AddCurvatureProduct(curvature_, v, hv);
  ++passes_;
}

void AugmentedShardObjective::HessianDiagonal(std::span<double> diagonal) {
  assert(derivatives_valid_);
  for (std::size_t j = 0; j < size_; ++j) diagonal[j] = data_diagonal_[j] + rho_;
}

double AugmentedShardObjective::DataLoss(std::span<const double> x) { return MarginsAt(x).loss_sum * inverse_rows_; }

}  // namespace nimbus
