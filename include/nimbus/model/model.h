// Trained models on disk: nimbus's JSON format, and liblinear's text format (so that
// liblinear-predict reads nimbus models, and nimbus evaluates liblinear's).
#pragma once

#include <string>
#include <vector>

#include "nimbus/core/status.h"
#include "nimbus/data/dataset.h"
#include "nimbus/problem/problem.h"

namespace nimbus {

struct Model {
  Loss loss = Loss::kLogistic;
  Regularizer regularizer;
  bool intercept = false;
  int64_t cols = 0;
  LabelEncoding labels;
  std::vector<double> weights;  // cols entries, then the intercept if any
  std::string origin = "nimbus";  // "nimbus" or "liblinear"

  // The model's weights padded with zeros to `cols` features (a test file may have more).
  std::vector<double> WeightsFor(int64_t data_cols) const;
  ProblemSpec Spec(int64_t rows, int64_t data_cols) const;
};

enum class ModelFormat { kJson, kLiblinear };
Result<ModelFormat> ParseModelFormat(const std::string& name);

// Writes atomically: on any failure no file (or the old one) is left at `path`.
Status WriteModel(const Model& model, ModelFormat format, const std::string& path);
// Reads either format (detected from the first bytes).
Result<Model> ReadModel(const std::string& path);

std::string ModelToJson(const Model& model);
Result<std::string> ModelToLiblinear(const Model& model);

}  // namespace nimbus
