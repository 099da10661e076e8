#include "solve/trace_events.h"

#include "nimbus/core/json_writer.h"

namespace nimbus {

std::string SetupEvent(const Executor& executor, const ProblemSpec& spec, const std::vector<WorkerReady>& ready,
                       double rho, double setup_seconds) {
  JsonWriter json;
  json.BeginObject()
      .Field("event", "setup")
      .Field("runtime", executor.name())
      .Field("workers", executor.workers())
      .Field("rows", spec.rows)
      .Field("cols", spec.cols)
      .Field("loss", LossName(spec.loss))
      .Field("l1", spec.regularizer.l1)
      .Field("l2", spec.regularizer.l2)
      .Field("intercept", spec.intercept)
      .Field("rho", rho)
      .Field("setup_seconds", setup_seconds)
      .Key("shards")
      .BeginArray();
  for (const WorkerReady& r : ready) {
    json.BeginObject()
        .Field("worker", r.worker)
        .Field("rows", r.rows)
        .Field("nnz", r.nnz)
        .Field("load_seconds", r.load_seconds)
        .Field("invocation", r.invocation)
        .Field("invoke", r.invoke_wall)
        .Field("process_start", r.process_start_wall)
        .Field("hello", r.hello_wall)
        .Field("ready", r.ready_wall)
        .EndObject();
  }
  return json.EndArray().EndObject().Take();
}

std::string RoundEvent(const RoundRequest& request, double objective, const TestedResiduals* res,
                       const RoundTiming& timing, const std::vector<WorkerReply>& replies) {
  JsonWriter json;
  json.BeginObject()
      .Field("event", "round")
      .Field("round", request.round)
      .Field("kind", RoundKindName(request.kind))
      .Field("time", timing.time)
      .Field("rho", request.rho)
      .Field("objective", objective);
  if (res != nullptr) {
    json.Field("primal_residual", res->primal)
        .Field("dual_residual", res->dual)
        .Field("eps_primal", res->eps_primal)
        .Field("eps_dual", res->eps_dual);
  }
  json.Field("inner_tolerance", request.inner_tolerance)
      .Field("lean", request.lean)
      .Field("wait_seconds", timing.wait_seconds)
      .Field("master_seconds", timing.master_seconds)
      .Field("z_update_seconds", timing.z_update_seconds)
      .Field("stop_test_seconds", timing.stop_test_seconds)
      .Field("dispatch", timing.dispatch_wall)
      .Field("replies", timing.replies_wall)
      .Key("workers")
      .BeginArray();
  for (const WorkerReply& r : replies) {
    json.BeginObject()
        .Field("worker", r.worker)
        .Field("compute_seconds", r.timings.compute_seconds)
        .Field("solve_seconds", r.timings.solve_seconds)
        .Field("local_iterations", r.timings.local_iterations)
        .Field("cg_iterations", r.timings.cg_iterations)
        .Field("passes", r.timings.data_passes)
        .Field("receive", r.timings.receive_wall)
        .Field("start", r.timings.start_wall)
        .Field("end", r.timings.end_wall)
        .Field("send", r.timings.send_wall)
        .Field("arrival", r.timings.arrival_wall)
        .Field("bytes_in", r.timings.bytes_in)
        .Field("bytes_out", r.timings.bytes_out)
        .EndObject();
  }
  return json.EndArray().EndObject().Take();
}

}  // namespace nimbus
