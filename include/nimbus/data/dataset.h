// A data set in memory: a sparse matrix of rows (examples) and their labels.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nimbus/core/csr.h"

namespace nimbus {

// The most distinct labels a classifier's data may hold (a multiclass model holds a weight per
// class and feature; more labels are likely a regression's targets).
inline constexpr int kMaxClasses = 1000;

// How the labels written in a file map to the solver's labels. Two classes: of the two
// distinct values in the file, the larger becomes +1 and the other -1. More classes: the
// values in ascending order (`classes`) become the class indices 0 .. C-1. A regression keeps
// the values.
struct LabelEncoding {
  bool classification = true;
  double negative = -1.0;  // two classes: the file's value that means -1
  double positive = 1.0;   // two classes: the file's value that means +1
  std::vector<double> classes;  // three classes or more: the file's value of each class index

  bool multiclass() const { return !classes.empty(); }
  // The classes' values in class order (two classes: -1's value, then +1's); empty for a regression.
  std::vector<double> ClassValues() const;
  // The encoded label of a file's value (which must be one of the classes).
  double Encode(double file_value) const;
  // The file's value of a prediction: its class index for a multiclass model, else its sign
  // (or the value itself, for a regression).
  double Decode(double solver_value) const;
  std::string Describe() const;  // "labels 1 (+1) and -1 (-1)", "10 classes 0 .. 9", or "real-valued targets"
};

// The distinct labels of a classifier's rows as they come (the LIBSVM reader's, the caller's
// arrays'), and the encoding they make.
class DistinctLabels {
 public:
  // False if `label` would be a distinct label beyond kMaxClasses (it is not added).
  bool Add(double label);
  std::size_t count() const { return values_.size(); }
  // Two labels: the larger +1. More: class indices in ascending order of value. One: the
  // other class is -1 (or +1 when the one is negative). None: the default encoding.
  LabelEncoding Encoding() const;

 private:
  std::vector<double> values_;  // in order of appearance
  double last_ = 0;             // the last one added or met (rows of a class often come together)
};

// Which of the source's features a data set's columns are. A source whose largest index is
// far above the number of features its rows use (hashed features: indices up to 2^31) has
// its columns renumbered to the features that occur, in ascending order, so that every vector
// over the model is sized by the data (data/feature_map.h).
struct ColumnMap {
  // Column k is feature (*features)[k] of the source (0-based, ascending as read; in the
  // column method's blocks' order in its shards, Permuted). Null: column j is feature j.
  std::shared_ptr<const std::vector<uint32_t>> features;
  int64_t source_cols = 0;  // the source's feature count (its largest index), when renumbered

  bool renumbered() const { return features != nullptr; }
  int64_t FeatureOf(int64_t column) const {
    return renumbered() ? static_cast<int64_t>((*features)[static_cast<std::size_t>(column)]) : column;
  }
  // The map of the columns moved, column j to position_of[j] (a permutation; empty: as they are).
  ColumnMap Permuted(std::span<const uint32_t> position_of) const;
};

struct Dataset {
  CsrView matrix;                  // rows x cols, 0-based column indices
  std::span<const double> labels;  // one per row, already encoded
  std::span<const double> weights;  // each row's own weight s_r >= 0; empty: every s_r = 1
  // Cross-validation: the fold each row is held out in (data/folds.h); empty: none.
  std::span<const uint8_t> folds;
  LabelEncoding encoding;
  ColumnMap columns;                    // the source's feature of each column
  std::shared_ptr<const void> storage;  // keeps the arrays behind the views alive
  // The arrays, writable, when they are this data set's alone (rows a worker read for itself,
  // and storage held nowhere else): its general form renumbers the columns in place, and L1
  // Newton's working set reorders each row's entries in place (RowPartition).
  CsrArraysToChange own;

  int64_t rows() const { return matrix.rows; }
  int64_t cols() const { return matrix.cols; }
  // The source's feature count: cols(), or more when the columns were renumbered.
  int64_t source_cols() const { return columns.renumbered() ? columns.source_cols : matrix.cols; }
  int64_t nnz() const { return matrix.nnz(); }
  // Takes `row_weights` as the rows' weights, kept alive beside the other arrays.
  void AdoptWeights(std::vector<double> row_weights);
  // The same for the rows' folds.
  void AdoptFolds(std::vector<uint8_t> row_folds);
  // Rows [begin, end) sharing this data set's storage.
  Dataset Rows(int64_t begin, int64_t end) const;
  // These rows (ascending), copied.
  Dataset SelectRows(std::span<const int64_t> rows) const;
  // Every row with its entries in columns at positions [begin, end) alone, copied: the column
  // method's shard of a block. Column j is at position position_of[j] (a permutation of the
  // columns: the blocks clustered) and its entries move there, each row ascending again and the
  // column map permuted alike; empty position_of: the columns keep their numbers.
  Dataset SelectColumns(uint32_t begin, uint32_t end, std::span<const uint32_t> position_of = {}) const;
  // Bytes of the CSR arrays, labels, weights and column map as held in memory.
  uint64_t MemoryBytes() const;
};

// Compact decimal text for a label value: "1", "-1", "0.5".
std::string FormatLabel(double value);

}  // namespace nimbus
