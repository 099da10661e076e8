#include "nimbus/problem/data_term.h"

#include <cassert>
#include <utility>

namespace nimbus {

DataTerm::DataTerm(const CsrView& matrix, Loss loss, bool intercept, int64_t classes, bool multinomial)
    : matrix_(matrix),
      loss_(std::move(loss)),
      intercept_(intercept),
      classes_(classes),
      multinomial_(multinomial),
      model_size_((static_cast<std::size_t>(matrix.cols) + (intercept ? 1 : 0)) * static_cast<std::size_t>(classes)) {}

DataTerm::DataTerm(const CsrView& matrix, std::span<const double> labels, Loss loss, bool intercept,
                   std::span<const double> weights)
    : DataTerm(matrix, std::move(loss), intercept, 1, false) {
  labels_ = labels;
  weights_ = weights;
}

DataTerm DataTerm::ForProblem(const ProblemSpec& spec, const CsrView& matrix, std::span<const double> labels,
                              std::span<const double> sample_weights) {
  DataTerm term(matrix, spec.loss, spec.intercept, spec.classes, spec.multinomial);
  if (!spec.one_vs_rest()) {
    // c_r = W_{class r} s_r: the loss of a row counts once, whatever its class.
    term.owned_weights_ = RowWeights(spec, labels, sample_weights);
    term.labels_ = labels;
    term.weights_ = term.owned_weights_;
    return term;
  }
  // One-vs-rest: class c's problem labels its own rows +1 (weighing W_c s_r) and the others
  // -1 (weighing s_r), as liblinear's -wi does.
  const auto c_count = static_cast<std::size_t>(spec.classes);
  const bool weighted = !spec.class_weights.empty() || !sample_weights.empty();
  term.owned_labels_.assign(labels.size() * c_count, -1.0);
  if (weighted) term.owned_weights_.assign(labels.size() * c_count, 1.0);
  for (std::size_t r = 0; r < labels.size(); ++r) {
    const std::size_t k = ClassIndex(labels[r]);
    term.owned_labels_[r * c_count + k] = 1.0;
    if (!weighted) continue;
    const double s = sample_weights.empty() ? 1.0 : sample_weights[r];
    for (std::size_t c = 0; c < c_count; ++c) term.owned_weights_[r * c_count + c] = s;
    if (!spec.class_weights.empty()) term.owned_weights_[r * c_count + k] *= spec.class_weights[k];
  }
  term.labels_ = term.owned_labels_;
  term.weights_ = term.owned_weights_;
  return term;
}

void DataTerm::Margins(std::span<const double> x, std::span<double> margins) const {
  MultiplyRowsBlocks(matrix_, classes_, x, intercept_, margins);
}

double DataTerm::LossSum(std::span<const double> margins) const {
  if (multinomial_) return SoftmaxLoss(labels_, margins, classes_, weights_);
  return SumLoss(loss_, labels_, margins, weights_);
}

std::vector<double> DataTerm::ClassLossSums(std::span<const double> margins) const {
  assert(classes_ > 1 && !multinomial_);
  const auto c_count = static_cast<std::size_t>(classes_);
  std::vector<double> sums(c_count, 0.0);
  for (std::size_t k = 0; k < margins.size(); ++k) {
    sums[k % c_count] += (weights_.empty() ? 1.0 : weights_[k]) * LossValue(loss_, labels_[k], margins[k]);
  }
  return sums;
}

double DataTerm::Derivatives(std::span<const double> margins, double scale, std::span<double> first,
                             DataCurvature* curvature) const {
  curvature->second.resize(margins.size());
  if (!multinomial_) {
    curvature->probabilities.clear();
    return LossDerivatives(loss_, labels_, margins, scale, first, curvature->second, weights_);
  }
  curvature->probabilities.resize(margins.size());
  const double sum = SoftmaxDerivatives(labels_, margins, classes_, scale, first, curvature->probabilities, weights_);
  // D_r = scale c_r (diag(p) - p p^T): its diagonal scale c_r p (1 - p).
  const auto c_count = static_cast<std::size_t>(classes_);
  curvature->scale = scale;
  for (std::size_t r = 0; r < labels_.size(); ++r) {
    const double row_scale = scale * (weights_.empty() ? 1.0 : weights_[r]);
    for (std::size_t c = 0; c < c_count; ++c) {
      const double p = curvature->probabilities[r * c_count + c];
      curvature->second[r * c_count + c] = row_scale * p * (1.0 - p);
    }
  }
  return sum;
}

void DataTerm::AddGradient(std::span<const double> first, const DataCurvature* curvature, std::span<double> gradient,
                           std::span<double> diagonal) const {
  assert(diagonal.empty() || curvature != nullptr);
  if (classes_ > 1) {
    AddTransposeProductBlocks(matrix_, classes_, first, diagonal.empty() ? std::span<const double>() : curvature->second,
                              intercept_, gradient, diagonal);
  } else if (diagonal.empty()) {
    AddTransposeProduct(matrix_, first, intercept_, gradient);
  } else {
    AddTransposeProductAndSquares(matrix_, first, curvature->second, intercept_, gradient, diagonal);
  }
}

void DataTerm::AddCurvatureProduct(const DataCurvature& curvature, std::span<const double> v,
                                   std::span<double> hv) const {
  if (classes_ == 1) {
    AddNormalProduct(matrix_, curvature.second, v, intercept_, hv);
    return;
  }
  const auto c_count = static_cast<std::size_t>(classes_);
  if (!multinomial_) {
    AddNormalProductBlocks(matrix_, classes_, v, intercept_, hv, [&](int64_t r, std::span<double> t) {
      const double* d = curvature.second.data() + static_cast<std::size_t>(r) * c_count;
      for (std::size_t c = 0; c < c_count; ++c) t[c] *= d[c];
    });
    return;
  }
  // (diag(p) - p p^T) t = p .* t - p (p . t), times scale c_r.
  AddNormalProductBlocks(matrix_, classes_, v, intercept_, hv, [&](int64_t r, std::span<double> t) {
    const double* p = curvature.probabilities.data() + static_cast<std::size_t>(r) * c_count;
    double p_dot_t = 0;
    for (std::size_t c = 0; c < c_count; ++c) p_dot_t += p[c] * t[c];
    const double scale = curvature.scale * (weights_.empty() ? 1.0 : weights_[static_cast<std::size_t>(r)]);
    for (std::size_t c = 0; c < c_count; ++c) t[c] = scale * p[c] * (t[c] - p_dot_t);
  });
}

double DataTerm::CurvatureTraceAtZero() const {
  if (classes_ == 1) return CurvatureAtZero(loss_) * SumOfSquaredRowNorms(matrix_, intercept_, weights_);
  const auto c_count = static_cast<std::size_t>(classes_);
  // Each row's weights summed over its C margins (softmax: one weight, C margins).
  std::vector<double> row_totals;
  if (!weights_.empty()) {
    row_totals.assign(static_cast<std::size_t>(matrix_.rows), 0.0);
    for (std::size_t r = 0; r < row_totals.size(); ++r) {
      if (multinomial_) {
        row_totals[r] = weights_[r] * static_cast<double>(c_count);
        continue;
      }
      for (std::size_t c = 0; c < c_count; ++c) row_totals[r] += weights_[r * c_count + c];
    }
  }
  const double norms = SumOfSquaredRowNorms(matrix_, intercept_, row_totals) *
                       (row_totals.empty() ? static_cast<double>(c_count) : 1.0);
  // At x = 0 every margin is 0: the binary loss'' there, or the softmax's p (1 - p) with p = 1/C.
  const double per_margin = multinomial_ ? (1.0 / static_cast<double>(c_count)) * (1.0 - 1.0 / static_cast<double>(c_count))
                                         : CurvatureAtZero(loss_);
  return per_margin * norms;
}

}  // namespace nimbus
