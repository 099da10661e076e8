// Quality of a model on labelled data: accuracy, log loss and AUC for classifiers, mean
// squared error and R^2 for regression, and the training objective F.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nimbus/model/model.h"
#include "nimbus/data/dataset.h"
#include "nimbus/model/partial_evaluation.h"

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
// The same for a model of `classes` decision values per row, a softmax one or not.
std::vector<double> ClassProbabilities(int64_t classes, bool multinomial, std::span<const double> decision_values);

// The predicted class of a row from its decision values: the largest (two classes: its sign,
// as a label -1/+1; more: a class index).
double PredictedLabel(const Model& model, std::span<const double> decision_values);

// Area under the ROC curve of `scores` for labels in {-1, +1} (ties count one half).
double AreaUnderRoc(std::span<const double> scores, std::span<const double> labels);

// Decision values of rows as text numbers them, by their source's features (before any
// renumbering): each entry's weight is looked up by its feature, so that nothing is sized by
// the feature space and any block of rows can be scored as it is read.
class RowScorer {
 public:
  explicit RowScorer(const Model& model);
  // C values per row of `rows`, whose column j is the source's feature j.
  void Score(const CsrView& rows, std::vector<double>& scores) const;

 private:
  const Model& model_;
  std::shared_ptr<const class OccurringColumns> held_;  // the model's features, when it holds some only
};

// Evaluate's figures over rows that come a block at a time, in memory that does not grow with
// them: sums and counts, and for the AUC (exact, as Evaluate's) the scores kept to a budget,
// past it sorted into runs on disk that are merged at the end.
class StreamingEvaluation {
 public:
  // `class_weights` as Evaluate's; the AUC keeps `auc_budget` scores in memory (16 bytes
  // each) before it spills them to `scratch_directory` (empty: $TMPDIR).
  StreamingEvaluation(const Model& model, std::vector<double> class_weights,
                      std::size_t auc_budget = std::size_t{1} << 19, std::string scratch_directory = "");
  ~StreamingEvaluation();
  StreamingEvaluation(const StreamingEvaluation&) = delete;
  StreamingEvaluation& operator=(const StreamingEvaluation&) = delete;
  // A block: rows numbered by the source's features, labels encoded as the model's, the rows'
  // own weights (empty: 1).
  Status Add(const CsrView& rows, std::span<const double> labels, std::span<const double> weights);
  Result<Evaluation> Finish();

 private:
  class ScoreRuns;
  const Model& model_;
  std::vector<double> class_weights_;
  RowScorer scorer_;
  std::unique_ptr<ScoreRuns> auc_;
  std::vector<double> scores_;
  EvaluationSums sums_;
};

// `class_weights`: each class's W in the objective F = (1/N) sum_r W_{class r} s_r loss_r +
// penalty, with s_r the data's own row weights (data.weights; empty: all 1). Empty: all 1.
Evaluation Evaluate(const Model& model, const Dataset& data, std::span<const double> class_weights = {});

}  // namespace nimbus
