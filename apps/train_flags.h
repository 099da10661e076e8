// `nimbus train`'s flags, and how they become the library's SolveOptions.
#pragma once

#include <string>

#include "cli_common.h"
#include "solve_setup.h"

namespace nimbus::cli {

struct TrainFlags {
  ProblemFlags problem;  // problem.options: what the flags below end up as
  std::string out, model_format = "json", trace, summary_json, warm_start;
  std::string local_solver = "newton-cg";
  bool no_adaptive_rho = false, quiet = false, verbose = false, resume = false;
  double target_objective = 0;
  double function_memory_mb = 0;
  std::string barrier = "all";
  std::string algorithm_profiles;
  int64_t max_staleness = 2, fault_seed = 1;
  FaultSpecs faults;  // --inject-*, for tests
};

void AddTrainOptions(ArgParser& parser, TrainFlags* flags);
// The flags that are not options' fields as they stand: names and specs into values; then
// the options checked, and the output places writable.
Status ApplyTrainFlags(const ArgParser& parser, TrainFlags* flags);

}  // namespace nimbus::cli
