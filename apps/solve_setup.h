// The command-line flags that `nimbus train`, `nimbus scale` and `nimbus simulate calibrate`
// share, and how they become the library's SolveOptions (nimbus/nimbus.h), which checks them.
#pragma once

#include <string>

#include "nimbus/core/args.h"
#include "nimbus/nimbus.h"

namespace nimbus::cli {

// The problem and its tolerance: --data, --sample-weights, --loss, --l1, --l2, --intercept,
// --class-weight, --eps-abs, --eps-rel, --max-iter, --consensus. The tolerances go straight into
// `options`, the rest by ApplyProblemFlags.
struct ProblemFlags {
  std::string data, sample_weights, loss = "logistic", class_weight;
  double l1 = 0, l2 = 0;
  int64_t max_iter = 0;
  SolveOptions options;
};
void AddProblemOptions(ArgParser& parser, ProblemFlags* flags);
// flags->options with the loss, the regularizer as given (neither: the library's default),
// the iteration cap and the class weights.
Status ApplyProblemFlags(const ArgParser& parser, ProblemFlags* flags);
// --data with --sample-weights.
TrainingData TrainingDataOf(const ProblemFlags& flags);

// Where workers run and how the master treats them: --runtime, --launch, --listen, ...
void AddRuntimeOptions(ArgParser& parser, RuntimeOptions* options);

// A regularization path's grid: --penalty, --path-length, --path-min-ratio, --lambdas (into
// `lambdas`, parsed by ApplyGridFlags).
void AddGridOptions(ArgParser& parser, PathOptions* path, std::string* lambdas);
Status ApplyGridFlags(const std::string& lambdas, PathOptions* path);

// What `nimbus path` and `nimbus cv` share: the problem, the grid, where workers run, the
// algorithm, the prices, and how the results are shown (--no-plots, --json, --quiet); each
// command adds --workers, --out and its own.
struct GridCommandFlags {
  ProblemFlags problem;  // problem.options: what the flags end up as
  std::string lambdas, out;
  bool no_plots = false, quiet = false, json = false;
  double memory_mb = 0;
};
// `json_file`: what --json prints ("path.json").
void AddGridCommandOptions(ArgParser& parser, GridCommandFlags* flags, PathOptions* path, const std::string& json_file);
// The flags into options and the grid, all checked, and --out writable.
Status ApplyGridCommandFlags(const ArgParser& parser, GridCommandFlags* flags, PathOptions* path);

// --algorithm and --gradient-tolerance.
void AddAlgorithmOptions(ArgParser& parser, SolveOptions* options);

}  // namespace nimbus::cli
