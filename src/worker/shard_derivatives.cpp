#include "nimbus/worker/shard_derivatives.h"

#include <algorithm>
#include <utility>

#include "nimbus/core/pod_array.h"
#include "nimbus/core/vector_ops.h"

namespace nimbus {
namespace {

// Whether feature j has an entry in some block of x (B entries per feature, interleaved).
bool FeatureHasEntry(std::span<const double> x, std::size_t j, std::size_t blocks) {
  const double* entries = x.data() + j * blocks;
  return std::any_of(entries, entries + blocks, [](double e) { return e != 0.0; });
}

// Leaves hv only on the features where v has an entry (and the intercepts after them): all a
// working-set solve reads, and then all that travels, as the reply goes as its nonzeros.
void KeepOnFeaturesOf(std::span<const double> v, std::size_t features, std::size_t blocks, std::span<double> hv) {
  for (std::size_t j = 0; j < features; ++j) {
    if (!FeatureHasEntry(v, j, blocks)) std::fill_n(hv.data() + j * blocks, blocks, 0.0);
  }
}

}  // namespace

ShardDerivatives::ShardDerivatives(const CsrView& matrix, std::span<const double> labels, Loss loss, bool intercept,
                                   int64_t total_rows, std::span<const double> weights)
    : ShardDerivatives(std::make_shared<const DataTerm>(matrix, labels, std::move(loss), intercept, weights), total_rows) {}

ShardDerivatives::ShardDerivatives(std::shared_ptr<const DataTerm> term, int64_t total_rows, CsrArraysToChange own,
                                   int64_t memory_limit_bytes)
    : term_(std::move(term)),
      inverse_rows_(1.0 / static_cast<double>(total_rows)),
      size_(term_->model_size()),
      own_(own),
      memory_limit_bytes_(memory_limit_bytes) {}

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
  if (const std::optional<WorkingColumns> columns = WorkingColumnsCovering(x); !columns) {
    term_->Margins(x, margins_);
  } else if (columns->copy == nullptr) {
    term_->MarginsOn(columns->view, x, margins_);
  } else {
    columns->copy->Compact(x, term_->blocks(), term_->intercept(), compact_v_);
    term_->MarginsOn(columns->view, compact_v_, margins_);
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
  const std::optional<WorkingColumns> columns = on_support ? WorkingColumnsFor(v) : std::nullopt;
  if (!columns || columns->copy == nullptr) {
    Fill(hv, 0.0);
    if (columns) {
      term_->AddCurvatureProductOn(columns->view, held->at, v, hv);
    } else {
      term_->AddCurvatureProduct(held->at, v, hv);
    }
  } else {
    columns->copy->Compact(v, term_->blocks(), term_->intercept(), compact_v_);
    compact_hv_.assign(compact_v_.size(), 0.0);
    term_->AddCurvatureProductOn(columns->view, held->at, compact_v_, compact_hv_);
    columns->copy->Expand(compact_hv_, term_->blocks(), term_->intercept(), hv);
  }
  // The whole shard's product, or working columns kept from a wider support than v's.
  if (on_support) {
    KeepOnFeaturesOf(v, static_cast<std::size_t>(term_->matrix().cols), static_cast<std::size_t>(term_->blocks()), hv);
  }
  ++passes_;
  return Status::Ok();
}

bool ShardDerivatives::Selected(std::size_t j) const {
  const std::vector<char>* selected = mode_ == Mode::kInPlace ? &partition_.selected
                                      : mode_ == Mode::kCopy  ? &working_.selected
                                                              : nullptr;
  return selected != nullptr && j < selected->size() && (*selected)[j] != 0;
}

std::optional<ShardDerivatives::WorkingColumns> ShardDerivatives::Working() const {
  if (mode_ == Mode::kInPlace) return WorkingColumns{partition_.view(term_->matrix()), nullptr};
  if (mode_ == Mode::kCopy) return WorkingColumns{working_.view(), &working_};
  return std::nullopt;
}

bool ShardDerivatives::CopyFits(int64_t nnz) const {
  if (memory_limit_bytes_ <= 0) return true;
  const CsrView& matrix = term_->matrix();
  const auto copy_bytes = static_cast<int64_t>(8 * matrix.rows + nnz * 4) + static_cast<int64_t>(matrix.ValueBytes(nnz));
  const auto held = static_cast<int64_t>(working_.MemoryBytes());
  return MemoryInUse() - held + copy_bytes <= static_cast<int64_t>(kMemoryShare * static_cast<double>(memory_limit_bytes_));
}

bool ShardDerivatives::ChooseWorkingColumns(std::vector<uint32_t> columns, int64_t nnz) {
  const CsrView& matrix = term_->matrix();
  if (CopyFits(nnz)) {
    // (A copy larger than the one held gets fresh arrays: the old ones go first.)
    if (static_cast<std::size_t>(nnz) > working_.col_idx.capacity()) working_ = ColumnSubset{};
    SelectColumns(matrix, std::move(columns), working_);
    mode_ = Mode::kCopy;
  } else if (own_.AreAllOf(matrix)) {
    working_ = ColumnSubset{};  // its memory given back
    std::vector<char> selected(static_cast<std::size_t>(matrix.cols), 0);
    for (const uint32_t j : columns) selected[j] = 1;
    PartitionRows(matrix, own_, std::move(selected), partition_);
    mode_ = Mode::kInPlace;
  } else {
    working_ = ColumnSubset{};
    mode_ = Mode::kNone;
    return false;  // no room for a copy, and rows it may not reorder: whole passes
  }
  ++passes_;
  return true;
}

std::optional<ShardDerivatives::WorkingColumns> ShardDerivatives::WorkingColumnsFor(std::span<const double> v) {
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
  if (2 * nnz > matrix.nnz()) return std::nullopt;
  const bool covered = std::all_of(support.begin(), support.end(), [&](uint32_t j) { return Selected(j); });
  // Kept while the support is inside it and it is not twice as large (a working set that shrank).
  const int64_t kept = mode_ == Mode::kInPlace ? partition_.nnz : working_.nnz();
  if ((!covered || kept > 2 * nnz + matrix.rows) && !ChooseWorkingColumns(std::move(support), nnz)) return std::nullopt;
  return Working();
}

std::optional<ShardDerivatives::WorkingColumns> ShardDerivatives::WorkingColumnsCovering(std::span<const double> x) const {
  if (mode_ == Mode::kNone) return std::nullopt;
  const auto blocks = static_cast<std::size_t>(term_->blocks());
  for (std::size_t j = 0; j < static_cast<std::size_t>(term_->matrix().cols); ++j) {
    if (!Selected(j) && FeatureHasEntry(x, j, blocks)) return std::nullopt;
  }
  return Working();
}

}  // namespace nimbus
