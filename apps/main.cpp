// nimbus: consensus ADMM for regularized learning across elastic workers.
#include <malloc.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "commands.h"
#include "nimbus/core/clock.h"
#include "nimbus/nimbus.h"

namespace {

// Taken before main(): a worker's cold start counts from here.
const double kProcessStartWall = nimbus::WallSeconds();

constexpr char kUsage[] =
    "usage: nimbus COMMAND [options]   ('nimbus COMMAND --help' for a command's options)\n"
    "\n"
    "commands:\n"
    "  gen       write synthetic sparse data with a planted model (LIBSVM format)\n"
    "  split     split a LIBSVM file into binary row shards plus manifest.json\n"
    "  train     solve an L1/L2-regularized problem with consensus ADMM across workers\n"
    "  path      a regularization path: lambda_max down a grid, warm started, scored on held-out data\n"
    "  cv        K-fold cross-validation along a path (or at one lambda): folds solved side by side\n"
    "  predict   predict labels for LIBSVM data with a trained model\n"
    "  eval      accuracy, log loss, AUC (or MSE, R^2) and objective of a model on data\n"
    "  worker    one remote worker (started by a master; dials out to it)\n"
    "  lambda    workers as AWS Lambda functions: package, emulate, bootstrap\n"
    "  report    where a run's time and money went, from its trace (text, HTML, plots)\n"
    "  scale     the same solve at several worker counts: time to solution, speedup, efficiency\n"
    "  simulate  predict runs at up to 1024 workers and 10^7 features from a profile of this machine\n";

}  // namespace

int main(int argc, char** argv) {
  using namespace nimbus;
  using namespace nimbus::cli;
  // Rounds allocate and free model-sized vectors (z, w) over and over. Served from the heap
  // rather than fresh mappings, they skip a page fault and a zeroing per page every round
  // (measured: about a third of a process worker's time at d = 10^5).
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0 ||
      std::strcmp(argv[1], "help") == 0) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? kExitUsage : kExitOk;
  }
  const std::string command = argv[1];
  if (command == "gen") return RunGen(argc, argv);
  if (command == "split") return RunSplit(argc, argv);
  if (command == "train") return RunTrain(argc, argv);
  if (command == "path") return RunPath(argc, argv);
  if (command == "cv") return RunCv(argc, argv);
  if (command == "predict") return RunPredict(argc, argv);
  if (command == "eval") return RunEval(argc, argv);
  if (command == "worker") return nimbus::WorkerMain(argc, argv, kProcessStartWall);
#ifdef NIMBUS_HAVE_AWS
  if (command == "lambda") return RunLambda(argc, argv);
#else
  if (command == "lambda") {
    std::fputs("nimbus lambda: not in this build (it was built with NIMBUS_WITH_AWS=OFF)\n", stderr);
    return kExitUsage;
  }
#endif
  if (command == "report") return RunReport(argc, argv);
  if (command == "scale") return RunScale(argc, argv);
  if (command == "simulate") return RunSimulate(argc, argv);
  std::fprintf(stderr, "nimbus: unknown command '%s'\n\n%s", command.c_str(), kUsage);
  return kExitUsage;
}
