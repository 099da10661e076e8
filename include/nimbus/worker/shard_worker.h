// One shard's state and one round's work. A ShardWorker knows nothing of threads, sockets
// or processes: every runtime wraps the same object.
//
// State: x_i (the last x-update), xh_i (its over-relaxed mix with z) and u_i (the scaled dual
// variable). The master keeps each w_i = xh_i + u_i, from which it rebuilds this state for a
// replacement worker (Resume; see runtime/state_keeper.h).
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
#include "nimbus/wire/fault_injection.h"
#include "nimbus/wire/messages.h"

namespace nimbus {

enum class LocalSolver { kNewtonCg, kLbfgs };
const char* LocalSolverName(LocalSolver solver);
Result<LocalSolver> ParseLocalSolver(const std::string& name);

struct WorkerOptions {
  LocalSolver solver = LocalSolver::kNewtonCg;
  NewtonCgOptions newton;  // its tolerances are replaced by each round's
  LbfgsOptions lbfgs;      // likewise
  FaultInjection faults;   // delays happen inside Serve(); crashes are the runtime's to stage

  Status Validate() const;
};

class ShardWorker {
 public:
  // `shard` holds this worker's rows; spec.rows is N of the whole problem.
  ShardWorker(int id, Dataset shard, const ProblemSpec& spec, const WorkerOptions& options);

  int id() const { return id_; }
  // Sizes and the curvature scale of the shard, for the master's choice of rho.
  WorkerReady Ready(double load_seconds) const;
  // Continues from a kept state (a replacement worker): with x and x_relaxed, exactly where
  // the replaced worker was; with u alone, from that dual (the next round's dual update and
  // the scalars that need x_i are then skipped).
  Status Resume(const ResumeState& state);
  // Resume() with the dual u (scaled for `rho`) alone.
  Status RestoreDual(std::span<const double> u, double rho);
  // One ADMM round (see wire/messages.h for the order of updates). `invocation` numbers the
  // starts of this worker (it only seeds injected faults).
  WorkerReply Serve(const RoundRequest& request, uint64_t invocation = 0);

 private:
  int id_;
  Dataset shard_;
  ProblemSpec spec_;
  WorkerOptions options_;
  AugmentedShardObjective objective_;
  NewtonCgWorkspace newton_workspace_;
  std::vector<double> x_, x_relaxed_, u_, center_;
  bool has_iterate_ = false;   // x_ and x_relaxed_ hold a previous round's result
  double rho_of_u_ = 0;        // the rho that u_ is scaled for (0: u_ is zero)
};

}  // namespace nimbus
