// The nimbus subcommands. Each returns the process exit status: 0 on success, 1 when a run
// failed (a worker failure, an I/O error mid-way), 2 for bad usage or bad input.
#pragma once

#include "nimbus/core/args.h"  // the exit statuses

namespace nimbus::cli {

int RunGen(int argc, char** argv);
int RunSplit(int argc, char** argv);
int RunTrain(int argc, char** argv);
int RunPath(int argc, char** argv);
int RunCv(int argc, char** argv);
int RunPredict(int argc, char** argv);
int RunEval(int argc, char** argv);
// `process_start_wall`: when this process began, for the worker's cold-start report.
int RunLambda(int argc, char** argv);
int RunReport(int argc, char** argv);
int RunScale(int argc, char** argv);
int RunSimulate(int argc, char** argv);

}  // namespace nimbus::cli
