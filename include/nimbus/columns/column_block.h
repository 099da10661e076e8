// A block of columns and the coordinate descent on it: the part of the column method (issue 32)
// that a worker holding those columns does each iteration.
//
// At the model x with margins m = A x (+ b), each row r has the loss's derivatives
// g_r = c_r loss'(y_r, m_r) / N and h_r = c_r loss''(y_r, m_r) / N. The block B's quadratic model
// of F in a change delta of its own coordinates, the others held, is
//
//   q(delta) = sum_r [g_r (A_B delta)_r + sigma h_r (A_B delta)_r^2 / 2] + sum_{j in B} g_j(x_j + delta_j)
//              + mu ||delta||^2 / 2
//
// with g_j the regularizer (l1 |.| + l2/2 (.)^2; the intercept's is zero). MinimizeBlockModel
// runs cyclic coordinate descent on q, as newGLMNET's inner loop does (Yuan, Ho and Lin 2012),
// keeping r = A_B delta so that a coordinate's step costs one pass over its column. Where the
// problem has an intercept, a weight's coordinate moves the intercept too, its column centred
// under the rows' curvature as glmnet centres its columns (Fashion-MNIST's path: 263 -> 105
// rounds), in every block: the intercept's own steps are its block's, the others' columns carry
// their share of it (BlockStep::intercept_change).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "nimbus/core/csr.h"

namespace nimbus {

// Where a block's columns are: [begin, end) of the model's, and the intercept after them (the
// last block's). What the master knows of a block a worker holds.
struct BlockRange {
  uint32_t begin = 0, end = 0;
  bool intercept = false;
  std::size_t size() const { return end - begin + (intercept ? 1 : 0); }
  bool operator==(const BlockRange&) const = default;
};

// Columns [begin, end) of a row-major matrix, stored column by column (CSC), with an optional
// column of ones (the intercept) after them.
struct ColumnBlock {
  uint32_t begin = 0, end = 0;
  int64_t rows = 0;
  bool intercept = false;
  std::vector<int64_t> col_ptr{0};  // end - begin + 1 entries
  std::vector<uint32_t> row_idx;
  std::vector<double> values;

  // The block's columns of `matrix`, in two passes over its rows (on up to `threads` threads,
  // each over a run of rows). `position_of[j]`: where the matrix's column j stands in the
  // blocks' order (empty: at j), the block holding positions [begin, end).
  static ColumnBlock Of(const CsrView& matrix, uint32_t begin, uint32_t end, bool intercept,
                        std::span<const uint32_t> position_of = {}, int threads = 1);
  // `block` on a subset of its rows, in one pass over its entries: row r becomes row new_row[r],
  // or is dropped where new_row[r] is kDroppedRow (the kept rows keep their order; `rows` of
  // them). A cross-validation fold's block from the whole data's, with no copy of the rows.
  static constexpr uint32_t kDroppedRow = UINT32_MAX;
  static ColumnBlock OnRows(const ColumnBlock& block, std::span<const uint32_t> new_row, int64_t rows);
  // The block's coordinates: its columns, and the intercept last.
  std::size_t size() const { return end - begin + (intercept ? 1 : 0); }
  int64_t nnz() const { return col_ptr.back(); }
  BlockRange range() const { return {begin, end, intercept}; }
};

// The rows' derivatives at the margins: first[r] = g_r, second[r] = h_r.
struct RowDerivatives {
  std::vector<double> first, second;
};

// newGLMNET's nu: keeps a coordinate's curvature positive where its rows have none (the blocks'
// models and the master's weighing of their steps alike).
inline constexpr double kBlockCurvatureFloor = 1e-12;

struct BlockModelOptions {
  double l1 = 0, l2 = 0;
  // The passes over the block's active coordinates at most, and the model's own stop: a pass
  // whose largest model subgradient is at most inner_ratio x the largest of F's at x ends it.
  int max_passes = 20;
  double inner_ratio = 0.1;
  // sigma: the model's curvature from the loss times this (>= 1). Blocks that each take their
  // own model's full step overshoot together, where their columns share rows; sigma = K, the
  // number of blocks, is CoCoA+'s safe bound (Smith et al.), 1 trusts the blocks alone.
  double curvature_scale = 1;
  // mu: a proximal term (mu/2) ||delta||^2 in the model. Where the rows' curvature is nearly
  // zero (weak regularization, rows almost separated) the model's minimum lies far beyond where
  // the loss is quadratic; mu bounds the step there (Levenberg and Marquardt's damping).
  double damping = 0;
  // The problem has an intercept, in this block or another: the block's columns are centred
  // against it (always so in the intercept's own block). Blocks that each held their columns'
  // shared offset apart from the intercept undid each other's steps: Fashion-MNIST L1 1e-3 with
  // an intercept took 281 rounds on 2 blocks, 13 on one.
  bool centred = false;
};

// The block's change, and what the master needs to combine it.
struct BlockStep {
  std::vector<double> delta;          // on the block's coordinates
  std::vector<double> margin_change;  // A_B delta (+ the intercept's change), one per row
  // A block centred against an intercept it does not hold: the intercept's change its columns'
  // steps make, -sum_j m_j delta_j (in margin_change too). The intercept's block has it in delta.
  double intercept_change = 0;
  // A_B z, z the part of delta that sets weights to zero (delta_j = -x_j): the master takes that
  // part whole and weighs the rest, so a zero the block chose stays zero (weighed, x_j would
  // keep x_j (1 - alpha w_b), and such tiny weights held K = 16's tail back: docs/benchmarks.md,
  // "The lead: the tail's tiny weights"). Empty where the step zeroes no weight.
  std::vector<double> zero_margin_change;
  // A centred block's zeroed weights move the intercept too, -sum_j m_j z_j (in
  // zero_margin_change, and in the step's intercept part): z's directions are e_j - m_j e_b, as
  // its steps' are. Taking the raw columns whole and their intercept's share weighed left the
  // columns' shared offset to the line search (Fashion-MNIST's path: 105 -> 310 rounds).
  double zero_intercept_change = 0;
  // F's minimum-norm subgradient over the block's coordinates at x, before the step: its
  // squared norm and its largest magnitude (the stop test and the model's own).
  double subgradient_squared = 0;
  double subgradient_max = 0;
  int passes = 0;             // over the active coordinates
  int64_t entries_read = 0;   // matrix entries read, the first pass over the eligible columns included
  std::size_t active = 0;     // the coordinates the passes visited
};

// Coordinate descent on the block's model at x (x_block: the block's coordinates of x).
// Coordinates at zero whose gradient is inside [-l1, l1] are left out of the passes: their
// step would be zero at delta = 0. Within the passes, a coordinate the steps have brought to
// zero whose model gradient lies well inside [-l1, l1] is shrunk away, as newGLMNET does (a
// pass over the whole active set comes before the passes end). So are those `eligible` marks 0 (a path's strong rules: held
// at zero, their columns not read; empty: every coordinate is eligible).
// On `threads` >= 2, the columns of many entries are read in two sides of the rows at once, a
// thread each (the same steps, bit for bit, as on one thread).
BlockStep MinimizeBlockModel(const ColumnBlock& block, const RowDerivatives& at, std::span<const double> x_block,
                             const BlockModelOptions& options, std::span<const uint8_t> eligible = {},
                             int threads = 1);

// margins += A_B v (v on the block's coordinates, the intercept's last): a pass over the block.
void AddBlockMargins(const ColumnBlock& block, std::span<const double> v, std::span<double> margins);

// The loss's gradient on the block's coordinates, sum_r a_rj g_r (one pass over the block).
std::vector<double> BlockLossGradient(const ColumnBlock& block, std::span<const double> row_gradient);

}  // namespace nimbus
