// The run's trace (`nimbus train --trace`, the facade's on_trace): JSONL, one event per line, its
// kind in the "event" field and its fields after it. Each event is a struct here and its fields
// are listed once (Fields, through core/json_fields.h), for the end that writes it (the masters'
// setup and rounds, the remote executors' worker events, the summary) and the end that reads it
// back (metrics/trace_reader.h) alike: a key spelt differently at one end cannot happen.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "nimbus/choices.h"
#include "nimbus/executor/summary.h"
#include "nimbus/wire/messages.h"

namespace nimbus {

// Each line's "event": which of the structs below the rest of the line is.
enum class TraceEventKind { kSetup, kRound, kWorker, kSummary };

template <>
struct ChoiceNames<TraceEventKind> {
  static constexpr std::string_view option = "event";
  static constexpr auto names = std::to_array<std::pair<TraceEventKind, std::string_view>>(
      {{TraceEventKind::kSetup, "setup"}, {TraceEventKind::kRound, "round"}, {TraceEventKind::kWorker, "worker"},
       {TraceEventKind::kSummary, "summary"}});
};

// One list of fields serves the writer (Self is the struct const) and the reader.
template <typename Self, typename T>
concept SameOrConst = std::same_as<std::remove_const_t<Self>, T>;

// A worker as it became ready (in "setup").
struct TraceShard {
  int worker = 0;
  int64_t rows = 0, nnz = 0;
  double load_seconds = 0;
  uint64_t invocation = 0;
  // Wall-clock times of the worker's start (0 where the runtime has none, as threads).
  double invoke = 0, process_start = 0, hello = 0, ready = 0;
  bool operator==(const TraceShard&) const = default;
};

// "setup": once, when the workers are ready.
struct TraceSetup {
  std::string runtime;
  int workers = 0;
  int64_t rows = 0, cols = 0;
  std::string loss;
  double l1 = 0, l2 = 0;
  bool intercept = false;
  double rho = 0;  // the first round's (0 for Newton)
  double setup_seconds = 0;
  std::vector<TraceShard> shards;
  bool operator==(const TraceSetup&) const = default;
};

// A worker's reply in a round: its timings, and whose they are.
struct TraceWorkerRound : WorkerTimings {
  int worker = 0;
  bool operator==(const TraceWorkerRound&) const = default;
};

// "round": one per round.
struct TraceRound {
  int64_t round = 0;
  RoundKind kind = RoundKind::kAdmm;  // (a trace without kinds is ADMM's)
  double time = 0;  // since the first round began, at the end of this one
  double rho = 0;
  std::optional<double> objective;  // null where partial rounds leave F unknown
  // The stop test's, in the rounds it was made (ADMM's residuals; Newton's gradient norm as primal).
  std::optional<double> primal_residual, dual_residual, eps_primal, eps_dual;
  double inner_tolerance = 0;
  bool lean = false;  // z and w went as float32
  double wait_seconds = 0, master_seconds = 0, z_update_seconds = 0, stop_test_seconds = 0;
  double dispatch = 0, replies = 0;  // wall clock
  std::vector<TraceWorkerRound> workers;
  bool operator==(const TraceRound&) const = default;
};

// "worker": a remote worker's life (launched, hello, ready, failed, left, duplicate, ...).
struct TraceWorkerEvent {
  double time = 0;  // wall clock
  int worker = 0;
  uint64_t invocation = 0;
  std::string what;
  std::optional<std::string> detail;  // absent where there is nothing to add
  bool operator==(const TraceWorkerEvent&) const = default;
};

// "summary": the Summary (executor/summary.h) at the end; the same fields make --summary-json.

// One line of the trace, without its newline.
std::string TraceLine(const TraceSetup& setup);
std::string TraceLine(const TraceRound& round);
std::string TraceLine(const TraceWorkerEvent& event);
std::string TraceLine(const Summary& summary);

// The fields of each event, in the order they are written.

template <SameOrConst<TraceShard> Self, typename Field>
void Fields(Self& s, Field&& field) {
  field("worker", s.worker), field("rows", s.rows), field("nnz", s.nnz), field("load_seconds", s.load_seconds);
  field("invocation", s.invocation), field("invoke", s.invoke), field("process_start", s.process_start);
  field("hello", s.hello), field("ready", s.ready);
}

template <SameOrConst<TraceSetup> Self, typename Field>
void Fields(Self& s, Field&& field) {
  field("runtime", s.runtime), field("workers", s.workers), field("rows", s.rows), field("cols", s.cols);
  field("loss", s.loss), field("l1", s.l1), field("l2", s.l2), field("intercept", s.intercept), field("rho", s.rho);
  field("setup_seconds", s.setup_seconds), field("shards", s.shards);
}

template <SameOrConst<TraceWorkerRound> Self, typename Field>
void Fields(Self& w, Field&& field) {
  field("worker", w.worker), field("compute_seconds", w.compute_seconds), field("solve_seconds", w.solve_seconds);
  field("local_iterations", w.local_iterations), field("cg_iterations", w.cg_iterations);
  field("passes", w.data_passes), field("receive", w.receive_wall), field("start", w.start_wall);
  field("end", w.end_wall), field("send", w.send_wall), field("arrival", w.arrival_wall);
  field("bytes_in", w.bytes_in), field("bytes_out", w.bytes_out);
}

template <SameOrConst<TraceRound> Self, typename Field>
void Fields(Self& r, Field&& field) {
  field("round", r.round), field("kind", r.kind), field("time", r.time), field("rho", r.rho);
  field("objective", r.objective), field("primal_residual", r.primal_residual);
  field("dual_residual", r.dual_residual), field("eps_primal", r.eps_primal), field("eps_dual", r.eps_dual);
  field("inner_tolerance", r.inner_tolerance), field("lean", r.lean), field("wait_seconds", r.wait_seconds);
  field("master_seconds", r.master_seconds), field("z_update_seconds", r.z_update_seconds);
  field("stop_test_seconds", r.stop_test_seconds), field("dispatch", r.dispatch), field("replies", r.replies);
  field("workers", r.workers);
}

template <SameOrConst<TraceWorkerEvent> Self, typename Field>
void Fields(Self& e, Field&& field) {
  field("time", e.time), field("worker", e.worker), field("invocation", e.invocation), field("what", e.what);
  field("detail", e.detail);
}

template <SameOrConst<Summary> Self, typename Field>
void Fields(Self& s, Field&& field) {
  field("termination", s.termination), field("message", s.message), field("iterations", s.iterations);
  field("rounds", s.rounds), field("objective", s.objective), field("primal_residual", s.primal_residual);
  field("dual_residual", s.dual_residual), field("eps_primal", s.eps_primal), field("eps_dual", s.eps_dual);
  field("rho", s.rho), field("initial_rho", s.initial_rho), field("rho_updates", s.rho_updates);
  field("gradient_norm", s.gradient_norm), field("gradient_tolerance", s.gradient_tolerance), field("nnz", s.nnz);
  field("load_seconds", s.load_seconds), field("setup_seconds", s.setup_seconds);
  field("solve_seconds", s.solve_seconds), field("master_seconds", s.master_seconds);
  field("wait_seconds", s.wait_seconds), field("worker_compute_seconds", s.worker_compute_seconds);
  field("data_passes", s.data_passes), field("local_iterations", s.local_iterations);
  field("cg_iterations", s.cg_iterations), field("stale_replies", s.stale_replies);
  field("lean_rounds", s.lean_rounds), field("worker_restarts", s.worker_restarts);
  field("messages_dropped", s.messages_dropped), field("reconnects", s.reconnects);
  field("rounds_resent", s.rounds_resent), field("bytes_sent", s.bytes_sent);
  field("bytes_received", s.bytes_received), field("security", s.security);
  field("clients_refused", s.clients_refused), field("checkpoints", s.checkpoints);
  field("checkpoint_seconds", s.checkpoint_seconds), field("checkpoint_failures", s.checkpoint_failures);
  field("resumed_at_round", s.resumed_at_round), field("cost_dollars", s.cost_dollars);
  field("cost_gb_seconds", s.cost_gb_seconds), field("algorithm", s.algorithm);
  field("algorithm_reason", s.algorithm_reason), field("runtime", s.runtime), field("workers", s.workers);
  field("relays", s.relays), field("rows", s.rows), field("cols", s.cols), field("solved_cols", s.solved_cols), field("data_nnz", s.data_nnz);
}

}  // namespace nimbus
