// nimbus path: the regularization path over nimbus::SolvePath (nimbus/nimbus.h).
#include <cstdio>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "solve_setup.h"

namespace nimbus::cli {
namespace {

struct PathFlags : GridCommandFlags {
  PathOptions path;
  bool models = false;
};

void AddPathOptions(ArgParser& parser, PathFlags* flags) {
  flags->out = "nimbus-path";
  AddGridCommandOptions(parser, flags, &flags->path, "path.json");
  parser.AddString("validation", "FILE.svm", "held-out LIBSVM data to score every point on (accuracy, log loss, AUC;\n"
                   "                            MSE and R^2 for regression)", &flags->path.validation);
  parser.AddInt("workers", "K", "number of workers (default: cores for a file, shards for a directory)",
                &flags->problem.options.runtime.workers);
  parser.AddString("out", "DIR", "where to write path.txt, path.json, path.dat and the plot (default nimbus-path)",
                   &flags->out);
  parser.AddSwitch("models", "also write every point's model, DIR/models/point-NN.json", &flags->models);
}

}  // namespace

int RunPath(int argc, char** argv) {
  PathFlags flags;
  ArgParser parser("path", "--data FILE.svm [--validation FILE.svm] [--penalty l1|l2] [--out DIR]",
                   "Solves along a regularization path: lambda_max, the smallest l1 whose model is zero (from the\n"
                   "gradient where no weight is used), then a grid down to --path-min-ratio x lambda_max, each point\n"
                   "warm started from the one before on the same workers. Prints a row per point as it finishes\n"
                   "(objective, nonzeros, rounds, time, and the validation scores with --validation), and writes\n"
                   "DIR/path.txt, path.json, path.dat and the plot 'path' (nonzeros and validation loss against lambda).");
  AddPathOptions(parser, &flags);
  int exit_code = 0;
  if (!ParseOrExit(parser, argc, argv, &exit_code)) return exit_code;
  if (Status valid = ApplyGridCommandFlags(parser, &flags, &flags.path); !valid.ok()) return ReportError("path", valid);
  const Loss loss = flags.problem.options.loss;
  const bool table = !flags.quiet && !flags.json;
  if (!flags.quiet) flags.problem.options.on_load = LoadProgressPrinter("nimbus path");
  std::size_t printed = 0;
  flags.path.on_point = [&](const PathPoint& point) {
    if (!table) return;
    if (printed == 0) std::fputs(PathResult::TableHeader(loss).c_str(), stdout);
    std::fputs(PathResult::TableRow(printed++, point, loss).c_str(), stdout);
    std::fflush(stdout);
  };
  Result<PathResult> result = SolvePath(TrainingDataOf(flags.problem), flags.problem.options, flags.path);
  if (!result.ok()) return ReportError("path", result.status());
  Result<std::vector<std::string>> plots = result->Write(flags.out, flags.no_plots ? "" : "gnuplot", flags.models);
  if (!plots.ok()) return ReportError("path", plots.status());
  const std::string wrote = "wrote " + flags.out + "/path.txt, path.json, path.dat (" + std::to_string(plots->size()) +
                            " plots)\n";
  return FinishGridCommand("path", flags.json, table, result->ToJson(), result->Heading() + result->Footer() + wrote,
                           result->points.empty() ? nullptr : &result->points.back().summary);
}

}  // namespace nimbus::cli
