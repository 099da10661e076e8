#include "nimbus/model/evaluation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "nimbus/core/json_writer.h"

namespace nimbus {

std::vector<double> DecisionValues(const Model& model, const Dataset& data) {
  const std::vector<double> w = model.ColumnWeights(data);
  std::vector<double> scores(static_cast<std::size_t>(data.rows()));
  MultiplyRows(data.matrix, w, model.intercept, scores);
  return scores;
}

double AreaUnderRoc(std::span<const double> scores, std::span<const double> labels) {
  std::vector<std::size_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return scores[a] < scores[b]; });
  // Mann-Whitney: the positives' rank sum, with tied scores sharing their mean rank.
  double positive_rank_sum = 0;
  double positives = 0;
  std::size_t i = 0;
  while (i < order.size()) {
    std::size_t j = i;
    while (j < order.size() && scores[order[j]] == scores[order[i]]) ++j;
    const double mean_rank = 0.5 * static_cast<double>(i + 1 + j);  // ranks i+1 .. j
    for (std::size_t k = i; k < j; ++k) {
      if (labels[order[k]] > 0) {
        positive_rank_sum += mean_rank;
        positives += 1;
      }
    }
    i = j;
  }
  const double negatives = static_cast<double>(scores.size()) - positives;
  if (positives == 0 || negatives == 0) return std::nan("");
  return (positive_rank_sum - positives * (positives + 1) / 2) / (positives * negatives);
}

Evaluation Evaluate(const Model& model, const Dataset& data, std::span<const double> row_weights) {
  Evaluation e;
  e.rows = data.rows();
  e.classification = IsClassification(model.loss);
  const std::vector<double> scores = DecisionValues(model, data);
  const double n = static_cast<double>(data.rows());
  if (e.classification) {
    double correct = 0, log_loss = 0;
    for (std::size_t r = 0; r < scores.size(); ++r) {
      const double y = data.labels[r];
      correct += (scores[r] > 0 ? 1.0 : -1.0) == y ? 1 : 0;
      log_loss += LogOnePlusExpMinus(y * scores[r]);
    }
    e.accuracy = correct / n;
    e.log_loss = model.loss == Loss::kLogistic ? log_loss / n : std::nan("");
    e.auc = AreaUnderRoc(scores, data.labels);
  } else {
    double squared_error = 0, mean = 0, variance = 0;
    for (double y : data.labels) mean += y / n;
    for (std::size_t r = 0; r < scores.size(); ++r) {
      squared_error += (scores[r] - data.labels[r]) * (scores[r] - data.labels[r]);
      variance += (data.labels[r] - mean) * (data.labels[r] - mean);
    }
    e.mean_squared_error = squared_error / n;
    e.r_squared = variance > 0 ? 1.0 - squared_error / variance : std::nan("");
  }
  // F = (1/N) sum_r c_r loss(y_r, score_r) + the penalty on every weight the model holds (also
  // those of features this data lacks).
  e.objective = SumLoss(model.loss, data.labels, scores, row_weights) / n + model.Penalty();
  return e;
}

std::string Evaluation::Report() const {
  char text[512];
  if (classification) {
    std::snprintf(text, sizeof text, "rows %lld\naccuracy %.6f\nlog_loss %.8g\nauc %.6f\nobjective %.12g\n",
                  static_cast<long long>(rows), accuracy, log_loss, auc, objective);
  } else {
    std::snprintf(text, sizeof text, "rows %lld\nmse %.8g\nr2 %.6f\nobjective %.12g\n", static_cast<long long>(rows),
                  mean_squared_error, r_squared, objective);
  }
  return text;
}

std::string Evaluation::ToJson() const {
  JsonWriter json;
  json.BeginObject().Field("rows", rows);
  if (classification) {
    json.Field("accuracy", accuracy).Field("log_loss", log_loss).Field("auc", auc);
  } else {
    json.Field("mse", mean_squared_error).Field("r2", r_squared);
  }
  return json.Field("objective", objective).EndObject().Take();
}

}  // namespace nimbus
