#include "solve/trace_events.h"

#include "nimbus/core/json_text.h"

namespace nimbus {

std::string SetupEvent(const Executor& executor, const ProblemSpec& spec, const std::vector<WorkerReady>& ready,
                       double rho, double setup_seconds) {
  OrderedJson json = {{"event", "setup"},
                      {"runtime", executor.name()},
                      {"workers", executor.workers()},
                      {"rows", spec.rows},
                      {"cols", spec.cols},
                      {"loss", LossName(spec.loss)},
                      {"l1", spec.regularizer.l1},
                      {"l2", spec.regularizer.l2},
                      {"intercept", spec.intercept},
                      {"rho", rho},
                      {"setup_seconds", setup_seconds}};
  OrderedJson& shards = json["shards"] = OrderedJson::array();
  for (const WorkerReady& r : ready) {
    shards.push_back({{"worker", r.worker},
                      {"rows", r.rows},
                      {"nnz", r.nnz},
                      {"load_seconds", r.load_seconds},
                      {"invocation", r.invocation},
                      {"invoke", r.invoke_wall},
                      {"process_start", r.process_start_wall},
                      {"hello", r.hello_wall},
                      {"ready", r.ready_wall}});
  }
  return JsonText(json);
}

std::string RoundEvent(const RoundRequest& request, double objective, const TestedResiduals* res,
                       const RoundTiming& timing, const std::vector<WorkerReply>& replies) {
  OrderedJson json = {{"event", "round"},           {"round", request.round}, {"kind", RoundKindName(request.kind)},
                      {"time", timing.time},        {"rho", request.rho},     {"objective", objective}};
  if (res != nullptr) {
    json["primal_residual"] = res->primal;
    json["dual_residual"] = res->dual;
    json["eps_primal"] = res->eps_primal;
    json["eps_dual"] = res->eps_dual;
  }
  json["inner_tolerance"] = request.inner_tolerance;
  json["lean"] = request.lean;
  json["wait_seconds"] = timing.wait_seconds;
  json["master_seconds"] = timing.master_seconds;
  json["z_update_seconds"] = timing.z_update_seconds;
  json["stop_test_seconds"] = timing.stop_test_seconds;
  json["dispatch"] = timing.dispatch_wall;
  json["replies"] = timing.replies_wall;
  OrderedJson& workers = json["workers"] = OrderedJson::array();
  for (const WorkerReply& r : replies) {
    workers.push_back({{"worker", r.worker},
                       {"compute_seconds", r.timings.compute_seconds},
                       {"solve_seconds", r.timings.solve_seconds},
                       {"local_iterations", r.timings.local_iterations},
                       {"cg_iterations", r.timings.cg_iterations},
                       {"passes", r.timings.data_passes},
                       {"receive", r.timings.receive_wall},
                       {"start", r.timings.start_wall},
                       {"end", r.timings.end_wall},
                       {"send", r.timings.send_wall},
                       {"arrival", r.timings.arrival_wall},
                       {"bytes_in", r.timings.bytes_in},
                       {"bytes_out", r.timings.bytes_out}});
  }
  return JsonText(json);
}

}  // namespace nimbus
