#include "nimbus/columns/column_descent.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <numeric>
#include <optional>
#include <thread>

#include "nimbus/columns/column_block.h"
#include "nimbus/core/clock.h"
#include "nimbus/core/format.h"
#include "nimbus/problem/loss.h"

namespace nimbus {
namespace {

// Armijo's constant and the most halvings of a step (Tseng and Yun's rule, as newGLMNET's).
constexpr double kSufficientDecrease = 0.01;
constexpr int kMaxHalvings = 40;

// The blocks in this process, stepped on its threads (block b on thread b mod threads; with
// twice the threads of the blocks, each block on two).
class LocalBlockStepper final : public BlockStepper {
 public:
  // The matrix's columns in `layout`'s blocks (its cuts given).
  // `build_threads` build each block (0: as many as the machine has cores; `threads` step the
  // blocks).
  LocalBlockStepper(const CsrView& matrix, const ColumnLayout& layout, bool intercept, int threads,
                    int build_threads = 0);
  // `whole`'s blocks on a subset of its rows (ColumnBlock::OnRows).
  LocalBlockStepper(const LocalBlockStepper& whole, std::span<const uint32_t> new_row, int64_t rows);
  const std::vector<BlockRange>& blocks() const override { return ranges_; }
  int64_t nnz() const override { return nnz_; }
  Result<std::vector<BlockStep>> Step(const RowDerivatives& at, std::span<const double> x,
                                      const BlockModelOptions& model, std::span<const uint8_t> eligible) override;
  Result<std::vector<double>> Margins(std::span<const double> v) override;
  // grad_j of the loss on every column, the intercept's last: sum_r a_rj g_r (a pass).
  std::vector<double> LossGradient(std::span<const double> row_gradient) const;

 private:
  std::vector<ColumnBlock> blocks_;
  std::vector<BlockRange> ranges_;
  int64_t nnz_ = 0, rows_ = 0;
  int threads_ = 1;
};

// What the loop reads and does not change (a path changes spec's l1 and the eligible set
// between its points).
struct ColumnProblem {
  ProblemSpec spec;
  std::span<const double> labels, weights;
  BlockStepper* stepper = nullptr;  // where the blocks are stepped
  std::vector<BlockRange> blocks;   // the stepper's
  double scale = 0;               // 1 / N
  std::vector<uint8_t> eligible;  // per coordinate: 0 held at zero by the strong rules (empty: none)
};

// The loop's state: one struct, every step a function of it.
struct DescentState {
  std::vector<double> x;        // d weights, then the intercept
  std::vector<double> margins;  // A x + b
  RowDerivatives at;            // the loss's derivatives at the margins, times c_r / N
  double objective = 0;         // F(x)
  std::vector<BlockStep> steps;         // each block's at x
  std::vector<double> direction;        // d: the blocks' deltas side by side
  std::vector<double> margin_direction;  // A d (+ the intercept's change)
  double decrease = 0;                  // Tseng and Yun's D: grad f . d + l1 (|x + d|_1 - |x|_1)
  double step_size = 1;                 // alpha
  double change = 0;                    // F(x + alpha d) - F(x), as SearchLine found it (a difference)
  double curvature_scale = 1;           // sigma, the blocks' models'
  double damping = 0;                   // mu, the blocks' models'
  std::vector<double> last_step;        // s = alpha d of the last iteration, and A s
  std::vector<double> last_margin_step;
  double subgradient_reference = 0;  // the stop test's ||v||: the first iteration's, or a path's ||v(0)||
  ColumnDescentSummary summary;
};

double Objective(const ColumnProblem& problem, std::span<const double> x, std::span<const double> margins) {
  return SumLoss(problem.spec.loss, problem.labels, margins, problem.weights) * problem.scale +
         problem.spec.regularizer.Value(x, problem.spec.regularized_size());
}

void Start(const ColumnProblem& problem, DescentState& state) {
  state.x.assign(problem.spec.model_size(), 0.0);
  state.margins.assign(problem.labels.size(), 0.0);
  state.at.first.resize(problem.labels.size());
  state.at.second.resize(problem.labels.size());
  state.objective = Objective(problem, state.x, state.margins);
}

// g_r and h_r at the margins.
void TakeDerivatives(const ColumnProblem& problem, DescentState& state) {
  LossDerivatives(problem.spec.loss, problem.labels, state.margins, problem.scale, state.at.first, state.at.second,
                  problem.weights);
}

// Each block's coordinate descent on its model at x: the workers' part of a round.
Status StepEachBlock(const ColumnProblem& problem, const ColumnDescentOptions& options, DescentState& state) {
  const BlockModelOptions model{problem.spec.regularizer.l1, problem.spec.regularizer.l2, options.max_inner_passes,
                                options.inner_ratio, state.curvature_scale, state.damping, problem.spec.intercept};
  NIMBUS_ASSIGN_OR_RETURN(state.steps, problem.stepper->Step(state.at, state.x, model, problem.eligible));
  double squared = 0;
  int64_t entries = 0;
  for (const BlockStep& step : state.steps) {
    squared += step.subgradient_squared;
    entries += step.entries_read;
  }
  state.summary.subgradient_norm = std::sqrt(squared);
  if (state.summary.iterations == 0) {
    state.summary.initial_subgradient_norm = state.summary.subgradient_norm;
    if (state.subgradient_reference == 0) state.subgradient_reference = state.summary.subgradient_norm;
    state.summary.subgradient_tolerance = options.gradient_tolerance * state.subgradient_reference;
  }
  const auto nnz = static_cast<double>(std::max<int64_t>(problem.stepper->nnz(), 1));
  state.summary.data_passes += static_cast<double>(entries) / nnz;
  return Status::Ok();
}

bool Converged(const DescentState& state) {
  return state.summary.subgradient_norm <= state.summary.subgradient_tolerance;
}

// Tseng and Yun's D is 0 exactly where x is stationary; one within F's rounding, along which no
// step decreases F, is as close as the arithmetic gets (the first point of a path at lambda_max,
// or a stop test finer than the arithmetic).
bool StationaryToRounding(const DescentState& state) {
  return std::abs(state.decrease) <= 4 * std::numeric_limits<double>::epsilon() * std::abs(state.objective);
}

// A direction the step is made of: weights from `offset` on, the intercept's change, and the
// change of the margins.
struct Direction {
  std::size_t offset = 0;
  std::span<const double> weights;
  double intercept = 0;
  std::span<const double> margins;
};

// A step on coordinates from `offset` on (the intercept's last, if it reaches it) as a direction.
Direction DirectionOf(const ColumnProblem& problem, std::size_t offset, std::span<const double> coordinates,
                      double intercept, std::span<const double> margins) {
  if (offset + coordinates.size() > problem.spec.regularized_size()) {  // the intercept's block, or a whole step
    intercept += coordinates.back();
    coordinates = coordinates.first(coordinates.size() - 1);
  }
  return {offset, coordinates, intercept, margins};
}

// The blocks' steps, then the last step (once there is one).
std::vector<Direction> Directions(const ColumnProblem& problem, const DescentState& state) {
  std::vector<Direction> directions;
  for (std::size_t b = 0; b < problem.blocks.size(); ++b) {
    const BlockStep& step = state.steps[b];
    directions.push_back(
        DirectionOf(problem, problem.blocks[b].begin, step.delta, step.intercept_change, step.margin_change));
  }
  if (!state.last_step.empty()) directions.push_back(DirectionOf(problem, 0, state.last_step, 0, state.last_margin_step));
  return directions;
}

// sum_j u_j v_j over the weights both directions have, and the intercept's if `intercept`.
double CoordinateDot(const Direction& u, const Direction& v, bool intercept) {
  const std::size_t begin = std::max(u.offset, v.offset);
  const std::size_t end = std::min(u.offset + u.weights.size(), v.offset + v.weights.size());
  double sum = intercept ? u.intercept * v.intercept : 0.0;
  for (std::size_t j = begin; j < end; ++j) sum += u.weights[j - u.offset] * v.weights[j - v.offset];
  return sum;
}

// Solves (M + ridge I) w = b, M symmetric positive semidefinite and small, by Cholesky; the
// ridge (1e-10 of M's mean diagonal) keeps parallel directions from making it singular.
std::vector<double> SolveSmallSystem(std::vector<double> m, std::vector<double> b) {
  const std::size_t n = b.size();
  double trace = 0;
  for (std::size_t i = 0; i < n; ++i) trace += m[i * n + i];
  for (std::size_t i = 0; i < n; ++i) m[i * n + i] += 1e-10 * trace / static_cast<double>(n) + 1e-300;
  for (std::size_t i = 0; i < n; ++i) {  // m's lower triangle becomes L, m = L L^T
    for (std::size_t k = 0; k <= i; ++k) {
      double v = m[i * n + k];
      for (std::size_t t = 0; t < k; ++t) v -= m[i * n + t] * m[k * n + t];
      m[i * n + k] = i == k ? std::sqrt(std::max(v, 1e-300)) : v / m[k * n + k];
    }
  }
  for (std::size_t i = 0; i < n; ++i) {  // L y = b
    for (std::size_t t = 0; t < i; ++t) b[i] -= m[i * n + t] * b[t];
    b[i] /= m[i * n + i];
  }
  for (std::size_t i = n; i-- > 0;) {  // L^T w = y
    for (std::size_t t = i + 1; t < n; ++t) b[i] -= m[t * n + i] * b[t];
    b[i] /= m[i * n + i];
  }
  return b;
}

// The weights w minimizing F's quadratic model at x over d = sum_i w_i p_i:
//   c^T w + w^T M w / 2,  c_i = g . A p_i + (l2 x + l1 xi) . p_i,
//   M_ik = (A p_i)^T H (A p_k) + l2 p_i . p_k + (mu + nu) p_i . p_k (the blocks' damping and floor),
// with l1 |.| taken as linear on the orthant xi: x's signs, and where x_j = 0 the blocks' step's.
std::vector<double> WeighDirections(const ColumnProblem& problem, const DescentState& state,
                                    const std::vector<Direction>& directions) {
  const Regularizer& g = problem.spec.regularizer;
  const std::size_t regularized = problem.spec.regularized_size(), n = directions.size();
  std::vector<double> orthant(regularized, 0.0);
  for (std::size_t b = 0; b < problem.blocks.size(); ++b) {
    for (std::size_t k = 0; k < directions[b].weights.size(); ++k) {
      const std::size_t j = directions[b].offset + k;
      const double sign_of = state.x[j] != 0 ? state.x[j] : directions[b].weights[k];
      orthant[j] = sign_of > 0 ? 1.0 : sign_of < 0 ? -1.0 : 0.0;
    }
  }
  std::vector<double> linear(n, 0.0), hessian(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const Direction& p = directions[i];
    double c = 0;
    for (std::size_t r = 0; r < p.margins.size(); ++r) c += state.at.first[r] * p.margins[r];
    for (std::size_t k = 0; k < p.weights.size(); ++k) {
      const std::size_t j = p.offset + k;
      c += (g.l2 * state.x[j] + g.l1 * orthant[j]) * p.weights[k];
    }
    linear[i] = -c;
    for (std::size_t k = 0; k <= i; ++k) {
      // l2 (not on the intercept), the damping and the floor, as the blocks' models have them:
      // without the last two a direction on rows with h ~ 0 looked free, and its weight ran to
      // 1e9 (Debian packages' first 2,000 rows, 16 blocks).
      double curvature = g.l2 * CoordinateDot(p, directions[k], false) +
                         (state.damping + kBlockCurvatureFloor) * CoordinateDot(p, directions[k], true);
      for (std::size_t r = 0; r < p.margins.size(); ++r) {
        curvature += state.at.second[r] * p.margins[r] * directions[k].margins[r];
      }
      hessian[i * n + k] = hessian[k * n + i] = curvature;
    }
  }
  return SolveSmallSystem(std::move(hessian), std::move(linear));
}

// d = sum_i w_i p_i and A d, and Tseng and Yun's D = grad f . d + l1 (|x + d|_1 - |x|_1).
void Assemble(const ColumnProblem& problem, const std::vector<Direction>& directions,
              const std::vector<double>& weights, DescentState& state) {
  state.direction.assign(state.x.size(), 0.0);
  state.margin_direction.assign(state.margins.size(), 0.0);
  for (std::size_t i = 0; i < directions.size(); ++i) {
    const Direction& p = directions[i];
    for (std::size_t k = 0; k < p.weights.size(); ++k) state.direction[p.offset + k] += weights[i] * p.weights[k];
    if (problem.spec.intercept) state.direction.back() += weights[i] * p.intercept;
    for (std::size_t r = 0; r < p.margins.size(); ++r) state.margin_direction[r] += weights[i] * p.margins[r];
  }
  const Regularizer& g = problem.spec.regularizer;
  double decrease = 0;
  for (std::size_t r = 0; r < state.margins.size(); ++r) decrease += state.at.first[r] * state.margin_direction[r];
  for (std::size_t j = 0; j < problem.spec.regularized_size(); ++j) {
    const double x = state.x[j], d = state.direction[j];
    decrease += g.l2 * x * d + g.l1 * (std::abs(x + d) - std::abs(x));
  }
  state.decrease = decrease;
}

// loss(y, m + step) - loss(y, m), computed as a difference, not as two values subtracted: near
// the optimum the line search's decreases are far below F's last digit.
double LossChange(const Loss& loss, double y, double m, double step) {
  switch (loss.kind()) {
    case LossKind::kLogistic: {
      // log(1 + e^b) - log(1 + e^a) = log1p(expm1(b - a) sigma(a)), a = -y m, b = -y (m + step)
      const double a = -y * m, change = -y * step;
      if (std::abs(change) > 30) return LossValue(loss, y, m + step) - LossValue(loss, y, m);
      return std::log1p(std::expm1(change) / (1 + std::exp(-a)));
    }
    case LossKind::kSquared: return step * ((m - y) + step / 2);
    case LossKind::kSquaredHinge:
    case LossKind::kCustom: break;
  }
  return LossValue(loss, y, m + step) - LossValue(loss, y, m);
}

// F(x + alpha d) - F(x), on the margins m = A x and A d: no data pass.
double ObjectiveChange(const ColumnProblem& problem, std::span<const double> x, std::span<const double> margins,
                       std::span<const double> direction, std::span<const double> margin_direction, double alpha) {
  double loss = 0;
  for (std::size_t r = 0; r < margins.size(); ++r) {
    const double c = problem.weights.empty() ? 1.0 : problem.weights[r];
    loss += c * LossChange(problem.spec.loss, problem.labels[r], margins[r], alpha * margin_direction[r]);
  }
  const Regularizer& g = problem.spec.regularizer;
  double regularizer = 0;
  for (std::size_t j = 0; j < problem.spec.regularized_size(); ++j) {
    const double d = alpha * direction[j];
    if (d != 0) regularizer += g.l1 * (std::abs(x[j] + d) - std::abs(x[j])) + g.l2 * d * (x[j] + d / 2);
  }
  return loss * problem.scale + regularizer;
}

double ObjectiveChange(const ColumnProblem& problem, const DescentState& state, double alpha) {
  return ObjectiveChange(problem, state.x, state.margins, state.direction, state.margin_direction, alpha);
}

// alpha = 1, 1/2, ... until F(x + alpha d) - F(x) <= sigma alpha D (Tseng and Yun's rule).
Status SearchLine(const ColumnProblem& problem, DescentState& state) {
  if (!(state.decrease < 0)) {
    return FailedPrecondition("the blocks' direction does not descend (D = " + Format("%.3g", state.decrease) + ")");
  }
  state.step_size = 1;
  for (int halving = 0; halving <= kMaxHalvings; ++halving) {
    state.change = ObjectiveChange(problem, state, state.step_size);
    if (state.change <= kSufficientDecrease * state.step_size * state.decrease) {
      for (std::size_t j = 0; j < state.x.size(); ++j) state.x[j] += state.step_size * state.direction[j];
      for (std::size_t r = 0; r < state.margins.size(); ++r) {
        state.margins[r] += state.step_size * state.margin_direction[r];
      }
      state.objective = Objective(problem, state.x, state.margins);
      state.last_step = state.direction;
      state.last_margin_step = state.margin_direction;
      for (double& s : state.last_step) s *= state.step_size;
      for (double& s : state.last_margin_step) s *= state.step_size;
      return Status::Ok();
    }
    state.step_size /= 2;
    ++state.summary.step_halvings;
  }
  return FailedPrecondition("the line search found no decrease in " + std::to_string(kMaxHalvings) + " halvings");
}

// The step from the blocks': along their weighed direction, or along their sum where that one
// does not descend or no step along it decreases F (the orthant's linear l1 can misjudge the
// weighing).
Status MoveAlongBlocks(const ColumnProblem& problem, const ColumnDescentOptions& options, DescentState& state) {
  const std::vector<Direction> directions = Directions(problem, state);
  if (options.combination == BlockCombination::kWeighted) {
    Assemble(problem, directions, WeighDirections(problem, state, directions), state);
    if (state.decrease < 0 && SearchLine(problem, state).ok()) return Status::Ok();
  }
  std::vector<double> sum(directions.size(), 1.0);
  if (!state.last_step.empty()) sum.back() = 0;
  Assemble(problem, directions, sum, state);
  return SearchLine(problem, state);
}

// The blocks' zeroings taken whole: x + z and its margins, z the parts of the steps that set
// weights to zero (delta_j = -x_j) with, where the columns are centred, the intercept's share
// of them, moved out of the steps; z and A z into the last two.
void TakeZeros(const ColumnProblem& problem, DescentState& state, std::vector<double>& z,
               std::vector<double>& margins_of_z) {
  for (std::size_t b = 0; b < problem.blocks.size(); ++b) {
    BlockStep& step = state.steps[b];
    if (step.zero_margin_change.empty()) continue;
    if (z.empty()) {
      z.assign(state.x.size(), 0.0);
      margins_of_z.assign(state.margins.size(), 0.0);
    }
    const std::size_t offset = problem.blocks[b].begin;
    for (std::size_t k = 0; k < step.delta.size(); ++k) {
      const std::size_t j = offset + k;
      if (j >= problem.spec.regularized_size() || step.delta[k] == 0 || state.x[j] + step.delta[k] != 0) continue;
      z[j] = step.delta[k];
      state.x[j] = 0;
      step.delta[k] = 0;
    }
    if (step.zero_intercept_change != 0) {  // the intercept's share of z, out of the step's intercept part
      const double share = step.zero_intercept_change;
      z.back() += share;
      state.x.back() += share;
      (problem.blocks[b].intercept ? step.delta.back() : step.intercept_change) -= share;
    }
    for (std::size_t r = 0; r < state.margins.size(); ++r) {
      state.margins[r] += step.zero_margin_change[r];
      margins_of_z[r] += step.zero_margin_change[r];
      step.margin_change[r] -= step.zero_margin_change[r];
    }
  }
}

// The master's part of a round. The weights the blocks set to zero go to zero whole; the rest of
// their steps, and the last step, are weighed at that point (docs/benchmarks.md, "The lead: the
// tail's tiny weights": weighed with the rest, a zeroed weight kept x_j (1 - alpha w_b), round
// after round). The steps are also weighed whole from x, and of the two the lower F is taken
// (each F(x + ...) - F(x) summed as differences). Taken whole whenever they lowered F, zeros
// that the next round's step undid again came and went round after round where a weight's
// gradient sits at l1: Fashion-MNIST's path with an intercept took 310 rounds for its 20 points
// where it had taken 105 (and takes 94 now); Debian L1 1e-6 at K = 1 / 2 / 16: 15 / 54 / 94
// rounds always taking them, 16 / 61 / 103 taking the lower.
Status MoveAlongSteps(const ColumnProblem& problem, const ColumnDescentOptions& options, DescentState& state) {
  const auto zeroes = [](const BlockStep& step) { return !step.zero_margin_change.empty(); };
  if (std::none_of(state.steps.begin(), state.steps.end(), zeroes)) return MoveAlongBlocks(problem, options, state);
  DescentState whole = state;
  const Status whole_made = MoveAlongBlocks(problem, options, whole);
  const std::vector<double> x = state.x, margins = state.margins;
  std::vector<double> z, margins_of_z;
  TakeZeros(problem, state, z, margins_of_z);
  // F(x + z) - F(x) and then the search's change from there, each as a difference: F's values
  // near the optimum differ from the last step's change in their last digits.
  const double zeros_change = ObjectiveChange(problem, x, margins, z, margins_of_z, 1);
  state.objective = Objective(problem, state.x, state.margins);
  TakeDerivatives(problem, state);
  const bool zeros_made = MoveAlongBlocks(problem, options, state).ok() && zeros_change + state.change < 0;
  if (zeros_made && (!whole_made.ok() || zeros_change + state.change <= whole.change)) {
    // The step made: z and alpha d, as the sum of their parts (a difference of the points would
    // put their rounding into the next round's weighed span, where it can grow).
    for (std::size_t j = 0; j < z.size(); ++j) state.last_step[j] += z[j];
    for (std::size_t r = 0; r < margins_of_z.size(); ++r) state.last_margin_step[r] += margins_of_z[r];
    return Status::Ok();
  }
  state = std::move(whole);
  return whole_made;
}

// After a cut step (the blocks' models overshot) sigma x 2, up to the number of blocks, if it
// adapts, and mu x 4 (from options.damping); after a full one, sigma / 2 down to 1 and mu / 4,
// to 0 below options.damping.
void AdaptModels(const ColumnProblem& problem, const ColumnDescentOptions& options, DescentState& state) {
  const bool cut = state.step_size < 1;
  if (options.curvature_scale == 0) {
    const double most = static_cast<double>(problem.blocks.size());
    state.curvature_scale = cut ? std::min(2 * state.curvature_scale, most) : std::max(state.curvature_scale / 2, 1.0);
  }
  if (cut) {
    state.damping = std::max(4 * state.damping, options.damping);
  } else {
    state.damping = state.damping / 4 < options.damping ? 0.0 : state.damping / 4;
  }
}

Status CheckProblem(const ProblemSpec& spec, int64_t rows, std::span<const double> labels,
                    std::span<const double> row_weights) {
  NIMBUS_RETURN_IF_ERROR(spec.Validate());
  if (spec.copies != 1 || spec.multinomial || spec.regularizer.custom) {
    return InvalidArgument("the column method solves binary, one-vs-rest and regression problems with l1 and l2 "
                           "(no softmax, folds or custom regularizer yet)");
  }
  if (static_cast<int64_t>(labels.size()) != rows || (!row_weights.empty() && row_weights.size() != labels.size())) {
    return InvalidArgument("the column method: one label (and weight) per row");
  }
  return Status::Ok();
}

}  // namespace

Status ColumnDescentOptions::Validate() const {
  if (blocks < 1) return InvalidArgument("blocks: at least 1");
  if (max_iterations < 1) return InvalidArgument("max iterations: at least 1");
  if (!(gradient_tolerance >= 0 && gradient_tolerance < 1)) return InvalidArgument("gradient tolerance: in [0, 1)");
  if (max_inner_passes < 1) return InvalidArgument("inner passes: at least 1");
  if (!(inner_ratio >= 0 && inner_ratio < 1)) return InvalidArgument("inner ratio: in [0, 1)");
  if (!(curvature_scale == 0 || curvature_scale >= 1)) return InvalidArgument("curvature scale: 0 (adapt) or at least 1");
  if (!(damping >= 0 && std::isfinite(damping))) return InvalidArgument("damping: at least 0");
  if (threads < 1) return InvalidArgument("threads: at least 1");
  if (!layout.cuts.empty() && layout.blocks() != blocks) {
    return InvalidArgument("column layout: " + std::to_string(blocks) + " blocks, as many as the options'");
  }
  if (checkpoint_every < 0) return InvalidArgument("checkpoint every: at least 0");
  if (resume != nullptr && (resume->iterations < 1 || !(resume->subgradient_reference > 0) ||
                            !(resume->curvature_scale >= 1) || !(resume->damping >= 0) ||
                            resume->last_step.size() != resume->x.size())) {
    return InvalidArgument("resume: a state after an iteration (a positive reference, curvature scale >= 1, "
                           "damping >= 0, a last step as long as x)");
  }
  return Status::Ok();
}

std::vector<uint32_t> CutColumns(const CsrView& matrix, int blocks) {
  if (blocks <= 1) return {0, static_cast<uint32_t>(matrix.cols)};  // no pass over the entries to count
  std::vector<int64_t> per_column(static_cast<std::size_t>(matrix.cols), 0);
  for (int64_t r = 0; r < matrix.rows; ++r) {
    for (int64_t k = matrix.row_ptr[r]; k < matrix.RowEnd(r); ++k) ++per_column[matrix.col_idx[k]];
  }
  const double total = static_cast<double>(matrix.nnz());
  std::vector<uint32_t> cuts{0};
  int64_t seen = 0;
  for (uint32_t j = 0; j < per_column.size() && static_cast<int>(cuts.size()) < blocks; ++j) {
    seen += per_column[j];
    if (static_cast<double>(seen) >= total * static_cast<double>(cuts.size()) / blocks) cuts.push_back(j + 1);
  }
  while (static_cast<int>(cuts.size()) <= blocks) cuts.push_back(static_cast<uint32_t>(matrix.cols));
  cuts.back() = static_cast<uint32_t>(matrix.cols);
  return cuts;
}

std::vector<uint32_t> ColumnLayout::PositionOf() const {
  std::vector<uint32_t> position_of(order.size());
  for (std::size_t p = 0; p < order.size(); ++p) position_of[order[p]] = static_cast<uint32_t>(p);
  return position_of;
}

namespace {

// Each column's rows, ascending: the matrix's pattern by columns (its values left out).
struct ColumnPattern {
  std::vector<int64_t> start;  // cols + 1
  std::vector<uint32_t> rows;

  explicit ColumnPattern(const CsrView& matrix) : start(static_cast<std::size_t>(matrix.cols) + 1, 0) {
    for (int64_t k = 0; k < matrix.nnz(); ++k) ++start[matrix.col_idx[matrix.row_ptr[0] + k] + 1];
    for (std::size_t j = 1; j < start.size(); ++j) start[j] += start[j - 1];
    std::vector<int64_t> next(start.begin(), start.end() - 1);
    rows.resize(static_cast<std::size_t>(matrix.nnz()));
    for (int64_t r = 0; r < matrix.rows; ++r) {
      for (int64_t k = matrix.row_ptr[r]; k < matrix.RowEnd(r); ++k) {
        rows[static_cast<std::size_t>(next[matrix.col_idx[k]]++)] = static_cast<uint32_t>(r);
      }
    }
  }
  std::span<const uint32_t> RowsOf(std::size_t j) const {
    return std::span<const uint32_t>(rows).subspan(static_cast<std::size_t>(start[j]),
                                                    static_cast<std::size_t>(start[j + 1] - start[j]));
  }
};

// The block column j joins: of those it fits in (below `share` entries with it), the one whose
// rows it shares most (`shared[b]`: its rows in block b), the least filled of those tied; the
// least filled if it fits in none.
std::size_t BlockToJoin(std::span<const int64_t> shared, std::span<const int64_t> filled, int64_t entries,
                        double share) {
  std::optional<std::size_t> best;
  for (std::size_t b = 0; b < filled.size(); ++b) {
    if (static_cast<double>(filled[b] + entries) > share) continue;
    if (!best || shared[b] > shared[*best] || (shared[b] == shared[*best] && filled[b] < filled[*best])) best = b;
  }
  if (best) return *best;
  return static_cast<std::size_t>(std::min_element(filled.begin(), filled.end()) - filled.begin());
}

// The columns in their blocks' order (each block's ascending), and the blocks' bounds.
ColumnLayout LayoutOfBlocks(std::span<const std::size_t> block_of, std::size_t blocks) {
  ColumnLayout layout;
  layout.cuts.push_back(0);
  for (std::size_t b = 0; b < blocks; ++b) {
    for (std::size_t j = 0; j < block_of.size(); ++j) {
      if (block_of[j] == b) layout.order.push_back(static_cast<uint32_t>(j));
    }
    layout.cuts.push_back(static_cast<uint32_t>(layout.order.size()));
  }
  return layout;
}

}  // namespace

ColumnLayout ClusterColumns(const CsrView& matrix, int blocks) {
  if (blocks < 2 || blocks > 64) return {{}, CutColumns(matrix, blocks)};  // a bit per block
  const ColumnPattern pattern(matrix);
  const auto cols = static_cast<std::size_t>(matrix.cols), count = static_cast<std::size_t>(blocks);
  const auto entries = [&](std::size_t j) { return pattern.start[j + 1] - pattern.start[j]; };
  std::vector<std::size_t> most_first(cols);
  std::iota(most_first.begin(), most_first.end(), std::size_t{0});
  std::stable_sort(most_first.begin(), most_first.end(),
                   [&](std::size_t a, std::size_t b) { return entries(a) > entries(b); });
  const double share = 1.02 * static_cast<double>(matrix.nnz()) / blocks;
  std::vector<uint64_t> blocks_of_row(static_cast<std::size_t>(matrix.rows), 0);  // a bit per block
  std::vector<int64_t> filled(count, 0), shared(count);
  std::vector<std::size_t> block_of(cols, 0);
  for (const std::size_t j : most_first) {
    std::fill(shared.begin(), shared.end(), 0);
    for (const uint32_t r : pattern.RowsOf(j)) {
      for (uint64_t bits = blocks_of_row[r]; bits != 0; bits &= bits - 1) ++shared[std::countr_zero(bits)];
    }
    const std::size_t b = BlockToJoin(shared, filled, entries(j), share);
    block_of[j] = b;
    filled[b] += entries(j);
    for (const uint32_t r : pattern.RowsOf(j)) blocks_of_row[r] |= uint64_t{1} << b;
  }
  return LayoutOfBlocks(block_of, count);
}

ColumnLayout LayOutColumns(const CsrView& matrix, int blocks) {
  const double cells = static_cast<double>(matrix.rows) * static_cast<double>(matrix.cols);
  const double filled = cells > 0 ? static_cast<double>(matrix.nnz()) / cells : 1.0;
  if (blocks < 2 || blocks > 64 || filled >= 0.1) return {{}, CutColumns(matrix, blocks)};
  return ClusterColumns(matrix, blocks);
}

namespace {

LocalBlockStepper::LocalBlockStepper(const CsrView& matrix, const ColumnLayout& layout, bool intercept, int threads,
                                     int build_threads)
    : nnz_(matrix.nnz()), rows_(matrix.rows), threads_(threads) {
  const std::vector<uint32_t> position_of = layout.PositionOf();
  const int blocks = layout.blocks();
  for (int b = 0; b < blocks; ++b) {
    blocks_.push_back(
        ColumnBlock::Of(matrix, layout.cuts[b], layout.cuts[b + 1], intercept && b + 1 == blocks, position_of,
                        build_threads > 0 ? build_threads : static_cast<int>(std::thread::hardware_concurrency())));
    ranges_.push_back(blocks_.back().range());
  }
}

LocalBlockStepper::LocalBlockStepper(const LocalBlockStepper& whole, std::span<const uint32_t> new_row, int64_t rows)
    : ranges_(whole.ranges_), rows_(rows), threads_(whole.threads_) {
  for (const ColumnBlock& block : whole.blocks_) {
    blocks_.push_back(ColumnBlock::OnRows(block, new_row, rows));
    nnz_ += blocks_.back().nnz();
  }
}

Result<std::vector<BlockStep>> LocalBlockStepper::Step(const RowDerivatives& at, std::span<const double> x,
                                                       const BlockModelOptions& model,
                                                       std::span<const uint8_t> eligible) {
  const std::size_t blocks = blocks_.size();
  std::vector<BlockStep> steps(blocks);
  // Twice the threads of the blocks: each block's rows in two sides, a thread each.
  const int sides = static_cast<std::size_t>(threads_) >= 2 * blocks ? 2 : 1;
  const auto step_blocks = [&](std::size_t first, std::size_t stride) {
    for (std::size_t b = first; b < blocks; b += stride) {
      const ColumnBlock& block = blocks_[b];
      const std::span<const double> x_block = x.subspan(block.begin, block.size());
      const std::span<const uint8_t> own = eligible.empty() ? eligible : eligible.subspan(block.begin, block.size());
      steps[b] = MinimizeBlockModel(block, at, x_block, model, own, sides);
    }
  };
  const std::size_t threads = std::min<std::size_t>(static_cast<std::size_t>(threads_), blocks);
  std::vector<std::thread> others;
  for (std::size_t t = 1; t < threads; ++t) others.emplace_back(step_blocks, t, threads);
  step_blocks(0, std::max<std::size_t>(threads, 1));
  for (std::thread& thread : others) thread.join();
  return steps;
}

Result<std::vector<double>> LocalBlockStepper::Margins(std::span<const double> v) {
  std::vector<double> margins(static_cast<std::size_t>(rows_), 0.0);
  for (const ColumnBlock& block : blocks_) AddBlockMargins(block, v.subspan(block.begin, block.size()), margins);
  return margins;
}

std::vector<double> LocalBlockStepper::LossGradient(std::span<const double> row_gradient) const {
  std::vector<double> gradient;
  for (const ColumnBlock& block : blocks_) {
    const std::vector<double> part = BlockLossGradient(block, row_gradient);
    gradient.insert(gradient.end(), part.begin(), part.end());
  }
  return gradient;
}

ColumnProblem MakeProblem(const ProblemSpec& spec, std::span<const double> labels, std::span<const double> row_weights,
                          BlockStepper& stepper) {
  return {spec, labels, row_weights, &stepper, stepper.blocks(), 1.0 / static_cast<double>(spec.rows), {}};
}

// The iteration's outcome to the caller (its subgradient norm is at the iteration's start, its
// objective at its end); false: the caller stops the loop.
bool Report(const ColumnDescentOptions& options, DescentState& state) {
  if (!options.on_iteration) return true;
  ColumnDescentSummary now = state.summary;
  ++now.iterations;
  now.objective = state.objective;
  state.summary.stopped = !options.on_iteration(now);
  if (state.summary.stopped) ++state.summary.iterations;  // the loop's own increment is skipped
  return !state.summary.stopped;
}

// Every options.checkpoint_every iterations, the state after this one's step.
void KeepCheckpoint(const ColumnDescentOptions& options, const DescentState& state) {
  const int made = state.summary.iterations + 1;
  if (options.checkpoint_every == 0 || !options.on_checkpoint || made % options.checkpoint_every != 0) return;
  options.on_checkpoint({state.x, state.last_step, made, state.subgradient_reference, state.curvature_scale,
                         state.damping, state.margins, state.last_margin_step});
}

// x (the weights, the intercept after them) from the blocks' order into the matrix's
// (order[p]: the matrix's column at position p; empty: the same), and back.
std::vector<double> InMatrixOrder(std::span<const uint32_t> order, std::span<const double> x) {
  std::vector<double> out(x.begin(), x.end());
  for (std::size_t p = 0; p < order.size(); ++p) out[order[p]] = x[p];
  return out;
}

std::vector<double> InBlockOrder(std::span<const uint32_t> order, std::span<const double> x) {
  std::vector<double> out(x.begin(), x.end());
  for (std::size_t p = 0; p < order.size(); ++p) out[p] = x[order[p]];
  return out;
}

// The options for the loop, whose x follows the blocks' order: the state it resumes brought into
// that order, the states it keeps taken out of it (a checkpoint follows the matrix's columns).
ColumnDescentOptions InBlockOrder(const ColumnDescentOptions& options) {
  const std::vector<uint32_t>& order = options.layout.order;
  if (order.empty()) return options;
  ColumnDescentOptions ordered = options;
  if (options.resume != nullptr) {
    auto resume = std::make_shared<ColumnDescentCheckpoint>(*options.resume);
    resume->x = InBlockOrder(order, resume->x);
    resume->last_step = InBlockOrder(order, resume->last_step);
    ordered.resume = std::move(resume);
  }
  if (options.on_checkpoint) {
    ordered.on_checkpoint = [order, keep = options.on_checkpoint](const ColumnDescentCheckpoint& kept) {
      ColumnDescentCheckpoint out = kept;
      out.x = InMatrixOrder(order, kept.x);
      out.last_step = InMatrixOrder(order, kept.last_step);
      keep(out);
    };
  }
  return ordered;
}

// A layout of `cols` columns: cuts from 0 to cols, ascending; an order that is each column once.
Status CheckLayout(const ColumnLayout& layout, int64_t cols) {
  if (layout.cuts.empty() && layout.order.empty()) return Status::Ok();
  if (layout.cuts.size() < 2 || layout.cuts.front() != 0 || layout.cuts.back() != cols ||
      !std::is_sorted(layout.cuts.begin(), layout.cuts.end())) {
    return InvalidArgument("column layout: cuts ascending from 0 to the " + std::to_string(cols) + " columns");
  }
  if (layout.order.empty()) return Status::Ok();
  std::vector<uint8_t> seen(static_cast<std::size_t>(cols), 0);
  for (const uint32_t j : layout.order) {
    if (j >= seen.size() || seen[j]++ != 0) {
      return InvalidArgument("column layout: an order of the " + std::to_string(cols) + " columns, each once");
    }
  }
  if (layout.order.size() != seen.size()) {
    return InvalidArgument("column layout: an order of the " + std::to_string(cols) + " columns, each once");
  }
  return Status::Ok();
}

// The loop's state as a checkpoint left it: x and the last step, their margins, the models'
// adaptation and the stop test's reference.
Status Resume(const ColumnProblem& problem, const ColumnDescentOptions& options, const ColumnDescentCheckpoint& kept,
              DescentState& state) {
  state.x = kept.x;
  state.last_step = kept.last_step;
  const std::size_t rows = problem.labels.size();
  if (kept.margins.size() == rows && kept.last_margin_step.size() == rows) {
    state.margins = kept.margins;  // as the run had them, so that it goes on bit for bit
    state.last_margin_step = kept.last_margin_step;
  } else {  // a pass over the data each: the run goes on as it would have, to rounding
    NIMBUS_ASSIGN_OR_RETURN(state.margins, problem.stepper->Margins(state.x));
    NIMBUS_ASSIGN_OR_RETURN(state.last_margin_step, problem.stepper->Margins(state.last_step));
    state.summary.data_passes = 2;
  }
  state.objective = Objective(problem, state.x, state.margins);
  state.curvature_scale = kept.curvature_scale;
  state.damping = kept.damping;
  state.subgradient_reference = kept.subgradient_reference;
  state.summary.iterations = kept.iterations;
  state.summary.initial_subgradient_norm = kept.subgradient_reference;
  state.summary.subgradient_tolerance = options.gradient_tolerance * kept.subgradient_reference;
  return Status::Ok();
}

// The loop, from state.x: one round per iteration, distributed.
void Descend(const ColumnProblem& problem, const ColumnDescentOptions& options, DescentState& state) {
  bool stationary = false;
  if (state.summary.iterations == 0) state.curvature_scale = options.curvature_scale > 0 ? options.curvature_scale : 1;
  for (; state.summary.iterations < options.max_iterations; ++state.summary.iterations) {
    TakeDerivatives(problem, state);
    if (Status stepped = StepEachBlock(problem, options, state); !stepped.ok()) {
      state.summary.failed = true;
      state.summary.message = stepped.message();
      break;
    }
    if (Converged(state)) break;
    if (Status moved = MoveAlongSteps(problem, options, state); !moved.ok()) {
      stationary = StationaryToRounding(state);
      state.summary.message = stationary ? Format("converged: no step decreases F (D = %.3g, within its rounding)",
                                                  state.decrease)
                                         : moved.message();
      break;
    }
    AdaptModels(problem, options, state);
    KeepCheckpoint(options, state);
    if (!Report(options, state)) break;
  }
  state.summary.converged = !state.summary.failed && (Converged(state) || stationary);
  state.summary.objective = state.objective;
  if (state.summary.message.empty()) {
    state.summary.message = state.summary.converged ? "converged"
                            : state.summary.stopped ? "stopped by the caller"
                                                    : "stopped at the iteration cap";
  }
}

// grad_j f at x on every column (the loss's, plus l2 x_j), the intercept's last: a pass over
// the data, from derivatives taken at x.
std::vector<double> FullGradient(const ColumnProblem& problem, const LocalBlockStepper& blocks, DescentState& state) {
  TakeDerivatives(problem, state);
  std::vector<double> gradient = blocks.LossGradient(state.at.first);
  for (std::size_t j = 0; j < problem.spec.regularized_size(); ++j) gradient[j] += problem.spec.regularizer.l2 * state.x[j];
  state.summary.data_passes += 1;
  return gradient;
}

// A path's start x0: no weight, the intercept (if any) at its own optimum, by the loop with
// every other coordinate held at zero. Returns grad f(x0).
std::vector<double> StartPath(ColumnProblem& problem, const LocalBlockStepper& blocks,
                              const ColumnDescentOptions& options, DescentState& state) {
  Start(problem, state);
  if (problem.spec.intercept) {
    problem.eligible.assign(state.x.size(), 0);
    problem.eligible.back() = 1;
    Descend(problem, options, state);
    problem.eligible.clear();
  }
  return FullGradient(problem, blocks, state);
}

double LargestWeightGradient(const ColumnProblem& problem, std::span<const double> gradient) {
  double largest = 0;
  for (std::size_t j = 0; j < problem.spec.regularized_size(); ++j) largest = std::max(largest, std::abs(gradient[j]));
  return largest;
}

// ||v(x0)|| at this l1: every regularized gradient soft-thresholded, the intercept's as it is.
double SubgradientNormAtStart(const ColumnProblem& problem, std::span<const double> gradient_at_start) {
  double squared = 0;
  for (std::size_t j = 0; j < gradient_at_start.size(); ++j) {
    const double l1 = j < problem.spec.regularized_size() ? problem.spec.regularizer.l1 : 0.0;
    const double v = MinimumNormSubgradient(0.0, gradient_at_start[j], l1);
    squared += v * v;
  }
  return std::sqrt(squared);
}

// The sequential strong rule: x_j != 0, or |grad_j| >= 2 l1 - last_l1 (the intercept always).
std::vector<uint8_t> StrongRuleSet(const ColumnProblem& problem, std::span<const double> x,
                                   std::span<const double> gradient, double last_l1) {
  const double l1 = problem.spec.regularizer.l1;
  std::vector<uint8_t> eligible(x.size(), 1);
  for (std::size_t j = 0; j < problem.spec.regularized_size(); ++j) {
    eligible[j] = x[j] != 0 || std::abs(gradient[j]) >= 2 * l1 - last_l1;
  }
  return eligible;
}

// The KKT check: a column left out whose |grad_j| exceeds l1 would move; it becomes eligible.
int AddViolators(ColumnProblem& problem, std::span<const double> gradient) {
  int added = 0;
  for (std::size_t j = 0; j < problem.eligible.size(); ++j) {
    if (!problem.eligible[j] && std::abs(gradient[j]) > problem.spec.regularizer.l1) {
      problem.eligible[j] = 1;
      ++added;
    }
  }
  return added;
}

// A point's solves from the last point's answer: descend, check, and again while the check adds
// (each time a column, so at most once per column).
ColumnPathPoint SolvePoint(ColumnProblem& problem, const LocalBlockStepper& blocks, const ColumnPathOptions& options,
                           double reference, std::vector<double>& gradient, DescentState& state) {
  ColumnPathPoint point;
  point.l1 = problem.spec.regularizer.l1;
  ColumnDescentSummary total;
  for (;;) {
    state.summary = {};
    state.subgradient_reference = reference;
    state.damping = 0;
    state.last_step.clear();
    state.last_margin_step.clear();
    state.objective = Objective(problem, state.x, state.margins);
    Descend(problem, options.descent, state);
    gradient = FullGradient(problem, blocks, state);
    total.iterations += state.summary.iterations;
    total.data_passes += state.summary.data_passes;
    total.step_halvings += state.summary.step_halvings;
    const int added = problem.eligible.empty() ? 0 : AddViolators(problem, gradient);
    point.strong_rule_violations += added;
    if (added == 0) break;
  }
  total.converged = state.summary.converged;
  total.objective = state.objective;
  total.subgradient_norm = state.summary.subgradient_norm;
  total.initial_subgradient_norm = reference;
  total.subgradient_tolerance = state.summary.subgradient_tolerance;
  total.message = state.summary.message;
  point.summary = total;
  point.eligible = problem.eligible.empty() ? static_cast<int64_t>(state.x.size())
                                            : std::count(problem.eligible.begin(), problem.eligible.end(), 1);
  point.x = state.x;
  return point;
}

// What a path can solve: a binary or regression problem, its blocks contiguous.
Status CheckPathProblem(const ProblemSpec& spec, int64_t rows, std::span<const double> labels,
                        std::span<const double> row_weights, const ColumnPathOptions& options) {
  NIMBUS_RETURN_IF_ERROR(options.Validate());
  NIMBUS_RETURN_IF_ERROR(CheckProblem(spec, rows, labels, row_weights));
  if (spec.classes > 1) return InvalidArgument("the column method's paths: binary and regression problems only");
  if (!options.descent.layout.cuts.empty()) {
    return InvalidArgument("the column method's paths: contiguous blocks only (no layout)");
  }
  return Status::Ok();
}

// body(i) for each i in [0, count) on up to `threads` threads, each taking the next i in turn.
void ForEachOnThreads(std::size_t count, int threads, const std::function<void(std::size_t)>& body) {
  const std::size_t used = std::max<std::size_t>(std::min(static_cast<std::size_t>(std::max(threads, 1)), count), 1);
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < count; i = next++) body(i);
  };
  std::vector<std::thread> others;
  for (std::size_t t = 1; t < used; ++t) others.emplace_back(work);
  work();
  for (std::thread& thread : others) thread.join();
}

// spec with one block of weights: one-vs-rest's classes are solved one after another.
ProblemSpec BinarySpec(const ProblemSpec& spec) {
  ProblemSpec binary = spec;
  binary.classes = 1;
  binary.class_weights.clear();
  return binary;
}

// The rows of the binary problem the column method solves: a binary or regression problem's
// own (c_r = W_{class r} s_r), or class c's of one-vs-rest, itself a binary problem: its rows
// +1, the others -1, the +1 class weighing W_c (liblinear's -wi).
struct BinaryRows {
  std::vector<double> labels, weights;  // weights empty: every row 1
};

BinaryRows RowsOfClass(const ProblemSpec& spec, std::span<const double> labels, std::span<const double> row_weights,
                       int64_t c) {
  if (!spec.one_vs_rest()) return {{labels.begin(), labels.end()}, RowWeights(spec, labels, row_weights)};
  ProblemSpec binary = BinarySpec(spec);
  if (!spec.class_weights.empty()) binary.class_weights = {1.0, spec.class_weights[static_cast<std::size_t>(c)]};
  BinaryRows rows;
  for (const double label : labels) rows.labels.push_back(static_cast<int64_t>(ClassIndex(label)) == c ? 1.0 : -1.0);
  rows.weights = RowWeights(binary, rows.labels, row_weights);
  return rows;
}

// Class c's answer into one-vs-rest's model (feature j's weight at j C + c, the intercepts last),
// and its summary into the whole's.
void AddClass(const ProblemSpec& spec, int64_t c, const DescentState& state, ColumnDescentResult& result) {
  const auto classes = static_cast<std::size_t>(spec.classes), cols = static_cast<std::size_t>(spec.cols);
  for (std::size_t j = 0; j < cols; ++j) result.x[j * classes + static_cast<std::size_t>(c)] = state.x[j];
  if (spec.intercept) result.x[cols * classes + static_cast<std::size_t>(c)] = state.x[cols];
  ColumnDescentSummary& whole = result.summary;
  const ColumnDescentSummary& part = state.summary;
  if (c == 0 || (whole.converged && !part.converged)) {
    whole.message = spec.classes > 1 && !part.converged ? "class " + std::to_string(c) + ": " + part.message : part.message;
  }
  whole.converged = (c == 0 || whole.converged) && part.converged;
  whole.iterations += part.iterations;
  whole.objective += part.objective;
  whole.subgradient_norm = std::hypot(whole.subgradient_norm, part.subgradient_norm);
  whole.initial_subgradient_norm = std::hypot(whole.initial_subgradient_norm, part.initial_subgradient_norm);
  whole.subgradient_tolerance = std::hypot(whole.subgradient_tolerance, part.subgradient_tolerance);
  whole.stopped = whole.stopped || part.stopped;
  whole.failed = whole.failed || part.failed;
  whole.data_passes += part.data_passes;
  whole.step_halvings += part.step_halvings;
}

}  // namespace

struct ColumnPath::State {
  ColumnPathOptions options;
  BinaryRows rows;  // the problem's labels and weights point here
  std::optional<LocalBlockStepper> blocks;
  ColumnProblem problem;
  DescentState descent;
  std::vector<double> gradient;           // grad f at the last point's answer
  std::vector<double> gradient_at_start;  // at x0
  double l2 = 0;
  double l1_max = 0;
  double last_l1 = 0;       // the last point's, l1_max before the first
  double last_asked = 0;    // the last point's l1 (0: none yet)
};

ColumnPath::ColumnPath(std::unique_ptr<State> state) : state_(std::move(state)) {}
ColumnPath::ColumnPath(ColumnPath&&) noexcept = default;
ColumnPath& ColumnPath::operator=(ColumnPath&&) noexcept = default;
ColumnPath::~ColumnPath() = default;

Result<ColumnPath> ColumnPath::Start(const ProblemSpec& spec, const CsrView& matrix, std::span<const double> labels,
                                     std::span<const double> row_weights, const ColumnPathOptions& options) {
  NIMBUS_RETURN_IF_ERROR(CheckPathProblem(spec, matrix.rows, labels, row_weights, options));
  auto state = std::make_unique<State>();
  state->rows = RowsOfClass(spec, labels, row_weights, 0);
  state->blocks.emplace(matrix, ColumnLayout{{}, CutColumns(matrix, options.descent.blocks)}, spec.intercept,
                        options.descent.threads);
  state->options = options;
  return Begin(std::move(state), spec);
}

ColumnPath ColumnPath::Begin(std::unique_ptr<State> state, const ProblemSpec& spec) {
  state->options.on_point = nullptr;
  state->problem = MakeProblem(BinarySpec(spec), state->rows.labels, state->rows.weights, *state->blocks);
  state->gradient = StartPath(state->problem, *state->blocks, state->options.descent, state->descent);
  state->gradient_at_start = state->gradient;
  state->l2 = spec.regularizer.l2;
  state->l1_max = state->last_l1 = LargestWeightGradient(state->problem, state->gradient);
  return ColumnPath(std::move(state));
}

Result<std::vector<ColumnPath>> ColumnPath::StartFolds(const ProblemSpec& spec, const CsrView& matrix,
                                                       std::span<const double> labels,
                                                       std::span<const double> row_weights,
                                                       std::span<const uint8_t> fold_of_rows, int64_t folds,
                                                       const ColumnPathOptions& options, int threads) {
  NIMBUS_RETURN_IF_ERROR(CheckPathProblem(spec, matrix.rows, labels, row_weights, options));
  if (folds < 1 || folds > 255 || fold_of_rows.size() != labels.size()) {
    return InvalidArgument("the column method's folds: 1 to 255 of them, and a fold for each row");
  }
  const auto paths = static_cast<std::size_t>(folds + 1);
  const auto new_state = [&options] {
    auto state = std::make_unique<State>();
    state->options = options;
    return state;
  };
  std::unique_ptr<State> whole = new_state();
  whole->rows = RowsOfClass(spec, labels, row_weights, 0);
  whole->blocks.emplace(matrix, ColumnLayout{{}, CutColumns(matrix, options.descent.blocks)}, spec.intercept,
                        options.descent.threads, threads);
  const State& source = *whole;  // read by the folds' starts while the whole's path begins
  // Fold k's state: the whole's rows but those of fold k, renumbered in order.
  const auto fold_state = [&](uint8_t k, ProblemSpec& own) {
    std::unique_ptr<State> state = new_state();
    std::vector<uint32_t> new_row(fold_of_rows.size(), ColumnBlock::kDroppedRow);
    const std::vector<double>& weights = source.rows.weights;
    uint32_t kept = 0;
    for (std::size_t r = 0; r < fold_of_rows.size(); ++r) {
      if (fold_of_rows[r] == k) continue;
      new_row[r] = kept++;
      state->rows.labels.push_back(source.rows.labels[r]);
      if (!weights.empty()) state->rows.weights.push_back(weights[r]);
    }
    state->blocks.emplace(*source.blocks, new_row, kept);
    own.rows = kept;
    return state;
  };
  std::vector<std::optional<ColumnPath>> started(paths);
  std::vector<Status> statuses(paths, Status::Ok());
  ForEachOnThreads(paths, threads, [&](std::size_t k) {
    if (k + 1 == paths) {  // the whole's own path, its blocks read by the folds' meanwhile
      started[k] = Begin(std::move(whole), spec);
      return;
    }
    ProblemSpec own = spec;
    std::unique_ptr<State> state = fold_state(static_cast<uint8_t>(k), own);
    statuses[k] = CheckProblem(own, own.rows, state->rows.labels, state->rows.weights);
    if (statuses[k].ok()) started[k] = Begin(std::move(state), own);
  });
  std::vector<ColumnPath> result;
  for (std::size_t k = 0; k < paths; ++k) {
    NIMBUS_RETURN_IF_ERROR(statuses[k].WithContext("fold " + std::to_string(k)));
    result.push_back(std::move(*started[k]));
  }
  return result;
}

double ColumnPath::l1_max() const { return state_->l1_max; }

Result<ColumnPathPoint> ColumnPath::Next(double l1) {
  State& path = *state_;
  if (!(l1 > 0) || (path.last_asked > 0 && !(l1 < path.last_asked))) {
    return InvalidArgument(
        Format("the path's l1 values: positive and descending (%.17g after %.17g)", l1, path.last_asked));
  }
  path.problem.spec.regularizer = Regularizer(l1, path.l2);
  if (path.options.strong_rules) {
    path.problem.eligible = StrongRuleSet(path.problem, path.descent.x, path.gradient, std::max(path.last_l1, l1));
  }
  const double reference = SubgradientNormAtStart(path.problem, path.gradient_at_start);
  ColumnPathPoint point = SolvePoint(path.problem, *path.blocks, path.options, reference, path.gradient, path.descent);
  path.last_l1 = path.last_asked = l1;
  return point;
}

namespace {

// StepPathsAlongGrid's schedule. On Fashion-MNIST's cross-validation, each path's points timed
// one after another and replayed on 2 cores took 66.2 s with a barrier after each lambda, 60.8 s
// without (an ideal split: 58.4 s).
class PathsAlongGrid {
 public:
  PathsAlongGrid(std::vector<ColumnPath>& paths, std::span<const double> grid)
      : paths_(paths), grid_(grid.begin(), grid.end()), next_(paths.size(), 0), busy_(paths.size(), false),
        last_seconds_(paths.size(), 0.0),
        solved_(grid_.size(), std::vector<std::optional<ColumnPathPoint>>(paths.size())), end_(grid_.size()) {}

  Status Run(int thread_count, const std::function<Status(double l1, std::vector<ColumnPathPoint> points)>& emit) {
    std::vector<std::thread> threads;
    const std::size_t count = std::min(static_cast<std::size_t>(std::max(thread_count, 1)), paths_.size());
    for (std::size_t t = 0; t < count; ++t) threads.emplace_back([this] { Work(); });
    Status status = Status::Ok();
    for (std::size_t i = 0; status.ok(); ++i) {
      std::vector<ColumnPathPoint> points;
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return i >= end_ || Solved(i); });
        if (i >= end_) break;  // the grid's end, or a point's error at this lambda
        for (std::optional<ColumnPathPoint>& point : solved_[i]) points.push_back(std::move(*point));
      }
      status = emit(grid_[i], std::move(points));
    }
    {
      std::lock_guard lock(mutex_);
      if (!status.ok()) end_ = 0;  // the caller's error: no point more
    }
    changed_.notify_all();
    for (std::thread& thread : threads) thread.join();
    return status.ok() ? error_ : status;
  }

 private:
  bool Solved(std::size_t i) const {
    return std::all_of(solved_[i].begin(), solved_[i].end(), [](const auto& point) { return point.has_value(); });
  }
  // The path furthest behind that no thread is on; of those as far behind, the one whose last
  // point took longest (the longest work first leaves the shortest to end a lambda with, and the
  // grid's last lambda ends with both cores busy longer). paths_.size() where none is left.
  std::size_t Behind() const {
    std::size_t best = paths_.size();
    for (std::size_t k = 0; k < paths_.size(); ++k) {
      if (busy_[k] || next_[k] >= end_) continue;
      if (best == paths_.size() || next_[k] < next_[best] ||
          (next_[k] == next_[best] && last_seconds_[k] > last_seconds_[best])) {
        best = k;
      }
    }
    return best;
  }
  bool Finished() const {
    return std::all_of(next_.begin(), next_.end(), [&](std::size_t next) { return next >= end_; });
  }
  void Work() {
    std::unique_lock lock(mutex_);
    for (;;) {
      changed_.wait(lock, [&] { return Finished() || Behind() < paths_.size(); });
      const std::size_t k = Behind();
      if (k == paths_.size()) return;
      busy_[k] = true;
      const std::size_t i = next_[k];
      lock.unlock();
      const Stopwatch watch;
      Result<ColumnPathPoint> point = paths_[k].Next(grid_[i]);
      lock.lock();
      last_seconds_[k] = watch.ElapsedSeconds();
      busy_[k] = false;
      ++next_[k];
      if (point.ok()) {
        solved_[i][k] = std::move(point).value();
      } else if (i < end_) {  // the grid ends before this lambda; the ones before it are still solved
        end_ = i;
        error_ = point.status();
      }
      changed_.notify_all();
    }
  }

  std::vector<ColumnPath>& paths_;
  const std::vector<double> grid_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::size_t> next_;  // each path's next point
  std::vector<bool> busy_;         // a thread is on the path
  std::vector<double> last_seconds_;  // each path's last point's
  std::vector<std::vector<std::optional<ColumnPathPoint>>> solved_;  // [point][path], until emitted
  std::size_t end_;                // the lambdas solved: the grid's, or up to the first point's error
  Status error_ = Status::Ok();    // that error
};

}  // namespace

Status StepPathsAlongGrid(std::vector<ColumnPath>& paths, std::span<const double> grid, int threads,
                          const std::function<Status(double l1, std::vector<ColumnPathPoint> points)>& emit) {
  return PathsAlongGrid(paths, grid).Run(threads, emit);
}

Result<std::vector<ColumnPathPoint>> SolvePathByColumns(const ProblemSpec& spec, const CsrView& matrix,
                                                        std::span<const double> labels,
                                                        std::span<const double> row_weights,
                                                        std::span<const double> l1_values,
                                                        const ColumnPathOptions& options) {
  for (std::size_t k = 0; k < l1_values.size(); ++k) {
    if (!(l1_values[k] > 0) || (k > 0 && !(l1_values[k] < l1_values[k - 1]))) {
      return InvalidArgument("the path's l1 values: positive and descending (value " + std::to_string(k + 1) + ")");
    }
  }
  NIMBUS_ASSIGN_OR_RETURN(ColumnPath path, ColumnPath::Start(spec, matrix, labels, row_weights, options));
  std::vector<ColumnPathPoint> points;
  for (const double l1 : l1_values) {
    NIMBUS_ASSIGN_OR_RETURN(ColumnPathPoint point, path.Next(l1));
    points.push_back(std::move(point));
    if (options.on_point && !options.on_point(points.back())) break;
  }
  return points;
}

Result<double> L1MaxByColumns(const ProblemSpec& spec, const CsrView& matrix, std::span<const double> labels,
                              std::span<const double> row_weights, const ColumnDescentOptions& options) {
  NIMBUS_ASSIGN_OR_RETURN(const ColumnPath path, ColumnPath::Start(spec, matrix, labels, row_weights,
                                                                   ColumnPathOptions{options, true, {}}));
  return path.l1_max();
}

Result<ColumnDescentResult> SolveByColumns(const ProblemSpec& spec, const CsrView& matrix,
                                           std::span<const double> labels, std::span<const double> row_weights,
                                           const ColumnDescentOptions& options) {
  NIMBUS_RETURN_IF_ERROR(options.Validate());
  NIMBUS_RETURN_IF_ERROR(CheckProblem(spec, matrix.rows, labels, row_weights));
  const ColumnLayout layout =
      options.layout.cuts.empty() ? ColumnLayout{{}, CutColumns(matrix, options.blocks)} : options.layout;
  NIMBUS_RETURN_IF_ERROR(CheckLayout(layout, matrix.cols));
  // The blocks' columns once; each class's rows in turn (one-vs-rest's classes are independent).
  LocalBlockStepper blocks(matrix, layout, spec.intercept, options.threads);
  return SolveByColumns(spec, labels, row_weights, blocks, options);
}

Result<ColumnDescentResult> SolveByColumns(const ProblemSpec& spec, std::span<const double> labels,
                                           std::span<const double> row_weights, BlockStepper& stepper,
                                           const ColumnDescentOptions& options) {
  NIMBUS_RETURN_IF_ERROR(options.Validate());
  NIMBUS_RETURN_IF_ERROR(CheckProblem(spec, static_cast<int64_t>(labels.size()), labels, row_weights));
  NIMBUS_RETURN_IF_ERROR(CheckLayout(options.layout, spec.cols));
  ColumnProblem problem = MakeProblem(BinarySpec(spec), {}, {}, stepper);
  ColumnDescentResult result;
  result.x.assign(spec.model_size(), 0.0);
  if (spec.one_vs_rest() && (options.resume != nullptr || options.checkpoint_every > 0)) {
    return InvalidArgument("the column method's checkpoints: binary and regression problems only");
  }
  if (options.resume != nullptr && options.resume->x.size() != result.x.size()) {
    return InvalidArgument("resume: " + std::to_string(options.resume->x.size()) + " weights for a model of " +
                           std::to_string(result.x.size()));
  }
  const ColumnDescentOptions ordered = InBlockOrder(options);
  for (int64_t c = 0; c < (spec.one_vs_rest() ? spec.classes : 1); ++c) {
    const BinaryRows rows = RowsOfClass(spec, labels, row_weights, c);
    problem.labels = rows.labels;
    problem.weights = rows.weights;
    DescentState state;
    Start(problem, state);
    if (ordered.resume != nullptr) NIMBUS_RETURN_IF_ERROR(Resume(problem, ordered, *ordered.resume, state));
    Descend(problem, ordered, state);
    state.x = InMatrixOrder(options.layout.order, state.x);
    if (!spec.one_vs_rest()) return ColumnDescentResult{std::move(state.x), state.summary};
    AddClass(spec, c, state, result);
    if (state.summary.stopped || state.summary.failed) break;
  }
  return result;
}

}  // namespace nimbus
