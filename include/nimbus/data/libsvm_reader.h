// Reader for LIBSVM / SVMlight text: one example per line,
//
//     <label> <index>:<value> <index>:<value> ... [# comment]
//
// with 1-based, strictly ascending indices. Blank and comment-only lines are skipped; CRLF
// line ends and trailing blanks are accepted. Any other deviation is an error whose message
// starts with "FILE:LINE: ".
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "nimbus/core/pod_array.h"
#include "nimbus/core/status.h"
#include "nimbus/data/dataset.h"

namespace nimbus {

enum class LabelMode {
  kClassification,  // two distinct labels (the larger maps to +1), or more (class indices in
                    // ascending order of value; at most kMaxClasses)
  kRegression,      // labels are real-valued targets, kept as they are
};

struct LibsvmReadOptions {
  LabelMode label_mode = LabelMode::kClassification;
  // For prediction: labels must be the model's classes, mapped as the model maps them
  // (a test file may hold only some of them).
  std::optional<LabelEncoding> expected_labels;
  // Renumber the columns to the features that occur when far fewer occur than the largest
  // index (data/feature_map.h), keeping the map in Dataset::columns. Off: column j is the
  // file's feature j + 1, and vectors over the columns are sized by the largest index.
  bool renumber_columns = false;

  Status Validate() const;
};

// The largest feature index accepted (indices are stored as 32-bit, as in liblinear).
inline constexpr uint64_t kMaxFeatureIndex = 2147483647;

// Rows of LIBSVM text as CSR arrays that grow as lines are parsed (PodArray: the pages in use
// are what was written, and growing copies nothing).
struct RowBlock {
  PodArray<int64_t> row_ptr;   // rows + 1 offsets from 0
  PodArray<uint32_t> col_idx;  // 0-based: the file's index - 1
  PodArray<double> values;     // as parsed; CompactValues may hold them in values32, or in none
  PodArray<float> values32;
  CsrValues value_kind = CsrValues::kDouble;
  PodArray<double> labels;     // as written in the text (encoded later, once every label is known)

  int64_t rows() const { return static_cast<int64_t>(labels.size()); }
  int64_t nnz() const { return static_cast<int64_t>(col_idx.size()); }
  // The values in 4 bytes each (`kind` kFloat: every one is exactly a float) or in none
  // (kOnes: every one is 1), in place: no more memory than the doubles held at any time.
  void CompactValues(CsrValues kind);
  // No rows, the memory kept for the next block.
  void Clear();
  // `other`'s rows after these (both holding their values as doubles, as parsed).
  Status Append(const RowBlock& other);
  // The rows as a matrix of `cols` columns.
  CsrView View(int64_t cols) const;
  uint64_t MemoryBytes() const;
};

// Parses LIBSVM lines block by block (each block whole lines, in the text's order) into a
// RowBlock, checking every line, and keeps what a plan of the data needs from them all: the
// distinct labels and the largest feature index.
class LibsvmParser {
 public:
  // `where(line)` names a line in an error message ("FILE:LINE"); it is called on errors only.
  LibsvmParser(const LibsvmReadOptions& options, std::function<std::string(int64_t line)> where);
  // `first_line`: the number `where` takes for the block's first line.
  Status Parse(std::string_view lines, int64_t first_line, RowBlock& rows);

  uint64_t max_index() const { return max_index_; }  // 1-based, as in the text; 0: no entries yet
  const DistinctLabels& distinct_labels() const { return distinct_labels_; }
  int64_t last_line() const { return line_; }

 private:
  Status Error(const std::string& reason) const;
  Status ParseLabel(const char*& p, const char* end, RowBlock& rows);
  Status ParseLine(const char* p, const char* end, RowBlock& rows);

  LibsvmReadOptions options_;
  std::vector<double> known_labels_;  // the expected labels' values
  std::function<std::string(int64_t)> where_;
  int64_t line_ = 0;
  uint64_t max_index_ = 0;
  DistinctLabels distinct_labels_;
};

Result<Dataset> ReadLibsvmFile(const std::string& path, const LibsvmReadOptions& options = {});
// The labels' encoding the options and the text's distinct labels make: the expected one, a
// regression's, or the classes'.
LabelEncoding EncodingOf(const LibsvmReadOptions& options, const DistinctLabels& labels);
// Labelled data to score a model trained on data encoded as `labels`: a classifier's labels
// must be among its classes (mapped as they were), a regression's are real targets; the
// columns are renumbered to the features that occur (the model maps its features by number).
Result<Dataset> ReadLibsvmFileFor(const std::string& path, const LabelEncoding& labels);

}  // namespace nimbus
