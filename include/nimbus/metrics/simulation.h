// What `nimbus simulate` reports: predictions from a Profile (metrics/simulator.h) over a grid of
// feature counts d and worker counts K, and the check of predictions against a `nimbus scale`
// run (metrics/scaling.h) on the machine the profile was measured on.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nimbus/core/status.h"
#include "nimbus/metrics/cost.h"
#include "nimbus/metrics/scaling.h"
#include "nimbus/metrics/simulator.h"

namespace nimbus {

// The largest relative error between a prediction and its measurement that passes.
inline constexpr double kValidationTolerance = 0.2;

// The platform's figures as one line (the heading of a simulation's outputs).
std::string DescribePlatform(const Platform& platform);

// The simulated problems: every d in `features` at every K in `workers`.
struct SimulationGrid {
  std::vector<int64_t> features;
  std::vector<int64_t> workers;  // ascending; the first is the speedups' baseline
  int64_t rows = 0;              // 0: the profile's
  double nnz_per_row = 0;        // 0: the profile's
  int64_t iterations = 0;        // 0: the profile's, against K
  uint64_t seed = 1;             // of the cold starts and stragglers
  // > 0: relays between the master and the workers, no node (the master too) with more than
  // this many children (the master's relays at K: RelaysUnder(K, F) in wire/messages.h);
  // 0: the star.
  int64_t relay_fanout = 0;
  bool storage_reduction = false;  // the workers sum their replies through object storage (Scenario)

  Status Validate() const;
};

// The predictions: a table to read, gnuplot data (an index per d), and JSON.
struct SimulationOutput {
  std::string platform_name, platform;  // its name, and DescribePlatform
  std::string table, dat, json;
  std::vector<int64_t> features;
  int64_t baseline_workers = 1;

  // simulate.txt, .dat, .json and the plots in `directory` (run with `gnuplot` unless it is
  // empty); returns the plots drawn.
  Result<std::vector<std::string>> Write(const std::string& directory, const std::string& gnuplot) const;
};

Result<SimulationOutput> SimulateGrid(const Profile& profile, const Platform& platform, SimulationGrid grid,
                                      const Prices& prices);

// The predictions for a `nimbus scale` run beside what it measured.
struct Validation {
  std::string table, dat;
  double worst_error = 0;  // the largest relative error, of a round's time or the time to solution
  double widest_spread = 0;  // the largest spread of either side's repeated solves

  // validation.txt and validation.dat in `directory`.
  Status Write(const std::string& directory) const;
};

// Refuses a scale run of another problem or algorithm, or on a runtime the profile's machine
// does not model (threads and process only). On the threads runtime messages cost nothing and
// workers are already running, whatever `platform` says.
// `scale_origin` names the scale run in errors; `tolerance` is the table's pass mark.
Result<Validation> ValidatePredictions(const Profile& profile, Platform platform, const ScaleResult& scale,
                                       const std::string& scale_origin, double tolerance);

}  // namespace nimbus
