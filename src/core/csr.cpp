#include "nimbus/core/csr.h"

#include <algorithm>
#include <cassert>
#include <string>

#include "nimbus/core/build_target.h"  // every program that runs the kernels records what they were compiled for

namespace nimbus {
namespace {

template <typename V>
inline double RowDot(const uint32_t* idx, V val, int64_t n, const double* x) {
  double s0 = 0, s1 = 0;
  int64_t k = 0;
  for (; k + 2 <= n; k += 2) {
    s0 += val[k] * x[idx[k]];
    s1 += val[k + 1] * x[idx[k + 1]];
  }
  if (k < n) s0 += val[k] * x[idx[k]];
  return s0 + s1;
}

template <typename V>
inline void RowScatter(const uint32_t* idx, V val, int64_t n, double scale, double* out) {
  for (int64_t k = 0; k < n; ++k) out[idx[k]] += scale * val[k];
}

[[maybe_unused]] std::size_t ModelSize(const CsrView& a, bool with_intercept) {
  return static_cast<std::size_t>(a.cols) + (with_intercept ? 1 : 0);
}

}  // namespace

CsrView CsrView::RowRange(int64_t begin, int64_t end) const {
  assert(0 <= begin && begin <= end && end <= rows);
  CsrView view = *this;
  view.rows = end - begin;
  view.row_ptr = row_ptr + begin;
  return view;
}

Status CheckCsrStructure(const CsrView& a) {
  if (a.rows > 0 && a.row_ptr[0] != 0) return InvalidArgument("row_ptr[0] is not 0");
  for (int64_t r = 0; r < a.rows; ++r) {
    if (a.row_ptr[r + 1] < a.row_ptr[r]) return InvalidArgument("row pointers decrease at row " + std::to_string(r));
  }
  for (int64_t r = 0; r < a.rows; ++r) {
    for (int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
      if (a.col_idx[k] >= static_cast<uint64_t>(a.cols)) {
        return InvalidArgument("column index col_idx[" + std::to_string(k) + "] = " + std::to_string(a.col_idx[k]) +
                               " is not below cols = " + std::to_string(a.cols));
      }
      if (k > a.row_ptr[r] && a.col_idx[k] <= a.col_idx[k - 1]) {
        return InvalidArgument("the column indices do not ascend in row " + std::to_string(r));
      }
    }
  }
  return Status::Ok();
}

namespace {

template <typename V>
void MultiplyRowsImpl(const CsrView& a, V values, std::span<const double> x, bool with_intercept, std::span<double> y) {
  assert(x.size() == ModelSize(a, with_intercept));
  assert(static_cast<int64_t>(y.size()) == a.rows);
  const double bias = with_intercept ? x[a.cols] : 0.0;
  for (int64_t r = 0; r < a.rows; ++r) {
    const int64_t begin = a.row_ptr[r];
    y[r] = RowDot(a.col_idx + begin, values + begin, a.RowEnd(r) - begin, x.data()) + bias;
  }
}

}  // namespace

void MultiplyRows(const CsrView& a, std::span<const double> x, bool with_intercept, std::span<double> y) {
  WithValues(a, [&](auto values) { MultiplyRowsImpl(a, values, x, with_intercept, y); });
}

namespace {

template <typename V>
void AddTransposeProductImpl(const CsrView& a, V values, std::span<const double> w, bool with_intercept,
                         std::span<double> out) {
  assert(out.size() == ModelSize(a, with_intercept));
  assert(static_cast<int64_t>(w.size()) == a.rows);
  double bias = 0;
  for (int64_t r = 0; r < a.rows; ++r) {
    const double wr = w[r];
    bias += wr;
    if (wr == 0.0) continue;
    const int64_t begin = a.row_ptr[r];
    RowScatter(a.col_idx + begin, values + begin, a.RowEnd(r) - begin, wr, out.data());
  }
  if (with_intercept) out[a.cols] += bias;
}

}  // namespace

void AddTransposeProduct(const CsrView& a, std::span<const double> w, bool with_intercept,
                         std::span<double> out) {
  WithValues(a, [&](auto values) { AddTransposeProductImpl(a, values, w, with_intercept, out); });
}

namespace {

template <typename V>
void AddTransposeProductAndSquaresImpl(const CsrView& a, V values, std::span<const double> w, std::span<const double> d,
                                   bool with_intercept, std::span<double> out, std::span<double> squares) {
  assert(out.size() == ModelSize(a, with_intercept) && squares.size() == out.size());
  double bias = 0, bias_squares = 0;
  double* po = out.data();
  double* ps = squares.data();
  for (int64_t r = 0; r < a.rows; ++r) {
    const double wr = w[r];
    const double dr = d[r];
    bias += wr;
    bias_squares += dr;
    const int64_t begin = a.row_ptr[r];
    const int64_t end = a.RowEnd(r);
    for (int64_t k = begin; k < end; ++k) {
      const uint32_t j = a.col_idx[k];
      const double v = values[k];
      po[j] += wr * v;
      ps[j] += dr * v * v;
    }
  }
  if (with_intercept) {
    out[a.cols] += bias;
    squares[a.cols] += bias_squares;
  }
}

}  // namespace

void AddTransposeProductAndSquares(const CsrView& a, std::span<const double> w, std::span<const double> d,
                                   bool with_intercept, std::span<double> out, std::span<double> squares) {
  WithValues(a, [&](auto values) { AddTransposeProductAndSquaresImpl(a, values, w, d, with_intercept, out, squares); });
}

namespace {

template <typename V>
void AddNormalProductImpl(const CsrView& a, V values, std::span<const double> d, std::span<const double> v,
                      bool with_intercept, std::span<double> out) {
  assert(v.size() == ModelSize(a, with_intercept) && out.size() == v.size());
  const double v_bias = with_intercept ? v[a.cols] : 0.0;
  double bias = 0;
  for (int64_t r = 0; r < a.rows; ++r) {
    const double dr = d[r];
    if (dr == 0.0) continue;  // squared hinge: rows outside the margin contribute nothing
    const int64_t begin = a.row_ptr[r];
    const int64_t n = a.RowEnd(r) - begin;
    const double t = dr * (RowDot(a.col_idx + begin, values + begin, n, v.data()) + v_bias);
    bias += t;
    RowScatter(a.col_idx + begin, values + begin, n, t, out.data());
  }
  if (with_intercept) out[a.cols] += bias;
}

}  // namespace

void AddNormalProduct(const CsrView& a, std::span<const double> d, std::span<const double> v,
                      bool with_intercept, std::span<double> out) {
  WithValues(a, [&](auto values) { AddNormalProductImpl(a, values, d, v, with_intercept, out); });
}

namespace {

template <typename V>
void MultiplyRowsBlocksImpl(const CsrView& a, V values, int64_t classes, std::span<const double> x,
                            bool with_intercept, std::span<double> y) {
  const auto c_count = static_cast<std::size_t>(classes);
  assert(x.size() == ModelSize(a, with_intercept) * c_count);
  assert(y.size() == static_cast<std::size_t>(a.rows) * c_count);
  const double* bias = with_intercept ? x.data() + static_cast<std::size_t>(a.cols) * c_count : nullptr;
  const double* __restrict in = x.data();  // unaliased: the loops over classes vectorize
  double* __restrict out = y.data();
  for (int64_t r = 0; r < a.rows; ++r) {
    double* __restrict margins = out + static_cast<std::size_t>(r) * c_count;
    for (std::size_t c = 0; c < c_count; ++c) margins[c] = bias != nullptr ? bias[c] : 0.0;
    for (int64_t k = a.row_ptr[r], end = a.RowEnd(r); k < end; ++k) {
      const double value = values[k];
      const double* __restrict column = in + static_cast<std::size_t>(a.col_idx[k]) * c_count;
      for (std::size_t c = 0; c < c_count; ++c) margins[c] += value * column[c];
    }
  }
}

}  // namespace

void MultiplyRowsBlocks(const CsrView& a, int64_t classes, std::span<const double> x, bool with_intercept,
                        std::span<double> y) {
  if (classes == 1) return MultiplyRows(a, x, with_intercept, y);  // its own kernel, unrolled
  WithValues(a, [&](auto values) { MultiplyRowsBlocksImpl(a, values, classes, x, with_intercept, y); });
}

namespace {

template <typename V>
void AddTransposeProductBlocksImpl(const CsrView& a, V values, int64_t classes, std::span<const double> w,
                               std::span<const double> d, bool with_intercept, std::span<double> out,
                               std::span<double> squares) {
  const auto c_count = static_cast<std::size_t>(classes);
  const bool with_squares = !squares.empty();
  assert(out.size() == ModelSize(a, with_intercept) * c_count && (!with_squares || squares.size() == out.size()));
  std::vector<double> bias(c_count, 0.0), bias_squares(c_count, 0.0);
  double* __restrict sums = out.data();  // unaliased: the loops over classes vectorize
  double* __restrict square_sums = squares.data();
  for (int64_t r = 0; r < a.rows; ++r) {
    const double* __restrict wr = w.data() + static_cast<std::size_t>(r) * c_count;
    const double* __restrict dr = with_squares ? d.data() + static_cast<std::size_t>(r) * c_count : nullptr;
    for (int64_t k = a.row_ptr[r], end = a.RowEnd(r); k < end; ++k) {
      const double value = values[k];
      const std::size_t column = static_cast<std::size_t>(a.col_idx[k]) * c_count;
      for (std::size_t c = 0; c < c_count; ++c) sums[column + c] += value * wr[c];
      if (!with_squares) continue;
      for (std::size_t c = 0; c < c_count; ++c) square_sums[column + c] += value * value * dr[c];
    }
    for (std::size_t c = 0; c < c_count; ++c) bias[c] += wr[c];
    for (std::size_t c = 0; c < c_count && with_squares; ++c) bias_squares[c] += dr[c];
  }
  if (!with_intercept) return;
  const std::size_t last = static_cast<std::size_t>(a.cols) * c_count;
  for (std::size_t c = 0; c < c_count; ++c) out[last + c] += bias[c];
  for (std::size_t c = 0; c < c_count && with_squares; ++c) squares[last + c] += bias_squares[c];
}

}  // namespace

void AddTransposeProductBlocks(const CsrView& a, int64_t classes, std::span<const double> w,
                               std::span<const double> d, bool with_intercept, std::span<double> out,
                               std::span<double> squares) {
  WithValues(a, [&](auto values) { AddTransposeProductBlocksImpl(a, values, classes, w, d, with_intercept, out, squares); });
}

CsrView ColumnSubset::view() const {
  CsrView v;
  v.rows = static_cast<int64_t>(row_ptr.size()) - 1;
  v.cols = static_cast<int64_t>(columns.size());
  v.row_ptr = row_ptr.data();
  v.col_idx = col_idx.data();
  v.values = values.data();
  v.values32 = values32.data();
  v.value_kind = value_kind;
  return v;
}

std::size_t ColumnSubset::MemoryBytes() const {
  return columns.capacity() * sizeof(uint32_t) + selected.capacity() + row_ptr.capacity() * sizeof(int64_t) +
         col_idx.capacity() * sizeof(uint32_t) + values.capacity() * sizeof(double) + values32.capacity() * sizeof(float);
}

void ColumnSubset::Compact(std::span<const double> full, int64_t classes, bool with_intercept,
                           std::vector<double>& compact) const {
  const auto c_count = static_cast<std::size_t>(classes);
  const std::size_t original_cols = selected.size();
  assert(full.size() == (original_cols + (with_intercept ? 1 : 0)) * c_count);
  compact.resize((columns.size() + (with_intercept ? 1 : 0)) * c_count);
  for (std::size_t k = 0; k < columns.size(); ++k) {
    for (std::size_t c = 0; c < c_count; ++c) compact[k * c_count + c] = full[columns[k] * c_count + c];
  }
  for (std::size_t c = 0; c < c_count && with_intercept; ++c) {
    compact[columns.size() * c_count + c] = full[original_cols * c_count + c];
  }
}

void ColumnSubset::Expand(std::span<const double> compact, int64_t classes, bool with_intercept,
                          std::span<double> full) const {
  const auto c_count = static_cast<std::size_t>(classes);
  const std::size_t original_cols = selected.size();
  assert(compact.size() == (columns.size() + (with_intercept ? 1 : 0)) * c_count);
  std::fill(full.begin(), full.end(), 0.0);
  for (std::size_t k = 0; k < columns.size(); ++k) {
    for (std::size_t c = 0; c < c_count; ++c) full[columns[k] * c_count + c] = compact[k * c_count + c];
  }
  for (std::size_t c = 0; c < c_count && with_intercept; ++c) {
    full[original_cols * c_count + c] = compact[columns.size() * c_count + c];
  }
}

void SelectColumns(const CsrView& a, std::vector<uint32_t> columns, ColumnSubset& subset) {
  subset.selected.assign(static_cast<std::size_t>(a.cols), 0);
  std::vector<uint32_t> position(static_cast<std::size_t>(a.cols), 0);
  for (std::size_t k = 0; k < columns.size(); ++k) {
    assert(columns[k] < a.cols && (k == 0 || columns[k - 1] < columns[k]));
    subset.selected[columns[k]] = 1;
    position[columns[k]] = static_cast<uint32_t>(k);
  }
  subset.columns = std::move(columns);
  // Counted first, then written in place: the arrays are sized once, within the capacity they
  // had (no growth copying, and no fresh pages to fault in when a new set is no larger).
  subset.row_ptr.resize(static_cast<std::size_t>(a.rows) + 1);
  subset.row_ptr[0] = 0;
  for (int64_t r = 0; r < a.rows; ++r) {
    int64_t kept = 0;
    for (int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) kept += subset.selected[a.col_idx[k]];
    subset.row_ptr[static_cast<std::size_t>(r) + 1] = subset.row_ptr[static_cast<std::size_t>(r)] + kept;
  }
  const auto nnz = static_cast<std::size_t>(subset.row_ptr.back());
  subset.value_kind = a.value_kind;
  subset.col_idx.resize(nnz);
  subset.values.resize(a.value_kind == CsrValues::kDouble ? nnz : 0);
  subset.values32.resize(a.value_kind == CsrValues::kFloat ? nnz : 0);
  std::size_t at = 0;
  for (int64_t k = a.row_ptr[0]; k < a.row_ptr[a.rows]; ++k) {
    const uint32_t j = a.col_idx[k];
    if (subset.selected[j] == 0) continue;
    subset.col_idx[at] = position[j];
    if (a.value_kind == CsrValues::kDouble) subset.values[at] = a.values[k];
    if (a.value_kind == CsrValues::kFloat) subset.values32[at] = a.values32[k];
    ++at;
  }
}

bool CsrArraysToChange::AreAllOf(const CsrView& a) const {
  if (col_idx == nullptr || col_idx != a.col_idx) return false;
  switch (a.value_kind) {
    case CsrValues::kDouble: return values != nullptr && values == a.values;
    case CsrValues::kFloat: return values32 != nullptr && values32 == a.values32;
    case CsrValues::kOnes: return true;
  }
  return false;
}

CsrView RowPartition::view(const CsrView& a) const {
  CsrView v = a;
  v.row_end = row_end.data();
  return v;
}

namespace {

// Each row's entries of the selected columns moved to its front, both parts keeping their
// order: the others go to `spill` and come back after.
template <typename Value>
void PartitionRowsOf(const CsrView& a, uint32_t* col_idx, Value* values, RowPartition& partition) {
  std::vector<std::pair<uint32_t, Value>> spill;
  for (int64_t r = 0; r < a.rows; ++r) {
    int64_t at = a.row_ptr[r];
    spill.clear();
    for (int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
      const Value value = values != nullptr ? values[k] : Value{};
      if (partition.selected[col_idx[k]] == 0) {
        spill.emplace_back(col_idx[k], value);
        continue;
      }
      col_idx[at] = col_idx[k];
      if (values != nullptr) values[at] = value;
      ++at;
    }
    partition.row_end[static_cast<std::size_t>(r)] = at;
    partition.nnz += at - a.row_ptr[r];
    for (const auto& [column, value] : spill) {
      col_idx[at] = column;
      if (values != nullptr) values[at] = value;
      ++at;
    }
  }
}

}  // namespace

void PartitionRows(const CsrView& a, const CsrArraysToChange& arrays, std::vector<char> selected,
                   RowPartition& partition) {
  assert(arrays.AreAllOf(a) && static_cast<int64_t>(selected.size()) == a.cols);
  partition.selected = std::move(selected);
  partition.row_end.resize(static_cast<std::size_t>(a.rows));
  partition.nnz = 0;
  switch (a.value_kind) {
    case CsrValues::kDouble: return PartitionRowsOf(a, arrays.col_idx, arrays.values, partition);
    case CsrValues::kFloat: return PartitionRowsOf(a, arrays.col_idx, arrays.values32, partition);
    case CsrValues::kOnes: return PartitionRowsOf<double>(a, arrays.col_idx, nullptr, partition);
  }
}

ColumnSubset SelectColumns(const CsrView& a, std::vector<uint32_t> columns) {
  ColumnSubset subset;
  SelectColumns(a, std::move(columns), subset);
  return subset;
}

std::vector<int64_t> ColumnNonzeros(const CsrView& a) {
  std::vector<int64_t> counts(static_cast<std::size_t>(a.cols), 0);
  const int64_t begin = a.rows == 0 ? 0 : a.row_ptr[0];
  const int64_t end = a.rows == 0 ? 0 : a.row_ptr[a.rows];
  for (int64_t k = begin; k < end; ++k) ++counts[a.col_idx[k]];
  return counts;
}

double SumOfSquaredRowNorms(const CsrView& a, bool with_intercept, std::span<const double> row_weights) {
  if (!row_weights.empty()) {
    double sum = 0;
    for (int64_t r = 0; r < a.rows; ++r) {
      double norm = with_intercept ? 1.0 : 0.0;
      for (int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) norm += a.Value(k) * a.Value(k);
      sum += row_weights[static_cast<std::size_t>(r)] * norm;
    }
    return sum;
  }
  double sum = 0;
  const int64_t begin = a.rows == 0 ? 0 : a.row_ptr[0];
  const int64_t end = a.rows == 0 ? 0 : a.row_ptr[a.rows];
  for (int64_t k = begin; k < end; ++k) sum += a.Value(k) * a.Value(k);
  return sum + (with_intercept ? static_cast<double>(a.rows) : 0.0);
}

}  // namespace nimbus
