#include "nimbus/problem/data_term.h"

#include <cassert>
#include <utility>

namespace nimbus {

DataTerm::DataTerm(const CsrView& matrix, Loss loss, bool intercept, int64_t classes, int64_t copies, bool multinomial)
    : matrix_(matrix),
      loss_(std::move(loss)),
      intercept_(intercept),
      classes_(classes),
      blocks_(classes * copies),
      multinomial_(multinomial),
      model_size_((static_cast<std::size_t>(matrix.cols) + (intercept ? 1 : 0)) * static_cast<std::size_t>(blocks_)) {}

DataTerm::DataTerm(const CsrView& matrix, std::span<const double> labels, Loss loss, bool intercept,
                   std::span<const double> weights)
    : DataTerm(matrix, std::move(loss), intercept, 1, 1, false) {
  labels_ = labels;
  weights_ = weights;
}

DataTerm DataTerm::ForProblem(const ProblemSpec& spec, const CsrView& matrix, std::span<const double> labels,
                              std::span<const double> sample_weights, std::span<const uint8_t> folds) {
  DataTerm term(matrix, spec.loss, spec.intercept, spec.classes, spec.copies, spec.multinomial);
  if (!spec.one_vs_rest() && spec.copies == 1) {
    // c_r = W_{class r} s_r: the loss of a row counts once, whatever its class.
    term.owned_weights_ = RowWeights(spec, labels, sample_weights);
    term.labels_ = labels;
    term.weights_ = term.owned_weights_;
    return term;
  }
  // A label and a weight per group of margins: per margin for one-vs-rest and binary copies,
  // per copy for the softmax (its C margins share the row's class).
  //   one-vs-rest  class c's problem labels its own rows +1 (weighing W_c s_r) and the others
  //                -1 (weighing s_r), as liblinear's -wi does
  //   otherwise    the row's label, weighing c_r = W_{class r} s_r
  // and in copy k a row held out in fold k weighs 0, the others copy_scales[k] times more.
  const auto copies = static_cast<std::size_t>(spec.copies);
  const std::size_t per_copy = spec.one_vs_rest() ? static_cast<std::size_t>(spec.classes) : 1;
  const std::size_t groups = copies * per_copy;
  const std::vector<double> row_weights = RowWeights(spec, labels, sample_weights);
  const bool weighted = !row_weights.empty() || copies > 1;
  term.owned_labels_.resize(labels.size() * groups);
  if (weighted) term.owned_weights_.resize(labels.size() * groups);
  for (std::size_t r = 0; r < labels.size(); ++r) {
    const double s = sample_weights.empty() ? 1.0 : sample_weights[r];
    for (std::size_t k = 0; k < copies; ++k) {
      const bool held_out = !folds.empty() && folds[r] == k;
      const double scale = held_out ? 0.0 : spec.copy_scales.empty() ? 1.0 : spec.copy_scales[k];
      for (std::size_t c = 0; c < per_copy; ++c) {
        const std::size_t g = (r * copies + k) * per_copy + c;
        const bool own = spec.one_vs_rest() && ClassIndex(labels[r]) == c;
        term.owned_labels_[g] = !spec.one_vs_rest() ? labels[r] : own ? 1.0 : -1.0;
        if (!weighted) continue;
        const double class_weight = own && !spec.class_weights.empty() ? spec.class_weights[c] : 1.0;
        term.owned_weights_[g] = scale * (!spec.one_vs_rest() ? (row_weights.empty() ? 1.0 : row_weights[r])
                                                              : s * class_weight);
      }
    }
  }
  term.labels_ = term.owned_labels_;
  term.weights_ = term.owned_weights_;
  return term;
}

void DataTerm::Margins(std::span<const double> x, std::span<double> margins) const {
  MultiplyRowsBlocks(matrix_, blocks_, x, intercept_, margins);
}

void DataTerm::MarginsOn(const CsrView& columns, std::span<const double> x, std::span<double> margins) const {
  assert(columns.rows == matrix_.rows);
  MultiplyRowsBlocks(columns, blocks_, x, intercept_, margins);
}

double DataTerm::LossSum(std::span<const double> margins) const {
  if (multinomial_) return SoftmaxLoss(labels_, margins, classes_, weights_);
  return SumLoss(loss_, labels_, margins, weights_);
}

void DataTerm::GroupLosses(std::span<const double> margins, std::span<double> losses) const {
  assert(losses.size() == labels_.size());
  const auto c_count = static_cast<std::size_t>(classes_);
  for (std::size_t g = 0; g < labels_.size(); ++g) {
    const std::span<const double> weight = weights_.empty() ? weights_ : weights_.subspan(g, 1);
    losses[g] = multinomial_ ? SoftmaxLoss(labels_.subspan(g, 1), margins.subspan(g * c_count, c_count), classes_, weight)
                             : (weights_.empty() ? 1.0 : weights_[g]) * LossValue(loss_, labels_[g], margins[g]);
  }
}

std::vector<double> DataTerm::ClassLossSums(std::span<const double> margins) const {
  assert(blocks_ > 1 && !multinomial_);
  const auto b_count = static_cast<std::size_t>(blocks_);
  std::vector<double> sums(b_count, 0.0);
  for (std::size_t k = 0; k < margins.size(); ++k) {
    sums[k % b_count] += (weights_.empty() ? 1.0 : weights_[k]) * LossValue(loss_, labels_[k], margins[k]);
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
  if (blocks_ > 1) {
    AddTransposeProductBlocks(matrix_, blocks_, first, diagonal.empty() ? std::span<const double>() : curvature->second,
                              intercept_, gradient, diagonal);
  } else if (diagonal.empty()) {
    AddTransposeProduct(matrix_, first, intercept_, gradient);
  } else {
    AddTransposeProductAndSquares(matrix_, first, curvature->second, intercept_, gradient, diagonal);
  }
}

void DataTerm::AddCurvatureProduct(const DataCurvature& curvature, std::span<const double> v,
                                   std::span<double> hv) const {
  AddCurvatureProductWith(matrix_, curvature, v, hv);
}

void DataTerm::AddCurvatureProductOn(const CsrView& columns, const DataCurvature& curvature,
                                     std::span<const double> v, std::span<double> hv) const {
  assert(columns.rows == matrix_.rows);
  AddCurvatureProductWith(columns, curvature, v, hv);
}

void DataTerm::AddCurvatureProductWith(const CsrView& matrix, const DataCurvature& curvature,
                                       std::span<const double> v, std::span<double> hv) const {
  if (blocks_ == 1) {
    AddNormalProduct(matrix, curvature.second, v, intercept_, hv);
    return;
  }
  const auto b_count = static_cast<std::size_t>(blocks_);
  if (!multinomial_) {
    AddNormalProductBlocks(matrix, blocks_, v, intercept_, hv, [&](int64_t r, std::span<double> t) {
      const double* d = curvature.second.data() + static_cast<std::size_t>(r) * b_count;
      for (std::size_t b = 0; b < b_count; ++b) t[b] *= d[b];
    });
    return;
  }
  // Per copy, (diag(p) - p p^T) t = p .* t - p (p . t), times scale c_r.
  const auto c_count = static_cast<std::size_t>(classes_);
  const std::size_t copies = b_count / c_count;
  AddNormalProductBlocks(matrix, blocks_, v, intercept_, hv, [&](int64_t r, std::span<double> t) {
    for (std::size_t k = 0; k < copies; ++k) {
      const std::size_t group = static_cast<std::size_t>(r) * copies + k;
      const double* p = curvature.probabilities.data() + group * c_count;
      double* tk = t.data() + k * c_count;
      double p_dot_t = 0;
      for (std::size_t c = 0; c < c_count; ++c) p_dot_t += p[c] * tk[c];
      const double scale = curvature.scale * (weights_.empty() ? 1.0 : weights_[group]);
      for (std::size_t c = 0; c < c_count; ++c) tk[c] = scale * p[c] * (tk[c] - p_dot_t);
    }
  });
}

double DataTerm::CurvatureTraceAtZero() const {
  if (blocks_ == 1) return CurvatureAtZero(loss_) * SumOfSquaredRowNorms(matrix_, intercept_, weights_);
  const auto b_count = static_cast<std::size_t>(blocks_);
  const auto c_count = static_cast<std::size_t>(classes_);
  // Each row's weights summed over its B margins (softmax: a weight per copy, for its C margins).
  std::vector<double> row_totals;
  if (!weights_.empty()) {
    const std::size_t groups = weights_.size() / static_cast<std::size_t>(matrix_.rows);
    const double margins_per_group = static_cast<double>(b_count / groups);
    row_totals.assign(static_cast<std::size_t>(matrix_.rows), 0.0);
    for (std::size_t r = 0; r < row_totals.size(); ++r) {
      for (std::size_t g = 0; g < groups; ++g) row_totals[r] += weights_[r * groups + g] * margins_per_group;
    }
  }
  const double norms = SumOfSquaredRowNorms(matrix_, intercept_, row_totals) *
                       (row_totals.empty() ? static_cast<double>(b_count) : 1.0);
  // At x = 0 every margin is 0: the binary loss'' there, or the softmax's p (1 - p) with p = 1/C.
  const double per_margin = multinomial_ ? (1.0 / static_cast<double>(c_count)) * (1.0 - 1.0 / static_cast<double>(c_count))
                                         : CurvatureAtZero(loss_);
  return per_margin * norms;
}

}  // namespace nimbus
