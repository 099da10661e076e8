// One shard's share of the data term, f_i(x) = (1/N) sum over its rows of c_r loss(y_r, a_r . x),
// with its derivatives at points the master names by the round that sent them. What a worker
// computes for the distributed Newton master (solve/newton/newton_master.h):
//
//   Evaluate(round, x)          f_i(x), grad f_i(x) = A^T l'(Ax) / N, diag H_i(x) = (A.^2)^T l''(Ax) / N
//   HessianVector(round, v)     H_i(x) v = A^T diag(l''(Ax)) A v / N  at the point of that round
//
// L1 Newton works on a working set of coordinates, often a small part of the features. Its
// products are asked for on the direction's support only, and a point inside that support
// needs only its columns for its margins: both then read those columns' entries alone, once
// the working set's columns hold at most half the shard's nonzeros. They read a copy of those
// columns (ColumnSubset), the fastest: its rows lie together. A worker under a memory limit
// (a function's, a cgroup's, --worker-memory-mb) makes the copy only where it fits; else rows
// it owns are reordered in place so that each row's working entries come first (RowPartition:
// 8 bytes a row, but the reading skips the rest of each row, up to 1.7 times slower per
// product), and other rows are read whole.
//
// The curvature l''(Ax) at two points is kept, always including the last one evaluated: a
// trust-region step whose trial point is rejected goes on with products at the point before
// it. A worker that does not hold a point (a replacement) is given it and pays one pass to
// rebuild its curvature.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "nimbus/core/csr.h"
#include "nimbus/core/status.h"
#include "nimbus/problem/data_term.h"
#include "nimbus/problem/loss.h"

namespace nimbus {

class ShardDerivatives {
 public:
  // `total_rows` is N of the whole problem. `weights`: each row's c_r (empty: all 1). The
  // matrix, labels and weights must outlive this object.
  ShardDerivatives(const CsrView& matrix, std::span<const double> labels, Loss loss, bool intercept,
                   int64_t total_rows, std::span<const double> weights = {});
  // Any data term (multiclass ones too), perhaps shared with another user of the shard.
  // `own`: the term's matrix's arrays, where the worker may reorder each row's entries;
  // `memory_limit_bytes`: the worker's process's limit (0: none).
  ShardDerivatives(std::shared_ptr<const DataTerm> term, int64_t total_rows, CsrArraysToChange own = {},
                   int64_t memory_limit_bytes = 0);

  std::size_t dimension() const { return size_; }
  // f_i(x); `gradient_and_diagonal` (2 n entries) gets grad f_i(x), then diag H_i(x). Two
  // passes over the shard. x becomes the point of `round`.
  double Evaluate(int64_t round, std::span<const double> x, std::span<double> gradient_and_diagonal);
  // hv = H_i v at the point of `point_round`. `point` is that point, needed only when it is
  // not one of the two held (else empty): an error if it is needed and missing.
  // With `on_support`, hv is needed only on the features where v has an entry (in some block,
  // and the intercepts): what a solve restricted to a working set reads. Other entries are
  // then 0.
  Status HessianVector(int64_t point_round, std::span<const double> point, std::span<const double> v,
                       std::span<double> hv, bool on_support = false);
  // Whether the curvature at the point of `round` is held.
  bool Holds(int64_t round) const;
  // Passes over the shard's nonzeros so far.
  int64_t data_passes() const { return passes_; }

 private:
  struct Curvature {
    int64_t round = -1;
    int64_t last_use = 0;
    DataCurvature at;  // l''(a_r . x) / N per row (per margin)
  };
  // The slot to overwrite: an empty one, else the one used least recently.
  Curvature& SlotForNewPoint();
  // The curvature at x, as the point of `round`, in the slot SlotForNewPoint gives (one pass
  // for the margins; l' per row is left in first_, the loss summed over rows in *loss_sum).
  Curvature& HoldPoint(int64_t round, std::span<const double> x, double* loss_sum);
  // A working set's columns as the kernels read them: in place (copy null: the columns keep
  // their numbers) or a copy compacted to them.
  struct WorkingColumns {
    CsrView view;
    const ColumnSubset* copy = nullptr;
  };
  // The working columns for a product with v on its support: those v has an entry in, kept
  // from an earlier product if they cover them and are not much more. None when they hold
  // more than half the shard's nonzeros (the whole shard is then about as fast).
  std::optional<WorkingColumns> WorkingColumnsFor(std::span<const double> v);
  // The working columns if they cover x's nonzeros (none if not).
  std::optional<WorkingColumns> WorkingColumnsCovering(std::span<const double> x) const;
  // The working columns chosen (`nnz` their entries): a copy, or the rows reordered in place;
  // false if neither (whole passes then).
  bool ChooseWorkingColumns(std::vector<uint32_t> columns, int64_t nnz);
  // Whether a copy of `nnz` entries keeps the process within its share of its memory limit.
  bool CopyFits(int64_t nnz) const;
  // The working columns as chosen, if any; whether they include column j.
  std::optional<WorkingColumns> Working() const;
  bool Selected(std::size_t j) const;

  // The share of a memory limit a copy may fill the process up to (the rest: the solve's own
  // vectors as they come and go, and the allocator's slack).
  static constexpr double kMemoryShare = 0.8;

  std::shared_ptr<const DataTerm> term_;
  double inverse_rows_;
  std::size_t size_;
  Curvature held_[2];
  int64_t uses_ = 0;
  int64_t last_evaluated_ = -1;  // never replaced by a point that came with a request
  std::vector<double> margins_, first_, scratch_;
  std::vector<int64_t> column_nonzeros_;  // made at the first product on a support
  CsrArraysToChange own_;
  int64_t memory_limit_bytes_;
  enum class Mode { kNone, kCopy, kInPlace } mode_ = Mode::kNone;
  ColumnSubset working_;    // a copy
  RowPartition partition_;  // or in place
  std::vector<double> compact_v_, compact_hv_;
  int64_t passes_ = 0;
};

}  // namespace nimbus
