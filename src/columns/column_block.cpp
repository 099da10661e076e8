#include "nimbus/columns/column_block.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "nimbus/problem/problem.h"

namespace nimbus {
namespace {

// argmin_t gradient t + curvature t^2 / 2 + l1 |w + t|: the Newton step, soft-thresholded.
double CoordinateStep(double gradient, double curvature, double w, double l1) {
  if (gradient + l1 <= curvature * w) return -(gradient + l1) / curvature;
  if (gradient - l1 >= curvature * w) return -(gradient - l1) / curvature;
  return -w;
}

// What every coordinate's passes need: its column's part of the loss's gradient at x, and its
// curvature (the regularizer's included).
struct Coordinate {
  double loss_gradient = 0;
  double curvature = 0;
};

bool IsIntercept(const ColumnBlock& block, std::size_t j) { return j == block.end - block.begin; }

// sum_r a_r v_r over column j's entries (the intercept's: every row, with a = 1).
double ColumnDot(const ColumnBlock& block, std::size_t j, std::span<const double> v) {
  double sum = 0;
  if (IsIntercept(block, j)) {
    for (const double x : v) sum += x;
    return sum;
  }
  for (int64_t k = block.col_ptr[j]; k < block.col_ptr[j + 1]; ++k) sum += block.values[k] * v[block.row_idx[k]];
  return sum;
}

// sum_r a_r^2 v_r over column j's entries.
double ColumnSquaredDot(const ColumnBlock& block, std::size_t j, std::span<const double> v) {
  if (IsIntercept(block, j)) return ColumnDot(block, j, v);
  double sum = 0;
  for (int64_t k = block.col_ptr[j]; k < block.col_ptr[j + 1]; ++k) {
    sum += block.values[k] * block.values[k] * v[block.row_idx[k]];
  }
  return sum;
}

// sum_r a_r h_r r_r over column j's entries: the change of the column's gradient that the
// block's steps so far have made.
double ColumnDot(const ColumnBlock& block, std::size_t j, std::span<const double> h, std::span<const double> r) {
  double sum = 0;
  if (IsIntercept(block, j)) {
    for (std::size_t row = 0; row < r.size(); ++row) sum += h[row] * r[row];
    return sum;
  }
  for (int64_t k = block.col_ptr[j]; k < block.col_ptr[j + 1]; ++k) {
    sum += block.values[k] * h[block.row_idx[k]] * r[block.row_idx[k]];
  }
  return sum;
}

// r += t a_j.
void AddColumn(const ColumnBlock& block, std::size_t j, double t, std::span<double> r) {
  if (IsIntercept(block, j)) {
    for (double& x : r) x += t;
    return;
  }
  for (int64_t k = block.col_ptr[j]; k < block.col_ptr[j + 1]; ++k) r[block.row_idx[k]] += t * block.values[k];
}

// The entries of column j.
int64_t ColumnEntries(const ColumnBlock& block, std::size_t j) {
  return IsIntercept(block, j) ? block.rows : block.col_ptr[j + 1] - block.col_ptr[j];
}

}  // namespace

ColumnBlock ColumnBlock::Of(const CsrView& matrix, uint32_t begin, uint32_t end, bool intercept,
                            std::span<const uint32_t> position_of) {
  const auto position = [&](uint32_t j) { return position_of.empty() ? j : position_of[j]; };
  ColumnBlock block;
  block.begin = begin;
  block.end = end;
  block.rows = matrix.rows;
  block.intercept = intercept;
  const std::size_t cols = end - begin;
  std::vector<int64_t> counts(cols + 1, 0);
  for (int64_t r = 0; r < matrix.rows; ++r) {
    for (int64_t k = matrix.row_ptr[r]; k < matrix.RowEnd(r); ++k) {
      const uint32_t j = position(matrix.col_idx[k]);
      if (j >= begin && j < end) ++counts[j - begin + 1];
    }
  }
  for (std::size_t j = 0; j < cols; ++j) counts[j + 1] += counts[j];
  block.col_ptr = counts;
  block.row_idx.resize(static_cast<std::size_t>(counts.back()));
  block.values.resize(static_cast<std::size_t>(counts.back()));
  // Rows in order, so each column's rows come out ascending.
  for (int64_t r = 0; r < matrix.rows; ++r) {
    for (int64_t k = matrix.row_ptr[r]; k < matrix.RowEnd(r); ++k) {
      const uint32_t j = position(matrix.col_idx[k]);
      if (j < begin || j >= end) continue;
      const int64_t at = counts[j - begin]++;
      block.row_idx[at] = static_cast<uint32_t>(r);
      block.values[at] = matrix.Value(k);
    }
  }
  return block;
}

void AddBlockMargins(const ColumnBlock& block, std::span<const double> v, std::span<double> margins) {
  for (std::size_t j = 0; j < block.size(); ++j) {
    if (v[j] != 0) AddColumn(block, j, v[j], margins);
  }
}

std::vector<double> BlockLossGradient(const ColumnBlock& block, std::span<const double> row_gradient) {
  std::vector<double> gradient(block.size());
  for (std::size_t j = 0; j < block.size(); ++j) gradient[j] = ColumnDot(block, j, row_gradient);
  return gradient;
}

BlockStep MinimizeBlockModel(const ColumnBlock& block, const RowDerivatives& at, std::span<const double> x_block,
                             const BlockModelOptions& options, std::span<const uint8_t> eligible) {
  BlockStep step;
  step.delta.assign(block.size(), 0.0);
  step.margin_change.assign(static_cast<std::size_t>(block.rows), 0.0);
  std::span<double> change = step.margin_change;  // r = A_B delta
  // The intercept is unregularized: its l1 and l2 are zero.
  const auto l1_of = [&](std::size_t j) { return IsIntercept(block, j) ? 0.0 : options.l1; };
  const auto l2_of = [&](std::size_t j) { return IsIntercept(block, j) ? 0.0 : options.l2; };
  // F's gradient and curvature on every coordinate at x: one pass over the block.
  std::vector<Coordinate> coordinates(block.size());
  std::vector<uint32_t> active;
  for (std::size_t j = 0; j < block.size(); ++j) {
    if (!eligible.empty() && !eligible[j]) continue;  // held at zero, its column not read
    step.entries_read += ColumnEntries(block, j);
    Coordinate& c = coordinates[j];
    c.loss_gradient = ColumnDot(block, j, at.first);
    c.curvature = options.curvature_scale * ColumnSquaredDot(block, j, at.second) + l2_of(j) + options.damping +
                  kBlockCurvatureFloor;
    const double gradient = c.loss_gradient + l2_of(j) * x_block[j];
    const double v = MinimumNormSubgradient(x_block[j], gradient, l1_of(j));
    step.subgradient_squared += v * v;
    step.subgradient_max = std::max(step.subgradient_max, std::abs(v));
    if (IsIntercept(block, j) || x_block[j] != 0 || std::abs(gradient) > l1_of(j)) {
      active.push_back(static_cast<uint32_t>(j));
    }
  }
  step.active = active.size();
  const double tolerance = options.inner_ratio * step.subgradient_max;
  // Cyclic passes over the working coordinates, each step moving r along its column. The
  // model's gradient on coordinate j: g_j + sigma (A_B^T H r)_j + l2 w_j + mu delta_j.
  std::vector<uint32_t> working = active;
  double last_largest = std::numeric_limits<double>::infinity();
  for (int pass = 0; pass < options.max_passes; ++pass) {
    double largest = 0;
    std::size_t kept = 0;
    for (const uint32_t j : working) {
      const Coordinate& c = coordinates[j];
      const double w = x_block[j] + step.delta[j];
      const double gradient = c.loss_gradient + options.curvature_scale * ColumnDot(block, j, at.second, change) +
                              l2_of(j) * w + options.damping * step.delta[j];
      step.entries_read += ColumnEntries(block, j);
      // newGLMNET's shrinking: at zero, and inside [-l1, l1] by more than the last pass's
      // largest subgradient over the rows (liblinear's QP_Gmax_old / l).
      const double margin = last_largest / static_cast<double>(std::max<int64_t>(block.rows, 1));
      if (w == 0 && !IsIntercept(block, j) && std::abs(gradient) < l1_of(j) - margin) continue;
      working[kept++] = j;
      largest = std::max(largest, std::abs(MinimumNormSubgradient(w, gradient, l1_of(j))));
      const double t = CoordinateStep(gradient, c.curvature, w, l1_of(j));
      if (t == 0) continue;
      step.delta[j] += t;
      step.entries_read += ColumnEntries(block, j);
      AddColumn(block, j, t, change);
    }
    working.resize(kept);
    ++step.passes;
    last_largest = largest;
    if (largest > tolerance) continue;
    if (working.size() == active.size()) break;
    working = active;  // the shrunk ones checked once more before the passes end
    last_largest = std::numeric_limits<double>::infinity();
  }
  return step;
}

}  // namespace nimbus
