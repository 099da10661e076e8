#include "nimbus/solve/newton/newton_master.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "nimbus/core/clock.h"
#include "nimbus/core/vector_ops.h"
#include "nimbus/local/newton_cg.h"
#include "solve/solve_steps.h"
#include "solve/trace_events.h"

namespace nimbus {
namespace {

using Vector = std::vector<double>;

// prox_{t h}(v) of one regularized entry for F's non-smooth part h: a program's own rough
// regularizer, or l1 |.| (the l2 term is smooth: Newton counts it in f).
double ProxOfRoughPart(const Regularizer& r, double t, double v) {
  if (HasRoughCustom(r)) return r.custom->Prox(t, v);
  return std::copysign(std::max(std::abs(v) - t * r.l1, 0.0), v) + 0.0;
}

// A diagonal entry of the preconditioner never falls below this fraction of their mean (a
// feature no row touches has none of the loss's curvature).
constexpr double kDiagonalFloor = 1e-10;

// One-vs-rest's classes and cross-validation's copies are independent problems with a
// block-diagonal Hessian: CG runs one recurrence per block (NewtonCgOptions::blocks).
int IndependentBlocks(const ProblemSpec& spec) { return static_cast<int>(spec.independent_blocks()); }

}  // namespace

namespace internal {

// F(x) = sum_i f_i(x) + (l2/2) ||x||^2 as a SmoothFunction whose every call that needs the
// data is a round on the workers. Two evaluated points are kept (the iterate and a trial),
// so TRON's Value-then-Gradient and its return to the iterate after a rejected trial cost
// no round.
class DistributedObjective final : public SmoothFunction {
 public:
  // The stop test is ||v|| <= tolerance_scale ||v(x0)||, or first_tolerance where it is known
  // (a resumed or warm-started run). The summary counts rounds from `counted_from` (a resumed
  // run counts the run's own before it).
  DistributedObjective(const ProblemSpec& spec, Executor& executor, std::span<const WorkerReady> ready,
                       double round_timeout_seconds, int64_t first_round, int64_t counted_from, double tolerance_scale,
                       double first_tolerance, Summary& summary, TraceSink* trace)
      : next_round_(first_round),
        counted_from_(counted_from),
        tolerance_scale_(tolerance_scale),
        first_tolerance_(first_tolerance),
        spec_(spec),
        executor_(executor),
        n_(spec.model_size()),
        round_timeout_seconds_(round_timeout_seconds),
        summary_(summary),
        trace_(trace) {
    for (const WorkerReady& r : ready) supports_.push_back(r.support);
  }

  std::size_t dimension() const override { return n_; }

  double Value(std::span<const double> x) override {
    const Point* point = Find(x);
    if (point == nullptr) point = Evaluate(x);
    return point == nullptr ? std::nan("") : point->value;
  }

  void Gradient(std::span<const double> x, std::span<double> gradient) override {
    const Point* point = Find(x);
    if (point == nullptr) point = Evaluate(x);
    if (point == nullptr) {
      Fill(gradient, 0.0);
      return;
    }
    hessian_point_ = point == &points_[0] ? 0 : 1;
    CopyInto(point->gradient, gradient);
  }

  void HessianVector(std::span<const double> v, std::span<double> hv) override { Product(v, hv, false); }
  void HessianVectorOnSupport(std::span<const double> v, std::span<double> hv) override { Product(v, hv, true); }

  void HessianDiagonal(std::span<double> diagonal) override {
    const Vector& d = points_[hessian_point_].diagonal;
    if (d.size() != n_) {  // no point was evaluated (a worker failed): any positive scale will do
      Fill(diagonal, 1.0);
      return;
    }
    double mean = 0;
    for (const double value : d) mean += value;
    mean /= static_cast<double>(std::max<std::size_t>(d.size(), 1));
    const double floor = std::max(kDiagonalFloor * mean, 1e-300);
    for (std::size_t j = 0; j < n_; ++j) diagonal[j] = std::max(d[j], floor);
  }

  bool failed() const { return failed_; }
  void SetLeanProducts(bool lean) { lean_products_ = lean; }
  // The iterate: the point the Hessian was last taken at.
  const SharedVector& iterate() const { return points_[hessian_point_].x; }
  double iterate_value() const { return points_[hessian_point_].value; }
  const Vector& iterate_gradient() const { return points_[hessian_point_].gradient; }
  int64_t rounds() const { return next_round_; }
  // The stop test's state for the trace: the iterate's subgradient norm and its tolerance.
  void SetProgress(double violation, double tolerance) {
    tested_ = TestedResiduals{violation, 0, tolerance, 0};
    has_tested_ = true;
  }
  // ||v(0)||, the minimum subgradient's norm at the zero model, by one round; it becomes the
  // stop test's reference. 0 if a worker failed (the run has then failed).
  double ReferenceAtZero() {
    const Vector zero(n_, 0.0);
    const Point* point = Evaluate(zero);
    if (point == nullptr) return 0;
    const double reference = OptimalityResidual(spec_, zero, point->gradient, v_);
    first_tolerance_ = tolerance_scale_ * reference;
    has_tested_ = false;  // the trace's first test is the first iterate's
    return reference;
  }

 private:
  struct Point {
    int64_t round = -1;  // of its evaluation; -1: empty
    SharedVector x;
    double value = 0;
    Vector gradient, diagonal;
  };

  // hv = H v at the iterate; with `on_support` the workers may compute it on v's support alone.
  void Product(std::span<const double> v, std::span<double> hv, bool on_support) {
    const Point& at = points_[hessian_point_];
    RoundRequest request = NewRequest(RoundKind::kHessianVector, Vector(v.begin(), v.end()));
    request.point_round = at.round;
    request.point = at.x;
    request.on_support = on_support;
    Fill(hv, 0.0);
    if (!RunAndSum(request, hv, {})) return;
    spec_.regularizer.AddCurvatureProduct(at.x, v, spec_.regularized_size(), hv);
  }

  const Point* Find(std::span<const double> x) const {
    for (const Point& p : points_) {
      if (p.round >= 0 && std::memcmp(p.x.data(), x.data(), n_ * sizeof(double)) == 0) return &p;
    }
    return nullptr;
  }

  RoundRequest NewRequest(RoundKind kind, Vector z) {
    RoundRequest request;
    request.round = next_round_++;
    request.kind = kind;
    request.lean = lean_products_ && kind == RoundKind::kHessianVector;
    if (request.lean) ++summary_.lean_rounds;
    request.z = SharedVector(std::move(z));
    return request;
  }

  // F, its gradient and the Hessian's diagonal at x, into the slot the Hessian is not at.
  const Point* Evaluate(std::span<const double> x) {
    Point& p = points_[1 - hessian_point_];
    RoundRequest request = NewRequest(RoundKind::kEvaluate, Vector(x.begin(), x.end()));
    p.gradient.assign(n_, 0.0);
    p.diagonal.assign(n_, 0.0);
    p.round = -1;
    if (!RunAndSum(request, p.gradient, p.diagonal, &p.value)) return nullptr;
    p.round = request.round;
    p.x = request.z;
    const std::size_t regularized = spec_.regularized_size();
    spec_.regularizer.AddGradient(x, regularized, p.gradient);
    spec_.regularizer.AddCurvature(x, regularized, p.diagonal);
    // Before the master reports its first step, the trace shows the first point's test.
    if (!has_tested_) {
      const double violation = OptimalityResidual(spec_, x, p.gradient, v_);
      SetProgress(violation, first_tolerance_ > 0 ? first_tolerance_ : tolerance_scale_ * violation);
    }
    return &p;
  }

  // One round on every worker; sums each reply's first vector into `first` and its second
  // (if `second` is not empty) into `second`, and with `value` makes F at the round's point
  // (the shards' f_i and the regularizer). False if a worker failed (the summary says which
  // and why; no round is sent after that).
  bool RunAndSum(const RoundRequest& request, std::span<double> first, std::span<double> second,
                 double* value = nullptr) {
    if (failed_) return false;
    Stopwatch wait_watch;
    const double dispatch_wall = WallSeconds();
    std::vector<WorkerReply> replies = executor_.RunRound(request, Deadline::After(round_timeout_seconds_));
    const double wait_seconds = wait_watch.ElapsedSeconds();
    const double replies_wall = WallSeconds();
    summary_.wait_seconds += wait_seconds;
    summary_.rounds = static_cast<int>(request.round + 1 - counted_from_);
    Stopwatch master_watch;
    double loss = 0;
    for (WorkerReply& r : replies) {
      if (!Accept(request, r, second.empty() ? 1 : 2)) return false;
      loss += r.scalars.loss_at_z;
      Accumulate(r, first, second);
    }
    if (value != nullptr) *value = loss + spec_.regularizer.Value(request.z, spec_.regularized_size());
    const double master_seconds = master_watch.ElapsedSeconds();
    summary_.master_seconds += master_seconds;
    if (trace_ != nullptr) {
      // The objective of the point evaluated, or for a product of the point it is taken at.
      const double objective = value != nullptr ? *value : points_[hessian_point_].value;
      const RoundTiming timing{clock_.ElapsedSeconds(), wait_seconds, master_seconds, 0, 0, dispatch_wall,
                               replies_wall};
      trace_->Write(RoundEvent(request, objective, has_tested_ ? &tested_ : nullptr, timing, replies));
    }
    return true;
  }

  // Whether a reply can be summed: answered, with `vectors` local-model-sized vectors. If not,
  // the run has failed.
  bool Accept(const RoundRequest& request, WorkerReply& r, std::size_t vectors) {
    const std::size_t local = LocalSize(r.worker);
    if (r.status == ReplyStatus::kOk && r.w.size() != vectors * local) {
      r.status = ReplyStatus::kFailed;
      r.error = "its answer has " + std::to_string(r.w.size()) + " entries, expected " +
                std::to_string(vectors * local);
    }
    if (r.status == ReplyStatus::kOk) {
      summary_.worker_compute_seconds += r.timings.compute_seconds;
      summary_.data_passes += r.timings.data_passes;
      return true;
    }
    failed_ = true;
    summary_.termination = Termination::kWorkerFailed;
    summary_.message = "worker " + std::to_string(r.worker) + " " + ReplyStatusName(r.status) + " in round " +
                       std::to_string(request.round) + " (" + std::string(NameOf(request.kind)) + "): " + r.error;
    return false;
  }

  std::size_t LocalSize(int worker) const {
    const auto& support = supports_[static_cast<std::size_t>(worker)];
    return support ? support->size() : n_;
  }

  // first += the reply's first vector, second += its second, scattered from the worker's
  // support in the general form; in worker order, so the sums are reproducible.
  void Accumulate(const WorkerReply& r, std::span<double> first, std::span<double> second) const {
    const auto& support = supports_[static_cast<std::size_t>(r.worker)];
    const std::size_t local = LocalSize(r.worker);
    for (std::size_t v = 0; v < (second.empty() ? 1u : 2u); ++v) {
      std::span<double> out = v == 0 ? first : second;
      const double* w = r.w.data() + v * local;
      for (std::size_t k = 0; k < local; ++k) out[support ? (*support)[k] : k] += w[k];
    }
  }

 private:
  int64_t next_round_, counted_from_;
  double tolerance_scale_, first_tolerance_;
  Vector v_;  // scratch for the first point's subgradient
  const ProblemSpec& spec_;
  Executor& executor_;
  std::size_t n_;
  double round_timeout_seconds_;
  Summary& summary_;
  TraceSink* trace_;
  std::vector<std::shared_ptr<const std::vector<uint32_t>>> supports_;
  Point points_[2];
  int hessian_point_ = 0;
  bool failed_ = false;
  bool lean_products_ = false;  // NewtonOptions::lean_products
  Stopwatch clock_;  // since the first round
  TestedResiduals tested_;
  bool has_tested_ = false;
};

}  // namespace internal

namespace {

using internal::DistributedObjective;

// F restricted to a working set W of coordinates with signs s, where it is smooth:
//   phi(y) = f(x) + l1 s.y   with x_W = y and x = 0 elsewhere,
// the problem OSQP's polishing solves once ADMM has found the active set. The data terms come
// from the distributed objective at the full x.
class RestrictedObjective final : public SmoothFunction {
 public:
  RestrictedObjective(SmoothFunction& f, std::size_t full_size, double l1, std::vector<uint32_t> working,
                      std::vector<double> signs)
      : f_(f),
        l1_(l1),
        working_(std::move(working)),
        signs_(std::move(signs)),
        x_(full_size),
        full_(full_size),
        product_(full_size) {}

  std::size_t dimension() const override { return working_.size(); }
  double Value(std::span<const double> y) override {
    Expand(y);
    return f_.Value(x_) - l1_ * Norm1Over(x_) + l1_ * Dot(signs_, y);
  }
  void Gradient(std::span<const double> y, std::span<double> gradient) override {
    Expand(y);
    for (std::size_t k = 0; k < working_.size(); ++k) left_orthant_ = left_orthant_ || y[k] * signs_[k] < 0;
    f_.Gradient(x_, full_);
    for (std::size_t k = 0; k < working_.size(); ++k) gradient[k] = full_[working_[k]] + l1_ * signs_[k];
  }
  void HessianVector(std::span<const double> v, std::span<double> hv) override {
    Fill(full_, 0.0);
    for (std::size_t k = 0; k < working_.size(); ++k) full_[working_[k]] = v[k];
    f_.HessianVectorOnSupport(full_, product_);  // only W's entries are read
    for (std::size_t k = 0; k < working_.size(); ++k) hv[k] = product_[working_[k]];
  }
  // The preconditioner, floored at kWorkingFloor of its mean over W. A coordinate whose rows
  // are all fitted with wide margins has almost no curvature; unfloored, the first trust
  // region (the preconditioned gradient's length) stretches along it by orders of magnitude,
  // and every step TRON tries is rejected (the Debian set at l1 1e-6: 3078 rounds, 1188 with
  // the floor; docs/tuning.md).
  void HessianDiagonal(std::span<double> diagonal) override {
    f_.HessianDiagonal(full_);
    double mean = 0;
    for (std::size_t k = 0; k < working_.size(); ++k) mean += diagonal[k] = full_[working_[k]];
    mean /= static_cast<double>(std::max<std::size_t>(working_.size(), 1));
    for (std::size_t k = 0; k < working_.size(); ++k) diagonal[k] = std::max(diagonal[k], kWorkingFloor * mean);
  }
  // Whether a step taken has moved a coordinate past zero, where phi is not F any more (its
  // linear term rewards going further): the cycle ends there and projects.
  bool left_orthant() const { return left_orthant_; }

 private:
  void Expand(std::span<const double> y) {
    Fill(x_, 0.0);
    for (std::size_t k = 0; k < working_.size(); ++k) x_[working_[k]] = y[k];
  }
  // l1 ||x||_1 as the objective counts it: the l1 term of the signed coordinates only.
  double Norm1Over(std::span<const double> x) const {
    double sum = 0;
    for (std::size_t k = 0; k < working_.size(); ++k) sum += signs_[k] != 0 ? std::abs(x[working_[k]]) : 0.0;
    return sum;
  }

  static constexpr double kWorkingFloor = 1e-3;
  SmoothFunction& f_;
  double l1_;
  std::vector<uint32_t> working_;
  std::vector<double> signs_;  // 0 for the intercept, which has no l1 term
  std::vector<double> x_, full_, product_;
  bool left_orthant_ = false;
};

// The outer loop and the safeguards shared by the Newton methods for a non-smooth F = f + h
// (Derived::Cycle makes one step from x, with f's gradient at x in g_ and F's residual in v_).
template <class Derived>
class CompositeNewton {
 public:
  CompositeNewton(SmoothFunction& f, const ProblemSpec& spec, const NewtonCgOptions& options)
      : f_(f), spec_(spec), regularized_(spec.regularized_size()), options_(options) {}

  LocalSolveStats Minimize(std::span<double> x) {
    const std::size_t n = x.size();
    g_.resize(n), v_.resize(n), trial_.resize(n), tg_.resize(n);
    LocalSolveStats stats;
    double value = f_.Value(x);
    f_.Gradient(x, g_);
    double violation = violation_ = Violation(x);
    stats.initial_gradient_norm = violation;
    const double tolerance = std::max(options_.gradient_tolerance, options_.relative_tolerance * violation);
    while (violation > tolerance && stats.iterations < options_.max_iterations) {
      const int before = stats.iterations;
      if (!static_cast<Derived*>(this)->Cycle(x, value, tolerance, stats)) break;
      f_.Gradient(x, g_);  // came with the value: no round
      violation = violation_ = Violation(x);
      if (stats.iterations == before) ++stats.iterations;
      if (options_.after_iteration &&
          !options_.after_iteration({stats.iterations, value, violation, 0, stats.initial_gradient_norm})) {
        break;
      }
    }
    stats.final_gradient_norm = violation;
    stats.converged = violation <= tolerance;
    return stats;
  }

 protected:
  // ||v|| at x (v into v_, from the gradient in g_).
  double Violation(std::span<const double> x) { return OptimalityResidual(spec_, x, g_, v_); }

  // x <- trial_ if F(trial_) < value. Near the optimum F's decrease sinks below its rounding:
  // a trial no higher than that, whose residual is smaller, is taken too (its gradient came
  // with its value).
  bool TakeIfLower(std::span<double> x, double& value, double bound) {
    const double trial_value = f_.Value(trial_);
    bool lower = trial_value < bound;
    if (!lower && trial_value <= value + kValueRounding * std::abs(value)) {
      f_.Gradient(trial_, tg_);
      lower = OptimalityResidual(spec_, trial_, tg_, tv_) < violation_;
    }
    if (!lower) return false;
    std::copy(trial_.begin(), trial_.end(), x.begin());
    value = trial_value;
    return true;
  }
  bool TakeIfLower(std::span<double> x, double& value) { return TakeIfLower(x, value, value); }

  // Where a Newton step finds no decrease (many coordinates entering at once, seen on the
  // Debian set with a weak l1): a proximal gradient step scaled by the Hessian's diagonal,
  //   x_j <- prox_{(a / H_jj) h}(x_j - a g_j / H_jj),
  // a halved until F decreases, which it does for a small enough a unless x is optimal.
  bool ProximalGradientStep(std::span<double> x, double& value) {
    f_.Gradient(x, g_);
    m_.resize(x.size());
    f_.HessianDiagonal(m_);
    for (double step = 1.0; step > 1e-12; step *= 0.5) {
      for (std::size_t j = 0; j < x.size(); ++j) {
        const double t = x[j] - step * g_[j] / m_[j];
        trial_[j] = j < regularized_ ? ProxOfRoughPart(spec_.regularizer, step / m_[j], t) : t;
      }
      if (TakeIfLower(x, value)) return true;
    }
    return false;  // no decrease left within rounding
  }

  static constexpr double kValueRounding = 1e-14;
  SmoothFunction& f_;
  const ProblemSpec& spec_;
  std::size_t regularized_;
  NewtonCgOptions options_;
  std::vector<double> g_, v_, trial_, m_, tg_, tv_;
  double violation_ = 0;  // ||v|| at the iterate
};

// Active-set Newton for F = f + l1 ||x||_1 (glmnet's cycle of solving on the active set and
// checking the others' optimality, with TRON as the solver). Each cycle, at x:
//   v   the minimum-norm subgradient of F (zero exactly at the optimum)
//   W   the support, and the zeros whose |v_j| > 0 once the support's own subgradient is no
//       larger than theirs (they enter with the sign that decreases F)
//   y   TRON on phi (RestrictedObjective), warm started from x_W, a few steps
//   x   y projected: a coordinate that changed sign stops at 0; if that raises F, the cycle's
//       step is halved until F decreases, and failing that (down to kShortestStep) a proximal
//       gradient step scaled by diag H is taken instead
class ActiveSetNewton final : public CompositeNewton<ActiveSetNewton> {
 public:
  using CompositeNewton::CompositeNewton;

  bool Cycle(std::span<double> x, double& value, double tolerance, LocalSolveStats& stats) {
    const double l1 = spec_.regularizer.l1;
    double support = 0, zeros = 0;
    for (std::size_t j = 0; j < x.size(); ++j) (x[j] != 0 || j >= regularized_ ? support : zeros) += v_[j] * v_[j];
    const bool entering = support <= zeros;
    std::vector<uint32_t> working;
    std::vector<double> signs, y;
    for (std::size_t j = 0; j < x.size(); ++j) {
      const bool unregularized = j >= regularized_;
      const bool enters = entering && x[j] == 0 && v_[j] != 0;
      if (x[j] == 0 && !enters && !unregularized) continue;
      working.push_back(static_cast<uint32_t>(j));
      signs.push_back(unregularized ? 0.0 : x[j] != 0 ? (x[j] > 0 ? 1.0 : -1.0) : (v_[j] < 0 ? 1.0 : -1.0));
      y.push_back(x[j]);
    }
    RestrictedObjective phi(f_, x.size(), l1, working, signs);
    NewtonCgOptions inner = options_;
    const std::vector<uint32_t> blocks = EntryBlocks(spec_, working);
    inner.blocks = IndependentBlocks(spec_);
    inner.block_of = blocks;
    inner.after_iteration = [&phi](const NewtonCgOptions::Progress&) { return !phi.left_orthant(); };
    inner.initial_radius = 0;
    inner.gradient_tolerance = tolerance;
    inner.relative_tolerance = kInnerRelative;
    inner.max_iterations = std::min(kInnerSteps, options_.max_iterations - stats.iterations);
    const LocalSolveStats solved = MinimizeNewtonCg(phi, y, inner);
    stats.iterations += solved.iterations;
    stats.cg_iterations += solved.cg_iterations;
    // Project onto the signs, then halve the step until F decreases.
    for (double step = 1.0; step > kShortestStep; step *= 0.5) {
      std::copy(x.begin(), x.end(), trial_.begin());
      for (std::size_t k = 0; k < working.size(); ++k) {
        const uint32_t j = working[k];
        const double t = x[j] + step * (y[k] - x[j]);
        trial_[j] = signs[k] != 0 && t * signs[k] <= 0 ? 0.0 : t;
      }
      if (TakeIfLower(x, value)) return true;
    }
    return ProximalGradientStep(x, value);
  }

 private:
  // Each cycle solves the restricted problem loosely (its gradient down by this much, in at
  // most this many steps): tuned on Fashion-MNIST L1 (docs/tuning.md).
  static constexpr double kInnerRelative = 0.3;
  static constexpr int kInnerSteps = 10;
  static constexpr double kShortestStep = 1e-3;  // of a cycle's step, before the fallback
};

// Proximal Newton for F = f + h with h a program's own regularizer, known by its prox only
// (Lee, Sun & Saunders, "Proximal Newton-type methods for minimizing composite functions",
// 2014). Each cycle, at x, with f's gradient g and Hessian H there:
//   d   about argmin_d q(d) = g.d + d'Hd/2 + h(x + d) - h(x), by FISTA in the metric L diag H
//       (SolveModel; one Hessian-vector round per step)
//   x   x + a d, with a halved from 1 until F(x + a d) <= F(x) + sigma a (g.d + h(x + d) - h(x)),
//       and failing that (down to kShortestStep) a proximal gradient step scaled by diag H
class ProximalNewton final : public CompositeNewton<ProximalNewton> {
 public:
  using CompositeNewton::CompositeNewton;

  bool Cycle(std::span<double> x, double& value, double tolerance, LocalSolveStats& stats) {
    const std::size_t n = x.size();
    m_.resize(n);
    f_.HessianDiagonal(m_);
    d_.assign(n, 0.0);
    const int rounds = SolveModel(x, std::max(tolerance, kInnerForcing * violation_),
                                  options_.max_iterations - stats.iterations);
    stats.iterations += 1;
    stats.cg_iterations += rounds;
    const double decrease = ModelDecrease(x);  // g.d + h(x + d) - h(x) < 0 unless x is optimal
    for (double step = 1.0; step > kShortestStep && decrease < 0; step *= 0.5) {
      for (std::size_t j = 0; j < n; ++j) trial_[j] = x[j] + step * d_[j];
      if (TakeIfLower(x, value, value + kSufficientDecrease * step * decrease)) return true;
    }
    return ProximalGradientStep(x, value);
  }

 private:
  // d <- FISTA on q from d = 0 until its prox-gradient residual is at most `tolerance`, in at
  // most kInnerSteps rounds (and `budget`). q's gradient g + Hd is linear in d, so the momentum
  // point's is a combination of those already had: each step costs the round of H s for its
  // own move s, which also tests the metric (s'Hs <= L s'Ms, else L doubles and the step is
  // tried again). Returns the rounds made.
  int SolveModel(std::span<const double> x, double tolerance, int budget) {
    const std::size_t n = x.size();
    Vector hd(n, 0.0), v(n, 0.0), hv(n, 0.0), next(n), s(n), hs(n);
    double momentum = 1;
    int rounds = 0;
    while (rounds < std::min(kInnerSteps, budget)) {
      // next = prox step from v in the metric L M; s = next - v.
      double residual = 0, curvature_bound = 0;
      for (std::size_t j = 0; j < n; ++j) {
        const double scale = metric_ * m_[j];
        const double t = x[j] + v[j] - (g_[j] + hv[j]) / scale;
        next[j] = (j < regularized_ ? ProxOfRoughPart(spec_.regularizer, 1.0 / scale, t) : t) - x[j];
        s[j] = next[j] - v[j];
        residual += scale * scale * s[j] * s[j];
        curvature_bound += scale * s[j] * s[j];
      }
      if (std::sqrt(residual) <= tolerance || curvature_bound == 0) break;
      f_.HessianVector(s, hs);
      ++rounds;
      if (Dot(s, hs) > curvature_bound * (1 + 1e-12)) {
        metric_ *= 2;  // the step overshot q's curvature: try it again, shorter
        continue;
      }
      // d <- next (its H d = H v + H s); v <- next + beta (next - d), likewise for H v.
      const double following = 0.5 * (1 + std::sqrt(1 + 4 * momentum * momentum));
      const double beta = (momentum - 1) / following;
      momentum = following;
      for (std::size_t j = 0; j < n; ++j) {
        const double h_next = hv[j] + hs[j];
        v[j] = next[j] + beta * (next[j] - d_[j]);
        hv[j] = h_next + beta * (h_next - hd[j]);
        d_[j] = next[j];
        hd[j] = h_next;
      }
    }
    return rounds;
  }

  // g.d + h(x + d) - h(x): what q promises, less its curvature term (Lee et al.'s Delta).
  double ModelDecrease(std::span<const double> x) {
    for (std::size_t j = 0; j < x.size(); ++j) trial_[j] = x[j] + d_[j];
    const std::size_t k = regularized_;
    return Dot(g_, d_) + spec_.regularizer.Value(trial_, k) - spec_.regularizer.Value(x, k);
  }

  static constexpr double kInnerForcing = 0.1;  // the model is solved to this fraction of F's residual
  static constexpr int kInnerSteps = 50;
  static constexpr double kSufficientDecrease = 1e-4;
  static constexpr double kShortestStep = 1e-3;
  double metric_ = 1;  // L, kept from cycle to cycle (diag H is a good metric up to a scale)
  Vector d_;
};

}  // namespace

Status NewtonOptions::Validate() const {
  if (!(gradient_tolerance > 0 && gradient_tolerance < 1)) {
    return InvalidArgument("gradient_tolerance: must be in (0, 1), got " + std::to_string(gradient_tolerance));
  }
  if (max_iterations < 0) return InvalidArgument("max_iterations: must be >= 0, got " + std::to_string(max_iterations));
  if (max_cg_iterations < 1) return InvalidArgument("max_cg_iterations: must be >= 1");
  if (!(cg_forcing > 0 && cg_forcing < 1)) return InvalidArgument("cg_forcing: must be in (0, 1)");
  if (target_objective && !std::isfinite(*target_objective)) return InvalidArgument("target_objective: must be finite");
  if (!(round_timeout_seconds > 0)) return InvalidArgument("round_timeout_seconds: must be positive");
  if (!(start_timeout_seconds > 0)) return InvalidArgument("start_timeout_seconds: must be positive");
  return Status::Ok();
}

namespace {

// Whether a checkpoint's workers held the shards these workers hold.
Status SameShards(const MasterState& state, const std::vector<WorkerReady>& ready, std::size_t model_size) {
  if (state.workers.size() != ready.size()) {
    return FailedPrecondition("the checkpoint has " + std::to_string(state.workers.size()) + " workers, this run " +
                              std::to_string(ready.size()));
  }
  for (std::size_t i = 0; i < ready.size(); ++i) {
    if (state.workers[i].rows != ready[i].rows || state.workers[i].nnz != ready[i].nnz) {
      return FailedPrecondition("worker " + std::to_string(i) + "'s shard is not the checkpointed run's");
    }
  }
  if (state.z.size() != model_size) return FailedPrecondition("the checkpoint's model has another size");
  return Status::Ok();
}

// How the solve ended, when no stop rule ended it earlier.
void RecordOutcome(const LocalSolveStats& stats, int max_iterations, Summary& summary) {
  if (stats.converged) {
    summary.termination = Termination::kConverged;
    summary.message = "the norm of the minimum subgradient is below its tolerance";
  } else if (summary.iterations >= max_iterations) {
    summary.termination = Termination::kMaxIterations;
    summary.message = "reached the iteration cap of " + std::to_string(max_iterations);
  } else {
    summary.termination = Termination::kConverged;
    summary.message = "no step decreases the objective further (the limit of its rounding)";
  }
}

// The Newton steps on the executor's workers, as the master runs them:
//
//   Start        the workers up (a resumed run's: the same shards as its checkpoint's)
//   Steps        TRON (or its active-set or proximal form) on the distributed objective;
//                after each step, AfterStep: the progress recorded, a checkpoint when due,
//                the stop rules (a target objective, the caller's callback)
//   Finish       the workers stopped; the model, the last iterate the workers evaluated
//
// The stop test scales ||v(0)||, the minimum subgradient's norm at the start: a resumed run's,
// a warm start's, the zero model's (one round more), or else the first iterate's.
class NewtonSolve {
 public:
  NewtonSolve(const ProblemSpec& spec, const NewtonOptions& options, Executor& executor, const MasterHooks& hooks,
              const MasterState* resume, const WarmStart& warm)
      : spec_(spec), options_(options), executor_(executor), hooks_(hooks), resume_(resume), warm_(warm) {
    summary_.algorithm = Algorithm::kNewton;
    summary_.algorithm_reason = hooks.algorithm_reason;
  }

  Result<Solution> Run() {
    NIMBUS_RETURN_IF_ERROR(CheckOptions());
    if (Status started = Start(); !started.ok()) {
      executor_.Stop();
      return resume_ ? started.WithContext("cannot resume") : started;
    }
    const LocalSolveStats stats = Steps();
    return Finish(stats);
  }

 private:
  Status CheckOptions() const;
  Status Start();
  LocalSolveStats Steps();
  NewtonCgOptions TronOptions(double known_reference) const;
  bool AfterStep(const NewtonCgOptions::Progress& progress);
  void Checkpoint(const NewtonCgOptions::Progress& progress, int step);
  bool End(Termination termination, std::string message) {
    summary_.termination = termination;
    summary_.message = std::move(message);
    stopped_early_ = true;
    return false;
  }
  Result<Solution> Finish(const LocalSolveStats& stats);

  const ProblemSpec& spec_;
  const NewtonOptions& options_;
  Executor& executor_;
  const MasterHooks& hooks_;  // the iteration callback, the trace, the checkpoints' writer
  const MasterState* resume_;
  const WarmStart& warm_;

  Summary summary_;
  std::vector<WorkerReady> ready_;
  std::unique_ptr<DistributedObjective> objective_;
  double reference_ = -1;       // ||v(0)||, once known
  int64_t steps_before_ = 0;    // a resumed run's steps, made before
  double seconds_before_ = 0;   // and its solve's seconds
  int64_t next_checkpoint_ = 0;
  bool stopped_early_ = false;  // a stop rule ended the steps
  Stopwatch solve_watch_;
  Vector x_;                    // the steps' iterate
  // Each entry's independent block (a one-vs-rest model's class), which TRON's options point at.
  std::vector<uint32_t> block_of_ = EntryBlocks(spec_, spec_.model_size());
};

Status NewtonSolve::CheckOptions() const {
  NIMBUS_RETURN_IF_ERROR(spec_.Validate());
  NIMBUS_RETURN_IF_ERROR(options_.Validate());
  if (executor_.SumsAmongWorkers()) {
    return InvalidArgument("algorithm newton: needs a master (not the allreduce topology)");
  }
  if (resume_ != nullptr && resume_->algorithm != Algorithm::kNewton) {
    return InvalidArgument("checkpoint: the run was " + std::string(NameOf(resume_->algorithm)) + "'s, not Newton's");
  }
  if (!warm_.x.empty() && warm_.x.size() != spec_.model_size()) {
    return InvalidArgument("warm start: " + std::to_string(warm_.x.size()) + " entries for a model of " +
                           std::to_string(spec_.model_size()));
  }
  return Status::Ok();
}

Status NewtonSolve::Start() {
  NIMBUS_ASSIGN_OR_RETURN(ready_, StartWorkers(executor_, spec_, options_.start_timeout_seconds, summary_));
  if (resume_) NIMBUS_RETURN_IF_ERROR(SameShards(*resume_, ready_, spec_.model_size()));
  if (hooks_.trace != nullptr) hooks_.trace->Write(SetupEvent(executor_, spec_, ready_, 0, summary_.setup_seconds));
  return Status::Ok();
}

// TRON's options: its stop test at ||v|| <= tolerance ||v(0)|| (relative to the first
// iterate's when ||v(0)|| is not known yet; off with a target objective, which is then the
// stop test), the trust region a resumed run had, and the steps left.
NewtonCgOptions NewtonSolve::TronOptions(double known_reference) const {
  NewtonCgOptions newton;
  const double scale = options_.target_objective ? 0 : options_.gradient_tolerance;
  newton.gradient_tolerance = scale * known_reference;
  newton.relative_tolerance = known_reference > 0 ? 0 : scale;
  newton.initial_radius = resume_ ? resume_->radius : 0;
  newton.max_iterations = options_.max_iterations - static_cast<int>(steps_before_);
  newton.max_cg_iterations = options_.max_cg_iterations;
  newton.cg_forcing = options_.cg_forcing;
  newton.blocks = IndependentBlocks(spec_);
  newton.block_of = block_of_;
  return newton;
}

LocalSolveStats NewtonSolve::Steps() {
  double known_reference = resume_ ? resume_->gradient_reference : warm_.gradient_reference;
  const int64_t first_round = resume_ ? resume_->next_round : warm_.first_round;
  objective_ = std::make_unique<DistributedObjective>(
      spec_, executor_, ready_, options_.round_timeout_seconds, first_round, resume_ ? 0 : first_round,
      options_.gradient_tolerance, options_.gradient_tolerance * known_reference, summary_, hooks_.trace);
  objective_->SetLeanProducts(options_.lean_products);
  if (!resume_ && warm_.reference_at_zero && known_reference == 0) known_reference = objective_->ReferenceAtZero();
  steps_before_ = resume_ ? resume_->iterations : 0;
  seconds_before_ = resume_ ? resume_->solve_seconds : 0;
  if (resume_) summary_.resumed_at_round = resume_->next_round;
  reference_ = known_reference > 0 ? known_reference : -1;
  next_checkpoint_ = hooks_.checkpoint_every > 0 ? (steps_before_ / hooks_.checkpoint_every + 1) * hooks_.checkpoint_every : 0;
  solve_watch_ = Stopwatch();
  NewtonCgOptions newton = TronOptions(known_reference);
  newton.after_iteration = [this](const NewtonCgOptions::Progress& progress) { return AfterStep(progress); };
  x_ = resume_ ? resume_->z.ToVector() : !warm_.x.empty() ? warm_.x : Vector(spec_.model_size(), 0.0);
  // TRON for a smooth problem, TRON on active sets with an l1 term, proximal Newton with a
  // program's own regularizer known by its prox only.
  const LocalSolveStats stats = HasRoughCustom(spec_.regularizer) ? ProximalNewton(*objective_, spec_, newton).Minimize(x_)
                                : spec_.regularizer.l1 > 0 ? ActiveSetNewton(*objective_, spec_, newton).Minimize(x_)
                                                           : MinimizeNewtonCg(*objective_, x_, newton);
  summary_.solve_seconds = seconds_before_ + solve_watch_.ElapsedSeconds();
  summary_.iterations = static_cast<int>(steps_before_) + stats.iterations;
  summary_.local_iterations = summary_.iterations;
  summary_.gradient_norm = stats.final_gradient_norm;
  summary_.gradient_tolerance =
      options_.gradient_tolerance * (reference_ > 0 ? reference_ : stats.initial_gradient_norm);
  if (!objective_->failed() && !stopped_early_) RecordOutcome(stats, options_.max_iterations, summary_);
  return stats;
}

// After each step: its figures in the summary and the trace's stop test, a checkpoint when one
// is due, and the stop rules; false ends the steps.
bool NewtonSolve::AfterStep(const NewtonCgOptions::Progress& progress) {
  if (objective_->failed()) return false;
  if (reference_ < 0) reference_ = progress.initial_gradient_norm;
  const double tolerance = options_.gradient_tolerance * reference_;
  objective_->SetProgress(progress.gradient_norm, tolerance);
  const int step = static_cast<int>(steps_before_) + progress.iteration;
  summary_.iterations = step;
  summary_.objective = progress.value;
  summary_.gradient_norm = progress.gradient_norm;
  summary_.solve_seconds = seconds_before_ + solve_watch_.ElapsedSeconds();
  // (With an l1 term a cycle makes several steps: the first at or past each multiple counts.)
  if (hooks_.checkpoint_every > 0 && step >= next_checkpoint_) {
    Checkpoint(progress, step);
    next_checkpoint_ = (step / hooks_.checkpoint_every + 1) * hooks_.checkpoint_every;
  }
  if (options_.target_objective && progress.value <= *options_.target_objective) {
    return End(Termination::kTargetObjective, "the objective reached the target");
  }
  const IterationInfo info{.algorithm = Algorithm::kNewton,
                           .iteration = step,
                           .elapsed_seconds = summary_.solve_seconds,
                           .objective = progress.value,
                           .gradient_norm = progress.gradient_norm,
                           .gradient_tolerance = tolerance};
  if (hooks_.callback && !hooks_.callback(info)) return End(Termination::kUserStopped, "stopped by the iteration callback");
  return true;
}

void NewtonSolve::Checkpoint(const NewtonCgOptions::Progress& progress, int step) {
  MasterState state;
  state.algorithm = Algorithm::kNewton;
  state.radius = progress.radius;
  state.iterations = step;
  state.gradient_reference = reference_;
  state.next_round = objective_->rounds();
  state.z = objective_->iterate();
  state.z_last = objective_->iterate();
  for (const WorkerReady& r : ready_) state.workers.push_back({r.rows, r.nnz, {}, {}});
  state.solve_seconds = summary_.solve_seconds;
  state.objective = progress.value;
  KeepCheckpoint(hooks_.checkpoint_writer, state, summary_);
}

// The model is the last accepted point, whose objective the workers computed exactly (else,
// should no point have been evaluated, the steps' own x).
Result<Solution> NewtonSolve::Finish(const LocalSolveStats& stats) {
  const bool evaluated = objective_->iterate().size() == spec_.model_size();
  Vector model = evaluated ? objective_->iterate().ToVector() : std::move(x_);
  Vector gradient = evaluated ? objective_->iterate_gradient() : Vector();
  if (evaluated) summary_.objective = objective_->iterate_value();
  summary_.cg_iterations = stats.cg_iterations;
  Solution solution = FinishSolve(executor_, spec_, std::move(model), std::move(summary_), hooks_.trace);
  solution.gradient = std::move(gradient);
  return solution;
}

}  // namespace

Result<Solution> NewtonMaster::Solve() {
  return NewtonSolve(spec_, options_, *executor_, hooks_, resume_.get(), warm_).Run();
}

}  // namespace nimbus
