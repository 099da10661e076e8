// Compressed sparse row matrices and the sparse kernels of the solver's inner loops.
//
// A CsrView does not own memory. A view of rows [r0, r1) of a larger matrix is the same
// col_idx/values arrays with row_ptr advanced by r0: row r spans entries
// [row_ptr[r], row_ptr[r+1]) of col_idx and values. Column indices are 0-based.
//
// Kernels take `with_intercept`: the model vector then has cols + 1 entries, the last one
// multiplying an implicit constant feature 1 in every row, so the data need not be copied.
#pragma once

#include <cstdint>
#include <span>

#include "nimbus/core/status.h"

namespace nimbus {

struct CsrView {
  int64_t rows = 0;
  int64_t cols = 0;
  const int64_t* row_ptr = nullptr;   // rows + 1 entries
  const uint32_t* col_idx = nullptr;  // indexed by row_ptr
  const double* values = nullptr;     // indexed by row_ptr

  int64_t nnz() const { return rows == 0 ? 0 : row_ptr[rows] - row_ptr[0]; }
  // Rows [begin, end) as a view into the same arrays.
  CsrView RowRange(int64_t begin, int64_t end) const;
};

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

// sum_r c_r (||a_r||^2 + 1 with an intercept), c_r = 1 without row weights: the trace of
// A^T C A.
double SumOfSquaredRowNorms(const CsrView& a, bool with_intercept, std::span<const double> row_weights = {});

}  // namespace nimbus
