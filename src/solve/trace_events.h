// The trace events of both master algorithms (solve/admm/admm_master.h, solve/newton/newton_master.h): one
// "setup" event when the workers are ready and one "round" event per round, filled from the
// master's figures and written through the trace's schema (executor/trace_schema.h).
#pragma once

#include <string>
#include <vector>

#include "nimbus/executor/executor.h"
#include "nimbus/problem/problem.h"

namespace nimbus {

struct RoundTiming {
  double time = 0;  // since the first round
  double wait_seconds = 0;     // the barrier: waiting for replies
  double master_seconds = 0;   // all of the master's own work this round, of which
  double z_update_seconds = 0;  // ... the z-update and the new rho
  double stop_test_seconds = 0; // ... the residuals and the stop test
  double dispatch_wall = 0;  // when the round went out
  double replies_wall = 0;   // when the last reply the master waited for was in
};

// What the stop test saw in a tested round: ADMM's residuals and tolerances, or Newton's
// subgradient norm (primal) and its tolerance.
struct TestedResiduals {
  double primal = 0, dual = 0, eps_primal = 0, eps_dual = 0;
};

std::string SetupEvent(const Executor& executor, const ProblemSpec& spec, const std::vector<WorkerReady>& ready,
                       double rho, double setup_seconds);
// The same for a runtime by name with `workers` (the column method's blocks: no executor).
std::string SetupEvent(const std::string& runtime, int workers, const ProblemSpec& spec,
                       const std::vector<WorkerReady>& ready, double rho, double setup_seconds);
std::string RoundEvent(const RoundRequest& request, double objective, const TestedResiduals* res,
                       const RoundTiming& timing, const std::vector<WorkerReply>& replies);

}  // namespace nimbus
