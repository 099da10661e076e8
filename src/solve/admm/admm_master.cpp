#include "nimbus/solve/admm/admm_master.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "nimbus/solve/admm/reply_board.h"
#include "solve/solve_steps.h"
#include "solve/trace_events.h"
#include "nimbus/core/clock.h"
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
    const auto regularized = spec.regularized_size();
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
    const auto regularized = spec.regularized_size();
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
  return loss + spec.regularizer.Value(z, spec.regularized_size());
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

// How z^{k+1} is made from the replies: by this master from every w_i, or by workers that
// sum among themselves (the allreduce topology), each process making its block.
class ZUpdateStrategy {
 public:
  virtual ~ZUpdateStrategy() = default;
  virtual Status Next(const std::vector<WorkerReply>& latest, double rho, Vector& z_next) = 0;
};

class CentralZUpdate final : public ZUpdateStrategy {
 public:
  CentralZUpdate(const ProblemSpec& spec, const Consensus& consensus) : spec_(spec), consensus_(consensus) {}
  Status Next(const std::vector<WorkerReply>& latest, double rho, Vector& z_next) override {
    consensus_.ZUpdate(spec_, latest, rho, z_next);
    return Status::Ok();
  }

 private:
  const ProblemSpec& spec_;
  const Consensus& consensus_;
};

class ReducedZUpdate final : public ZUpdateStrategy {
 public:
  ReducedZUpdate(const ProblemSpec& spec, const Consensus& consensus, Executor& executor)
      : spec_(spec), consensus_(consensus), executor_(executor) {}
  // This process's block from the workers' sums, the rest from the other processes.
  Status Next(const std::vector<WorkerReply>& latest, double rho, Vector& z_next) override {
    NIMBUS_ASSIGN_OR_RETURN(Executor::ReducedBlock block, executor_.ReduceScatter(latest));
    if (block.begin + block.sums.size() > z_next.size()) return Internal("a block of sums beyond the model");
    consensus_.ZFromSums(spec_, block.sums, block.begin, rho, z_next);
    return executor_.AllGather(z_next);
  }

 private:
  const ProblemSpec& spec_;
  const Consensus& consensus_;
  Executor& executor_;
};

// One ADMM solve (Boyd et al. 2011, section 7.1 with over-relaxation, section 3.4.1), one
// named step per line of the loop on one state: the MasterState a checkpoint holds as it is.
// Round k sends z^k; each worker's x- and u-updates run there and come back folded into
//   w_i = alpha x_i^{k+1} + (1 - alpha) z^k + u_i^{k+1}   (the u-update of the round before
// is in it), and the master makes z^{k+1} = prox_{g/(K rho)}(mean w_i).
class AdmmSolve {
 public:
  AdmmSolve(const ProblemSpec& spec, const AdmmOptions& options, Executor& executor, const MasterHooks& hooks)
      : spec_(spec), options_(options), executor_(executor), hooks_(hooks),
        board_(executor.workers(), options.barrier, options.max_staleness) {
    summary_.algorithm_reason = hooks.algorithm_reason;
  }

  // From a checkpoint's state, or else from z = `start` (empty: zero).
  Result<Solution> Run(const MasterState* resume, const std::vector<double>& start) {
    NIMBUS_RETURN_IF_ERROR(CheckOptions(resume));
    if (!start.empty() && start.size() != spec_.model_size()) {
      return InvalidArgument("warm start: " + std::to_string(start.size()) + " entries for a model of " +
                             std::to_string(spec_.model_size()));
    }
    if (Status started = Start(resume, start); !started.ok()) {
      executor_.Stop();
      return started;
    }
    for (int64_t round = state_.next_round;; ++round) {
      const RoundRequest request = XUpdateDispatch(round);
      if (!Gather(request)) break;
      ResidualsOf(round);
      const bool stop = StopTest(round);
      if (!stop && !ZUpdate(round)) break;
      if (!stop) RhoUpdate(round);
      Record(request);
      if (stop) break;
      Checkpoint(request);
    }
    return Finish();
  }

 private:
  Status CheckOptions(const MasterState* resume) const;
  Status Start(const MasterState* resume, const std::vector<double>& start);
  RoundRequest XUpdateDispatch(int64_t round);
  bool Gather(const RoundRequest& request);
  void ResidualsOf(int64_t round);
  bool StopTest(int64_t round);
  bool ZUpdate(int64_t round);
  void RhoUpdate(int64_t round);
  void Record(const RoundRequest& request);
  void Checkpoint(const RoundRequest& request);
  Result<Solution> Finish();
  bool Fail(std::string message) {
    summary_.termination = Termination::kWorkerFailed;
    summary_.message = std::move(message);
    return false;
  }

  const ProblemSpec& spec_;
  const AdmmOptions& options_;
  Executor& executor_;
  const MasterHooks& hooks_;  // the iteration callback, the trace, the checkpoints' writer

  MasterState state_;  // the loop's variables between rounds
  Summary summary_;
  // Within a solve, not across a resume:
  std::vector<WorkerReady> ready_;
  std::optional<Consensus> consensus_;
  std::unique_ptr<ZUpdateStrategy> z_update_;
  // Partial barrier (Zhang & Kwok 2014): wait for `barrier` of the K workers and reuse the
  // newest w_i of the others, none older than max_staleness rounds. Rounds become
  // synchronous again to confirm the stop test with every worker's reply to the same z.
  ReplyBoard board_;
  bool synchronous_ = true;
  std::shared_ptr<Vector> z_;                   // z^k: state_.z, writable
  std::shared_ptr<Vector> spare_z_;             // z^{k-1}, for reuse once no one holds it
  std::shared_ptr<const Vector> tested_z_;      // the newest z whose objective is known
  Stopwatch solve_watch_;
  double solve_seconds_before_ = 0;             // in the run a resumed one continues
  // This round's:
  std::vector<WorkerReply> arrived_;
  bool exact_ = false;  // every worker answered this z, so F(z^k) and the test are of it
  Residuals res_;
  double objective_ = 0;
  double wait_seconds_ = 0, dispatch_wall_ = 0, replies_wall_ = 0, stop_test_seconds_ = 0, z_update_seconds_ = 0;
  Stopwatch master_watch_;
};

Status AdmmSolve::CheckOptions(const MasterState* resume) const {
  // How the options combine with the runtime (a partial barrier or checkpoints need a master
  // and synchronous rounds) is SolveOptions::Validate's to check, once, before any of this.
  NIMBUS_RETURN_IF_ERROR(spec_.Validate());
  NIMBUS_RETURN_IF_ERROR(options_.Validate());
  if (resume != nullptr && resume->algorithm != Algorithm::kAdmm) {
    return InvalidArgument("checkpoint: the run was " + std::string(NameOf(resume->algorithm)) + "'s, not ADMM's");
  }
  if (resume != nullptr && resume->next_round < 2) {
    return InvalidArgument("checkpoint: a run resumes at round 2 or later, not " + std::to_string(resume->next_round));
  }
  return Status::Ok();
}

// The workers up with their shards, the consensus they make, rho_0 and z^0 = `start`; or a
// checkpoint's state with the workers' kept replies given back.
Status AdmmSolve::Start(const MasterState* resume, const std::vector<double>& start) {
  NIMBUS_ASSIGN_OR_RETURN(ready_, StartWorkers(executor_, spec_, options_.start_timeout_seconds, summary_));
  const std::size_t n = spec_.model_size();
  NIMBUS_ASSIGN_OR_RETURN(consensus_, Consensus::Of(ready_, n));
  if (executor_.SumsAmongWorkers()) {
    z_update_ = std::make_unique<ReducedZUpdate>(spec_, *consensus_, executor_);
  } else {
    z_update_ = std::make_unique<CentralZUpdate>(spec_, *consensus_);
  }
  synchronous_ = board_.barrier() == executor_.workers();
  if (resume != nullptr) {
    NIMBUS_RETURN_IF_ERROR(RestoreWorkers(*resume, ready_, n, *consensus_, executor_).WithContext("cannot resume"));
    state_ = *resume;
    z_ = std::make_shared<Vector>(resume->z.ToVector());
    summary_.iterations = static_cast<int>(state_.next_round - 1);
    summary_.resumed_at_round = state_.next_round;
    solve_seconds_before_ = state_.solve_seconds;
  } else {
    state_.rho = options_.rho > 0 ? options_.rho : options_.rho_scale * InitialRho(spec_, ready_);
    state_.rho_of_previous_round = state_.initial_rho = state_.rho;
    state_.inner_relative = options_.inner_first_relative;
    state_.lean = options_.message_precision == MessagePrecision::kFloat32;
    z_ = start.empty() ? std::make_shared<Vector>(n, 0.0) : std::make_shared<Vector>(start);
    for (const WorkerReady& r : ready_) state_.workers.push_back({r.rows, r.nnz, {}, {}});
  }
  state_.z = z_;
  tested_z_ = z_;
  if (hooks_.trace != nullptr) {
    hooks_.trace->Write(SetupEvent(executor_, spec_, ready_, state_.initial_rho, summary_.setup_seconds));
  }
  solve_watch_ = Stopwatch();
  return Status::Ok();
}

// z^k and rho to the workers, who make their x- and u-updates; lean rounds until the stop test
// first passes.
RoundRequest AdmmSolve::XUpdateDispatch(int64_t round) {
  RoundRequest request;
  request.round = round;
  request.z = state_.z;
  request.rho = state_.rho;
  request.relaxation = options_.relaxation;
  request.inner_tolerance = state_.inner_tolerance;
  request.inner_relative_tolerance = state_.inner_relative;
  request.lean = state_.lean;
  return request;
}

// The replies: from every worker, or (partial barrier) from enough of them. False if one failed.
bool AdmmSolve::Gather(const RoundRequest& request) {
  Stopwatch wait_watch;
  dispatch_wall_ = WallSeconds();
  const Deadline deadline = Deadline::After(options_.round_timeout_seconds);
  arrived_ = synchronous_ || request.round == 0 ? board_.Synchronous(executor_, request, deadline)
                                                : board_.Partial(executor_, request, deadline);
  wait_seconds_ = wait_watch.ElapsedSeconds();
  replies_wall_ = WallSeconds();
  summary_.wait_seconds += wait_seconds_;
  master_watch_ = Stopwatch();
  summary_.rounds = static_cast<int>(request.round + 1);
  const bool sums_among_workers = executor_.SumsAmongWorkers();
  const auto failed = std::find_if(arrived_.begin(), arrived_.end(), [&](WorkerReply& r) {
    // Workers that sum among themselves keep their w; this process sees its own alone.
    const bool w_expected = !sums_among_workers || !r.w.empty();
    const std::size_t local = consensus_->LocalSize(r.worker);
    if (r.status == ReplyStatus::kOk && w_expected && r.w.size() != local) {
      r.status = ReplyStatus::kFailed;
      r.error = "w has " + std::to_string(r.w.size()) + " entries, expected " + std::to_string(local);
    }
    return r.status != ReplyStatus::kOk;
  });
  if (failed != arrived_.end()) {
    return Fail("worker " + std::to_string(failed->worker) + " " + ReplyStatusName(failed->status) + " in round " +
                std::to_string(failed->round) + ": " + failed->error);
  }
  RecordWork(arrived_, summary_);
  return true;
}

// F(z^k), known only when every worker evaluated its share at z^k, and the residuals of
// iteration k (from round 1 on: round 0 has no previous x_i).
void AdmmSolve::ResidualsOf(int64_t round) {
  Stopwatch stop_test_watch;
  const std::vector<WorkerReply>& latest = board_.latest();
  exact_ = board_.AllAnswered(round);
  objective_ = exact_ ? ObjectiveAtZ(spec_, latest, *z_) : std::nan("");
  if (exact_) {
    state_.objective = objective_;
    summary_.iterations = static_cast<int>(round);
  }
  res_ = Residuals{};
  if (round >= 1) {
    res_ = ComputeResiduals(latest, state_.dual_residual, consensus_->CopiesDistance(*z_, nullptr),
                            state_.rho_of_previous_round, consensus_->local_dimensions(), options_);
    if (exact_) {
      summary_.primal_residual = res_.primal;
      summary_.dual_residual = res_.dual;
      summary_.eps_primal = res_.eps_primal;
      summary_.eps_dual = res_.eps_dual;
    }
  }
  stop_test_seconds_ = stop_test_watch.ElapsedSeconds();
}

// Boyd's test, a target, the cap, or the callback; the test may end the solve only on a round
// whose x_i and z^k came from an exact (not lean) round.
bool AdmmSolve::StopTest(int64_t round) {
  Stopwatch stop_test_watch;
  const IterationInfo info{.algorithm = Algorithm::kAdmm,
                           .iteration = static_cast<int>(round),
                           .elapsed_seconds = solve_seconds_before_ + solve_watch_.ElapsedSeconds(),
                           .objective = objective_,
                           .primal_residual = res_.primal,
                           .dual_residual = res_.dual,
                           .eps_primal = res_.eps_primal,
                           .eps_dual = res_.eps_dual,
                           .rho = state_.rho};
  bool stop = false;
  if (exact_) {
    if (state_.previous_round_lean && round >= 1 && Converged(res_)) state_.lean = false;  // finish exactly
    stop = Stops(info, round >= 1 ? &res_ : nullptr, !state_.previous_round_lean, options_, hooks_.callback, summary_);
    tested_z_ = z_;
  } else if ((round >= 1 && Converged(res_)) || round >= options_.max_iterations) {
    synchronous_ = true;  // confirm with everyone's reply to one z before stopping
  }
  stop_test_seconds_ += stop_test_watch.ElapsedSeconds();
  return stop;
}

// z^{k+1} and the dual residual s^{k+1} = rho ||z^{k+1} - z^k|| over the copies.
bool AdmmSolve::ZUpdate(int64_t round) {
  Stopwatch z_update_watch;
  // A z no one holds any more is written over rather than a new one allocated (and faulted in)
  // each round: on a model of millions that was most of the master's work. In the general
  // form its coordinates that no worker holds stay 0, as they started.
  std::shared_ptr<Vector> next = spare_z_.use_count() == 1 ? std::move(spare_z_) : std::make_shared<Vector>(z_->size());
  if (Status updated = z_update_->Next(board_.latest(), state_.rho, *next); !updated.ok()) {
    return Fail("the workers could not share z in round " + std::to_string(round) + ": " + updated.message());
  }
  state_.dual_residual = state_.rho * consensus_->CopiesDistance(*next, z_.get());
  spare_z_ = std::move(z_);
  z_ = std::move(next);
  state_.z = z_;
  z_update_seconds_ = z_update_watch.ElapsedSeconds();
  return true;
}

// Residual balancing, and the next x-updates' tolerance: accurate enough not to disturb the
// residuals that remain (the relative floor keeps a zero residual from asking for an exact solve).
void AdmmSolve::RhoUpdate(int64_t round) {
  const double rho = state_.rho;
  state_.rho_of_previous_round = rho;
  if (round < 1) return;
  // A new rho would leave the stale w_i of a partial barrier in the old scale.
  if (options_.adaptive_rho && exact_) {
    state_.rho = AdaptRho(res_, rho, options_);
    if (state_.rho != rho) ++state_.rho_updates;
  }
  state_.inner_tolerance =
      options_.inner_factor * std::min(state_.rho * res_.primal, res_.dual) / std::sqrt(executor_.workers());
  state_.inner_relative = kInnerRelativeFloor;
}

// The round's trace event and counters.
void AdmmSolve::Record(const RoundRequest& request) {
  const RoundTiming timing{solve_watch_.ElapsedSeconds(), wait_seconds_,     master_watch_.ElapsedSeconds(),
                           z_update_seconds_,             stop_test_seconds_, dispatch_wall_, replies_wall_};
  summary_.master_seconds += timing.master_seconds;
  const TestedResiduals tested{res_.primal, res_.dual, res_.eps_primal, res_.eps_dual};
  if (hooks_.trace != nullptr) {
    hooks_.trace->Write(RoundEvent(request, objective_, request.round >= 1 ? &tested : nullptr, timing, arrived_));
  }
  state_.previous_round_lean = request.lean;
  if (request.lean) ++state_.lean_rounds;
  z_update_seconds_ = 0;  // a last round makes no z-update
}

// The workers' replies to this round and the one before, with what those rounds sent, join
// the state; every checkpoint_every rounds it goes to the writer as it is.
void AdmmSolve::Checkpoint(const RoundRequest& request) {
  if (hooks_.checkpoint_every <= 0) return;
  state_.next_round = request.round + 1;
  state_.rho_previous = state_.rho_last;
  state_.rho_last = request.rho;
  state_.z_last = request.z;
  state_.alpha = request.relaxation;
  for (const WorkerReply& r : board_.latest()) {
    MasterState::Worker& kept = state_.workers[static_cast<std::size_t>(r.worker)];
    kept.w_previous = std::move(kept.w_last);
    kept.w_last = r.w;
  }
  if (request.round < 1 || (request.round + 1) % hooks_.checkpoint_every != 0) return;
  state_.solve_seconds = solve_seconds_before_ + solve_watch_.ElapsedSeconds();
  KeepCheckpoint(hooks_.checkpoint_writer, state_, summary_);
}

// The workers stopped, the model the newest tested z.
Result<Solution> AdmmSolve::Finish() {
  summary_.solve_seconds = solve_seconds_before_ + solve_watch_.ElapsedSeconds();
  summary_.stale_replies = board_.stale_replies();
  summary_.rho = state_.rho;
  summary_.initial_rho = state_.initial_rho;
  summary_.rho_updates = state_.rho_updates;
  summary_.lean_rounds = state_.lean_rounds;
  summary_.objective = state_.objective;
  return FinishSolve(executor_, spec_, *tested_z_, std::move(summary_), hooks_.trace);
}

}  // namespace

Result<Solution> AdmmMaster::Solve() {
  return AdmmSolve(spec_, options_, *executor_, hooks_).Run(resume_.get(), warm_.x);
}

}  // namespace nimbus
