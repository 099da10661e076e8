// Quality of a model on labelled data: accuracy, log loss and AUC for classifiers, mean
// squared error and R^2 for regression, and the training objective F.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "nimbus/model/model.h"
#include "nimbus/data/dataset.h"

namespace nimbus {

struct Evaluation {
  int64_t rows = 0;
  bool classification = true;
  double accuracy = 0;
  double log_loss = 0;  // logistic models only (others have no probabilities)
  double auc = 0;
  double mean_squared_error = 0;
  double r_squared = 0;
  double objective = 0;  // F(model) on this data with the model's (or given) l1, l2, and row weights

  std::string Report() const;
  std::string ToJson() const;
};

// Decision values a . w (+ b) of every row. The data's features are matched to the model's by
// their numbers in the data's source (Dataset::columns); features the model never saw weigh 0.
std::vector<double> DecisionValues(const Model& model, const Dataset& data);

// Area under the ROC curve of `scores` for labels in {-1, +1} (ties count one half).
double AreaUnderRoc(std::span<const double> scores, std::span<const double> labels);

// `row_weights`: each row's c_r in the objective F = (1/N) sum_r c_r loss_r + penalty (empty:
// all 1; problem.h's RowWeights makes them from class and sample weights).
Evaluation Evaluate(const Model& model, const Dataset& data, std::span<const double> row_weights = {});

}  // namespace nimbus
