// The seam between a caller (the train command, a benchmark, a binding) and a master
// algorithm: consensus ADMM (coordinator.h) or distributed Newton (newton.h). Each starts the
// executor's workers, runs rounds until a stop rule, stops the workers, and reports the same
// Solution and Summary; each writes checkpoints of its MasterState and resumes from one.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nimbus/executor/executor.h"
#include "nimbus/executor/summary.h"
#include "nimbus/core/trace.h"
#include "nimbus/wire/messages.h"

namespace nimbus {

// The master's state between two rounds: enough to carry on after the master is lost. What
// a checkpoint holds (checkpoint/checkpoint.h writes and reads it); the names are the
// coordinator's loop variables. The vectors are shared with the solve, not copied.
struct MasterState {
  // ADMM's, or Newton's (solve/newton/newton_master.h): then z is the iterate, radius the trust region's,
  // iterations the Newton steps made, gradient_reference the norm the stop test scales, and
  // the workers' vectors are empty (Newton keeps no state on them).
  Algorithm algorithm = Algorithm::kAdmm;
  double radius = 0;
  int64_t iterations = 0;
  double gradient_reference = 0;
  int64_t next_round = 0;             // the round to run next (>= 2 for ADMM)
  SharedVector z;                     // z^{next_round}
  double rho = 0;                     // for the next round
  double rho_of_previous_round = 0;   // the rho of round next_round - 1
  double dual_residual = 0;           // s of iteration next_round
  double inner_tolerance = 0;
  double inner_relative = 0;
  bool lean = false;
  bool previous_round_lean = false;
  // The workers' kept state: each worker's replies to the last two rounds, with what those
  // rounds sent (z of the last one; rho of both; alpha).
  SharedVector z_last;                // z^{next_round - 1}
  double rho_last = 0;                // rho of round next_round - 1
  double rho_previous = 0;            // rho of round next_round - 2
  double alpha = 1;
  struct Worker {
    int64_t rows = 0;                 // the shard's, to tell the same data on resume
    int64_t nnz = 0;
    SharedVector w_last;              // its reply to round next_round - 1
    SharedVector w_previous;          // and to round next_round - 2
  };
  std::vector<Worker> workers;
  // The summary so far.
  double initial_rho = 0;
  int rho_updates = 0;
  int lean_rounds = 0;
  double solve_seconds = 0;
  double objective = 0;               // F(z^{next_round - 1})
  // The column method's (columns/column_descent.h: ColumnDescentCheckpoint): z is x, z_last the
  // last step, iterations, next_round and gradient_reference its own, its blocks' models'
  // adaptation (no workers).
  double curvature_scale = 1;
  double damping = 0;
  SharedVector margins;      // and its rows' margins A x + b (empty in checkpoints before these)
  SharedVector margin_step;  // and A s
};
// Checkpoints go to `write` every `every` rounds; a failed write does not stop the solve
// (the writer reports it; the summary counts it).
using CheckpointWriter = std::function<Status(const MasterState&)>;

struct Solution {
  std::vector<double> model;  // z: d weights, then the intercept if the problem has one
  // The gradient of F's smooth part (the loss term and l2) at the model, where the master
  // has it (Newton); empty otherwise.
  std::vector<double> gradient;
  Summary summary;
};

// Where a solve starts that does not resume: the previous point of a regularization path,
// or a model of the caller's.
struct WarmStart {
  std::vector<double> x;          // the first iterate (ADMM: z); empty: zero
  // Rounds are numbered from here: workers kept from a previous solve (Newton's) hold the
  // points they evaluated by round.
  int64_t first_round = 0;
  // Newton: ||v(0)||, the norm its stop test scales (0: the first iterate's, as from zero).
  double gradient_reference = 0;
  // Newton, without a reference: take it at the zero model (one more round), so that a start
  // near the optimum is not held to a tighter test than a start from zero.
  bool reference_at_zero = false;
};

// What a caller sets on a master before it solves, which the master's steps read.
struct MasterHooks {
  IterationCallback callback;
  TraceSink* trace = nullptr;
  int checkpoint_every = 0;  // 0: no checkpoints
  CheckpointWriter checkpoint_writer;
  std::string algorithm_reason;  // why the solve runs this master (for the summary)
};

class Master {
 public:
  virtual ~Master() = default;

  void SetIterationCallback(IterationCallback callback) { hooks_.callback = std::move(callback); }
  void SetTraceSink(TraceSink* sink) { hooks_.trace = sink; }
  // Writes the master's state every `every` rounds (ADMM, synchronous rounds only) or Newton
  // steps.
  void SetCheckpointWriter(int every, CheckpointWriter writer) {
    hooks_.checkpoint_every = writer ? every : 0;
    hooks_.checkpoint_writer = std::move(writer);
  }
  void SetAlgorithmReason(std::string reason) { hooks_.algorithm_reason = std::move(reason); }
  // Carries on from a checkpoint (of a run of the same algorithm on the same shards, checked
  // by their rows and nonzeros) with the iterates of the run that wrote it.
  void ResumeFrom(MasterState state) { resume_ = std::make_unique<MasterState>(std::move(state)); }
  // Starts from `start` rather than from zero (unless resuming).
  void WarmStartFrom(WarmStart start) { warm_ = std::move(start); }

  // Starts the workers, runs rounds until a stop condition, stops the workers. An error
  // Result only for bad options or a failed start; a worker failing mid-run is reported in
  // the summary (kWorkerFailed) with the newest model whose objective is known.
  virtual Result<Solution> Solve() = 0;

 protected:
  MasterHooks hooks_;
  std::unique_ptr<MasterState> resume_;
  WarmStart warm_;
};

}  // namespace nimbus
