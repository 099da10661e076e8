#include "nimbus/problem/problem.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "nimbus/core/vector_ops.h"
#include "nimbus/problem/data_term.h"

namespace nimbus {

double Regularizer::Value(std::span<const double> x, std::size_t regularized) const {
  const auto part = x.first(regularized);
  if (custom != nullptr) {
    double sum = 0;
    for (const double v : part) sum += custom->Value(v);
    return sum;
  }
  return l1 * Norm1(part) + 0.5 * l2 * SquaredNorm(part);
}

void Regularizer::AddGradient(std::span<const double> x, std::size_t regularized, std::span<double> out) const {
  if (custom != nullptr && !custom->smooth()) return;  // a prox only: no derivatives to add
  double first = 0, second = 0;
  for (std::size_t j = 0; j < regularized; ++j) {
    if (custom != nullptr) custom->Derivatives(x[j], &first, &second);
    out[j] += custom != nullptr ? first : l2 * x[j];
  }
}

void Regularizer::AddCurvature(std::span<const double> x, std::size_t regularized, std::span<double> diagonal) const {
  if (custom != nullptr && !custom->smooth()) return;  // a prox only: no derivatives to add
  double first = 0, second = 0;
  for (std::size_t j = 0; j < regularized; ++j) {
    if (custom != nullptr) custom->Derivatives(x[j], &first, &second);
    diagonal[j] += custom != nullptr ? second : l2;
  }
}

void Regularizer::AddCurvatureProduct(std::span<const double> x, std::span<const double> v, std::size_t regularized,
                                      std::span<double> out) const {
  if (custom != nullptr && !custom->smooth()) return;  // a prox only: no derivatives to add
  double first = 0, second = 0;
  for (std::size_t j = 0; j < regularized; ++j) {
    if (custom != nullptr) custom->Derivatives(x[j], &first, &second);
    out[j] += (custom != nullptr ? second : l2) * v[j];
  }
}

void Regularizer::Prox(double t, std::span<double> x, std::size_t regularized) const {
  if (custom != nullptr) {
    for (std::size_t j = 0; j < regularized; ++j) x[j] = custom->Prox(t, x[j]);
    return;
  }
  const double threshold = t * l1;
  const double shrink = 1.0 / (1.0 + t * l2);
  for (std::size_t j = 0; j < regularized; ++j) {
    const double v = x[j];
    const double magnitude = std::abs(v) - threshold;
    x[j] = magnitude > 0 ? std::copysign(magnitude * shrink, v) : 0.0;
  }
}

Status ProblemSpec::Validate() const {
  auto check = [](const char* name, double value) -> Status {
    if (!(value >= 0) || !std::isfinite(value)) {
      return InvalidArgument(std::string(name) + ": must be a finite number >= 0, got " + std::to_string(value));
    }
    return Status::Ok();
  };
  NIMBUS_RETURN_IF_ERROR(check("l1", regularizer.l1));
  NIMBUS_RETURN_IF_ERROR(check("l2", regularizer.l2));
  if (regularizer.custom != nullptr && (regularizer.l1 != 0 || regularizer.l2 != 0)) {
    return InvalidArgument("regularizer: the custom '" + regularizer.custom->name() + "' replaces l1 and l2 (give "
                           "neither, or fold them into it)");
  }
  if (rows < 1) return InvalidArgument("rows: the problem has no data rows");
  if (classes < 1) return InvalidArgument("classes: must be >= 1");
  if (classes > 1 && !IsClassification(loss)) return InvalidArgument("classes: a multiclass problem needs a classification loss");
  if (multinomial && (classes < 2 || loss.kind() != LossKind::kLogistic)) {
    return InvalidArgument("multinomial: the softmax loss is the logistic loss's, over two classes or more");
  }
  if (!class_weights.empty() && (static_cast<int64_t>(class_weights.size()) != class_count() || !IsClassification(loss))) {
    return InvalidArgument("class weights: one per class and a classification loss");
  }
  for (const double w : class_weights) NIMBUS_RETURN_IF_ERROR(check("class weight", w));
  if (cols < 0) return InvalidArgument("cols: must be >= 0");
  if (copies < 1 || copies > 1000) return InvalidArgument("copies: must be in [1, 1000]");
  if (!copy_scales.empty() && static_cast<int64_t>(copy_scales.size()) != copies) {
    return InvalidArgument("copy scales: one per copy");
  }
  for (const double w : copy_scales) NIMBUS_RETURN_IF_ERROR(check("copy scale", w));
  // The general form numbers the model's entries with 32 bits.
  if (model_size() > std::numeric_limits<uint32_t>::max()) {
    return InvalidArgument("the model would hold " + std::to_string(model_size()) + " weights (" +
                           std::to_string(classes) + " classes" +
                           (copies > 1 ? " x " + std::to_string(copies) + " copies" : "") + "), more than 2^32");
  }
  return Status::Ok();
}

double OptimalityResidual(const ProblemSpec& spec, std::span<const double> x, std::span<const double> g,
                          std::vector<double>& v) {
  const std::size_t regularized = spec.regularized_size();
  const Regularizer& r = spec.regularizer;
  v.resize(x.size());
  for (std::size_t j = 0; j < x.size(); ++j) {
    if (j >= regularized) {
      v[j] = g[j];
    } else if (HasRoughCustom(r)) {
      v[j] = x[j] - r.custom->Prox(1.0, x[j] - g[j]);
    } else {
      v[j] = MinimumNormSubgradient(x[j], g[j], r.l1);
    }
  }
  return Norm(v);
}

std::vector<uint32_t> EntryBlocks(const ProblemSpec& spec, std::span<const uint32_t> entries) {
  std::vector<uint32_t> blocks(entries.size());
  const auto b_count = static_cast<uint32_t>(spec.blocks());
  const uint32_t per_block = spec.one_vs_rest() ? 1 : static_cast<uint32_t>(spec.classes);
  for (std::size_t k = 0; k < entries.size(); ++k) blocks[k] = entries[k] % b_count / per_block;
  return blocks;
}

std::vector<uint32_t> EntryBlocks(const ProblemSpec& spec, std::size_t n) {
  std::vector<uint32_t> entries(n);
  std::iota(entries.begin(), entries.end(), 0u);
  return EntryBlocks(spec, entries);
}

std::vector<double> CopyOfModel(const ProblemSpec& spec, std::span<const double> x, int64_t copy) {
  const auto b_count = static_cast<std::size_t>(spec.blocks());
  const auto c_count = static_cast<std::size_t>(spec.classes);
  const std::size_t rows = static_cast<std::size_t>(spec.cols) + (spec.intercept ? 1 : 0);
  std::vector<double> one(rows * c_count);
  for (std::size_t j = 0; j < rows; ++j) {
    // The intercepts come after every feature's B entries, B of them too.
    const std::size_t from = j * b_count + static_cast<std::size_t>(copy) * c_count;
    for (std::size_t c = 0; c < c_count; ++c) one[j * c_count + c] = x[from + c];
  }
  return one;
}

std::vector<double> RowWeights(const ProblemSpec& spec, std::span<const double> labels,
                               std::span<const double> sample_weights) {
  if (spec.class_weights.empty() && sample_weights.empty()) return {};
  std::vector<double> weights(labels.size(), 1.0);
  for (std::size_t r = 0; r < labels.size(); ++r) {
    if (!spec.class_weights.empty()) weights[r] = spec.class_weights[ClassIndex(labels[r])];
    if (!sample_weights.empty()) weights[r] *= sample_weights[r];
  }
  return weights;
}

double EvaluateObjective(const ProblemSpec& spec, const CsrView& matrix, std::span<const double> labels,
                         std::span<const double> x, std::span<const double> sample_weights) {
  const DataTerm term = DataTerm::ForProblem(spec, matrix, labels, sample_weights);
  std::vector<double> margins(term.margin_count());
  term.Margins(x, margins);
  return term.LossSum(margins) / static_cast<double>(spec.rows) + spec.regularizer.Value(x, spec.regularized_size());
}

void SmoothGradient(const ProblemSpec& spec, const CsrView& matrix, std::span<const double> labels,
                    std::span<const double> x, std::span<double> gradient, std::span<const double> sample_weights) {
  const DataTerm term = DataTerm::ForProblem(spec, matrix, labels, sample_weights);
  std::vector<double> margins(term.margin_count()), first(term.margin_count());
  DataCurvature curvature;
  term.Margins(x, margins);
  term.Derivatives(margins, 1.0 / static_cast<double>(spec.rows), first, &curvature);
  Fill(gradient, 0.0);
  term.AddGradient(first, nullptr, gradient, {});
}

double OptimalityViolation(const ProblemSpec& spec, const CsrView& matrix, std::span<const double> labels,
                           std::span<const double> x, std::span<const double> sample_weights) {
  std::vector<double> g(x.size());
  SmoothGradient(spec, matrix, labels, x, g, sample_weights);
  const double l1 = spec.regularizer.l1;
  const double l2 = spec.regularizer.l2;
  double worst = 0;
  const std::size_t regularized = spec.regularized_size();
  for (std::size_t j = 0; j < regularized && spec.regularizer.custom != nullptr; ++j) {
    worst = std::max(worst, std::abs(x[j] - spec.regularizer.custom->Prox(1.0, x[j] - g[j])));
  }
  for (std::size_t j = 0; j < regularized && spec.regularizer.custom == nullptr; ++j) {
    worst = std::max(worst, std::abs(MinimumNormSubgradient(x[j], g[j] + l2 * x[j], l1)));
  }
  for (std::size_t j = regularized; j < x.size(); ++j) worst = std::max(worst, std::abs(g[j]));  // the intercepts
  return worst;
}

}  // namespace nimbus
