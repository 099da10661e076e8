// nimbus scale: the same problem to the same tolerance at several worker counts.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>

#include "cli_common.h"
#include "commands.h"
#include "nimbus/core/format.h"
#include "scaling.h"
#include "solve_setup.h"

namespace nimbus::cli {

namespace {

struct ScaleFlags {
  ProblemFlags problem;  // problem.options: what the flags below end up as
  std::string workers_text = "1,2,4,8,16", out = "nimbus-scale";
  bool no_plots = false, quiet = false;
  int64_t repeat = 1;
  double memory_mb = 0;
};

void AddScaleOptions(ArgParser& parser, ScaleFlags* flags) {
  SolveOptions& options = flags->problem.options;
  AddProblemOptions(parser, &flags->problem);
  parser.AddString("workers", "K1,K2,...", "the worker counts, ascending; the first is the speedups' baseline",
                   &flags->workers_text);
  parser.AddInt("repeat", "N", "solves per K; the fastest counts (they differ only by what else the machine did)",
                &flags->repeat);
  AddRuntimeOptions(parser, &options.runtime);
  AddAlgorithmOptions(parser, &options);
  parser.AddString("out", "DIR", "where to write the table, data and plots", &flags->out);
  parser.AddSwitch("no-plots", "write the data and the gnuplot script, but do not run gnuplot", &flags->no_plots);
  AddPriceOptions(parser, &options.prices, &flags->memory_mb);
  parser.AddSwitch("quiet", "print nothing but errors", &flags->quiet);
  parser.Require("data");
}

// The flags into options, all checked; the worker counts.
Result<std::vector<int64_t>> ApplyScaleFlags(const ArgParser& parser, ScaleFlags* flags) {
  NIMBUS_RETURN_IF_ERROR(ApplyProblemFlags(parser, &flags->problem));
  SolveOptions& options = flags->problem.options;
  NIMBUS_ASSIGN_OR_RETURN(std::vector<int64_t> workers,
                          ParseCountList(flags->workers_text, "workers", 4096, /*ascending=*/true));
  if (flags->repeat < 1 || flags->repeat > 100) return InvalidArgument("--repeat: must be in [1, 100]");
  NIMBUS_RETURN_IF_ERROR(FinishPriceOptions(flags->memory_mb, &options.prices));
  NIMBUS_RETURN_IF_ERROR(options.Validate());
  NIMBUS_RETURN_IF_ERROR(CheckWritableLocation(flags->out));
  return workers;
}

// The data in this process, split for the first K, with its regularizer.
Result<Plan> PlanScaling(const ProblemFlags& problem, int64_t first_workers) {
  const SolveOptions& options = problem.options;
  NIMBUS_ASSIGN_OR_RETURN(Plan plan, PlanDataInMemory(TrainingDataOf(problem), first_workers, options.loss));
  if (!plan.data) {
    return InvalidArgument("--data: " + problem.data +
                           " holds shards for one K; give the LIBSVM file, which scale splits anew for each K");
  }
  NIMBUS_RETURN_IF_ERROR(SetProblem(options, &plan));
  return plan;
}

// The problem and solver the result describes; its points are the solves still to come.
ScaleResult ResultWithoutPoints(const ProblemFlags& problem, Algorithm algorithm, const Plan& plan) {
  ScaleResult result;
  result.data = problem.data;
  result.runtime = problem.options.runtime.kind;
  result.algorithm = algorithm;
  result.rows = plan.spec.rows;
  result.cols = plan.spec.cols;
  result.nnz = plan.data->nnz();
  result.eps_abs = problem.options.admm.eps_abs;
  result.eps_rel = problem.options.admm.eps_rel;
  return result;
}

// One solve on the plan's workers, started as `runtime`; `at` names their count in errors.
Result<ScalePoint> SolveOnce(const SolveOptions& options, const MasterChoice& master, const Plan& plan,
                             Runtime& runtime, const std::string& at) {
  Result<Solution> solution = master.Make(plan.spec, runtime.executor.get())->Solve();
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

// The fastest of --repeat solves at each K into result->points; the exit code. The repetitions
// are interleaved (every K, then every K again), so that a slow spell of this machine falls on
// one repetition of several K rather than on every repetition of one. A failed solve is
// reported while its workers are still up: they are only stopped after.
int SolveAtEveryK(const ScaleFlags& flags, const std::vector<int64_t>& workers, const MasterChoice& master,
                  Plan& plan, ScaleResult* result) {
  const SolveOptions& options = flags.problem.options;
  std::vector<std::optional<ScalePoint>> fastest(workers.size());
  std::vector<double> slowest(workers.size(), 0.0);  // time to solution
  for (int64_t run = 0; run < flags.repeat; ++run) {
    for (std::size_t i = 0; i < workers.size(); ++i) {
      const int64_t k = workers[i];
      if (Status split = Repartition(plan, static_cast<int>(k)); !split.ok()) return ReportError("scale", split);
      const std::string at = "K = " + std::to_string(k);
      Result<Runtime> runtime = MakeRuntime(options.runtime, plan, WorkerOptionsOf(options));
      if (!runtime.ok()) return ReportError("scale", runtime.status().WithContext(at));
      Result<ScalePoint> point = SolveOnce(options, master, plan, *runtime, at);
      if (!point.ok()) return ReportError("scale", point.status());
      slowest[i] = std::max(slowest[i], point->time_to_solution());
      if (!fastest[i] || point->time_to_solution() < fastest[i]->time_to_solution()) fastest[i] = *point;
    }
    if (!flags.quiet && flags.repeat > 1) {
      std::fprintf(stderr, "nimbus scale: solves at every K: %lld of %lld\n", static_cast<long long>(run + 1),
                   static_cast<long long>(flags.repeat));
    }
  }
  for (std::size_t i = 0; i < workers.size(); ++i) {
    fastest[i]->spread = slowest[i] / fastest[i]->time_to_solution() - 1;
    result->points.push_back(*fastest[i]);
    if (!flags.quiet) {
      std::fprintf(stderr, "nimbus scale: K = %lld: %d iterations in %d rounds (%s, %s), %.3f s to solution%s, objective %.10g\n",
                   static_cast<long long>(workers[i]), fastest[i]->iterations, fastest[i]->rounds,
                   NameOf(master.algorithm).data(), fastest[i]->termination.c_str(), fastest[i]->time_to_solution(),
                   flags.repeat > 1 ? Format(" (the fastest of %lld; the slowest +%.1f%%)", static_cast<long long>(flags.repeat),
                                             100 * fastest[i]->spread).c_str()
                                    : "",
                   fastest[i]->objective);
    }
  }
  return kExitOk;
}

}  // namespace

int RunScale(int argc, char** argv) {
  ScaleFlags flags;
  ArgParser parser("scale", "--data FILE.svm [--workers 1,2,4,8,16] [--runtime R] [--out DIR]",
                   "Solves the same problem to the same tolerance once per worker count K and reports, for each,\n"
                   "the iterations and rounds, the time to solution (worker start-up and rounds), the time per round,\n"
                   "the speedup of both relative to the first K, the efficiency, and the cost at Lambda's prices.\n"
                   "Writes DIR/scale.txt, scale.json, scale.dat and the plots scale-time and scale-speedup.");
  AddScaleOptions(parser, &flags);
  int exit_code = 0;
  if (!ParseOrExit(parser, argc, argv, &exit_code)) return exit_code;

  Result<std::vector<int64_t>> workers = ApplyScaleFlags(parser, &flags);
  if (!workers.ok()) return ReportError("scale", workers.status());
  const MasterChoice master = ChooseMaster(flags.problem.options);
  Result<Plan> plan = PlanScaling(flags.problem, workers->front());
  if (!plan.ok()) return ReportError("scale", plan.status());

  ScaleResult result = ResultWithoutPoints(flags.problem, master.algorithm, *plan);
  if (int solved = SolveAtEveryK(flags, *workers, master, *plan, &result); solved != kExitOk) return solved;
  Result<std::vector<std::string>> plots = result.Write(flags.out, flags.no_plots ? "" : "gnuplot");
  if (!plots.ok()) return ReportError("scale", plots.status());
  if (!flags.quiet) {
    std::fputs(result.Table().c_str(), stdout);
    std::printf("wrote %s/scale.txt, scale.json, scale.dat (%zu plots)\n", flags.out.c_str(), plots->size());
  }
  return kExitOk;
}

}  // namespace nimbus::cli
