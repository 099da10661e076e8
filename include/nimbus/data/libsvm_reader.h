// Reader for LIBSVM / SVMlight text: one example per line,
//
//     <label> <index>:<value> <index>:<value> ... [# comment]
//
// with 1-based, strictly ascending indices. Blank and comment-only lines are skipped; CRLF
// line ends and trailing blanks are accepted. Any other deviation is an error whose message
// starts with "FILE:LINE: ".
#pragma once

#include <optional>
#include <string>

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

Result<Dataset> ReadLibsvmFile(const std::string& path, const LibsvmReadOptions& options = {});
// Labelled data to score a model trained on data encoded as `labels`: a classifier's labels
// must be among its classes (mapped as they were), a regression's are real targets; the
// columns are renumbered to the features that occur (the model maps its features by number).
Result<Dataset> ReadLibsvmFileFor(const std::string& path, const LabelEncoding& labels);

}  // namespace nimbus
