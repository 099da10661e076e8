// nimbus simulate: predicted runs at many K and d from a profile of this machine, the
// calibration that measures the profile, and the check of the predictions against `nimbus
// scale` (nimbus/nimbus.h: Calibrate, SimulateGrid, ValidatePredictions).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "platform_flags.h"
#include "solve_setup.h"

namespace nimbus::cli {
namespace {

int RunCalibrate(int argc, char** argv) {
  ProblemFlags problem;
  std::string workers_text = "1,2,4,8,16", out = "nimbus-profile.json";
  bool quiet = false;
  CalibrationOptions calibration;
  int64_t repeat = calibration.repetitions;
  ArgParser parser("simulate calibrate", "--data FILE.svm [--workers 1,2,4,8,16] [--out PROFILE.json]",
                   "Measures the profile that 'nimbus simulate' runs on: the problem solved to the tolerance at each\n"
                   "K on the threads runtime with the master 'nimbus train' would run (--algorithm; workers computing\n"
                   "one at a time, so each worker's round is timed on its own): rounds, work and message vectors per\n"
                   "round; a few rounds of a wide generated problem, messages through ZeroMQ on 127.0.0.1, worker\n"
                   "process starts and shard loads. --algorithm columns measures the column method, a block of\n"
                   "columns a worker (no wide problem: its messages and the master's work follow the rows).\n"
                   "Takes about as long as the solves.");
  AddProblemOptions(parser, &problem);
  AddAlgorithmOptions(parser, &problem.options);
  parser.AddChoice("message-precision", "P", "float64, or float32: the messages nimbus train --message-precision\n"
                   "                            float32 would send (half the bytes of the vectors it makes lean)",
                   &problem.options.admm.message_precision);
  parser.AddString("workers", "K1,K2,...", "the worker counts to measure, ascending", &workers_text);
  parser.AddInt("repeat", "N", "solves per K (the fastest counts)", &repeat);
  parser.AddString("out", "PROFILE.json", "where to write the profile", &out);
  parser.AddSwitch("quiet", "print nothing but errors", &quiet);
  parser.Require("data");
  int exit_code = 0;
  if (!ParseOrExit(parser, argc, argv, &exit_code, 3)) return exit_code;
  const std::string command = "simulate calibrate";
  if (Status valid = ApplyProblemFlags(parser, &problem); !valid.ok()) return ReportError(command, valid);
  Result<std::vector<int64_t>> workers = ParseCountList(workers_text, "workers", 4096, /*ascending=*/true);
  if (!workers.ok()) return ReportError(command, workers.status());
  if (Status writable = CheckWritableLocation(out); !writable.ok()) return ReportError(command, writable);
  calibration.workers.assign(workers->begin(), workers->end());
  calibration.repetitions = static_cast<int>(std::clamp<int64_t>(repeat, 0, 1000));
  if (!quiet) calibration.progress = [](const std::string& line) { std::fprintf(stderr, "  %s\n", line.c_str()); };
  Result<Profile> profile = Calibrate(TrainingDataOf(problem), problem.options, calibration);
  if (!profile.ok()) return ReportError(command, profile.status());
  if (Status written = profile->Write(out); !written.ok()) return ReportError(command, written);
  if (!quiet) {
    std::printf("wrote the profile of %s (%d cores, %s) to %s\n", profile->machine.c_str(), profile->cores,
                NameOf(profile->algorithm).data(), out.c_str());
  }
  return kExitOk;
}

// The predictions for a `nimbus scale` run on this machine beside what it measured.
int Validate(const Profile& profile, const Platform& platform, const std::string& scale_path, double tolerance,
             const std::string& out, bool quiet) {
  const std::string command = "simulate";
  Result<ScaleResult> scale = ScaleResult::Read(scale_path);
  if (!scale.ok()) return ReportError(command, scale.status());
  Result<Validation> validation = ValidatePredictions(profile, platform, *scale, scale_path, tolerance);
  if (!validation.ok()) return ReportError(command, validation.status());
  if (!quiet) std::fputs(validation->table.c_str(), stdout);
  if (!out.empty()) {
    if (Status written = validation->Write(out); !written.ok()) return ReportError(command, written);
  }
  if (validation->worst_error <= tolerance) return kExitOk;
  std::fprintf(stderr, "nimbus simulate: the predictions are off by %.1f%%, more than the tolerance of %.0f%%\n",
               100 * validation->worst_error, 100 * tolerance);
  if (validation->widest_spread > tolerance) {
    std::fprintf(stderr, "nimbus simulate: the solves on one side disagreed among themselves by up to %.0f%%: "
                         "measure both again, with more --repeat\n", 100 * validation->widest_spread);
  }
  return kExitFailure;
}

}  // namespace

int RunSimulate(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[2], "calibrate") == 0) return RunCalibrate(argc, argv);
  std::string profile_path, workers_text = "1,2,4,8,16,32,64,128,256,512,1024", features_text = "1e3,1e4,1e5,1e6,1e7";
  std::string validate, out;
  SimulationGrid grid;
  int64_t seed = 1;
  double tolerance = kValidationTolerance;
  bool no_plots = false, quiet = false;
  PlatformFlags platform_flags;
  Prices prices;
  double memory_mb = 0;
  ArgParser parser(
      "simulate", "--profile PROFILE.json [--platform lambda|local] [--workers LIST] [--features LIST] [--out DIR]",
      "Predicts runs of the profile's algorithm (consensus ADMM, distributed Newton or the column method)\n"
      "with a discrete-event simulation of every round: the master sending ROUND through its link, the\n"
      "workers' work (their cost from the profile, with stragglers), the REPLYs coming back and the master's\n"
      "own work; and before them the workers' launches, cold starts and shard loads. ADMM's rounds grow with\n"
      "K as its profile's iterations do, as do the column method's (whose messages carry the rows'\n"
      "derivatives and margins); Newton's stay the profile's at every K.\n"
      "Reports the time to solution, speedup and efficiency, the share of communication, and dollars per\n"
      "solve for each K and d. The profile comes from 'nimbus simulate calibrate --data FILE.svm'.\n"
      "With --validate SCALE.json it checks its predictions against a 'nimbus scale' run on this machine.");
  parser.AddString("profile", "PROFILE.json", "the profile of this machine (nimbus simulate calibrate)", &profile_path);
  AddPlatformOptions(parser, &platform_flags);
  parser.AddString("workers", "K1,K2,...", "worker counts; the first is the speedups' baseline", &workers_text);
  parser.AddString("features", "D1,D2,...", "feature counts d (1e5 style allowed)", &features_text);
  parser.AddInt("rows", "N", "rows of the simulated problem; 0: the profile's", &grid.rows);
  parser.AddDouble("nnz-per-row", "R", "nonzeros per row; 0: the profile's", &grid.nnz_per_row);
  parser.AddInt("iterations", "N", "ADMM iterations (Newton steps, at the profile's rounds per step) at every K; 0:\n"
                "                            the profile's, against K", &grid.iterations);
  parser.AddInt("relay-fanout", "F", "relays between the master and the workers (nimbus train --relays): every\n"
                "                            node of the tree, the master too, with at most F children; 0: the star",
                &grid.relay_fanout);
  parser.AddSwitch("storage-reduction", "the workers sum their replies through object storage (S3), each worker one\n"
                   "                            slice of the model (LambdaML's ScatterReduce), not through the master",
                   &grid.storage_reduction);
  parser.AddInt("seed", "N", "seed of the cold starts and stragglers", &seed);
  parser.AddString("validate", "SCALE.json", "compare with a nimbus scale run (its scale.json) on this machine",
                   &validate);
  parser.AddDouble("tolerance", "X", "--validate: the largest relative error that passes", &tolerance);
  parser.AddString("out", "DIR", "write the table, data and plots here", &out);
  parser.AddSwitch("no-plots", "write the data and the gnuplot script, but do not run gnuplot", &no_plots);
  AddPriceOptions(parser, &prices, &memory_mb);
  parser.AddSwitch("quiet", "print nothing but errors", &quiet);
  parser.Require("profile");
  int exit_code = 0;
  if (!ParseOrExit(parser, argc, argv, &exit_code)) return exit_code;
  const std::string command = "simulate";
  if (Status valid = FinishPriceOptions(memory_mb, &prices); !valid.ok()) return ReportError(command, valid);
  if (!(tolerance > 0)) return ReportError(command, InvalidArgument("--tolerance: must be positive"));
  Result<Profile> profile = Profile::Read(profile_path);
  if (!profile.ok()) return ReportError(command, profile.status());
  Result<Platform> platform = MakePlatform(parser, platform_flags, *profile);
  if (!platform.ok()) return ReportError(command, platform.status());
  if (!validate.empty()) {
    if (!parser.Given("platform")) *platform = Platform::Local(*profile);
    return Validate(*profile, *platform, validate, tolerance, out, quiet);
  }
  Result<std::vector<int64_t>> workers = ParseCountList(workers_text, "workers", 1 << 20, /*ascending=*/true);
  if (!workers.ok()) return ReportError(command, workers.status());
  Result<std::vector<int64_t>> features = ParseCountList(features_text, "features", int64_t{1} << 40);
  if (!features.ok()) return ReportError(command, features.status());
  grid.workers = *workers;
  grid.features = *features;
  grid.seed = static_cast<uint64_t>(seed);
  if (!quiet) std::printf("%s; %s\n", DescribePlatform(*platform).c_str(), NameOf(profile->algorithm).data());
  Result<SimulationOutput> simulated = SimulateGrid(*profile, *platform, grid, prices);
  if (!simulated.ok()) return ReportError(command, simulated.status());
  if (!quiet) std::fputs(simulated->table.c_str(), stdout);
  if (out.empty()) return kExitOk;
  Result<std::vector<std::string>> drawn = simulated->Write(out, no_plots ? "" : "gnuplot");
  if (!drawn.ok()) return ReportError(command, drawn.status());
  if (!quiet) std::printf("wrote %s/simulate.txt, simulate.json, simulate.dat (%zu plots)\n", out.c_str(), drawn->size());
  return kExitOk;
}

}  // namespace nimbus::cli
