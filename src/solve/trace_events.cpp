#include "solve/trace_events.h"

#include "nimbus/executor/trace_schema.h"

namespace nimbus {

std::string SetupEvent(const Executor& executor, const ProblemSpec& spec, const std::vector<WorkerReady>& ready,
                       double rho, double setup_seconds) {
  return SetupEvent(executor.name(), executor.workers(), spec, ready, rho, setup_seconds);
}

std::string SetupEvent(const std::string& runtime, int workers, const ProblemSpec& spec,
                       const std::vector<WorkerReady>& ready, double rho, double setup_seconds) {
  TraceSetup setup{.runtime = runtime, .workers = workers, .rows = spec.rows, .cols = spec.cols,
                   .loss = LossName(spec.loss), .l1 = spec.regularizer.l1, .l2 = spec.regularizer.l2,
                   .intercept = spec.intercept, .rho = rho, .setup_seconds = setup_seconds, .shards = {}};
  for (const WorkerReady& r : ready) {
    setup.shards.push_back({.worker = r.worker, .rows = r.rows, .nnz = r.nnz, .load_seconds = r.load_seconds,
                            .invocation = r.invocation, .invoke = r.invoke_wall,
                            .process_start = r.process_start_wall, .hello = r.hello_wall, .ready = r.ready_wall});
  }
  return TraceLine(setup);
}

std::string RoundEvent(const RoundRequest& request, double objective, const TestedResiduals* res,
                       const RoundTiming& timing, const std::vector<WorkerReply>& replies) {
  TraceRound round{.round = request.round, .kind = request.kind, .time = timing.time,
                   .rho = request.rho, .objective = objective,
                   .primal_residual = res ? std::optional(res->primal) : std::nullopt,
                   .dual_residual = res ? std::optional(res->dual) : std::nullopt,
                   .eps_primal = res ? std::optional(res->eps_primal) : std::nullopt,
                   .eps_dual = res ? std::optional(res->eps_dual) : std::nullopt,
                   .inner_tolerance = request.inner_tolerance, .lean = request.lean,
                   .wait_seconds = timing.wait_seconds, .master_seconds = timing.master_seconds,
                   .z_update_seconds = timing.z_update_seconds, .stop_test_seconds = timing.stop_test_seconds,
                   .dispatch = timing.dispatch_wall, .replies = timing.replies_wall, .workers = {}};
  for (const WorkerReply& r : replies) round.workers.push_back({r.timings, r.worker});
  return TraceLine(round);
}

}  // namespace nimbus
