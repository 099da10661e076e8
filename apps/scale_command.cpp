// nimbus scale: the same problem to the same tolerance at several worker counts
// (nimbus/nimbus.h: MeasureScaling).
#include <algorithm>
#include <cstdio>
#include <string>

#include "cli_common.h"
#include "commands.h"
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

// The flags into options, all checked.
Result<ScaleOptions> ApplyScaleFlags(const ArgParser& parser, ScaleFlags* flags) {
  NIMBUS_RETURN_IF_ERROR(ApplyProblemFlags(parser, &flags->problem));
  SolveOptions& options = flags->problem.options;
  NIMBUS_ASSIGN_OR_RETURN(std::vector<int64_t> workers,
                          ParseCountList(flags->workers_text, "workers", 4096, /*ascending=*/true));
  ScaleOptions scale;
  scale.workers.assign(workers.begin(), workers.end());
  scale.repetitions = static_cast<int>(std::clamp<int64_t>(flags->repeat, 0, 1000));
  if (!flags->quiet) scale.progress = [](const std::string& line) { std::fprintf(stderr, "nimbus scale: %s\n", line.c_str()); };
  NIMBUS_RETURN_IF_ERROR(scale.Validate());
  NIMBUS_RETURN_IF_ERROR(FinishPriceOptions(flags->memory_mb, &options.prices));
  NIMBUS_RETURN_IF_ERROR(options.Validate());
  NIMBUS_RETURN_IF_ERROR(CheckWritableLocation(flags->out));
  return scale;
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
  Result<ScaleOptions> scale = ApplyScaleFlags(parser, &flags);
  if (!scale.ok()) return ReportError("scale", scale.status());
  Result<ScaleResult> result = MeasureScaling(TrainingDataOf(flags.problem), flags.problem.options, *scale);
  if (!result.ok()) return ReportError("scale", result.status());
  Result<std::vector<std::string>> plots = result->Write(flags.out, flags.no_plots ? "" : "gnuplot");
  if (!plots.ok()) return ReportError("scale", plots.status());
  if (!flags.quiet) {
    std::fputs(result->Table().c_str(), stdout);
    std::printf("wrote %s/scale.txt, scale.json, scale.dat (%zu plots)\n", flags.out.c_str(), plots->size());
  }
  return kExitOk;
}

}  // namespace nimbus::cli
