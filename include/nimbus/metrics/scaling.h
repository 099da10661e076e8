// The results of `nimbus scale`: one solve of the same problem to the same tolerance per
// worker count K, and what they say about scaling. `nimbus simulate --validate` reads them
// back to compare its predictions with.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nimbus/choices.h"
#include "nimbus/core/status.h"

namespace nimbus {

struct ScalePoint {
  int workers = 0;
  int iterations = 0;
  int rounds = 0;
  std::string termination;
  double objective = 0;
  double setup_seconds = 0;  // starting the workers and loading their shards
  double solve_seconds = 0;  // the rounds
  double dollars = 0;        // at Lambda's prices
  // The slowest of the --repeat solves' time to solution over the fastest's (which the point
  // keeps), minus 1; 0 from one solve.
  double spread = 0;

  double time_to_solution() const { return setup_seconds + solve_seconds; }
  double seconds_per_round() const { return rounds > 0 ? solve_seconds / rounds : 0; }
};

struct ScaleResult {
  std::string data;
  RuntimeKind runtime = RuntimeKind::kThreads;
  Algorithm algorithm = Algorithm::kAdmm;  // of the master (a scale.json without one is ADMM's)
  int64_t rows = 0, cols = 0, nnz = 0;
  double eps_abs = 0, eps_rel = 0;
  std::vector<ScalePoint> points;  // the first is the baseline of the speedups

  // Relative to the first point (K0): speedup T(K0)/T(K) of the time to solution, the same of
  // the time per round, and efficiency speedup * K0 / K.
  double Speedup(std::size_t i) const;
  double RoundSpeedup(std::size_t i) const;
  double Efficiency(std::size_t i) const;

  std::string Table() const;
  std::string ToJson() const;
  static Result<ScaleResult> FromJson(const std::string& text, const std::string& origin);
  static Result<ScaleResult> Read(const std::string& path);
  // scale.txt, scale.json, scale.dat, and the plots scale-time and scale-speedup (PNG and SVG)
  // unless `gnuplot` is empty. Returns the plots drawn.
  Result<std::vector<std::string>> Write(const std::string& directory, const std::string& gnuplot) const;
};

}  // namespace nimbus
