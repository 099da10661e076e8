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
  int64_t cols = 0;  // the features of the data it was trained on (its largest index)
  LabelEncoding labels;
  // C: the weight vectors, one per class (problem.h: ProblemSpec::classes); 1 for a regression
  // or a two-class model of one vector. `multinomial`: its classes' probabilities are the
  // softmax of the decision values, not one-vs-rest's.
  int64_t classes = 1;
  bool multinomial = false;
  // When the model holds fewer features than cols (trained on data renumbered to the features
  // that occur, or read from a file listing few): weights[k] is feature features[k] (0-based,
  // ascending), and every other feature's weight is 0. Empty: weights[j] is feature j, j < cols.
  std::vector<uint32_t> features;
  // C per feature held (feature k's weight in class c at k C + c), then the C intercepts if any.
  std::vector<double> weights;
  std::string origin = "nimbus";  // "nimbus" or "liblinear"

  // The number of feature weights held: features.size(), or cols.
  int64_t held() const { return features.empty() ? cols : static_cast<int64_t>(features.size()); }
  // The weight of a feature (0-based) in a class: 0 for one the model does not hold.
  double Weight(int64_t feature, int64_t of_class = 0) const;
  double bias(int64_t of_class = 0) const {
    return intercept ? weights[static_cast<std::size_t>(held() * classes + of_class)] : 0.0;
  }
  // The weights of every column of `data` (its feature's: data.columns maps columns to the
  // data's features, and features the model never saw get 0), C per column, then the
  // intercepts if any. Linear in the data's columns and the model's features; nothing is
  // sized by the feature space.
  std::vector<double> ColumnWeights(const Dataset& data) const;
  // The same for `column_count` columns that `columns` maps to features, with C intercepts at
  // the end if `with_intercept` (the model's own, or 0 where it has none).
  std::vector<double> ColumnWeights(const ColumnMap& columns, int64_t column_count, bool with_intercept) const;
  // l1 ||w||_1 + (l2/2) ||w||^2 over every feature weight held (the intercept is not penalized).
  double Penalty() const { return regularizer.Value(weights, static_cast<std::size_t>(held() * classes)); }
  // Dense: every feature's weights up to max(cols, data_cols), then the intercepts. For small
  // feature spaces (a vector of that length): ColumnWeights when they may be large.
  std::vector<double> WeightsFor(int64_t data_cols) const;
  ProblemSpec Spec(int64_t rows, int64_t data_cols) const;
};

enum class ModelFormat { kJson, kLiblinear };

// liblinear's model files are dense, one line per feature, and liblinear-predict holds a
// double per feature: past 2^27 features (1 GiB in liblinear-predict, a file of at least
// 400 MB) a model is refused in that format and written only as JSON, which lists the
// nonzero weights alone.
inline constexpr int64_t kMaxLiblinearFeatures = int64_t{1} << 27;
// An error naming the size when a model of `cols` features cannot be written for liblinear.
Status CheckLiblinearSize(int64_t cols);
Result<ModelFormat> ParseModelFormat(const std::string& name);

// Writes atomically: on any failure no file (or the old one) is left at `path`.
Status WriteModel(const Model& model, ModelFormat format, const std::string& path);
// Reads either format (detected from the first bytes). A JSON model that lists fewer than
// half its features is held as those features alone (see Model::features); old files read
// as they always did.
Result<Model> ReadModel(const std::string& path);

std::string ModelToJson(const Model& model);
Result<std::string> ModelToLiblinear(const Model& model);

}  // namespace nimbus
