#include "nimbus/admm/coordinator.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "nimbus/admm/reply_board.h"
#include "trace_events.h"
#include "nimbus/core/json_writer.h"
#include "nimbus/core/vector_ops.h"

namespace nimbus {
namespace {

using Vector = std::vector<double>;

// The x-update never needs its gradient below this fraction of the one it starts from.
constexpr double kInnerRelativeFloor = 1e-6;

// The residuals and tolerances of one iteration (Boyd et al. 2011, section 3.3.1).
struct Residuals {
  double primal = 0;  // r = sqrt(sum_i ||x_i - z||^2)
  double dual = 0;    // s = rho sqrt(K) ||z - z_prev||
  double eps_primal = 0;
  double eps_dual = 0;
  double x_norm = 0;  // sqrt(sum_i ||x_i||^2)
  double z_norm = 0;  // sqrt(K) ||z||
  double y_norm = 0;  // rho sqrt(sum_i ||u_i||^2)
};

// `z_copies_norm` is the norm of the workers' copies of z, sqrt(sum_i ||z_{S_i}||^2), and
// `local_dimensions` the number of entries in all of them (K n in the dense form).
Residuals ComputeResiduals(const std::vector<WorkerReply>& replies, double dual_residual, double z_copies_norm,
                           double rho_of_u, double local_dimensions, const AdmmOptions& options) {
  Residuals res;
  double primal_squared = 0, x_squared = 0, u_squared = 0;
  for (const WorkerReply& reply : replies) {
    primal_squared += reply.scalars.primal_squared;
    x_squared += reply.scalars.x_squared;
    u_squared += reply.scalars.u_squared;
  }
  res.primal = std::sqrt(primal_squared);
  res.dual = dual_residual;
  res.x_norm = std::sqrt(x_squared);
  res.z_norm = z_copies_norm;
  res.y_norm = rho_of_u * std::sqrt(u_squared);
  const double absolute = std::sqrt(local_dimensions) * options.eps_abs;
  res.eps_primal = absolute + options.eps_rel * std::max(res.x_norm, res.z_norm);
  res.eps_dual = absolute + options.eps_rel * res.y_norm;
  return res;
}

bool Converged(const Residuals& res) { return res.primal <= res.eps_primal && res.dual <= res.eps_dual; }

// How the workers' copies of the model map onto z. In the dense form every worker holds all
// of it; in the general form (Boyd et al. 2011, section 7.2) worker i holds the coordinates of
// its support S_i, and coordinate j is shared by the counts[j] workers whose support has it.
class Consensus {
 public:
  static Result<Consensus> Of(std::span<const WorkerReady> ready, std::size_t model_size) {
    Consensus c;
    c.workers_ = ready.size();
    c.n_ = model_size;
    const bool general = !ready.empty() && ready[0].support != nullptr;
    if (!general) {
      for (const WorkerReady& r : ready) {
        if (r.support != nullptr) return FailedPrecondition("workers disagree on the form of consensus");
      }
      c.local_dimensions_ = static_cast<double>(c.workers_) * static_cast<double>(model_size);
      return c;
    }
    c.counts_.assign(model_size, 0);
    c.local_dimensions_ = 0;
    for (const WorkerReady& r : ready) {
      if (r.support == nullptr) return FailedPrecondition("workers disagree on the form of consensus");
      if (!r.support->empty() && r.support->back() >= model_size) {
        return InvalidArgument("worker " + std::to_string(r.worker) + " holds coordinate " +
                               std::to_string(r.support->back()) + " of a model of " + std::to_string(model_size));
      }
      for (const uint32_t j : *r.support) ++c.counts_[j];
      c.local_dimensions_ += static_cast<double>(r.support->size());
      c.supports_.push_back(r.support);
    }
    for (std::size_t j = 0; j < model_size; ++j) {
      if (c.counts_[j] > 0) c.held_.push_back(static_cast<uint32_t>(j));
    }
    c.sum_.resize(model_size);
    return c;
  }

  bool general() const { return !supports_.empty(); }
  double local_dimensions() const { return local_dimensions_; }
  // The length of worker i's w.
  std::size_t LocalSize(int worker) const {
    return general() ? supports_[static_cast<std::size_t>(worker)]->size() : n_;
  }

  // z = argmin_z g(z) + sum_i rho/2 ||z_{S_i} - w_i||^2, coordinate by coordinate:
  // prox_{g/(c_j rho)} of the mean of the c_j copies (c_j = K in the dense form), summed in
  // worker order so the result is reproducible. A coordinate no worker holds is argmin g = 0
  // (z arrives zeroed).
  void ZUpdate(const ProblemSpec& spec, const std::vector<WorkerReply>& replies, double rho, Vector& z) const {
    const auto regularized = static_cast<std::size_t>(spec.cols);
    if (!general()) {
      Fill(z, 0.0);
      for (const WorkerReply& reply : replies) Axpy(1.0, reply.w, z);
      const double k = static_cast<double>(replies.size());
      Scale(1.0 / k, z);
      spec.regularizer.Prox(1.0 / (k * rho), z, regularized);
      return;
    }
    // Only the coordinates some worker holds are touched: on sparse data with many features
    // the master's work follows the data too. The others stay 0 in sum_ and z.
    for (const uint32_t j : held_) sum_[j] = 0;
    for (const WorkerReply& reply : replies) {
      const std::vector<uint32_t>& support = *supports_[static_cast<std::size_t>(reply.worker)];
      for (std::size_t k = 0; k < support.size(); ++k) sum_[support[k]] += reply.w[k];
    }
    PrepareProx(spec, rho);
    for (const uint32_t j : held_) {
      const uint32_t count = counts_[j];
      const double mean = sum_[j] / count;
      z[j] = j < regularized ? prox_[count](mean) : mean;
    }
  }

  // The z-update of coordinates begin .. begin + sums.size() from the sums of their copies
  // (what workers that sum among themselves hand each process for its block).
  void ZFromSums(const ProblemSpec& spec, std::span<const double> sums, std::size_t begin, double rho,
                 Vector& z) const {
    const auto regularized = static_cast<std::size_t>(spec.cols);
    PrepareProx(spec, rho);
    for (std::size_t k = 0; k < sums.size(); ++k) {
      const std::size_t j = begin + k;
      const uint32_t count = general() ? counts_[j] : static_cast<uint32_t>(workers_);
      if (count == 0) {
        z[j] = 0;
        continue;
      }
      const double mean = sums[k] / count;
      z[j] = j < regularized ? prox_[count](mean) : mean;
    }
  }

  // prox_[c] = prox_{g/(c rho)}, for every number of copies c a coordinate can have.
  void PrepareProx(const ProblemSpec& spec, double rho) const {
    prox_.resize(workers_ + 1);
    for (std::size_t c = 1; c <= workers_; ++c) prox_[c] = spec.regularizer.ProxOf(1.0 / (static_cast<double>(c) * rho));
  }

  // sqrt(sum_i ||a_{S_i} - b_{S_i}||^2), and with b = 0 the norm of the copies of a.
  double CopiesDistance(const Vector& a, const Vector* b) const {
    if (!general()) {
      return std::sqrt(static_cast<double>(workers_)) * (b ? std::sqrt(SquaredDistance(a, *b)) : Norm(a));
    }
    double sum = 0;
    for (const uint32_t j : held_) {
      const double d = b ? a[j] - (*b)[j] : a[j];
      sum += counts_[j] * d * d;
    }
    return std::sqrt(sum);
  }

 private:
  std::size_t workers_ = 0, n_ = 0;
  std::vector<std::shared_ptr<const std::vector<uint32_t>>> supports_;
  std::vector<uint32_t> counts_;
  std::vector<uint32_t> held_;  // the coordinates with counts_ > 0, ascending
  double local_dimensions_ = 0;
  mutable Vector sum_;
  mutable std::vector<Regularizer::ScalarProx> prox_;
};

// Residual balancing, normalized as OSQP does, damped and bounded. Returns the new rho.
double AdaptRho(const Residuals& res, double rho, const AdmmOptions& options) {
  const double primal_scale = std::max(res.x_norm, res.z_norm);
  if (!(res.primal > 0) || !(res.dual > 0) || !(primal_scale > 0) || !(res.y_norm > 0)) return rho;
  const double ratio = (res.primal / primal_scale) / (res.dual / res.y_norm);
  double candidate = rho * std::sqrt(ratio);
  candidate = std::clamp(candidate, rho / options.rho_max_step, rho * options.rho_max_step);
  candidate = std::clamp(candidate, options.rho_min, options.rho_max);
  const bool worth_it = candidate > rho * options.rho_adapt_threshold || candidate < rho / options.rho_adapt_threshold;
  return worth_it ? candidate : rho;
}

// Whether the solve ends with this iteration; if so, says why in the summary. The callback
// sees every tested iteration that does not end the solve otherwise.
bool Stops(const IterationInfo& info, const Residuals* res, bool may_converge, const AdmmOptions& options,
           const IterationCallback& callback, Summary& summary) {
  auto end = [&](Termination termination, std::string message) {
    summary.termination = termination;
    summary.message = std::move(message);
    return true;
  };
  if (res != nullptr && may_converge && Converged(*res)) {
    return end(Termination::kConverged, "primal and dual residuals are below their tolerances");
  }
  if (options.target_objective && info.objective <= *options.target_objective) {
    return end(Termination::kTargetObjective, "the objective reached the target");
  }
  if (info.iteration >= options.max_iterations) {
    return end(Termination::kMaxIterations, "reached the iteration cap of " + std::to_string(options.max_iterations));
  }
  if (res != nullptr && callback && !callback(info)) {
    return end(Termination::kUserStopped, "stopped by the iteration callback");
  }
  return false;
}

// Adds the replies' work counters to the summary.
void RecordWork(const std::vector<WorkerReply>& replies, Summary& summary) {
  for (const WorkerReply& r : replies) {
    summary.worker_compute_seconds += r.timings.compute_seconds;
    summary.data_passes += r.timings.data_passes;
    summary.local_iterations += r.timings.local_iterations;
    summary.cg_iterations += r.timings.cg_iterations;
  }
}

// F(z^k): each worker evaluated its share of the loss at the z it received.
double ObjectiveAtZ(const ProblemSpec& spec, const std::vector<WorkerReply>& replies, const Vector& z) {
  double loss = 0;
  for (const WorkerReply& r : replies) loss += r.scalars.loss_at_z;
  return loss + spec.regularizer.Value(z, static_cast<std::size_t>(spec.cols));
}


}  // namespace

Status AdmmOptions::Validate() const {
  auto positive = [](const char* name, double value) -> Status {
    if (!(value > 0) || !std::isfinite(value)) {
      return InvalidArgument(std::string(name) + ": must be a positive number, got " + std::to_string(value));
    }
    return Status::Ok();
  };
  if (!(rho >= 0) || !std::isfinite(rho)) return InvalidArgument("rho: must be >= 0 (0 = automatic), got " + std::to_string(rho));
  NIMBUS_RETURN_IF_ERROR(positive("rho_scale", rho_scale));
  if (!(rho_adapt_threshold >= 1)) return InvalidArgument("rho_adapt_threshold: must be >= 1");
  if (!(rho_max_step > 1)) return InvalidArgument("rho_max_step: must be > 1");
  NIMBUS_RETURN_IF_ERROR(positive("rho_min", rho_min));
  NIMBUS_RETURN_IF_ERROR(positive("rho_max", rho_max));
  if (!(rho_min < rho_max)) return InvalidArgument("rho_min: must be below rho_max");
  if (!(relaxation >= 1.0 && relaxation <= 1.8)) {
    return InvalidArgument("relaxation: must be in [1, 1.8], got " + std::to_string(relaxation));
  }
  if (!(eps_abs >= 0) || !(eps_rel >= 0) || !(eps_abs + eps_rel > 0)) {
    return InvalidArgument("eps_abs, eps_rel: must be >= 0 and not both 0");
  }
  if (max_iterations < 0) return InvalidArgument("max_iterations: must be >= 0, got " + std::to_string(max_iterations));
  if (target_objective && !std::isfinite(*target_objective)) return InvalidArgument("target_objective: must be finite");
  NIMBUS_RETURN_IF_ERROR(positive("inner_factor", inner_factor));
  if (!(inner_first_relative > 0 && inner_first_relative < 1)) {
    return InvalidArgument("inner_first_relative: must be in (0, 1)");
  }
  if (barrier < 0) return InvalidArgument("barrier: must be >= 0 (0 = all workers), got " + std::to_string(barrier));
  if (max_staleness < 0) return InvalidArgument("max_staleness: must be >= 0, got " + std::to_string(max_staleness));
  NIMBUS_RETURN_IF_ERROR(positive("round_timeout_seconds", round_timeout_seconds));
  return positive("start_timeout_seconds", start_timeout_seconds);
}

double InitialRho(const ProblemSpec& spec, std::span<const WorkerReady> ready) {
  // The mean diagonal of a worker's share of the loss Hessian, per coordinate it holds, and
  // the mean number of workers that share a coordinate (K in the dense form).
  const std::size_t n = spec.model_size();
  double trace = 0, local_dimensions = 0;
  std::vector<bool> covered(ready.empty() || ready[0].support == nullptr ? 0 : n, false);
  for (const WorkerReady& r : ready) {
    trace += r.curvature_trace;
    if (r.support == nullptr) {
      local_dimensions += static_cast<double>(n);
      continue;
    }
    local_dimensions += static_cast<double>(r.support->size());
    for (const uint32_t j : *r.support) {
      if (j < covered.size()) covered[j] = true;
    }
  }
  const double held = covered.empty() ? static_cast<double>(n) : static_cast<double>(std::count(covered.begin(), covered.end(), true));
  const double local_diagonal = trace / (static_cast<double>(spec.rows) * local_dimensions);
  if (!(local_diagonal > 0) || !(held > 0)) return 1.0;
  const double sharing = local_dimensions / held;
  // Calibrated on synthetic sparse logistic problems (docs/tuning.md): the best fixed rho was
  // about 0.6 times the mean diagonal of the whole loss Hessian for one worker and fell as
  // K^-0.7; per worker's share that is 0.6 x its diagonal x K^0.3 (each f_i holds 1/K of the
  // curvature, and the consensus coupling gains from a stiffer penalty as K grows). In the
  // general form, K becomes the number of workers that share a coordinate.
  return 0.6 * local_diagonal * std::pow(sharing, 0.3);
}

namespace {

// A resumed run: the workers must be the checkpoint's (same shards, by rows and nonzeros);
// each gets its last two answers back, z on its support in the general form.
Status RestoreWorkers(const MasterState& state, const std::vector<WorkerReady>& ready, std::size_t n,
                      const Consensus& consensus, Executor& executor) {
  if (state.workers.size() != ready.size()) {
    return FailedPrecondition("the checkpoint is of a run with " + std::to_string(state.workers.size()) +
                              " workers, this one has " + std::to_string(ready.size()));
  }
  if (state.z.size() != n || state.z_last.size() != n) {
    return FailedPrecondition("the checkpoint's model has " + std::to_string(state.z.size()) +
                              " entries, this problem " + std::to_string(n));
  }
  std::vector<WorkerHistory> histories;
  for (std::size_t i = 0; i < ready.size(); ++i) {
    const MasterState::Worker& kept = state.workers[i];
    if (kept.rows != ready[i].rows || kept.nnz != ready[i].nnz) {
      return FailedPrecondition("worker " + std::to_string(i) + "'s shard has " + std::to_string(ready[i].rows) +
                                " rows and " + std::to_string(ready[i].nnz) + " nonzeros, the checkpoint's " +
                                std::to_string(kept.rows) + " and " + std::to_string(kept.nnz) +
                                ": not the data of the checkpointed run");
    }
    const std::size_t local = consensus.LocalSize(static_cast<int>(i));
    if (kept.w_last.size() != local || (!kept.w_previous.empty() && kept.w_previous.size() != local)) {
      return FailedPrecondition("worker " + std::to_string(i) + "'s kept state does not fit its shard");
    }
    const SharedVector z = ready[i].support ? Gather(state.z_last, *ready[i].support) : state.z_last;
    WorkerHistory history;
    history.last = KeptAnswer{z, state.rho_last, state.alpha, kept.w_last};
    if (!kept.w_previous.empty()) history.previous = KeptAnswer{z, state.rho_previous, state.alpha, kept.w_previous};
    histories.push_back(std::move(history));
  }
  return executor.Restore(histories);
}

}  // namespace

Result<Solution> Coordinator::Solve() {
  NIMBUS_RETURN_IF_ERROR(spec_.Validate());
  NIMBUS_RETURN_IF_ERROR(options_.Validate());
  const int workers = executor_->workers();
  const std::size_t n = spec_.model_size();
  const double sqrt_k = std::sqrt(static_cast<double>(workers));
  const bool sums_among_workers = executor_->SumsAmongWorkers();
  if (sums_among_workers && options_.barrier != 0 && options_.barrier < workers) {
    return InvalidArgument("barrier: workers that sum among themselves wait for all of them in every round");
  }
  const bool checkpointing = checkpoint_every_ > 0 && checkpoint_writer_ != nullptr;
  if ((checkpointing || resume_ != nullptr) &&
      (sums_among_workers || (options_.barrier != 0 && options_.barrier < workers))) {
    return InvalidArgument("checkpoint: needs a master and synchronous rounds (not a partial --barrier, not the "
                           "allreduce topology)");
  }
  if (resume_ != nullptr && resume_->algorithm != "admm") {
    return InvalidArgument("checkpoint: the run was " + resume_->algorithm + "'s, not ADMM's");
  }
  if (resume_ != nullptr && resume_->next_round < 2) {
    return InvalidArgument("checkpoint: a run resumes at round 2 or later, not " +
                           std::to_string(resume_->next_round));
  }

  Summary summary;
  summary.runtime = executor_->name();
  summary.workers = workers;
  summary.rows = spec_.rows;
  summary.cols = spec_.cols;
  summary.solved_cols = spec_.cols;

  Stopwatch setup_watch;
  Result<std::vector<WorkerReady>> ready = executor_->Start(Deadline::After(options_.start_timeout_seconds));
  if (!ready.ok()) {
    executor_->Stop();
    return ready.status();
  }
  summary.setup_seconds = setup_watch.ElapsedSeconds();
  for (const WorkerReady& r : *ready) summary.data_nnz += r.nnz;
  Result<Consensus> consensus = Consensus::Of(*ready, n);
  if (!consensus.ok()) {
    executor_->Stop();
    return consensus.status();
  }

  if (resume_ != nullptr) {
    if (Status restored = RestoreWorkers(*resume_, *ready, n, *consensus, *executor_); !restored.ok()) {
      executor_->Stop();
      return restored.WithContext("cannot resume");
    }
  }

  double rho = options_.rho > 0 ? options_.rho : options_.rho_scale * InitialRho(spec_, *ready);
  summary.initial_rho = rho;
  if (trace_ != nullptr) trace_->Write(SetupEvent(*executor_, spec_, *ready, rho, summary.setup_seconds));

  auto z = std::make_shared<Vector>(n, 0.0);  // z^k, sent in round k
  std::shared_ptr<Vector> spare_z;             // z^{k-1}, for reuse once no one holds it
  std::shared_ptr<const Vector> tested_z = z;  // the newest z whose objective is known
  double dual_residual = 0;                    // s of iteration k, known once z^k exists
  double rho_of_previous_round = rho;
  double inner_tolerance = 0;
  double inner_relative = options_.inner_first_relative;
  Solution solution;
  Stopwatch solve_watch;
  double solve_seconds_before = 0;  // in the run a resumed one continues
  int64_t first_round = 0;
  // For checkpoints: the replies to the round before the current one, and its rho.
  std::vector<SharedVector> previous_w(static_cast<std::size_t>(workers));
  double previous_rho = 0;
  // Partial barrier (Zhang & Kwok 2014): wait for `barrier` of the K workers and reuse the
  // newest w_i of the others, none older than max_staleness rounds. Rounds become
  // synchronous again to confirm the stop test with every worker's reply to the same z.
  ReplyBoard board(workers, options_.barrier, options_.max_staleness);
  bool synchronous = board.barrier() == workers;
  // Lean rounds until the stop test first passes, exact ones from then on; the test may end
  // the solve only when the x_i and z^k it is made on came from an exact round.
  bool lean = options_.lean_messages;
  bool previous_round_lean = false;
  if (resume_ != nullptr) {
    const MasterState& state = *resume_;
    first_round = state.next_round;
    z = std::make_shared<Vector>(state.z.ToVector());
    tested_z = z;
    rho = state.rho;
    rho_of_previous_round = state.rho_of_previous_round;
    dual_residual = state.dual_residual;
    inner_tolerance = state.inner_tolerance;
    inner_relative = state.inner_relative;
    lean = state.lean;
    previous_round_lean = state.previous_round_lean;
    for (std::size_t i = 0; i < previous_w.size(); ++i) previous_w[i] = state.workers[i].w_last;
    previous_rho = state.rho_last;
    summary.initial_rho = state.initial_rho;
    summary.rho_updates = state.rho_updates;
    summary.lean_rounds = state.lean_rounds;
    summary.objective = state.objective;
    summary.iterations = static_cast<int>(first_round - 1);
    summary.resumed_at_round = first_round;
    solve_seconds_before = state.solve_seconds;
  }
  // z^{k+1} when the workers sum among themselves: this process's block from their sums, the
  // rest from the other processes.
  auto reduced_z_update = [&](const std::vector<WorkerReply>& replies, double round_rho, Vector& z_next) {
    Result<Executor::ReducedBlock> block = executor_->ReduceScatter(replies);
    if (!block.ok()) return block.status();
    if (block->begin + block->sums.size() > n) return Internal("a block of sums beyond the model");
    consensus->ZFromSums(spec_, block->sums, block->begin, round_rho, z_next);
    return executor_->AllGather(z_next);
  };

  // The master's state once round `request.round` is done and the next z is made (what a
  // checkpoint holds): the loop's variables, and each worker's replies to this round and the
  // one before (`latest`, previous_w).
  auto capture_state = [&](const RoundRequest& request, const std::vector<WorkerReply>& latest) {
    MasterState state;
    state.next_round = request.round + 1;
    state.z = z;
    state.rho = rho;
    state.rho_of_previous_round = rho_of_previous_round;
    state.dual_residual = dual_residual;
    state.inner_tolerance = inner_tolerance;
    state.inner_relative = inner_relative;
    state.lean = lean;
    state.previous_round_lean = previous_round_lean;
    state.z_last = request.z;
    state.rho_last = request.rho;
    state.rho_previous = previous_rho;
    state.alpha = request.relaxation;
    for (const WorkerReply& r : latest) {
      const WorkerReady& shard = (*ready)[static_cast<std::size_t>(r.worker)];
      state.workers.push_back({shard.rows, shard.nnz, r.w, previous_w[static_cast<std::size_t>(r.worker)]});
    }
    state.initial_rho = summary.initial_rho;
    state.rho_updates = summary.rho_updates;
    state.lean_rounds = summary.lean_rounds;
    state.solve_seconds = solve_seconds_before + solve_watch.ElapsedSeconds();
    state.objective = summary.objective;
    return state;
  };

  for (int64_t round = first_round;; ++round) {
    RoundRequest request;
    request.round = round;
    request.z = z;
    request.rho = rho;
    request.relaxation = options_.relaxation;
    request.inner_tolerance = inner_tolerance;
    request.inner_relative_tolerance = inner_relative;
    request.lean = lean;

    Stopwatch wait_watch;
    const double dispatch_wall = WallSeconds();
    const Deadline deadline = Deadline::After(options_.round_timeout_seconds);
    std::vector<WorkerReply> arrived = synchronous || round == 0
                                                 ? board.Synchronous(*executor_, request, deadline)
                                                 : board.Partial(*executor_, request, deadline);
    const double wait_seconds = wait_watch.ElapsedSeconds();
    const double replies_wall = WallSeconds();
    summary.wait_seconds += wait_seconds;
    Stopwatch master_watch;
    summary.rounds = static_cast<int>(round + 1);

    const auto failed = std::find_if(arrived.begin(), arrived.end(), [&](WorkerReply& r) {
      // Workers that sum among themselves keep their w; this process sees its own alone.
      const bool w_expected = !sums_among_workers || !r.w.empty();
      if (r.status == ReplyStatus::kOk && w_expected && r.w.size() != consensus->LocalSize(r.worker)) {
        r.status = ReplyStatus::kFailed;
        r.error = "w has " + std::to_string(r.w.size()) + " entries, expected " +
                  std::to_string(consensus->LocalSize(r.worker));
      }
      return r.status != ReplyStatus::kOk;
    });
    if (failed != arrived.end()) {
      summary.termination = Termination::kWorkerFailed;
      summary.message = "worker " + std::to_string(failed->worker) + " " + ReplyStatusName(failed->status) +
                        " in round " + std::to_string(failed->round) + ": " + failed->error;
      break;
    }
    RecordWork(arrived, summary);
    const std::vector<WorkerReply>& latest = board.latest();
    // F(z^k) is known only when every worker evaluated its share at z^k.
    const bool exact = board.AllAnswered(round);
    const double objective = exact ? ObjectiveAtZ(spec_, latest, *z) : std::nan("");
    if (exact) {
      summary.objective = objective;
      summary.iterations = static_cast<int>(round);
    }

    // The stop test of iteration k (from round 1 on: round 0 has no previous x_i).
    Stopwatch stop_test_watch;
    Residuals res;
    if (round >= 1) {
      res = ComputeResiduals(latest, dual_residual, consensus->CopiesDistance(*z, nullptr), rho_of_previous_round,
                             consensus->local_dimensions(), options_);
      if (exact) {
        summary.primal_residual = res.primal;
        summary.dual_residual = res.dual;
        summary.eps_primal = res.eps_primal;
        summary.eps_dual = res.eps_dual;
      }
    }
    const IterationInfo info{static_cast<int>(round), solve_seconds_before + solve_watch.ElapsedSeconds(), objective,
                             res.primal,
                             res.dual,  res.eps_primal, res.eps_dual, rho};
    bool stop = false;
    if (exact) {
      if (previous_round_lean && round >= 1 && Converged(res)) lean = false;  // finish exactly
      stop = Stops(info, round >= 1 ? &res : nullptr, !previous_round_lean, options_, callback_, summary);
      tested_z = z;
    } else if ((round >= 1 && Converged(res)) || round >= options_.max_iterations) {
      synchronous = true;  // confirm with everyone's reply to one z before stopping
    }
    const double stop_test_seconds = stop_test_watch.ElapsedSeconds();

    // z^{k+1} and the next rho, unless this is the last round.
    Stopwatch z_update_watch;
    if (!stop) {
      // A z no one holds any more is written over rather than a new one allocated (and
      // faulted in) each round: on a model of millions that was most of the master's work.
      // In the general form its coordinates that no worker holds stay 0, as they started.
      std::shared_ptr<Vector> next = spare_z.use_count() == 1 ? std::move(spare_z) : std::make_shared<Vector>(n);
      if (sums_among_workers) {
        Status updated = reduced_z_update(latest, rho, *next);
        if (!updated.ok()) {
          summary.termination = Termination::kWorkerFailed;
          summary.message = "the workers could not share z in round " + std::to_string(round) + ": " +
                            updated.message();
          break;
        }
      } else {
        consensus->ZUpdate(spec_, latest, rho, *next);
      }
      dual_residual = rho * consensus->CopiesDistance(*next, z.get());
      spare_z = std::move(z);
      z = std::move(next);
      rho_of_previous_round = rho;
      if (round >= 1) {
        // A new rho would leave the stale w_i of a partial barrier in the old scale.
        if (options_.adaptive_rho && exact) {
          const double adapted = AdaptRho(res, rho, options_);
          if (adapted != rho) ++summary.rho_updates;
          rho = adapted;
        }
        // Inexact x-updates: accurate enough not to disturb the residuals that remain. The
        // relative floor keeps a zero residual (z not moving) from asking for an exact solve.
        inner_tolerance = options_.inner_factor * std::min(rho * res.primal, res.dual) / sqrt_k;
        inner_relative = kInnerRelativeFloor;
      }
    }
    const RoundTiming timing{solve_watch.ElapsedSeconds(), wait_seconds,    master_watch.ElapsedSeconds(),
                             z_update_watch.ElapsedSeconds(), stop_test_seconds, dispatch_wall, replies_wall};
    summary.master_seconds += timing.master_seconds;
    const TestedResiduals tested{res.primal, res.dual, res.eps_primal, res.eps_dual};
    if (trace_ != nullptr) {
      trace_->Write(RoundEvent(request, objective, round >= 1 ? &tested : nullptr, timing, arrived));
    }
    previous_round_lean = request.lean;
    if (request.lean) ++summary.lean_rounds;
    if (stop) break;
    if (checkpointing) {
      if (round >= 1 && (round + 1) % checkpoint_every_ == 0) {
        Stopwatch checkpoint_watch;
        if (checkpoint_writer_(capture_state(request, latest)).ok()) {
          ++summary.checkpoints;
        } else {
          ++summary.checkpoint_failures;
        }
        summary.checkpoint_seconds += checkpoint_watch.ElapsedSeconds();
      }
      for (const WorkerReply& r : latest) previous_w[static_cast<std::size_t>(r.worker)] = r.w;
      previous_rho = request.rho;
    }
  }
  summary.solve_seconds = solve_seconds_before + solve_watch.ElapsedSeconds();
  summary.stale_replies = board.stale_replies();
  executor_->Stop();
  executor_->AddCounters(summary);

  summary.rho = rho;
  solution.model = *tested_z;
  summary.nnz = static_cast<int64_t>(
      CountNonzeros(std::span<const double>(solution.model).first(static_cast<std::size_t>(spec_.cols))));
  if (trace_ != nullptr) trace_->Write(summary.ToJson("summary"));
  solution.summary = std::move(summary);
  return solution;
}

}  // namespace nimbus
