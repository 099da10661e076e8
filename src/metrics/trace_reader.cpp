#include "nimbus/metrics/trace_reader.h"

#include <fstream>
#include <istream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "nimbus/core/json_integer.h"

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

// A field that is there but is not what it must be; the reader names its line.
struct BadField {
  std::string field;
  std::string reason;
};

// A count or an id: absent or null reads as 0, anything else must be an integer within T's
// range (casting a double such as 1e300 to an integer would be undefined behaviour).
template <typename T>
T Integer(const Json& object, const char* key, const std::string& where = "") {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return 0;
  try {
    return JsonInteger<T>(*it);
  } catch (const Json::exception&) {
    throw BadField{where + key, it->is_number_integer() ? "an integer out of range" : "not an integer"};
  }
}

// "shards[2]." and the like: where a nested field sits, for messages.
std::string Item(const char* array, std::size_t index) {
  return std::string(array) + "[" + std::to_string(index) + "].";
}

std::string Text(const Json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// An array field the event must have (every worker list, even an empty one).
const Json& Array(const Json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end()) throw BadField{key, "missing"};
  if (!it->is_array()) throw BadField{key, "not an array"};
  return *it;
}

void ReadSetup(const Json& event, Trace& trace) {
  trace.runtime = Text(event, "runtime");
  trace.workers = Integer<int>(event, "workers");
  trace.rows = Integer<int64_t>(event, "rows");
  trace.cols = Integer<int64_t>(event, "cols");
  trace.loss = Text(event, "loss");
  trace.l1 = Number(event, "l1");
  trace.l2 = Number(event, "l2");
  trace.setup_seconds = Number(event, "setup_seconds");
  trace.initial_rho = Number(event, "rho");
  const Json& shards = Array(event, "shards");
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const Json& s = shards[i];
    const std::string where = Item("shards", i);
    TraceShard shard;
    shard.worker = Integer<int>(s, "worker", where);
    shard.rows = Integer<int64_t>(s, "rows", where);
    shard.nnz = Integer<int64_t>(s, "nnz", where);
    shard.invocation = Integer<uint64_t>(s, "invocation", where);
    shard.load_seconds = Number(s, "load_seconds");
    shard.invoke = Number(s, "invoke");
    shard.process_start = Number(s, "process_start");
    shard.hello = Number(s, "hello");
    shard.ready = Number(s, "ready");
    trace.shards.push_back(shard);
  }
}

TraceWorkerRound ReadWorkerRound(const Json& w, const std::string& where) {
  TraceWorkerRound worker;
  worker.worker = Integer<int>(w, "worker", where);
  worker.compute_seconds = Number(w, "compute_seconds");
  worker.solve_seconds = Number(w, "solve_seconds");
  worker.local_iterations = Integer<int>(w, "local_iterations", where);
  worker.cg_iterations = Integer<int>(w, "cg_iterations", where);
  worker.passes = Integer<int64_t>(w, "passes", where);
  worker.receive = Number(w, "receive");
  worker.start = Number(w, "start");
  worker.end = Number(w, "end");
  worker.send = Number(w, "send");
  worker.arrival = Number(w, "arrival");
  worker.bytes_in = Integer<int64_t>(w, "bytes_in", where);
  worker.bytes_out = Integer<int64_t>(w, "bytes_out", where);
  return worker;
}

TraceRound ReadRound(const Json& event) {
  TraceRound round;
  round.round = Integer<int64_t>(event, "round");
  if (event.contains("kind")) round.kind = Text(event, "kind");  // (traces before it: ADMM's)
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
  const Json& workers = Array(event, "workers");
  for (std::size_t i = 0; i < workers.size(); ++i) {
    round.workers.push_back(ReadWorkerRound(workers[i], Item("workers", i)));
  }
  return round;
}

TraceWorkerEvent ReadWorkerEvent(const Json& event) {
  return {Number(event, "time"), Integer<int>(event, "worker"), Integer<uint64_t>(event, "invocation"),
          Text(event, "what"), Text(event, "detail")};
}

TraceSummary ReadSummary(const Json& event) {
  TraceSummary summary;
  summary.termination = Text(event, "termination");
  summary.iterations = Integer<int>(event, "iterations");
  summary.rounds = Integer<int>(event, "rounds");
  summary.objective = Number(event, "objective");
  summary.load_seconds = Number(event, "load_seconds");
  summary.setup_seconds = Number(event, "setup_seconds");
  summary.solve_seconds = Number(event, "solve_seconds");
  summary.worker_restarts = Integer<int64_t>(event, "worker_restarts");
  summary.bytes_sent = Integer<int64_t>(event, "bytes_sent");
  summary.bytes_received = Integer<int64_t>(event, "bytes_received");
  return summary;
}

// One line's event into the trace; an error names `where` (origin:line).
Status ReadEvent(const Json& event, const std::string& where, Trace& trace, bool& have_setup) {
  const std::string kind = Text(event, "event");
  try {
    if (kind == "setup") {
      have_setup = true;
      ReadSetup(event, trace);
    } else if (kind == "round") {
      trace.rounds.push_back(ReadRound(event));
    } else if (kind == "worker") {
      trace.events.push_back(ReadWorkerEvent(event));
    } else if (kind == "summary") {
      trace.summary = ReadSummary(event);
    } else {
      return InvalidArgument(where + ": unknown event '" + kind + "'");
    }
  } catch (const BadField& bad) {
    return InvalidArgument(where + ": " + kind + " event: field '" + bad.field + "' is " + bad.reason);
  } catch (const Json::exception& error) {
    return InvalidArgument(where + ": malformed " + kind + " event: " + error.what());
  }
  return Status::Ok();
}

Result<Trace> ReadTraceLines(std::istream& in, const std::string& origin) {
  Trace trace;
  std::string line;
  int number = 0;
  bool have_setup = false;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    const std::string where = origin + ":" + std::to_string(number);
    Json event;
    try {
      event = Json::parse(line);
    } catch (const Json::exception& error) {  // parse errors, and numbers out of range
      return InvalidArgument(where + ": not a JSON object: " + error.what());
    }
    if (!event.is_object()) return InvalidArgument(where + ": not a JSON object");
    NIMBUS_RETURN_IF_ERROR(ReadEvent(event, where, trace, have_setup));
  }
  if (number == 0) return InvalidArgument(origin + ":1: empty trace");
  if (!have_setup) return InvalidArgument(origin + ": no setup event: not a nimbus trace");
  return trace;
}

}  // namespace

Result<Trace> ReadTrace(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound(path + ": no such trace file");
  return ReadTraceLines(in, path);
}

Result<Trace> ParseTrace(std::string_view text, const std::string& origin) {
  std::istringstream in{std::string(text)};
  return ReadTraceLines(in, origin);
}

}  // namespace nimbus
