#include "nimbus/worker/shard_derivatives.h"

#include <algorithm>
#include <utility>

#include "nimbus/core/vector_ops.h"

namespace nimbus {
namespace {

// Whether feature j has an entry in some block of x (B entries per feature, interleaved).
bool FeatureHasEntry(std::span<const double> x, std::size_t j, std::size_t blocks) {
  const double* entries = x.data() + j * blocks;
  return std::any_of(entries, entries + blocks, [](double e) { return e != 0.0; });
}

}  // namespace

ShardDerivatives::ShardDerivatives(const CsrView& matrix, std::span<const double> labels, Loss loss, bool intercept,
                                   int64_t total_rows, std::span<const double> weights)
    : ShardDerivatives(std::make_shared<const DataTerm>(matrix, labels, std::move(loss), intercept, weights), total_rows) {}

ShardDerivatives::ShardDerivatives(std::shared_ptr<const DataTerm> term, int64_t total_rows)
    : term_(std::move(term)), inverse_rows_(1.0 / static_cast<double>(total_rows)), size_(term_->model_size()) {}

ShardDerivatives::Curvature& ShardDerivatives::SlotForNewPoint() {
  if (held_[0].round < 0) return held_[0];
  if (held_[1].round < 0) return held_[1];
  // The last evaluated point stays (the master counts on it, see runtime/remote_executor).
  if (held_[0].round == last_evaluated_) return held_[1];
  if (held_[1].round == last_evaluated_) return held_[0];
  return held_[0].last_use <= held_[1].last_use ? held_[0] : held_[1];
}

ShardDerivatives::Curvature& ShardDerivatives::HoldPoint(int64_t round, std::span<const double> x,
                                                          double* loss_sum) {
  margins_.resize(term_->margin_count());
  if (const ColumnSubset* columns = WorkingColumnsCovering(x)) {
    columns->Compact(x, term_->blocks(), term_->intercept(), compact_v_);
    term_->MarginsOn(*columns, compact_v_, margins_);
  } else {
    term_->Margins(x, margins_);
  }
  ++passes_;
  Curvature& slot = SlotForNewPoint();
  slot.round = round;
  first_.resize(term_->margin_count());
  *loss_sum = term_->Derivatives(margins_, inverse_rows_, first_, &slot.at);
  return slot;
}

double ShardDerivatives::Evaluate(int64_t round, std::span<const double> x, std::span<double> gradient_and_diagonal) {
  last_evaluated_ = -1;  // an evaluation may replace any point
  double loss_sum = 0;
  Curvature& slot = HoldPoint(round, x, &loss_sum);
  last_evaluated_ = round;
  slot.last_use = ++uses_;
  std::span<double> gradient = gradient_and_diagonal.first(size_);
  std::span<double> diagonal = gradient_and_diagonal.subspan(size_, size_);
  Fill(gradient, 0.0);
  Fill(diagonal, 0.0);
  term_->AddGradient(first_, &slot.at, gradient, diagonal);
  ++passes_;
  return loss_sum * inverse_rows_;
}

bool ShardDerivatives::Holds(int64_t round) const {
  return round >= 0 && (held_[0].round == round || held_[1].round == round);
}

Status ShardDerivatives::HessianVector(int64_t point_round, std::span<const double> point, std::span<const double> v,
                                       std::span<double> hv, bool on_support) {
  Curvature* held = nullptr;
  for (Curvature& c : held_) {
    if (c.round == point_round && point_round >= 0) held = &c;
  }
  if (held == nullptr) {
    if (point.size() != size_) {
      return FailedPrecondition("the point of round " + std::to_string(point_round) +
                                " is not held here and did not come with the request");
    }
    // A replacement worker: the curvature at the point, from its margins.
    double loss_sum = 0;
    held = &HoldPoint(point_round, point, &loss_sum);
  }
  held->last_use = ++uses_;
  const ColumnSubset* columns = on_support ? WorkingColumnsFor(v) : nullptr;
  if (columns == nullptr) {
    Fill(hv, 0.0);
    term_->AddCurvatureProduct(held->at, v, hv);
  } else {
    columns->Compact(v, term_->blocks(), term_->intercept(), compact_v_);
    compact_hv_.assign(compact_v_.size(), 0.0);
    term_->AddCurvatureProductOn(*columns, held->at, compact_v_, compact_hv_);
    columns->Expand(compact_hv_, term_->blocks(), term_->intercept(), hv);
  }
  ++passes_;
  return Status::Ok();
}

const ColumnSubset* ShardDerivatives::WorkingColumnsFor(std::span<const double> v) {
  const CsrView& matrix = term_->matrix();
  const auto blocks = static_cast<std::size_t>(term_->blocks());
  if (column_nonzeros_.empty()) column_nonzeros_ = ColumnNonzeros(matrix);
  std::vector<uint32_t> support;
  int64_t nnz = 0;
  for (std::size_t j = 0; j < column_nonzeros_.size(); ++j) {
    if (!FeatureHasEntry(v, j, blocks)) continue;
    support.push_back(static_cast<uint32_t>(j));
    nnz += column_nonzeros_[j];
  }
  if (2 * nnz > matrix.nnz()) return nullptr;
  const bool covered = std::all_of(support.begin(), support.end(), [&](uint32_t j) {
    return j < working_.selected.size() && working_.selected[j] != 0;
  });
  // Kept while the support is inside it and it is not twice as large (a working set that shrank).
  if (!covered || working_.nnz() > 2 * nnz + matrix.rows) {
    SelectColumns(matrix, std::move(support), working_);
    ++passes_;
  }
  return &working_;
}

const ColumnSubset* ShardDerivatives::WorkingColumnsCovering(std::span<const double> x) const {
  if (working_.selected.empty()) return nullptr;
  const auto blocks = static_cast<std::size_t>(term_->blocks());
  for (std::size_t j = 0; j < working_.selected.size(); ++j) {
    if (working_.selected[j] == 0 && FeatureHasEntry(x, j, blocks)) return nullptr;
  }
  return &working_;
}

}  // namespace nimbus
