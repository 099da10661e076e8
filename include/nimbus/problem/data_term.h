// The data term of rows of a problem, sum_r c_r loss_r(x), and its derivatives, for models of
// one weight per feature and for multiclass ones (ProblemSpec::classes C > 1, one-vs-rest or
// multinomial). Everything that evaluates the loss on data goes through it: the workers'
// x-updates and Newton derivatives, the objective and gradient on whole data sets.
//
// Each row has C margins m_rc = a_r . x_c (+ b_c), kept row-major (margins[r C + c]); with
// cross-validation's copies (ProblemSpec::copies), C per copy, B = copies x C in all. Its
// loss's Hessian in those margins, D_r, is diagonal for one-vs-rest (each class's binary
// loss'' on its own margin) and diag(p) - p p^T for the softmax (p the row's probabilities);
// the data term's Hessian is A^T D A over the blocks.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "nimbus/core/csr.h"
#include "nimbus/problem/loss.h"
#include "nimbus/problem/problem.h"

namespace nimbus {

// The curvature at a point: what Hessian-vector products and the Hessian's diagonal need.
struct DataCurvature {
  std::vector<double> second;         // the diagonal of each D_r, times scale c_r (C per row)
  std::vector<double> probabilities;  // multinomial: the softmax p_rc
  double scale = 1;                   // multinomial: the scale the derivatives were taken at
};

class DataTerm {
 public:
  // One weight per feature: `labels` as the loss sees them (-1/+1, or targets), `weights` the
  // rows' c_r (empty: all 1). The spans must outlive this object.
  DataTerm(const CsrView& matrix, std::span<const double> labels, Loss loss, bool intercept,
           std::span<const double> weights = {});
  // The rows of a problem: its loss, classes, copies, intercept and class weights, with the
  // rows' own `sample_weights` (empty: all 1) and, with copies, the fold each row is held out
  // in (`folds`; empty: none). For one-vs-rest it holds every class's -1/+1 labels and, when
  // some row or class is weighted, their weights (C per row), in every copy.
  static DataTerm ForProblem(const ProblemSpec& spec, const CsrView& matrix, std::span<const double> labels,
                             std::span<const double> sample_weights, std::span<const uint8_t> folds = {});
  // Moves only: the spans may view its own vectors (moving a vector keeps its buffer). A
  // worker's x-update and Newton derivatives share one (std::shared_ptr).
  DataTerm(DataTerm&&) = default;
  DataTerm& operator=(DataTerm&&) = default;
  DataTerm(const DataTerm&) = delete;
  DataTerm& operator=(const DataTerm&) = delete;

  int64_t classes() const { return classes_; }
  int64_t blocks() const { return blocks_; }  // margins per row: C per copy
  std::size_t model_size() const { return model_size_; }
  std::size_t margin_count() const { return static_cast<std::size_t>(matrix_.rows) * static_cast<std::size_t>(blocks_); }

  // margins = the C margins of every row at x: one pass over the data.
  void Margins(std::span<const double> x, std::span<double> margins) const;
  // sum_r c_r loss_r at these margins.
  double LossSum(std::span<const double> margins) const;
  // The same sum's terms, each group's c loss: per margin (one weight per feature, one-vs-rest,
  // binary copies), or per row and copy for the softmax. `losses` holds a term per group.
  void GroupLosses(std::span<const double> margins, std::span<double> losses) const;
  std::size_t group_count() const { return labels_.size(); }
  // One-vs-rest: each class's own binary problem's sum (its rows +1 weighing W_c s_r, the
  // others -1 weighing s_r) at these margins; they add up to LossSum.
  std::vector<double> ClassLossSums(std::span<const double> margins) const;
  // The same sum; first = scale c_r dloss_r/dm per margin, and the curvature there.
  double Derivatives(std::span<const double> margins, double scale, std::span<double> first,
                     DataCurvature* curvature) const;
  // gradient += A^T first and, unless `diagonal` is empty, diagonal += the Hessian's diagonal,
  // (A.^2)^T second: one pass.
  void AddGradient(std::span<const double> first, const DataCurvature* curvature, std::span<double> gradient,
                   std::span<double> diagonal) const;
  // hv += A^T D A v: one pass.
  void AddCurvatureProduct(const DataCurvature& curvature, std::span<const double> v, std::span<double> hv) const;
  // Margins and AddCurvatureProduct for a point or direction that is zero outside some
  // columns: one pass over those columns' nonzeros only. `columns` holds those entries of
  // this term's rows: a copy of them (ColumnSubset::view, with x and v compacted to them and
  // hv coming out compacted too), or the rows' first entries in place (RowPartition::view,
  // with x, v and hv as they are).
  void MarginsOn(const CsrView& columns, std::span<const double> x, std::span<double> margins) const;
  void AddCurvatureProductOn(const CsrView& columns, const DataCurvature& curvature, std::span<const double> v,
                             std::span<double> hv) const;
  const CsrView& matrix() const { return matrix_; }
  bool intercept() const { return intercept_; }
  // The trace of the data term's Hessian at x = 0 (times N): the curvature scale ADMM's first
  // rho comes from.
  double CurvatureTraceAtZero() const;

 private:
  DataTerm(const CsrView& matrix, Loss loss, bool intercept, int64_t classes, int64_t copies, bool multinomial);
  void AddCurvatureProductWith(const CsrView& matrix, const DataCurvature& curvature, std::span<const double> v,
                               std::span<double> hv) const;

  CsrView matrix_;
  Loss loss_;
  bool intercept_ = false;
  int64_t classes_ = 1;
  int64_t blocks_ = 1;
  bool multinomial_ = false;
  std::size_t model_size_ = 0;
  // One per group of margins: per margin (one-vs-rest's -1/+1 per class, or a copy's label),
  // or per copy the class index (softmax, whose C margins are a group).
  std::span<const double> labels_;
  std::span<const double> weights_;  // one per label; empty: all 1
  // What labels_ and weights_ view when they are made here (one-vs-rest's per class, and the
  // rows' c_r from class and sample weights) rather than the caller's.
  std::vector<double> owned_labels_, owned_weights_;
};

}  // namespace nimbus
