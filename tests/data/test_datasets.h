// Small in-memory data sets for the data module's tests, built from plain row lists, and the
// inverse: a Dataset's rows as plain lists, for comparisons.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <random>
#include <utility>
#include <vector>

#include "nimbus/data/dataset.h"

namespace nimbus::testing {

using Entries = std::vector<std::pair<uint32_t, double>>;  // (0-based column, value)

struct PlainRow {
  double label = 0;
  Entries entries;
  bool operator==(const PlainRow&) const = default;
};

inline std::ostream& operator<<(std::ostream& os, const PlainRow& row) {
  os << "{" << row.label << ":";
  for (const auto& [c, v] : row.entries) os << " " << c << "=" << v;
  return os << "}";
}

// Arrays behind a Dataset built by MakeDataset.
struct OwnedArrays {
  std::vector<int64_t> row_ptr{0};
  std::vector<uint32_t> col_idx;
  std::vector<double> values;
  std::vector<double> labels;
};

inline Dataset MakeDataset(const std::vector<PlainRow>& rows, int64_t cols, LabelEncoding encoding = {}) {
  auto owned = std::make_shared<OwnedArrays>();
  for (const PlainRow& row : rows) {
    for (const auto& [c, v] : row.entries) {
      owned->col_idx.push_back(c);
      owned->values.push_back(v);
    }
    owned->row_ptr.push_back(static_cast<int64_t>(owned->values.size()));
    owned->labels.push_back(row.label);
  }
  Dataset data;
  data.matrix.rows = static_cast<int64_t>(rows.size());
  data.matrix.cols = cols;
  data.matrix.row_ptr = owned->row_ptr.data();
  data.matrix.col_idx = owned->col_idx.data();
  data.matrix.values = owned->values.data();
  data.labels = owned->labels;
  data.encoding = encoding;
  data.storage = std::move(owned);
  return data;
}

inline std::vector<PlainRow> RowsOf(const Dataset& data) {
  std::vector<PlainRow> rows;
  const CsrView& m = data.matrix;
  for (int64_t r = 0; r < m.rows; ++r) {
    PlainRow row{data.labels[static_cast<std::size_t>(r)], {}};
    for (int64_t k = m.row_ptr[r]; k < m.row_ptr[r + 1]; ++k) row.entries.emplace_back(m.col_idx[k], m.Value(k));
    rows.push_back(std::move(row));
  }
  return rows;
}

// Random rows with labels +-1 and 0..max_entries entries each (some rows empty).
inline std::vector<PlainRow> RandomRows(int64_t count, uint32_t cols, int max_entries, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(-5.0, 5.0);
  std::vector<PlainRow> rows;
  for (int64_t r = 0; r < count; ++r) {
    PlainRow row;
    row.label = rng() % 2 == 0 ? 1.0 : -1.0;
    const int entries = static_cast<int>(rng() % static_cast<uint64_t>(max_entries + 1));
    std::vector<bool> used(cols, false);
    for (int e = 0; e < entries; ++e) used[rng() % cols] = true;
    for (uint32_t c = 0; c < cols; ++c) {
      if (used[c]) row.entries.emplace_back(c, value(rng));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace nimbus::testing
