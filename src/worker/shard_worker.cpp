#include "nimbus/worker/shard_worker.h"

#include <chrono>
#include <thread>

#include "nimbus/core/clock.h"
#include "nimbus/core/vector_ops.h"

namespace nimbus {

const char* LocalSolverName(LocalSolver solver) {
  return solver == LocalSolver::kNewtonCg ? "newton-cg" : "lbfgs";
}

Result<LocalSolver> ParseLocalSolver(const std::string& name) {
  if (name == "newton-cg" || name == "newton") return LocalSolver::kNewtonCg;
  if (name == "lbfgs" || name == "l-bfgs") return LocalSolver::kLbfgs;
  return InvalidArgument("unknown local solver '" + name + "' (choose newton-cg or lbfgs)");
}

Status WorkerOptions::Validate() const {
  NIMBUS_RETURN_IF_ERROR(newton.Validate().WithContext("newton"));
  NIMBUS_RETURN_IF_ERROR(faults.Validate());
  return lbfgs.Validate().WithContext("lbfgs");
}

ShardWorker::ShardWorker(int id, Dataset shard, const ProblemSpec& spec, const WorkerOptions& options)
    : id_(id),
      shard_(std::move(shard)),
      spec_(spec),
      options_(options),
      objective_(shard_.matrix, shard_.labels, spec.loss, spec.intercept, spec.rows),
      x_(spec.model_size(), 0.0),
      x_relaxed_(spec.model_size(), 0.0),
      u_(spec.model_size(), 0.0),
      center_(spec.model_size(), 0.0) {}

WorkerReady ShardWorker::Ready(double load_seconds) const {
  WorkerReady ready;
  ready.worker = id_;
  ready.rows = shard_.rows();
  ready.cols = shard_.cols();
  ready.nnz = shard_.nnz();
  ready.curvature_trace = CurvatureAtZero(spec_.loss) * SumOfSquaredRowNorms(shard_.matrix, spec_.intercept);
  ready.load_seconds = load_seconds;
  return ready;
}

Status ShardWorker::RestoreDual(std::span<const double> u, double rho) {
  ResumeState state;
  state.u.assign(u.begin(), u.end());
  state.rho_of_u = rho;
  return Resume(state);
}

Status ShardWorker::Resume(const ResumeState& state) {
  const std::size_t n = u_.size();
  auto size_error = [n](const char* name, std::size_t size) {
    return InvalidArgument(std::string(name) + " has " + std::to_string(size) + " entries, the model has " +
                           std::to_string(n));
  };
  if (state.u.size() != n) return size_error("u", state.u.size());
  const bool has_iterate = !state.x.empty();
  if (has_iterate && state.x.size() != n) return size_error("x", state.x.size());
  if (has_iterate && state.x_relaxed.size() != n) return size_error("x_relaxed", state.x_relaxed.size());
  if (!(state.rho_of_u > 0)) return InvalidArgument("rho: must be positive");
  CopyInto(state.u, u_);
  if (has_iterate) {
    CopyInto(state.x, x_);
    CopyInto(state.x_relaxed, x_relaxed_);
  }
  rho_of_u_ = state.rho_of_u;
  has_iterate_ = has_iterate;
  return Status::Ok();
}

WorkerReply ShardWorker::Serve(const RoundRequest& request, uint64_t invocation) {
  Stopwatch round_watch;
  WorkerReply reply;
  reply.worker = id_;
  reply.round = request.round;
  reply.timings.start_wall = WallSeconds();
  if (request.z.size() != x_.size()) {
    reply.status = ReplyStatus::kFailed;
    reply.error = "z has " + std::to_string(request.z.size()) + " entries, the model has " + std::to_string(x_.size());
    return reply;
  }
  const std::span<const double> z = request.z;
  if (request.resume != nullptr) {
    if (Status resumed = Resume(*request.resume); !resumed.ok()) {
      reply.status = ReplyStatus::kFailed;
      reply.error = "cannot resume: " + resumed.message();
      return reply;
    }
  }
  const int64_t passes_before = objective_.data_passes();

  // Dual update and the scalars of the stop test, for the iteration that produced z.
  if (has_iterate_) {
    for (std::size_t j = 0; j < u_.size(); ++j) u_[j] += x_relaxed_[j] - z[j];
    reply.scalars.valid = true;
    reply.scalars.primal_squared = SquaredDistance(x_, z);
    reply.scalars.x_squared = SquaredNorm(x_);
    reply.scalars.u_squared = SquaredNorm(u_);
  }
  reply.scalars.loss_at_z = objective_.DataLoss(z);
  if (rho_of_u_ > 0 && rho_of_u_ != request.rho) Scale(rho_of_u_ / request.rho, u_);
  rho_of_u_ = request.rho;

  // x-update: argmin f_i(x) + rho/2 ||x - (z - u)||^2, warm started from the previous x.
  for (std::size_t j = 0; j < u_.size(); ++j) center_[j] = z[j] - u_[j];
  objective_.SetCenter(center_, request.rho);
  if (!has_iterate_) CopyInto(z, x_);
  Stopwatch solve_watch;
  LocalSolveStats stats;
  if (options_.solver == LocalSolver::kNewtonCg) {
    NewtonCgOptions newton = options_.newton;
    newton.gradient_tolerance = request.inner_tolerance;
    newton.relative_tolerance = request.inner_relative_tolerance;
    stats = MinimizeNewtonCg(objective_, x_, newton, &newton_workspace_);
  } else {
    LbfgsOptions lbfgs = options_.lbfgs;
    lbfgs.gradient_tolerance = request.inner_tolerance;
    lbfgs.relative_tolerance = request.inner_relative_tolerance;
    stats = MinimizeLbfgs(objective_, x_, lbfgs);
  }
  reply.timings.solve_seconds = solve_watch.ElapsedSeconds();

  // Over-relaxation and the reply w = xh + u.
  const double alpha = request.relaxation;
  std::vector<double> w(x_.size());
  for (std::size_t j = 0; j < x_.size(); ++j) {
    x_relaxed_[j] = alpha * x_[j] + (1.0 - alpha) * z[j];
    w[j] = x_relaxed_[j] + u_[j];
  }
  reply.w = std::move(w);
  has_iterate_ = true;

  reply.timings.local_iterations = stats.iterations;
  reply.timings.cg_iterations = stats.cg_iterations;
  reply.timings.data_passes = objective_.data_passes() - passes_before;
  double delay = options_.faults.DelaySeconds(id_, invocation, request.round);
  if (options_.faults.slow_worker == id_) delay += (options_.faults.slow_factor - 1) * round_watch.ElapsedSeconds();
  if (delay > 0) std::this_thread::sleep_for(std::chrono::duration<double>(delay));
  reply.invocation = invocation;
  reply.timings.compute_seconds = round_watch.ElapsedSeconds();
  reply.timings.end_wall = WallSeconds();
  // In-process these are the same moments; a remote runtime overwrites them.
  reply.timings.receive_wall = reply.timings.start_wall;
  reply.timings.send_wall = reply.timings.end_wall;
  reply.timings.arrival_wall = reply.timings.end_wall;
  return reply;
}

}  // namespace nimbus
