// One shard's state and one round's work. A ShardWorker knows nothing of threads, sockets
// or processes: every runtime wraps the same object.
//
// State: x_i (the last x-update), xh_i (its over-relaxed mix with z) and u_i (the scaled dual
// variable). Only u_i matters across a replacement: the master keeps w_i = xh_i + u_i, so a
// new worker resumes with u_i = w_i - z (RestoreDual).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nimbus/core/status.h"
#include "nimbus/data/dataset.h"
#include "nimbus/local/augmented_objective.h"
#include "nimbus/local/lbfgs.h"
#include "nimbus/local/newton_cg.h"
#include "nimbus/problem/problem.h"
#include "nimbus/wire/messages.h"

namespace nimbus {

enum class LocalSolver { kNewtonCg, kLbfgs };
const char* LocalSolverName(LocalSolver solver);
Result<LocalSolver> ParseLocalSolver(const std::string& name);

struct WorkerOptions {
  LocalSolver solver = LocalSolver::kNewtonCg;
  NewtonCgOptions newton;  // its tolerances are replaced by each round's
  LbfgsOptions lbfgs;      // likewise

  Status Validate() const;
};

class ShardWorker {
 public:
  // `shard` holds this worker's rows; spec.rows is N of the whole problem.
  ShardWorker(int id, Dataset shard, const ProblemSpec& spec, const WorkerOptions& options);

  int id() const { return id_; }
  // Sizes and the curvature scale of the shard, for the master's choice of rho.
  WorkerReady Ready(double load_seconds) const;
  // Starts from a kept dual variable u (scaled for `rho`) instead of zero, as a replacement.
  Status RestoreDual(std::span<const double> u, double rho);
  // One ADMM round (see wire/messages.h for the order of updates).
  WorkerReply Serve(const RoundRequest& request);

 private:
  int id_;
  Dataset shard_;
  ProblemSpec spec_;
  WorkerOptions options_;
  AugmentedShardObjective objective_;
  std::vector<double> x_, x_relaxed_, u_, center_;
  bool has_iterate_ = false;   // x_ and x_relaxed_ hold a previous round's result
  double rho_of_u_ = 0;        // the rho that u_ is scaled for (0: u_ is zero)
};

}  // namespace nimbus
