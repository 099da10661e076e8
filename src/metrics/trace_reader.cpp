#include "nimbus/metrics/trace_reader.h"

#include <fstream>
#include <nlohmann/json.hpp>

namespace nimbus {
namespace {

using Json = nlohmann::json;

double Number(const Json& object, const char* key, double fallback = 0) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>() : fallback;
}

std::optional<double> Optional(const Json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;  // null: not known that round
  return it->get<double>();
}

std::string Text(const Json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

Result<Trace> ReadTrace(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound(path + ": no such trace file");
  Trace trace;
  std::string line;
  int number = 0;
  bool have_setup = false;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    Json event;
    try {
      event = Json::parse(line);
    } catch (const Json::exception& error) {  // parse errors, and numbers out of range
      return InvalidArgument(path + ":" + std::to_string(number) + ": not a JSON object: " + error.what());
    }
    if (!event.is_object()) return InvalidArgument(path + ":" + std::to_string(number) + ": not a JSON object");
    const std::string kind = Text(event, "event");
    try {
      if (kind == "setup") {
        have_setup = true;
        trace.runtime = Text(event, "runtime");
        trace.workers = static_cast<int>(Number(event, "workers"));
        trace.rows = static_cast<int64_t>(Number(event, "rows"));
        trace.cols = static_cast<int64_t>(Number(event, "cols"));
        trace.loss = Text(event, "loss");
        trace.l1 = Number(event, "l1");
        trace.l2 = Number(event, "l2");
        trace.setup_seconds = Number(event, "setup_seconds");
        trace.initial_rho = Number(event, "rho");
        for (const Json& s : event.at("shards")) {
          TraceShard shard;
          shard.worker = static_cast<int>(Number(s, "worker"));
          shard.rows = static_cast<int64_t>(Number(s, "rows"));
          shard.nnz = static_cast<int64_t>(Number(s, "nnz"));
          shard.invocation = static_cast<uint64_t>(Number(s, "invocation"));
          shard.load_seconds = Number(s, "load_seconds");
          shard.invoke = Number(s, "invoke");
          shard.process_start = Number(s, "process_start");
          shard.hello = Number(s, "hello");
          shard.ready = Number(s, "ready");
          trace.shards.push_back(shard);
        }
      } else if (kind == "round") {
        TraceRound round;
        round.round = static_cast<int64_t>(Number(event, "round"));
        round.time = Number(event, "time");
        round.rho = Number(event, "rho");
        round.objective = Optional(event, "objective");
        round.primal_residual = Optional(event, "primal_residual");
        round.dual_residual = Optional(event, "dual_residual");
        round.eps_primal = Optional(event, "eps_primal");
        round.eps_dual = Optional(event, "eps_dual");
        round.wait_seconds = Number(event, "wait_seconds");
        round.master_seconds = Number(event, "master_seconds");
        round.z_update_seconds = Number(event, "z_update_seconds");
        round.stop_test_seconds = Number(event, "stop_test_seconds");
        round.dispatch = Number(event, "dispatch");
        round.replies = Number(event, "replies");
        for (const Json& w : event.at("workers")) {
          TraceWorkerRound worker;
          worker.worker = static_cast<int>(Number(w, "worker"));
          worker.compute_seconds = Number(w, "compute_seconds");
          worker.solve_seconds = Number(w, "solve_seconds");
          worker.local_iterations = static_cast<int>(Number(w, "local_iterations"));
          worker.cg_iterations = static_cast<int>(Number(w, "cg_iterations"));
          worker.passes = static_cast<int64_t>(Number(w, "passes"));
          worker.receive = Number(w, "receive");
          worker.start = Number(w, "start");
          worker.end = Number(w, "end");
          worker.send = Number(w, "send");
          worker.arrival = Number(w, "arrival");
          worker.bytes_in = static_cast<int64_t>(Number(w, "bytes_in"));
          worker.bytes_out = static_cast<int64_t>(Number(w, "bytes_out"));
          round.workers.push_back(worker);
        }
        trace.rounds.push_back(std::move(round));
      } else if (kind == "worker") {
        trace.events.push_back({Number(event, "time"), static_cast<int>(Number(event, "worker")),
                                static_cast<uint64_t>(Number(event, "invocation")), Text(event, "what"),
                                Text(event, "detail")});
      } else if (kind == "summary") {
        TraceSummary summary;
        summary.termination = Text(event, "termination");
        summary.iterations = static_cast<int>(Number(event, "iterations"));
        summary.rounds = static_cast<int>(Number(event, "rounds"));
        summary.objective = Number(event, "objective");
        summary.load_seconds = Number(event, "load_seconds");
        summary.setup_seconds = Number(event, "setup_seconds");
        summary.solve_seconds = Number(event, "solve_seconds");
        summary.worker_restarts = static_cast<int64_t>(Number(event, "worker_restarts"));
        summary.bytes_sent = static_cast<int64_t>(Number(event, "bytes_sent"));
        summary.bytes_received = static_cast<int64_t>(Number(event, "bytes_received"));
        trace.summary = summary;
      } else {
        return InvalidArgument(path + ":" + std::to_string(number) + ": unknown event '" + kind + "'");
      }
    } catch (const Json::exception& error) {
      return InvalidArgument(path + ":" + std::to_string(number) + ": malformed " + kind + " event: " + error.what());
    }
  }
  if (number == 0) return InvalidArgument(path + ":1: empty trace");
  if (!have_setup) return InvalidArgument(path + ": no setup event: not a nimbus trace");
  return trace;
}

}  // namespace nimbus
