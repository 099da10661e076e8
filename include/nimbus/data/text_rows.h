// A part of LIBSVM text read into rows, and what the parts tell of the whole. Whoever reads a
// part (a worker its own, split a part per thread) scans it as it goes: its rows, its distinct
// labels and their rows, its largest index and the features that occur. The master combines
// the parts' scans into the plan of the whole data set (PlanText: N, the labels' encoding, the
// columns renumbered to the features that occur), which each part's rows then take on
// (ApplyTextPlan), without any process ever holding more than its own part.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nimbus/core/status.h"
#include "nimbus/data/dataset.h"
#include "nimbus/data/feature_map.h"
#include "nimbus/data/libsvm_reader.h"
#include "nimbus/data/text_input.h"

namespace nimbus {

struct TextScan {
  int64_t rows = 0, nnz = 0;
  uint64_t max_index = 0;           // the largest feature index, 1-based as written; 0: no entries
  std::vector<double> labels;       // a classifier's: the distinct labels as written, ascending
  std::vector<int64_t> label_rows;  // the rows of each
  std::vector<uint32_t> features;   // with collect_features: those that occur, 0-based, ascending
  bool all_ones = true;             // every value is 1 (binary features)
  bool all_floats = true;           // every value is exactly a float
  uint64_t bytes_read = 0;          // from the store (compressed, for compressed files)
  double seconds = 0;
};

struct TextReadOptions {
  LibsvmReadOptions libsvm;
  bool collect_features = true;  // for a plan that may renumber the columns
  // The text parsed at a time: what a pass holds besides its output is a few times this.
  std::size_t block_bytes = std::size_t{1} << 20;
  // Where to keep the bytes read from the store so far, for another thread to report (or null).
  std::atomic<uint64_t>* bytes_so_far = nullptr;
};

// Reads `slice`'s rows into `rows`, a block at a time, and returns its scan. With `keep_rows`
// every row stays in `rows`; otherwise each block's rows go to `on_block` and are cleared (a
// pass in bounded memory). An error names the file and line.
Result<TextScan> ReadTextSlice(const std::vector<TextFile>& files, const TextSlice& slice,
                               const TextReadOptions& options, RowBlock& rows, bool keep_rows,
                               const std::function<Status(RowBlock&)>& on_block = {});

// The scan of rows already parsed (held in memory by the process that serves them): what
// ReadTextSlice returns for text with the same rows, bytes_read 0.
TextScan ScanRows(const RowBlock& rows, bool classification, bool collect_features);

// Slices read into one block of rows, in their order, each cut into up to `threads` parts that
// are read at once (SubdivideSlice: the same lines as the slice's), then put end to end.
struct SlicesRead {
  RowBlock rows;
  std::vector<TextScan> scans;      // each part's, in order: what PlanText takes
  std::vector<int64_t> slice_rows;  // each slice's rows
};
Result<SlicesRead> ReadSlices(const std::vector<TextFile>& files, const std::vector<TextSlice>& slices,
                              const TextReadOptions& options, int threads);

// The whole data set, from its parts' scans in order.
struct TextPlan {
  int64_t rows = 0, nnz = 0;
  int64_t source_cols = 0;  // the largest index
  LabelEncoding encoding;
  // Column k is feature (*features)[k] (renumbered: far fewer occur than the largest index);
  // null: column j is feature j.
  std::shared_ptr<const std::vector<uint32_t>> features;
  std::vector<int64_t> first_rows;              // each part's first row in the whole
  std::vector<std::vector<int64_t>> class_rows;  // a classifier's: each part's rows of each class
  bool all_ones = true, all_floats = true;       // of every part

  int64_t cols() const { return features ? static_cast<int64_t>(features->size()) : source_cols; }
  ColumnMap columns() const;
};

// Fails, naming `location`, where the parts hold no row, or a classifier's rows one label.
Result<TextPlan> PlanText(const std::vector<TextScan>& parts, const LibsvmReadOptions& options,
                          const std::string& location);

// What rows read from the text take on from the plan: the labels' encoding and, when the
// columns are renumbered, each feature's column (made once, shared by the threads that use it).
class TextPlanRows {
 public:
  TextPlanRows(const LabelEncoding& encoding, const std::vector<uint32_t>* features, int64_t source_cols);
  explicit TextPlanRows(const TextPlan& plan) : TextPlanRows(plan.encoding, plan.features.get(), plan.source_cols) {}
  // In place: labels encoded, columns renumbered. A feature beyond the plan's is an error.
  Status Apply(RowBlock& rows) const;

 private:
  LabelEncoding encoding_;
  int64_t source_cols_;
  std::optional<OccurringColumns> ranks_;
};

// A Dataset over rows that took the plan: `cols` columns, owning the rows (their unused
// reservations given back, their values held as `values` says: RowBlock::CompactValues).
Dataset DatasetOfRows(std::shared_ptr<RowBlock> rows, int64_t cols, const LabelEncoding& encoding,
                      CsrValues values = CsrValues::kDouble);
// How a scan's values can be held exactly: none where all are 1, floats where all are floats.
CsrValues CompactValuesOf(bool all_ones, bool all_floats);

}  // namespace nimbus
