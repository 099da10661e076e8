// MeasureScaling (nimbus/nimbus.h): the same problem to the same tolerance at each worker count.
#include <algorithm>
#include <optional>

#include "nimbus/api/plan.h"
#include "nimbus/core/format.h"
#include "nimbus/nimbus.h"

namespace nimbus {
namespace {

// The problem and solver the result describes; its points are the solves still to come.
ScaleResult ResultWithoutPoints(const TrainingData& data, const SolveOptions& options, Algorithm algorithm,
                                const Plan& plan) {
  ScaleResult result;
  result.data = data.location();
  result.runtime = options.runtime.kind;
  result.algorithm = algorithm;
  result.rows = plan.spec.rows;
  result.cols = plan.spec.cols;
  result.nnz = plan.data->nnz();
  result.eps_abs = options.admm.eps_abs;
  result.eps_rel = options.admm.eps_rel;
  return result;
}

// The master's solve on a runtime of its own; the column method's on the plan's rows as a
// block of columns a worker.
Result<Solution> SolveAnew(const SolveOptions& options, const MasterChoice& master, const Plan& plan) {
  if (master.algorithm != Algorithm::kColumns) {
    NIMBUS_ASSIGN_OR_RETURN(Runtime runtime, MakeRuntime(options.runtime, plan, WorkerOptionsOf(options)));
    return master.Make(plan.spec, runtime.executor.get())->Solve();
  }
  NIMBUS_ASSIGN_OR_RETURN(const Plan layout, ColumnLayoutFor(plan, options, master));
  NIMBUS_ASSIGN_OR_RETURN(Runtime runtime, MakeRuntime(options.runtime, layout, ColumnWorkerOptionsOf(options)));
  Result<Solution> solution = SolveByColumnsOn(layout, options, master, *runtime.executor);
  runtime.executor->Stop();
  return solution;
}

// One solve on the plan's workers, started anew; `at` names their count in errors.
Result<ScalePoint> SolveOnce(const SolveOptions& options, const MasterChoice& master, const Plan& plan,
                             const std::string& at) {
  Result<Solution> solution = SolveAnew(options, master, plan);
  if (!solution.ok()) return solution.status().WithContext(at);
  Summary& summary = solution->summary;
  if (!summary.ok()) return Unavailable(at + ": " + summary.message);
  AddCostEstimate(options.prices, plan, &summary);
  ScalePoint point;
  point.workers = plan.workers;
  point.iterations = summary.iterations;
  point.rounds = summary.rounds;
  point.termination = TerminationName(summary.termination);
  point.objective = summary.objective;
  point.setup_seconds = summary.setup_seconds;
  point.solve_seconds = summary.solve_seconds;
  point.dollars = summary.cost_dollars;
  return point;
}

std::string Described(const ScalePoint& p, Algorithm algorithm, int repetitions) {
  return Format("K = %d: %d iterations in %d rounds (%s, %s), %.3f s to solution%s, objective %.10g", p.workers,
                p.iterations, p.rounds, NameOf(algorithm).data(), p.termination.c_str(), p.time_to_solution(),
                repetitions > 1 ? Format(" (the fastest of %d; the slowest +%.1f%%)", repetitions, 100 * p.spread).c_str()
                                : "",
                p.objective);
}

}  // namespace

Result<Plan> PlanForEveryK(const TrainingData& data, const SolveOptions& options, int first_workers) {
  NIMBUS_ASSIGN_OR_RETURN(Plan plan, PlanDataInMemory(data, first_workers, options.loss));
  if (!plan.data) {
    return InvalidArgument("--data: " + data.location() +
                           " holds shards for one K; give the LIBSVM file, which is split anew for each K");
  }
  NIMBUS_RETURN_IF_ERROR(SetProblem(options, &plan));
  return plan;
}

Status ValidateRepeatedSolves(const std::vector<int>& workers, int repetitions) {
  if (workers.empty()) return InvalidArgument("--workers: give at least one worker count");
  for (std::size_t i = 0; i < workers.size(); ++i) {
    if (workers[i] < 1 || (i > 0 && workers[i] <= workers[i - 1])) {
      return InvalidArgument("--workers: the counts must be >= 1 and ascend");
    }
  }
  if (repetitions < 1 || repetitions > 100) return InvalidArgument("--repeat: must be in [1, 100]");
  return Status::Ok();
}

Status ScaleOptions::Validate() const { return ValidateRepeatedSolves(workers, repetitions); }

// The fastest of the repetitions at each K. They are interleaved (every K, then every K
// again), so that a slow spell of this machine falls on one repetition of several K rather
// than on every repetition of one.
Result<ScaleResult> MeasureScaling(const TrainingData& data, const SolveOptions& options, const ScaleOptions& scale) {
  NIMBUS_RETURN_IF_ERROR(scale.Validate());
  NIMBUS_RETURN_IF_ERROR(options.Validate());
  const MasterChoice master = ChooseMaster(options);
  NIMBUS_ASSIGN_OR_RETURN(Plan plan, PlanForEveryK(data, options, scale.workers.front()));
  ScaleResult result = ResultWithoutPoints(data, options, master.algorithm, plan);
  const std::size_t count = scale.workers.size();
  std::vector<std::optional<ScalePoint>> fastest(count);
  std::vector<double> slowest(count, 0.0);  // time to solution
  for (int run = 0; run < scale.repetitions; ++run) {
    for (std::size_t i = 0; i < count; ++i) {
      NIMBUS_RETURN_IF_ERROR(Repartition(plan, scale.workers[i]));
      NIMBUS_ASSIGN_OR_RETURN(ScalePoint point, SolveOnce(options, master, plan, "K = " + std::to_string(scale.workers[i])));
      slowest[i] = std::max(slowest[i], point.time_to_solution());
      if (!fastest[i] || point.time_to_solution() < fastest[i]->time_to_solution()) fastest[i] = point;
    }
    if (scale.progress && scale.repetitions > 1) scale.progress(Format("solves at every K: %d of %d", run + 1, scale.repetitions));
  }
  for (std::size_t i = 0; i < count; ++i) {
    fastest[i]->spread = slowest[i] / fastest[i]->time_to_solution() - 1;
    result.points.push_back(*fastest[i]);
    if (scale.progress) scale.progress(Described(*fastest[i], master.algorithm, scale.repetitions));
  }
  return result;
}

}  // namespace nimbus
