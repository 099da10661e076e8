// --algorithm columns through the facade: the column method (columns/column_descent.h) on the
// rows this process holds, its blocks stepped on this process's threads.
#include <algorithm>
#include <thread>
#include <utility>

#include "nimbus/api/plan.h"
#include "nimbus/columns/column_descent.h"
#include "nimbus/core/clock.h"
#include "nimbus/core/vector_ops.h"
#include "nimbus/executor/trace_schema.h"

namespace nimbus {
namespace {

// The facade's options as the column method's: a block per worker, as many threads as blocks
// and cores allow; the stop test, cap and observer are Newton's (the same subgradient test).
ColumnDescentOptions ColumnOptionsOf(const Plan& plan, const SolveOptions& options, Stopwatch& watch) {
  ColumnDescentOptions columns;
  columns.blocks = plan.workers;
  columns.threads = std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, plan.workers);
  columns.max_iterations = static_cast<int>(std::min<int64_t>(options.admm.max_iterations, 1 << 30));
  // A target objective turns the subgradient test off, as it does Newton's.
  const std::optional<double> target = options.admm.target_objective;
  columns.gradient_tolerance = target ? 0 : options.gradient_tolerance;
  const IterationCallback& observer = options.on_iteration;
  columns.on_iteration = [&observer, &watch, target](const ColumnDescentSummary& now) {
    const IterationInfo info{.algorithm = Algorithm::kColumns,
                             .iteration = now.iterations,
                             .elapsed_seconds = watch.ElapsedSeconds(),
                             .objective = now.objective,
                             .gradient_norm = now.subgradient_norm,
                             .gradient_tolerance = now.subgradient_tolerance};
    const bool go_on = !observer || observer(info);
    return go_on && !(target && now.objective <= *target);
  };
  return columns;
}

// The method's outcome as every solve's summary: an iteration is a round, as it would be with
// a block per worker.
Summary SummaryOf(const Plan& plan, const MasterChoice& choice, const ColumnDescentSummary& outcome,
                  const SolveOptions& options, double solve_seconds) {
  Summary summary;
  summary.algorithm = Algorithm::kColumns;
  summary.algorithm_reason = choice.reason;
  summary.runtime = std::string(NameOf(RuntimeKind::kThreads));
  summary.workers = plan.workers;
  summary.rows = plan.spec.rows;
  summary.cols = summary.solved_cols = plan.spec.cols;
  summary.data_nnz = plan.data->nnz();
  summary.iterations = summary.rounds = outcome.iterations;
  summary.objective = outcome.objective;
  summary.gradient_norm = outcome.subgradient_norm;
  summary.gradient_tolerance = outcome.subgradient_tolerance;
  summary.data_passes = static_cast<int64_t>(outcome.data_passes + 0.5);
  summary.solve_seconds = solve_seconds;
  summary.message = outcome.message;
  const std::optional<double> target = options.admm.target_objective;
  const bool reached_target = target && outcome.objective <= *target;
  summary.termination = outcome.converged ? Termination::kConverged
                        : reached_target  ? Termination::kTargetObjective
                        : outcome.stopped ? Termination::kUserStopped
                                          : Termination::kMaxIterations;
  if (reached_target && !outcome.converged) summary.message = "reached the target objective";
  return summary;
}

// The rows in this process, and a problem the method solves.
Status CheckColumnsPlan(const Plan& plan) {
  if (!plan.data) {
    return InvalidArgument("--algorithm columns: " + plan.source +
                           " is a store of shards; the column method reads LIBSVM text or arrays in this process");
  }
  if (plan.spec.multinomial) {
    return InvalidArgument("--algorithm columns: one-vs-rest only, not the softmax (--multiclass ovr)");
  }
  return Status::Ok();
}

Solution SolutionOf(const Plan& plan, const MasterChoice& choice, std::vector<double> x,
                    const ColumnDescentSummary& outcome, const SolveOptions& options, double seconds) {
  Solution solution;
  solution.summary = SummaryOf(plan, choice, outcome, options, seconds);
  solution.summary.nnz =
      static_cast<int64_t>(CountNonzeros(std::span<const double>(x).first(plan.spec.regularized_size())));
  solution.model = std::move(x);
  return solution;
}

}  // namespace

Result<SolveResult> SolveByColumnsHere(const Plan& plan, const SolveOptions& options, const MasterChoice& choice) {
  NIMBUS_RETURN_IF_ERROR(CheckColumnsPlan(plan));
  const std::unique_ptr<TraceSink> trace = TraceSinkOf(options);
  if (options.on_start) {
    NIMBUS_RETURN_IF_ERROR(options.on_start(SolveStart{plan.spec, SourceCols(plan), plan.workers,
                                                       std::string(NameOf(RuntimeKind::kThreads)), choice.algorithm,
                                                       choice.reason}));
  }
  Stopwatch watch;
  const Dataset& data = *plan.data;
  NIMBUS_ASSIGN_OR_RETURN(ColumnDescentResult solved, SolveByColumns(plan.spec, data.matrix, data.labels, data.weights,
                                                                     ColumnOptionsOf(plan, options, watch)));
  Solution solution = SolutionOf(plan, choice, std::move(solved.x), solved.summary, options, watch.ElapsedSeconds());
  if (trace != nullptr) trace->Write(TraceLine(solution.summary));
  return ResultOf(plan, options, std::move(solution));
}

Result<GridOutcome> SolveGridByColumns(const Plan& plan, const SolveOptions& options, const PathOptions& path,
                                       double load_seconds,
                                       const std::function<Status(double lambda, Solution solution)>& point) {
  NIMBUS_RETURN_IF_ERROR(CheckColumnsPlan(plan));
  if (plan.spec.classes > 1) return InvalidArgument("--algorithm columns: paths of binary or regression problems only");
  const MasterChoice choice = ChooseMaster(options);
  const Dataset& data = *plan.data;
  Stopwatch watch;
  ColumnPathOptions columns{ColumnOptionsOf(plan, options, watch), true, {}};
  GridOutcome outcome;
  NIMBUS_ASSIGN_OR_RETURN(outcome.lambda_max,
                          L1MaxByColumns(plan.spec, data.matrix, data.labels, data.weights, columns.descent));
  if (!(outcome.lambda_max > 0)) {
    return InvalidArgument("path: every weight's gradient is zero where no weight is used: every lambda gives the "
                           "same model");
  }
  const double start_seconds = watch.ElapsedSeconds();
  Status handed = Status::Ok();
  columns.on_point = [&](const ColumnPathPoint& solved) {
    const double seconds = watch.ElapsedSeconds();
    watch = Stopwatch();
    Solution solution = SolutionOf(plan, choice, solved.x, solved.summary, options, seconds);
    handed = point(solved.l1, std::move(solution));
    return handed.ok();
  };
  const std::vector<double> grid = PathGrid(path, outcome.lambda_max, plan.spec.rows);
  NIMBUS_RETURN_IF_ERROR(
      SolvePathByColumns(plan.spec, data.matrix, data.labels, data.weights, grid, columns).status());
  NIMBUS_RETURN_IF_ERROR(handed);
  Summary total;
  total.load_seconds = load_seconds;
  total.solve_seconds = start_seconds;
  AddCostEstimate(options.prices, plan, &total);
  outcome.cost_dollars = total.cost_dollars;
  return outcome;
}

}  // namespace nimbus
