// Synthetic sparse data with a planted sparse model, reproducible from a seed.
//
// Each row draws `nnz_per_row` distinct features (uniformly, or by a power law), gives them values uniform in
// (0, 1] and scales the row to unit length (as tf-idf text rows are). A planted model w*
// has `planted_nonzeros` Gaussian weights, scaled so that margins a.w* have a standard
// deviation of about `margin_scale`. Classification labels are +1 with probability
// sigmoid(a.w*); regression targets are a.w* plus Gaussian noise of `noise` std.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nimbus/core/status.h"

namespace nimbus {

enum class SyntheticTask { kClassification, kRegression };

struct SyntheticOptions {
  int64_t rows = 1000;
  int64_t cols = 100;
  int64_t nnz_per_row = 10;
  uint64_t seed = 1;
  int64_t planted_nonzeros = 0;  // 0: a tenth of the columns (at least 1)
  double margin_scale = 2.0;
  double noise = 0.1;
  // Features drawn with probability proportional to j^-power_law (j = 1..cols, Zipf, as the
  // words of text are); 0 draws them uniformly.
  double power_law = 0;
  SyntheticTask task = SyntheticTask::kClassification;

  Status Validate() const;
};

struct SyntheticSummary {
  int64_t rows = 0;
  int64_t nnz = 0;
  int64_t positives = 0;
  std::vector<std::pair<int64_t, double>> planted;  // (1-based feature, weight)
};

// Writes the data set to `path` in LIBSVM format (atomically).
Result<SyntheticSummary> WriteSyntheticLibsvm(const SyntheticOptions& options, const std::string& path);

}  // namespace nimbus
