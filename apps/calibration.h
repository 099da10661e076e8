// `nimbus simulate calibrate`: measures the Profile the simulator runs on (metrics/simulator.h)
// on this machine, with the real parts: solves of the user's problem at each K with the master
// `nimbus train` would run (ADMM or Newton, through the Master seam) on the threads runtime
// (workers computing one at a time, so every worker's round is timed on its own), a short
// solve of a wide generated problem (to tell the cost per coordinate from the cost per
// nonzero), ROUND and REPLY messages through ZeroMQ on 127.0.0.1, worker process starts and
// shard loads.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "nimbus/metrics/least_squares.h"
#include "nimbus/metrics/simulator.h"
#include "solve_setup.h"

namespace nimbus::cli {

// `nimbus simulate --validate`'s default tolerance: the largest relative error that passes.
inline constexpr double kValidationTolerance = 0.2;

struct CalibrationOptions {
  std::vector<int> workers = {1, 2, 4, 8, 16};
  MasterChoice master;  // the algorithm and its options (ChooseMaster)
  WorkerOptions worker;
  std::string executable;        // the nimbus binary, whose start-up is timed
  int64_t wide_features = 1000000;  // the wide problem's d
  int repetitions = 2;              // solves per K; the fastest counts
  std::function<void(const std::string&)> progress;  // one line per step, if set
};

// `plan` must hold a LIBSVM file's data (it is split anew for each K).
Result<Profile> Calibrate(Plan& plan, const CalibrationOptions& options);


}  // namespace nimbus::cli
