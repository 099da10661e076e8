// The optimization problem:
//
//   minimize F(x) = (1/N) sum_r loss(y_r, a_r . x [+ b])  +  l1 ||x||_1  +  (l2/2) ||x||^2
//
// over x in R^d and, with an intercept, b in R, which is never regularized. A model vector
// holds x followed by b (d + 1 entries with an intercept). Same problem as liblinear with
// C = 1 / (N * lambda) (squared loss: C = 1 / (2 N lambda)).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>
#include <string>
#include <utility>

#include "nimbus/core/status.h"
#include "nimbus/core/csr.h"
#include "nimbus/problem/loss.h"

namespace nimbus {

// A user's own separable regularizer g(x) = sum_j g_j(x_j), the same g_j on every feature
// (the intercept is never regularized): convex, given by its value and its prox. ADMM solves
// with any; Newton with smooth ones (g' and g'' everywhere). Only the master applies it, so
// workers need not know it.
class CustomRegularizer {
 public:
  explicit CustomRegularizer(std::string name) : name_(std::move(name)) {}
  virtual ~CustomRegularizer() = default;

  const std::string& name() const { return name_; }
  virtual double Value(double x) const = 0;
  // argmin_z t g(z) + (z - x)^2 / 2, for t > 0.
  virtual double Prox(double t, double x) const = 0;
  virtual bool smooth() const { return false; }
  // g'(x) and g''(x) >= 0; called only if smooth().
  virtual void Derivatives(double /*x*/, double* first, double* second) const { *first = *second = 0; }

 private:
  std::string name_;
};

// The minimum-norm element of g + l1 d|x| (the subdifferential of a smooth part with gradient g
// plus l1 |x|, one coordinate): zero exactly where x is optimal.
inline double MinimumNormSubgradient(double x, double g, double l1) {
  if (x > 0) return g + l1;
  if (x < 0) return g - l1;
  return g + l1 < 0 ? g + l1 : g - l1 > 0 ? g - l1 : 0.0;
}

// l1 ||x||_1 + (l2/2) ||x||^2, or a user's own g (then l1 = l2 = 0), over the first
// `regularized` entries of a model vector (the rest is the intercept).
struct Regularizer {
  Regularizer() = default;
  Regularizer(double l1_weight, double l2_weight, std::shared_ptr<const CustomRegularizer> g = nullptr)
      : l1(l1_weight), l2(l2_weight), custom(std::move(g)) {}

  double l1 = 0.0;
  double l2 = 0.0;
  std::shared_ptr<const CustomRegularizer> custom;

  double Value(std::span<const double> x, std::size_t regularized) const;
  // Whether g has a gradient and curvature everywhere (no l1, and a custom g says so).
  bool smooth() const { return l1 == 0 && (custom == nullptr || custom->smooth()); }
  // For g's smooth part (l2, or a smooth custom g; nothing for a custom g with a prox only):
  // out += grad g(x); diagonal += g''(x); out += diag(g''(x)) v.
  void AddGradient(std::span<const double> x, std::size_t regularized, std::span<double> out) const;
  void AddCurvature(std::span<const double> x, std::size_t regularized, std::span<double> diagonal) const;
  void AddCurvatureProduct(std::span<const double> x, std::span<const double> v, std::size_t regularized,
                           std::span<double> out) const;
  // In place: x <- argmin_z t g(z) + ||z - x||^2 / 2 on the first `regularized` entries,
  // which is soft-thresholding at t l1 followed by shrinking by 1 / (1 + t l2). The
  // remaining entries (the intercept) are left as they are.
  void Prox(double t, std::span<double> x, std::size_t regularized) const;
  // prox_{t g} of one entry, with the constants of one t computed once (the z-update of the
  // general form applies a few t's, one per number of copies, to millions of entries).
  struct ScalarProx {
    double threshold = 0;  // t l1
    double shrink = 1;     // 1 / (1 + t l2)
    double t = 0;
    const CustomRegularizer* custom = nullptr;
    // Without branches for l1/l2 (which entries fall below the threshold is unpredictable);
    // the + 0.0 turns the -0 of a small negative entry into 0, as the vector form returns.
    double operator()(double x) const {
      if (custom != nullptr) return custom->Prox(t, x);
      const double magnitude = std::max(std::abs(x) - threshold, 0.0);
      return std::copysign(magnitude * shrink, x) + 0.0;
    }
  };
  ScalarProx ProxOf(double t) const { return {t * l1, 1.0 / (1.0 + t * l2), t, custom.get()}; }
  // The same for one entry.
  double Prox(double t, double x) const { return ProxOf(t)(x); }
};

struct ProblemSpec {
  Loss loss = Loss::kLogistic;
  Regularizer regularizer;
  bool intercept = false;
  int64_t rows = 0;  // N: the loss is averaged over all rows of all shards
  int64_t cols = 0;  // d
  // C: the blocks of weights, one per class, of a multiclass model (three classes or more, or
  // softmax on two). The model vector interleaves them: entry j C + c is feature j's weight
  // in class c, and the C intercepts come last. The rows' labels are then class indices
  // 0 .. C-1 (ClassIndex). 1: one weight per feature (regression, and two classes as -1/+1).
  int64_t classes = 1;
  // With C > 1: the multinomial (softmax) loss, log sum_c exp(m_c) - m_{class}, over each
  // row's C margins (logistic loss only); else one-vs-rest, the loss of class c's binary
  // problem (its rows +1, the others -1) on margin c, summed over classes (liblinear's).
  bool multinomial = false;
  // Each class's weight W (liblinear's -wi: the class's rows count W times), indexed by class:
  // for two classes 0 is the -1 class and 1 the +1 class. Empty: every class 1. With the rows'
  // own weights s_r (data/dataset.h), F = (1/N) sum_r W_{class r} s_r loss_r + g(x). One-vs-rest
  // weighs as liblinear does: in class c's problem its own rows count W_c s_r, the others s_r.
  std::vector<double> class_weights;
  // Cross-validation: copies of the problem side by side, each with its C blocks. The model
  // vector then interleaves B = copies x C blocks: entry j B + k C + c is feature j's weight
  // in class c of copy k, and the B intercepts come last. Copy k is fold k's training
  // problem: the rows held out in fold k (Dataset::folds) weigh 0, the others copy_scales[k]
  // = N / N_k, so that its loss is the mean over its own N_k rows. A copy past the last fold
  // holds every row (the model on all the data, solved alongside). 1: no copies.
  int64_t copies = 1;
  std::vector<double> copy_scales;  // one per copy; empty: every copy weighs its rows 1

  // B: the blocks of weights, C per copy.
  int64_t blocks() const { return classes * copies; }
  std::size_t model_size() const {
    return (static_cast<std::size_t>(cols) + (intercept ? 1 : 0)) * static_cast<std::size_t>(blocks());
  }
  // The leading entries g(x) applies to: every feature's weights, not the intercepts.
  std::size_t regularized_size() const { return static_cast<std::size_t>(cols) * static_cast<std::size_t>(blocks()); }
  // C independent binary problems (one-vs-rest's classes): the Hessian is block diagonal.
  bool one_vs_rest() const { return classes > 1 && !multinomial; }
  // Blocks of the model with no curvature between them (Newton-CG runs one recurrence per
  // block): one-vs-rest's classes in every copy, or the copies.
  int64_t independent_blocks() const { return one_vs_rest() ? blocks() : copies; }
  // Classes of a classification problem: 2 for a -1/+1 one, C for a multiclass one; 0 for a regression.
  int64_t class_count() const { return !IsClassification(loss) ? 0 : classes > 1 ? classes : 2; }
  Status Validate() const;
};

// Each listed model entry's independent block (of independent_blocks(): entry e is in
// block e % B for one-vs-rest, else in copy (e % B) / C): Newton-CG's blocks
// (NewtonCgOptions::block_of) over the entries a solve runs on.
std::vector<uint32_t> EntryBlocks(const ProblemSpec& spec, std::span<const uint32_t> entries);
// The same for entries 0 .. n-1.
std::vector<uint32_t> EntryBlocks(const ProblemSpec& spec, std::size_t n);
// Copy k's C blocks of `x` (a model of spec.copies copies) as a model of one: (cols +
// intercept) x C entries.
std::vector<double> CopyOfModel(const ProblemSpec& spec, std::span<const double> x, int64_t copy);

// c_r = W_{class of row r} s_r for rows with these labels and sample weights (empty: all 1);
// empty when every c_r is 1 (no class weights and no sample weights).
std::vector<double> RowWeights(const ProblemSpec& spec, std::span<const double> labels,
                               std::span<const double> sample_weights);

// F(x) over the rows of `matrix` with their labels (and sample weights, if any), which must be
// all N rows.
double EvaluateObjective(const ProblemSpec& spec, const CsrView& matrix, std::span<const double> labels,
                         std::span<const double> x, std::span<const double> sample_weights = {});

// (1/N) A^T C loss'(A x) over all N rows: the gradient of the smooth part.
void SmoothGradient(const ProblemSpec& spec, const CsrView& matrix, std::span<const double> labels,
                    std::span<const double> x, std::span<double> gradient, std::span<const double> sample_weights = {});

// Whether F's non-smooth part is a program's own regularizer, known by its prox only.
inline bool HasRoughCustom(const Regularizer& r) { return r.custom != nullptr && !r.custom->smooth(); }

// F's optimality residual at x, given the smooth part's gradient g (the loss term and l2):
// ||v||, zero exactly at the optimum, with v = x - prox_h(x - g) for a program's own rough h,
// and for l1 the minimum-norm subgradient (which equals that v near the optimum; Newton's l1
// tolerances were tuned on it). The intercept has no h: v = g there. `v` is scratch.
double OptimalityResidual(const ProblemSpec& spec, std::span<const double> x, std::span<const double> g,
                          std::vector<double>& v);

// How far x is from satisfying 0 in dF(x): the largest over coordinates of
//   |g_j + l2 x_j + l1 sign(x_j)|   where x_j != 0,
//   max(0, |g_j| - l1)             where x_j == 0,   and |g_b| for the intercept,
// with g the gradient of the loss term. Zero exactly at the optimum. With a custom
// regularizer: |x_j - prox_g(x_j - g_j)|, the proximal gradient step's length.
double OptimalityViolation(const ProblemSpec& spec, const CsrView& matrix, std::span<const double> labels,
                           std::span<const double> x, std::span<const double> sample_weights = {});

}  // namespace nimbus
