// What the fuzz targets share: a failed invariant aborts with a message (the fuzzer then
// keeps the input), and a check that a dataset a parser accepted is well formed.
#pragma once

#include <cstdio>
#include <cstdlib>

#include "nimbus/data/dataset.h"

#define FUZZ_CHECK(condition)                                                                 \
  do {                                                                                        \
    if (!(condition)) {                                                                       \
      std::fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #condition); \
      std::abort();                                                                           \
    }                                                                                         \
  } while (false)

namespace nimbus::fuzz {

// Row pointers ascend, each row's indices ascend and lie below cols, and there
// is a label per row.
inline void CheckDataset(const Dataset& data) {
  const CsrView& m = data.matrix;
  FUZZ_CHECK(m.rows >= 0 && m.cols >= 0);
  FUZZ_CHECK(static_cast<int64_t>(data.labels.size()) == m.rows);
  if (m.rows == 0) return;
  for (int64_t r = 0; r < m.rows; ++r) {
    FUZZ_CHECK(m.row_ptr[r] <= m.row_ptr[r + 1]);
    for (int64_t k = m.row_ptr[r]; k < m.row_ptr[r + 1]; ++k) {
      FUZZ_CHECK(static_cast<int64_t>(m.col_idx[k]) < m.cols);
      if (k > m.row_ptr[r]) FUZZ_CHECK(m.col_idx[k - 1] < m.col_idx[k]);
    }
  }
}

}  // namespace nimbus::fuzz
