// Reading a run's trace (the JSONL that `nimbus train --trace` writes) back, for reports.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nimbus/core/status.h"

namespace nimbus {

struct TraceShard {
  int worker = 0;
  int64_t rows = 0;
  int64_t nnz = 0;
  uint64_t invocation = 0;
  double load_seconds = 0;
  // Wall-clock times of the worker's start (0 where the runtime has none, as threads).
  double invoke = 0, process_start = 0, hello = 0, ready = 0;
};

struct TraceWorkerRound {
  int worker = 0;
  double compute_seconds = 0;
  double solve_seconds = 0;
  int local_iterations = 0;
  int cg_iterations = 0;
  int64_t passes = 0;
  double receive = 0, start = 0, end = 0, send = 0, arrival = 0;  // wall clock
  int64_t bytes_in = 0, bytes_out = 0;
};

struct TraceRound {
  int64_t round = 0;
  std::string kind = "admm";  // RoundKindName: admm, evaluate, hessian-vector (Newton's), score
  double time = 0;  // since the first round began, at the end of this one
  double rho = 0;
  std::optional<double> objective;  // absent where partial rounds leave F unknown
  std::optional<double> primal_residual, dual_residual, eps_primal, eps_dual;
  double wait_seconds = 0, master_seconds = 0, z_update_seconds = 0, stop_test_seconds = 0;
  double dispatch = 0, replies = 0;  // wall clock
  std::vector<TraceWorkerRound> workers;
};

struct TraceWorkerEvent {
  double time = 0;
  int worker = 0;
  uint64_t invocation = 0;
  std::string what;    // launched, hello, ready, failed, left, duplicate, ...
  std::string detail;
};

struct TraceSummary {
  std::string termination;
  int iterations = 0;
  int rounds = 0;
  double objective = 0;
  double load_seconds = 0, setup_seconds = 0, solve_seconds = 0;
  int64_t worker_restarts = 0;
  int64_t bytes_sent = 0, bytes_received = 0;
};

struct Trace {
  std::string runtime;
  int workers = 0;
  int64_t rows = 0, cols = 0;
  std::string loss;
  double l1 = 0, l2 = 0;
  double setup_seconds = 0;
  double initial_rho = 0;
  std::vector<TraceShard> shards;
  std::vector<TraceRound> rounds;
  std::vector<TraceWorkerEvent> events;
  std::optional<TraceSummary> summary;  // absent if the run did not finish
};

// Errors name the file and line, and the field when one is wrong (a count that is not an
// integer within its type's range, say).
Result<Trace> ReadTrace(const std::string& path);
// The same from text in memory; errors name `origin` as they would the file.
Result<Trace> ParseTrace(std::string_view text, const std::string& origin);

}  // namespace nimbus
