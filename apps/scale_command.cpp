// nimbus scale: the same problem to the same tolerance at several worker counts.
#include <cstdio>
#include <optional>
#include <string>

#include "cli_common.h"
#include "commands.h"
#include "scaling.h"
#include "solve_setup.h"

namespace nimbus::cli {

int RunScale(int argc, char** argv) {
  ProblemFlags problem;
  SolveOptions& options = problem.options;
  std::string workers_text = "1,2,4,8,16", out = "nimbus-scale";
  bool no_plots = false, quiet = false;
  int64_t repeat = 1;
  double memory_mb = 0;
  ArgParser parser("scale", "--data FILE.svm [--workers 1,2,4,8,16] [--runtime R] [--out DIR]",
                   "Solves the same problem to the same tolerance once per worker count K and reports, for each,\n"
                   "the iterations and rounds, the time to solution (worker start-up and rounds), the time per round,\n"
                   "the speedup of both relative to the first K, the efficiency, and the cost at Lambda's prices.\n"
                   "Writes DIR/scale.txt, scale.json, scale.dat and the plots scale-time and scale-speedup.");
  AddProblemOptions(parser, &problem);
  parser.AddString("workers", "K1,K2,...", "the worker counts, ascending; the first is the speedups' baseline",
                   &workers_text);
  parser.AddInt("repeat", "N", "solves per K; the fastest counts (they differ only by what else the machine did)",
                &repeat);
  AddRuntimeOptions(parser, &options.runtime);
  AddAlgorithmOptions(parser, &options);
  parser.AddString("out", "DIR", "where to write the table, data and plots", &out);
  parser.AddSwitch("no-plots", "write the data and the gnuplot script, but do not run gnuplot", &no_plots);
  AddPriceOptions(parser, &options.prices, &memory_mb);
  parser.AddSwitch("quiet", "print nothing but errors", &quiet);
  parser.Require("data");
  int exit_code = 0;
  if (!ParseOrExit(parser, argc, argv, &exit_code)) return exit_code;

  if (Status valid = ApplyProblemFlags(parser, &problem); !valid.ok()) return ReportError("scale", valid);
  Result<std::vector<int64_t>> workers = ParseCountList(workers_text, "workers", 4096, /*ascending=*/true);
  if (!workers.ok()) return ReportError("scale", workers.status());
  if (repeat < 1 || repeat > 100) return ReportError("scale", InvalidArgument("--repeat: must be in [1, 100]"));
  if (Status valid = FinishPriceOptions(memory_mb, &options.prices); !valid.ok()) return ReportError("scale", valid);
  if (Status valid = options.Validate(); !valid.ok()) return ReportError("scale", valid);
  if (Status writable = CheckWritableLocation(out); !writable.ok()) return ReportError("scale", writable);
  const MasterChoice master = ChooseMaster(options);

  Result<Plan> plan = PlanData(TrainingDataOf(problem), workers->front(), options.loss);
  if (!plan.ok()) return ReportError("scale", plan.status());
  if (!plan->data) {
    return ReportError("scale", InvalidArgument("--data: " + problem.data +
                                                " holds shards for one K; give the LIBSVM file, which scale splits anew "
                                                "for each K"));
  }
  if (Status valid = SetProblem(options, &*plan); !valid.ok()) {
    return ReportError("scale", valid);
  }

  ScaleResult result;
  result.data = problem.data;
  result.runtime = options.runtime.kind;
  result.algorithm = master.algorithm;
  result.rows = plan->spec.rows;
  result.cols = plan->spec.cols;
  result.nnz = plan->data->nnz();
  result.eps_abs = options.admm.eps_abs;
  result.eps_rel = options.admm.eps_rel;
  for (const int64_t k : *workers) {
    if (Status split = Repartition(*plan, static_cast<int>(k)); !split.ok()) return ReportError("scale", split);
    const std::string at = "K = " + std::to_string(k);
    std::optional<ScalePoint> fastest;
    for (int64_t run = 0; run < repeat; ++run) {
      Result<Runtime> runtime = MakeRuntime(options.runtime, *plan, WorkerOptionsOf(options));
      if (!runtime.ok()) return ReportError("scale", runtime.status().WithContext(at));
      Result<Solution> solution = master.Make(plan->spec, runtime->executor.get())->Solve();
      if (!solution.ok()) return ReportError("scale", solution.status().WithContext(at));
      Summary& summary = solution->summary;
      if (!summary.ok()) return ReportError("scale", Unavailable(at + ": " + summary.message));
      AddCostEstimate(options.prices, *plan, &summary);
      ScalePoint point;
      point.workers = static_cast<int>(k);
      point.iterations = summary.iterations;
      point.rounds = summary.rounds;
      point.termination = TerminationName(summary.termination);
      point.objective = summary.objective;
      point.setup_seconds = summary.setup_seconds;
      point.solve_seconds = summary.solve_seconds;
      point.dollars = summary.cost_dollars;
      if (!fastest || point.time_to_solution() < fastest->time_to_solution()) fastest = point;
    }
    result.points.push_back(*fastest);
    if (!quiet) {
      std::fprintf(stderr, "nimbus scale: %s: %d iterations in %d rounds (%s, %s), %.3f s to solution, objective %.10g\n",
                   at.c_str(), fastest->iterations, fastest->rounds, master.algorithm.c_str(),
                   fastest->termination.c_str(), fastest->time_to_solution(), fastest->objective);
    }
  }
  Result<std::vector<std::string>> plots = result.Write(out, no_plots ? "" : "gnuplot");
  if (!plots.ok()) return ReportError("scale", plots.status());
  if (!quiet) {
    std::fputs(result.Table().c_str(), stdout);
    std::printf("wrote %s/scale.txt, scale.json, scale.dat (%zu plots)\n", out.c_str(), plots->size());
  }
  return kExitOk;
}

}  // namespace nimbus::cli
