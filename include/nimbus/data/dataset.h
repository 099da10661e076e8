// A data set in memory: a sparse matrix of rows (examples) and their labels.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "nimbus/core/csr.h"

namespace nimbus {

// How the labels written in a file map to the solver's labels. A classifier sees -1/+1: of
// the two distinct values in the file, the larger becomes +1. A regression keeps the values.
struct LabelEncoding {
  bool binary = true;
  double negative = -1.0;  // the file's value that means -1
  double positive = 1.0;   // the file's value that means +1

  double Encode(double file_value) const { return !binary ? file_value : (file_value == positive ? 1.0 : -1.0); }
  double Decode(double solver_value) const { return !binary ? solver_value : (solver_value > 0 ? positive : negative); }
  std::string Describe() const;  // "labels 1 (+1) and -1 (-1)" or "real-valued targets"
};

struct Dataset {
  CsrView matrix;                  // rows x cols, 0-based column indices
  std::span<const double> labels;  // one per row, already encoded
  LabelEncoding encoding;
  std::shared_ptr<const void> storage;  // keeps the arrays behind the views alive

  int64_t rows() const { return matrix.rows; }
  int64_t cols() const { return matrix.cols; }
  int64_t nnz() const { return matrix.nnz(); }
  // Rows [begin, end) sharing this data set's storage.
  Dataset Rows(int64_t begin, int64_t end) const;
  // Bytes of the CSR arrays and labels as held in memory.
  uint64_t MemoryBytes() const;
};

// Compact decimal text for a label value: "1", "-1", "0.5".
std::string FormatLabel(double value);

}  // namespace nimbus
