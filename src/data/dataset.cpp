#include "nimbus/data/dataset.h"

#include <cmath>

#include <charconv>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <utility>

namespace nimbus {

std::string FormatLabel(double value) {
  // A whole number as liblinear writes its labels ("%d": 10, not 1e+01); any other value in
  // the shortest text that reads back to it.
  if (value == std::trunc(value) && std::abs(value) < 0x1p53) return std::to_string(static_cast<int64_t>(value));
  char text[32];
  const std::to_chars_result written = std::to_chars(text, text + sizeof text, value);
  return std::string(text, written.ptr);
}

std::vector<double> LabelEncoding::ClassValues() const {
  if (!classification) return {};
  if (multiclass()) return classes;
  return {negative, positive};
}

double LabelEncoding::Encode(double file_value) const {
  if (!classification) return file_value;
  if (!multiclass()) return file_value == positive ? 1.0 : -1.0;
  const auto at = std::lower_bound(classes.begin(), classes.end(), file_value);
  return static_cast<double>(at - classes.begin());
}

double LabelEncoding::Decode(double solver_value) const {
  if (!classification) return solver_value;
  if (!multiclass()) return solver_value > 0 ? positive : negative;
  const auto index = static_cast<std::size_t>(std::clamp<double>(solver_value, 0, static_cast<double>(classes.size() - 1)));
  return classes[index];
}

std::string LabelEncoding::Describe() const {
  if (!classification) return "real-valued targets";
  if (multiclass()) {
    return std::to_string(classes.size()) + " classes " + FormatLabel(classes.front()) + " .. " +
           FormatLabel(classes.back());
  }
  return "labels " + FormatLabel(positive) + " (+1) and " + FormatLabel(negative) + " (-1)";
}

bool DistinctLabels::Add(double label) {
  if (label == last_ && !values_.empty()) return true;
  last_ = label;
  if (std::find(values_.begin(), values_.end(), label) != values_.end()) return true;
  if (values_.size() == static_cast<std::size_t>(kMaxClasses)) return false;
  values_.push_back(label);
  return true;
}

LabelEncoding DistinctLabels::Encoding() const {
  LabelEncoding encoding;
  std::vector<double> values = values_;
  std::sort(values.begin(), values.end());
  if (values.size() > 2) {
    encoding.classes = std::move(values);
  } else if (values.size() == 2) {
    encoding.negative = values[0];
    encoding.positive = values[1];
  } else if (values.size() == 1) {
    encoding.negative = values[0] > 0 ? -1.0 : values[0];
    encoding.positive = values[0] > 0 ? values[0] : 1.0;
  }
  return encoding;
}

void Dataset::AdoptWeights(std::vector<double> row_weights) {
  auto owned = std::make_shared<const std::vector<double>>(std::move(row_weights));
  weights = *owned;
  storage = std::make_shared<const std::pair<std::shared_ptr<const void>, std::shared_ptr<const void>>>(
      std::move(storage), std::move(owned));
}

void Dataset::AdoptFolds(std::vector<uint8_t> row_folds) {
  auto owned = std::make_shared<const std::vector<uint8_t>>(std::move(row_folds));
  folds = *owned;
  storage = std::make_shared<const std::pair<std::shared_ptr<const void>, std::shared_ptr<const void>>>(
      std::move(storage), std::move(owned));
}

Dataset Dataset::SelectRows(std::span<const int64_t> rows) const {
  struct Arrays {
    std::vector<int64_t> row_ptr{0};
    std::vector<uint32_t> col_idx;
    std::vector<double> values, labels, weights;
    std::vector<uint8_t> folds;
  };
  auto arrays = std::make_shared<Arrays>();
  // Sized once: grown entry by entry, the copies of the arrays as they doubled took longer than
  // the selection itself (a fold of Fashion-MNIST's 19 million entries).
  int64_t entries = 0;
  for (const int64_t r : rows) entries += matrix.row_ptr[r + 1] - matrix.row_ptr[r];
  arrays->row_ptr.reserve(rows.size() + 1);
  arrays->col_idx.reserve(static_cast<std::size_t>(entries));
  arrays->values.reserve(static_cast<std::size_t>(entries));
  arrays->labels.reserve(rows.size());
  if (!weights.empty()) arrays->weights.reserve(rows.size());
  if (!folds.empty()) arrays->folds.reserve(rows.size());
  for (const int64_t r : rows) {
    for (int64_t k = matrix.row_ptr[r]; k < matrix.row_ptr[r + 1]; ++k) {
      arrays->col_idx.push_back(matrix.col_idx[k]);
      arrays->values.push_back(matrix.Value(k));
    }
    arrays->row_ptr.push_back(static_cast<int64_t>(arrays->col_idx.size()));
    arrays->labels.push_back(labels[static_cast<std::size_t>(r)]);
    if (!weights.empty()) arrays->weights.push_back(weights[static_cast<std::size_t>(r)]);
    if (!folds.empty()) arrays->folds.push_back(folds[static_cast<std::size_t>(r)]);
  }
  Dataset part;
  part.matrix = {static_cast<int64_t>(rows.size()), matrix.cols, arrays->row_ptr.data(), arrays->col_idx.data(),
                 arrays->values.data()};
  part.labels = arrays->labels;
  part.weights = arrays->weights;
  part.folds = arrays->folds;
  part.encoding = encoding;
  part.columns = columns;
  part.storage = std::move(arrays);
  return part;
}

namespace {

// A matrix's arrays, built row by row.
struct CsrArrays {
  std::vector<int64_t> row_ptr{0};
  std::vector<uint32_t> col_idx;
  std::vector<double> values;
};

// `data`'s rows (labels, weights and folds as they are) with `arrays` as their entries, every
// column kept; both kept alive with the copy.
Dataset WithMatrix(const Dataset& data, std::shared_ptr<CsrArrays> arrays) {
  Dataset copy = data;
  copy.matrix = {data.rows(), data.matrix.cols, arrays->row_ptr.data(), arrays->col_idx.data(), arrays->values.data()};
  copy.own = {};
  copy.storage = std::make_shared<std::pair<std::shared_ptr<CsrArrays>, std::shared_ptr<const void>>>(
      std::move(arrays), data.storage);
  return copy;
}

}  // namespace

Dataset Dataset::SelectColumns(uint32_t begin, uint32_t end, std::span<const uint32_t> position_of) const {
  const auto position = [&](uint32_t column) { return position_of.empty() ? column : position_of[column]; };
  auto arrays = std::make_shared<CsrArrays>();
  arrays->row_ptr.reserve(static_cast<std::size_t>(rows()) + 1);
  std::vector<std::pair<uint32_t, double>> row;
  for (int64_t r = 0; r < rows(); ++r) {
    row.clear();
    for (int64_t k = matrix.row_ptr[r]; k < matrix.row_ptr[r + 1]; ++k) {
      const uint32_t at = position(matrix.col_idx[k]);
      if (at >= begin && at < end) row.emplace_back(at, matrix.Value(k));
    }
    if (!position_of.empty()) std::sort(row.begin(), row.end());
    for (const auto& [column, value] : row) {
      arrays->col_idx.push_back(column);
      arrays->values.push_back(value);
    }
    arrays->row_ptr.push_back(static_cast<int64_t>(arrays->col_idx.size()));
  }
  Dataset selected = WithMatrix(*this, std::move(arrays));
  selected.columns = columns.Permuted(position_of);
  return selected;
}

ColumnMap ColumnMap::Permuted(std::span<const uint32_t> position_of) const {
  if (!renumbered() || position_of.empty()) return *this;
  auto moved = std::make_shared<std::vector<uint32_t>>(features->size());
  for (std::size_t j = 0; j < moved->size(); ++j) (*moved)[position_of[j]] = (*features)[j];
  return {std::move(moved), source_cols};
}

Dataset Dataset::Rows(int64_t begin, int64_t end) const {
  Dataset part = *this;
  part.own = {};  // shared with this data set
  part.matrix = matrix.RowRange(begin, end);
  part.labels = labels.subspan(static_cast<std::size_t>(begin), static_cast<std::size_t>(end - begin));
  if (!weights.empty()) part.weights = weights.subspan(static_cast<std::size_t>(begin), static_cast<std::size_t>(end - begin));
  if (!folds.empty()) part.folds = folds.subspan(static_cast<std::size_t>(begin), static_cast<std::size_t>(end - begin));
  return part;
}

uint64_t Dataset::MemoryBytes() const {
  const uint64_t map = columns.renumbered() ? columns.features->size() * sizeof(uint32_t) : 0;
  return static_cast<uint64_t>(nnz()) * sizeof(uint32_t) + matrix.ValueBytes(nnz()) +
         static_cast<uint64_t>(rows() + 1) * sizeof(int64_t) + static_cast<uint64_t>(rows()) * sizeof(double) + weights.size() * sizeof(double) + folds.size() + map;
}

}  // namespace nimbus
