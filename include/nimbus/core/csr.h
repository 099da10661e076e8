// Compressed sparse row matrices and the sparse kernels of the solver's inner loops.
//
// A CsrView does not own memory. A view of rows [r0, r1) of a larger matrix is the same
// col_idx/values arrays with row_ptr advanced by r0: row r spans entries
// [row_ptr[r], row_ptr[r+1]) of col_idx and values (or [row_ptr[r], row_end[r]) for a view of
// each row's first entries: RowPartition). Column indices are 0-based.
//
// Kernels take `with_intercept`: the model vector then has cols + 1 entries, the last one
// multiplying an implicit constant feature 1 in every row, so the data need not be copied.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "nimbus/core/status.h"

namespace nimbus {

// How a matrix holds its values: as doubles, as floats (where every value is exactly one:
// half the bytes), or not at all (every value is 1: binary features, the common case for
// hashed data).
enum class CsrValues : uint8_t { kDouble, kFloat, kOnes };

struct CsrView {
  int64_t rows = 0;
  int64_t cols = 0;
  const int64_t* row_ptr = nullptr;   // rows + 1 entries
  const uint32_t* col_idx = nullptr;  // indexed by row_ptr
  const double* values = nullptr;     // indexed by row_ptr (kDouble)
  const float* values32 = nullptr;    // indexed by row_ptr (kFloat)
  CsrValues value_kind = CsrValues::kDouble;
  const int64_t* row_end = nullptr;   // rows entries: where each row ends, when before the next begins

  int64_t RowEnd(int64_t r) const { return row_end != nullptr ? row_end[r] : row_ptr[r + 1]; }
  int64_t nnz() const { return rows == 0 ? 0 : row_ptr[rows] - row_ptr[0]; }
  double Value(int64_t k) const {
    return value_kind == CsrValues::kDouble ? values[k] : value_kind == CsrValues::kFloat ? values32[k] : 1.0;
  }
  // Bytes of the values of `entries` entries as this matrix holds them.
  std::size_t ValueBytes(int64_t entries) const {
    return static_cast<std::size_t>(entries) *
           (value_kind == CsrValues::kDouble ? 8 : value_kind == CsrValues::kFloat ? 4 : 0);
  }
  // Rows [begin, end) as a view into the same arrays.
  CsrView RowRange(int64_t begin, int64_t end) const;
};

// Every value 1, for the kernels: indexed (or offset) as an array of them would be.
struct UnitValues {
  double operator[](int64_t) const { return 1.0; }
  UnitValues operator+(int64_t) const { return {}; }
};

// Calls f with the matrix's values as the kernels index them: a const double*, a const
// float* or UnitValues. The kernels are templates on it: one branch per call, none per entry.
template <typename F>
decltype(auto) WithValues(const CsrView& a, F&& f) {
  switch (a.value_kind) {
    case CsrValues::kFloat: return f(a.values32);
    case CsrValues::kOnes: return f(UnitValues{});
    case CsrValues::kDouble: break;
  }
  return f(a.values);
}

// Whether `a` is a matrix as the kernels, the shards and the general form take it: row offsets
// from 0 that never decrease, and in every row column indices that ascend strictly and stay
// below cols. The error says where it first fails. (Not the values: any double will do here.)
Status CheckCsrStructure(const CsrView& a);

// y[r] = a_r . x  (+ x[cols] with an intercept), for every row r.
void MultiplyRows(const CsrView& a, std::span<const double> x, bool with_intercept, std::span<double> y);

// out += A^T w  (out[cols] += sum_r w[r] with an intercept).
void AddTransposeProduct(const CsrView& a, std::span<const double> w, bool with_intercept,
                         std::span<double> out);

// out += A^T w and squares += (A.^2)^T d in one pass over the data: the gradient and the
// diagonal of the Hessian A^T diag(d) A of a margin-based loss share their reads.
void AddTransposeProductAndSquares(const CsrView& a, std::span<const double> w, std::span<const double> d,
                                   bool with_intercept, std::span<double> out, std::span<double> squares);

// out += A^T diag(d) A v, one pass: each row's dot product a_r . v is scaled by d[r] and
// scattered back while the row is still in cache.
void AddNormalProduct(const CsrView& a, std::span<const double> d, std::span<const double> v,
                      bool with_intercept, std::span<double> out);

// Blocks: a model of C classes holds C weights per column, interleaved (x[j C + c] is column
// j's weight in class c), then C intercepts; each row has C margins, y[r C + c]. One pass
// over the data serves every class, and a column's C weights share a cache line.

// y[r C + c] = a_r . x_c (+ x[cols C + c] with an intercept); C = 1 is MultiplyRows.
void MultiplyRowsBlocks(const CsrView& a, int64_t classes, std::span<const double> x, bool with_intercept,
                        std::span<double> y);

// out += A^T w and, unless `squares` is empty, squares += (A.^2)^T d, class by class (w and d
// hold C entries per row).
void AddTransposeProductBlocks(const CsrView& a, int64_t classes, std::span<const double> w,
                               std::span<const double> d, bool with_intercept, std::span<double> out,
                               std::span<double> squares);

// out += A^T D A v, with D block diagonal by row: each row's C products t = (a_r . v_c)_c are
// replaced by `curvature(r, t)` (in place, C entries) and scattered back, one pass.
template <typename RowCurvature, typename Values>
void AddNormalProductBlocksOf(const CsrView& a, Values values, int64_t classes, std::span<const double> v,
                              bool with_intercept, std::span<double> out, RowCurvature& curvature) {
  const auto c_count = static_cast<std::size_t>(classes);
  const double* v_bias = with_intercept ? v.data() + static_cast<std::size_t>(a.cols) * c_count : nullptr;
  std::vector<double> t_buffer(c_count), bias(c_count, 0.0);
  // Unaliased: the row's products, the model's columns and the output never overlap, so the
  // loops over classes vectorize.
  double* __restrict t = t_buffer.data();
  const double* __restrict in = v.data();
  double* __restrict result = out.data();
  for (int64_t r = 0; r < a.rows; ++r) {
    for (std::size_t c = 0; c < c_count; ++c) t[c] = v_bias != nullptr ? v_bias[c] : 0.0;
    const int64_t end = a.RowEnd(r);
    for (int64_t k = a.row_ptr[r]; k < end; ++k) {
      const double value = values[k];
      const double* __restrict column = in + static_cast<std::size_t>(a.col_idx[k]) * c_count;
      for (std::size_t c = 0; c < c_count; ++c) t[c] += value * column[c];
    }
    curvature(r, std::span<double>(t, c_count));
    for (int64_t k = a.row_ptr[r]; k < end; ++k) {
      const double value = values[k];
      double* __restrict column = result + static_cast<std::size_t>(a.col_idx[k]) * c_count;
      for (std::size_t c = 0; c < c_count; ++c) column[c] += value * t[c];
    }
    for (std::size_t c = 0; c < c_count; ++c) bias[c] += t[c];
  }
  if (with_intercept) {
    double* out_bias = out.data() + static_cast<std::size_t>(a.cols) * c_count;
    for (std::size_t c = 0; c < c_count; ++c) out_bias[c] += bias[c];
  }
}

template <typename RowCurvature>
void AddNormalProductBlocks(const CsrView& a, int64_t classes, std::span<const double> v, bool with_intercept,
                            std::span<double> out, RowCurvature&& curvature) {
  WithValues(a, [&](auto values) { AddNormalProductBlocksOf(a, values, classes, v, with_intercept, out, curvature); });
}

// Some columns of a matrix as a matrix of its own, with the same rows: its column k is column
// columns[k] of the original. For a model that is zero outside those columns, a kernel on it
// with the model compacted to them (Compact) gives the original's products while reading only
// their nonzeros: L1 Newton's working set is often a small part of the data.
struct ColumnSubset {
  std::vector<uint32_t> columns;  // ascending
  std::vector<char> selected;     // per column of the original: whether it is one of them
  std::vector<int64_t> row_ptr;
  std::vector<uint32_t> col_idx;
  // The values as the original holds them: doubles, floats, or none (every value 1).
  CsrValues value_kind = CsrValues::kDouble;
  std::vector<double> values;
  std::vector<float> values32;

  CsrView view() const;
  int64_t nnz() const { return static_cast<int64_t>(col_idx.size()); }
  // The memory its arrays hold.
  std::size_t MemoryBytes() const;
  // compact = the entries of `full` (C weights per original column, then C intercepts with
  // `with_intercept`) on these columns, in the same layout.
  void Compact(std::span<const double> full, int64_t classes, bool with_intercept, std::vector<double>& compact) const;
  // full = `compact` scattered back to its columns, zero elsewhere.
  void Expand(std::span<const double> compact, int64_t classes, bool with_intercept, std::span<double> full) const;
};

// The arrays of a matrix that its holder may change in place (null where it may not): the
// column indices, and the values as the matrix holds them (none for kOnes).
struct CsrArraysToChange {
  uint32_t* col_idx = nullptr;
  double* values = nullptr;
  float* values32 = nullptr;

  // Whether these are `a`'s own arrays, all of them.
  bool AreAllOf(const CsrView& a) const;
};

// Some columns of a matrix, read in place: each row's entries reordered so that those of the
// chosen columns come first (both parts in the order they had), and a view of those first
// entries (row_end). A kernel on the view, with a model zero outside those columns, gives the
// whole matrix's products while reading only their nonzeros, and with the columns' own
// numbers. The whole matrix keeps every entry (in another order within its rows: its products
// change in rounding only). Costs 8 bytes a row, where a copy (ColumnSubset) costs its entries.
struct RowPartition {
  std::vector<char> selected;    // per column: whether it is one of them
  std::vector<int64_t> row_end;  // where each row's entries of them end
  int64_t nnz = 0;               // theirs

  // `a` (the matrix partitioned) cut at row_end.
  CsrView view(const CsrView& a) const;
};
// Partitions the rows of `a`, whose arrays are `arrays` (AreAllOf(a)), by the columns
// `selected` (a.cols entries): one pass over its nonzeros.
void PartitionRows(const CsrView& a, const CsrArraysToChange& arrays, std::vector<char> selected,
                   RowPartition& partition);

// The columns `columns` (ascending, below a.cols) of a: two passes over its nonzeros.
ColumnSubset SelectColumns(const CsrView& a, std::vector<uint32_t> columns);
// The same into `subset`, reusing the memory it holds.
void SelectColumns(const CsrView& a, std::vector<uint32_t> columns, ColumnSubset& subset);

// The number of nonzeros in each column of a.
std::vector<int64_t> ColumnNonzeros(const CsrView& a);

// sum_r c_r (||a_r||^2 + 1 with an intercept), c_r = 1 without row weights: the trace of
// A^T C A.
double SumOfSquaredRowNorms(const CsrView& a, bool with_intercept, std::span<const double> row_weights = {});

}  // namespace nimbus
