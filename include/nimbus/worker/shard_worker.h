// One shard's state and one round's work. A ShardWorker knows nothing of threads, sockets
// or processes: every runtime wraps the same object.
//
// State: x_i (the last x-update), xh_i (its over-relaxed mix with z) and u_i (the scaled dual
// variable). The master keeps each w_i = xh_i + u_i, from which it rebuilds this state for a
// replacement worker (Resume; see runtime/state_keeper.h).
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nimbus/columns/column_block.h"
#include "nimbus/core/status.h"
#include "nimbus/data/dataset.h"
#include "nimbus/local/augmented_objective.h"
#include "nimbus/local/lbfgs.h"
#include "nimbus/local/newton_cg.h"
#include "nimbus/choices.h"
#include "nimbus/problem/problem.h"
#include "nimbus/worker/fault_injection.h"
#include "nimbus/worker/held_out_scores.h"
#include "nimbus/wire/messages.h"
#include "nimbus/worker/shard_derivatives.h"

namespace nimbus {

struct WorkerOptions {
  LocalSolver solver = LocalSolver::kNewtonCg;
  NewtonCgOptions newton;  // its tolerances are replaced by each round's
  LbfgsOptions lbfgs;      // likewise
  FaultInjection faults;   // delays happen inside Serve(); crashes are the runtime's to stage
  // General-form consensus (Boyd et al. 2011, section 7.2): x_i lives on the coordinates the
  // shard touches only. Otherwise every worker holds a copy of the whole model (dense form).
  bool general_form = false;
  // The memory the worker's process may hold (0: no limit known; a worker process sets it from
  // its own limits): L1 Newton's working set then copies only what fits (shard_derivatives.h).
  int64_t memory_limit_bytes = 0;

  Status Validate() const;
};

// A shard as a worker holds it: in the general form its columns renumbered to its support.
struct LocalShard {
  Dataset data;
  ProblemSpec spec;  // spec.cols: the features the worker holds
  std::shared_ptr<const std::vector<uint32_t>> support;  // null in the dense form
  std::size_t model_size = 0;                            // of the whole problem
};
LocalShard MakeLocalShard(Dataset shard, const ProblemSpec& spec, bool general_form);

class ShardWorker {
 public:
  // `shard` holds this worker's rows; spec.rows is N of the whole problem.
  ShardWorker(int id, Dataset shard, const ProblemSpec& spec, const WorkerOptions& options);
  ShardWorker(int id, LocalShard shard, const WorkerOptions& options);

  int id() const { return id_; }
  const WorkerOptions& options() const { return options_; }
  // The length of x_i, u_i and w_i: the model's, or the support's in the general form.
  std::size_t local_size() const { return x_.size(); }
  // Sizes and the curvature scale of the shard, for the master's choice of rho.
  WorkerReady Ready(double load_seconds) const;
  // Continues from a kept state (a replacement worker): with x and x_relaxed, exactly where
  // the replaced worker was; with u alone, from that dual (the next round's dual update and
  // the scalars that need x_i are then skipped).
  Status Resume(const ResumeState& state);
  // Resume() with the dual u (scaled for `rho`) alone.
  Status RestoreDual(std::span<const double> u, double rho);
  // One ADMM round (see wire/messages.h for the order of updates). `invocation` numbers the
  // starts of this worker (it only seeds injected faults). In the general form z may be the
  // whole model's (in-process runtimes) or the support's (over the wire).
  // Rounds of the distributed Newton master (RoundKind kEvaluate, kHessianVector),
  // cross-validation's score rounds (kScore) and the column method's (kColumnStep) are served
  // too; they leave the ADMM state alone.
  WorkerReply Serve(const RoundRequest& request, uint64_t invocation = 0);

 private:
  // A model-sized vector on this worker's coordinates: as it came, or gathered onto the
  // support from the whole model's (in-process runtimes send the whole z).
  std::span<const double> Local(const SharedVector& v, std::vector<double>& gathered) const;
  // The x-update round of ADMM, and a Newton master's round.
  void ServeAdmm(const RoundRequest& request, std::span<const double> z, WorkerReply& reply);
  void ServeNewton(const RoundRequest& request, std::span<const double> v, WorkerReply& reply);
  void ServeScore(const RoundRequest& request, std::span<const double> model, WorkerReply& reply);
  // The column method's round (columns/block_round.h): this shard holds a block's columns.
  void ServeColumns(const RoundRequest& request, WorkerReply& reply);
  Result<const ColumnBlock*> ColumnsOf(const BlockRange& block);

  int id_;
  Dataset shard_;
  ProblemSpec spec_;  // the worker's own: in the general form, cols is its support's
  std::shared_ptr<const std::vector<uint32_t>> support_;
  std::size_t model_size_;  // the whole problem's
  std::vector<double> z_local_;  // z gathered onto the support
  WorkerOptions options_;
  std::shared_ptr<const DataTerm> term_;  // the shard's data term, which both serve from
  AugmentedShardObjective objective_;
  NewtonCgWorkspace newton_workspace_;
  // Each entry's independent block (one-vs-rest's classes, cross-validation's copies), the
  // x-update's CG blocks (in the local numbering as in the model's: the support keeps each
  // column's B entries). Empty for a single block.
  std::vector<uint32_t> independent_blocks_;
  ShardDerivatives derivatives_;
  std::vector<double> point_local_;  // a Newton point gathered onto the support
  std::vector<double> x_, x_relaxed_, u_, center_;
  std::optional<HeldOutScores> held_out_;  // cross-validation: the last model scored
  int64_t scored_round_ = -1;               // and the round that named it
  std::optional<ColumnBlock> column_block_;  // the column method: the block, by columns
  bool has_iterate_ = false;   // x_ and x_relaxed_ hold a previous round's result
  double rho_of_u_ = 0;        // the rho that u_ is scaled for (0: u_ is zero)
};

}  // namespace nimbus
