// The outcome of a solve. Running out of iterations is an outcome, not an error.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "nimbus/choices.h"

namespace nimbus {

enum class Termination {
  kConverged,        // Boyd's stop test passed
  kMaxIterations,    // the iteration cap was reached
  kTargetObjective,  // F(z) reached the requested target
  kUserStopped,      // the iteration callback asked to stop
  kWorkerFailed,     // a worker failed and the run could not go on
};
// Its names as summaries and traces write them (choices.h's table, so they read back the same way).
template <>
struct ChoiceNames<Termination> {
  static constexpr std::string_view option = "termination";
  static constexpr auto names = std::to_array<std::pair<Termination, std::string_view>>(
      {{Termination::kConverged, "converged"}, {Termination::kMaxIterations, "max_iterations"},
       {Termination::kTargetObjective, "target_objective"}, {Termination::kUserStopped, "user_stopped"},
       {Termination::kWorkerFailed, "worker_failed"}});
};
const char* TerminationName(Termination termination);  // "converged", "max_iterations", ...

struct Summary {
  Termination termination = Termination::kMaxIterations;
  std::string message;   // a sentence on why the solve ended
  int iterations = 0;    // ADMM iterations whose z was produced and tested
  int rounds = 0;        // rounds run on the workers (iterations + 1: the stop test lags one round)
  double objective = 0;  // F at the returned model, exactly
  // ADMM's stop test at the end (its residuals and their tolerances) and its rho.
  double primal_residual = 0;
  double dual_residual = 0;
  double eps_primal = 0;
  double eps_dual = 0;
  double rho = 0;          // at the end
  double initial_rho = 0;
  int rho_updates = 0;
  // Newton's and the column method's stop test at the end: the norm of F's minimum-norm subgradient, and its tolerance.
  double gradient_norm = 0;
  double gradient_tolerance = 0;
  int64_t nnz = 0;         // nonzeros of the returned model (intercept excluded)
  double load_seconds = 0;   // the master reading the data before the solve (set by the caller)
  double setup_seconds = 0;  // starting workers and loading shards
  double solve_seconds = 0;  // the ADMM rounds
  double master_seconds = 0; // z-updates, residuals and bookkeeping on the master
  double wait_seconds = 0;   // the master waiting for replies
  double worker_compute_seconds = 0;  // summed over workers and rounds
  int64_t data_passes = 0;   // summed over workers: passes over a shard's nonzeros
  int64_t local_iterations = 0;
  int64_t cg_iterations = 0;
  int64_t stale_replies = 0;  // partial barrier: replies reused in a later round's z-update
  int lean_rounds = 0;        // rounds whose z and w went as float32 (lean messages)
  int64_t worker_restarts = 0;   // new invocations after failures or lifetime hand-overs
  int64_t messages_dropped = 0;  // malformed, foreign or stale messages the master ignored
  int64_t reconnects = 0;        // workers' links to the master that broke and were made again
  int64_t rounds_resent = 0;     // rounds sent again after a reconnect (the first copy may be lost)
  int64_t bytes_sent = 0;        // by the master, over the wire
  int64_t bytes_received = 0;
  // How workers are admitted: "curve" (the run's CurveZMQ keys), "plaintext" (--insecure,
  // loopback only), or empty where workers share the master's process or MPI job.
  std::string security;
  int64_t clients_refused = 0;   // connections refused for a key other than the run's
  // Checkpoints (--checkpoint): how many were written, their time on the master, failures.
  int checkpoints = 0;
  double checkpoint_seconds = 0;
  int checkpoint_failures = 0;
  int64_t resumed_at_round = -1;  // the round a resumed run began at; -1 if not resumed
  // What the solve costs at Lambda's prices (set by the caller, see metrics/cost.h).
  double cost_dollars = 0;
  double cost_gb_seconds = 0;
  // ADMM, Newton (solve/newton/newton_master.h: there iterations are Newton steps) or the column
  // method (columns/column_descent.h: an iteration a round); and why the solve took it.
  Algorithm algorithm = Algorithm::kAdmm;
  std::string algorithm_reason;
  std::string runtime;
  int workers = 0;
  int relays = 0;  // between the master and the workers (runtime/relay.h); 0: the star
  int64_t rows = 0;
  int64_t cols = 0;         // the data's features (its largest index)
  int64_t solved_cols = 0;  // the columns solved over: cols, or the features that occur when far fewer
  int64_t data_nnz = 0;

  bool ok() const { return termination != Termination::kWorkerFailed; }
  bool operator==(const Summary&) const = default;
  std::string BriefReport() const;
  std::string FullReport() const;
  std::string RelaysText() const;  // " through R relays", or nothing for the star
  // One JSON object with the fields above (the --summary-json contract of design.md); a trace's
  // "summary" event has the same fields (executor/trace_schema.h).
  std::string ToJson() const;
};

// Newton's and the column method's stop test is on F's minimum-norm subgradient; ADMM's on its
// residuals.
constexpr bool TestsSubgradient(Algorithm algorithm) { return algorithm != Algorithm::kAdmm; }

// Newton's stop test by default: ||v(x)|| <= 1e-5 ||v(0)|| (NewtonOptions, SolveOptions).
inline constexpr double kNewtonGradientTolerance = 1e-5;

// What the iteration callback sees after each tested iteration.
struct IterationInfo {
  Algorithm algorithm = Algorithm::kAdmm;
  int iteration = 0;           // ADMM's iterations, or Newton's steps
  double elapsed_seconds = 0;  // since the first round
  double objective = 0;        // F(z), or F at Newton's iterate
  // ADMM's stop test: the residuals and their tolerances, and the rho of the round that
  // produced the tested x_i.
  double primal_residual = 0;
  double dual_residual = 0;
  double eps_primal = 0;
  double eps_dual = 0;
  double rho = 0;
  // Newton's and the column method's: the norm of F's minimum-norm subgradient, and its tolerance.
  double gradient_norm = 0;
  double gradient_tolerance = 0;
};
// Return false to stop the solve (Termination::kUserStopped).
using IterationCallback = std::function<bool(const IterationInfo&)>;

}  // namespace nimbus
