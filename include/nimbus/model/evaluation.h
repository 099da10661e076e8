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
  double auc = 0;       // two classes only
  double mean_squared_error = 0;
  double r_squared = 0;
  double objective = 0;  // F(model) on this data with the model's (or given) l1, l2, and weights
  // Multiclass: the classes' label values, and per class the precision and recall (NaN for a
  // class never predicted, or never present), and the confusion matrix: confusion[t][p] rows
  // of class t predicted as p.
  std::vector<double> class_values;
  std::vector<double> precision, recall;
  std::vector<std::vector<int64_t>> confusion;
  // One-vs-rest: each class's own binary problem's F (its rows +1, the others -1, with the
  // class's weight on its own rows; liblinear's -wi) at that class's weights. Their sum is
  // `objective`.
  std::vector<double> class_objectives;

  std::string Report() const;
  std::string ToJson() const;
};

// Decision values a . w_c (+ b_c) of every row, C per row (margins[r C + c]). The data's
// features are matched to the model's by their numbers in the data's source
// (Dataset::columns); features the model never saw weigh 0.
std::vector<double> DecisionValues(const Model& model, const Dataset& data);

// Each class's probability from a row's C decision values (two classes: one value, the +1
// class's probability): the softmax for a multinomial model, and for one-vs-rest the classes'
// logistic probabilities normalized to sum to 1 (liblinear's). Logistic models only.
std::vector<double> ClassProbabilities(const Model& model, std::span<const double> decision_values);

// The predicted class of a row from its decision values: the largest (two classes: its sign,
// as a label -1/+1; more: a class index).
double PredictedLabel(const Model& model, std::span<const double> decision_values);

// Area under the ROC curve of `scores` for labels in {-1, +1} (ties count one half).
double AreaUnderRoc(std::span<const double> scores, std::span<const double> labels);

// `class_weights`: each class's W in the objective F = (1/N) sum_r W_{class r} s_r loss_r +
// penalty, with s_r the data's own row weights (data.weights; empty: all 1). Empty: all 1.
Evaluation Evaluate(const Model& model, const Dataset& data, std::span<const double> class_weights = {});

}  // namespace nimbus
