#include "nimbus/worker/shard_worker.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <thread>

#include "nimbus/columns/block_round.h"
#include "nimbus/core/clock.h"
#include "nimbus/core/vector_ops.h"
#include "nimbus/data/feature_map.h"

namespace nimbus {

Result<LocalSolver> ParseLocalSolver(const std::string& name) {
  if (name == "newton") return LocalSolver::kNewtonCg;
  if (name == "l-bfgs") return LocalSolver::kLbfgs;
  Result<LocalSolver> solver = ParseChoice<LocalSolver>(name);
  if (!solver.ok()) return InvalidArgument("unknown local solver '" + name + "' (choose " + ChoiceList<LocalSolver>() + ")");
  return solver;
}

Status WorkerOptions::Validate() const {
  NIMBUS_RETURN_IF_ERROR(newton.Validate().WithContext("newton"));
  NIMBUS_RETURN_IF_ERROR(faults.Validate());
  return lbfgs.Validate().WithContext("lbfgs");
}

LocalShard MakeLocalShard(Dataset shard, const ProblemSpec& spec, bool general_form) {
  LocalShard local;
  local.spec = spec;
  local.model_size = spec.model_size();
  if (!general_form) {
    local.data = std::move(shard);
    return local;
  }
  // The support: the columns the rows touch, and each one's new number, its rank among them
  // (linear in the nonzeros, and nothing sized by the problem's columns when they are many).
  const CsrView& a = shard.matrix;
  const int64_t first = a.row_ptr[0];
  const int64_t nnz = a.nnz();
  const std::span<const uint32_t> col_idx(a.col_idx + first, static_cast<std::size_t>(nnz));
  const OccurringColumns occurring = OccurringColumns::Of(col_idx, spec.cols);
  const auto features = static_cast<int64_t>(occurring.columns().size());
  // The model's entries those columns (and the intercept) hold: B per column, interleaved.
  const auto blocks = static_cast<uint32_t>(spec.blocks());
  auto support = std::make_shared<std::vector<uint32_t>>();
  support->reserve((occurring.columns().size() + (spec.intercept ? 1 : 0)) * blocks);
  auto hold = [&](uint32_t column) {
    for (uint32_t b = 0; b < blocks; ++b) support->push_back(column * blocks + b);
  };
  for (const uint32_t column : occurring.columns()) hold(column);
  if (spec.intercept) hold(static_cast<uint32_t>(spec.cols));

  local.data = shard;
  local.data.columns = {};  // its columns are the support's now, not the source's features
  local.data.matrix.cols = features;
  if (shard.own.col_idx == shard.matrix.col_idx && first == 0 && shard.storage.use_count() == 2) {
    // Rows this worker read for itself, held by nothing else (the copy here and `shard`):
    // renumbered in place, at no cost in memory.
    occurring.Renumber(col_idx, std::span<uint32_t>(shard.own.col_idx, col_idx.size()));
    local.spec.cols = features;
    local.support = std::move(support);
    return local;
  }
  // The rows with their columns renumbered 0..features-1 and their offsets from 0; the values
  // stay where they are.
  struct Renumbered {
    std::shared_ptr<const void> original;
    std::vector<int64_t> row_ptr;
    std::vector<uint32_t> col_idx;
  };
  auto renumbered = std::make_shared<Renumbered>();
  renumbered->original = shard.storage;
  renumbered->row_ptr.resize(static_cast<std::size_t>(a.rows) + 1);
  for (int64_t r = 0; r <= a.rows; ++r) renumbered->row_ptr[static_cast<std::size_t>(r)] = a.row_ptr[r] - first;
  renumbered->col_idx.resize(static_cast<std::size_t>(nnz));
  occurring.Renumber(col_idx, renumbered->col_idx);
  local.data.own = {renumbered->col_idx.data(), nullptr, nullptr};  // the values stay the original's
  local.data.matrix.row_ptr = renumbered->row_ptr.data();
  local.data.matrix.col_idx = renumbered->col_idx.data();
  local.data.matrix.values = a.values == nullptr ? nullptr : a.values + first;
  local.data.matrix.values32 = a.values32 == nullptr ? nullptr : a.values32 + first;
  local.data.storage = std::move(renumbered);
  local.spec.cols = features;
  local.support = std::move(support);
  return local;
}

ShardWorker::ShardWorker(int id, Dataset shard, const ProblemSpec& spec, const WorkerOptions& options)
    : ShardWorker(id, MakeLocalShard(std::move(shard), spec, options.general_form), options) {}

ShardWorker::ShardWorker(int id, LocalShard shard, const WorkerOptions& options)
    : id_(id),
      shard_(std::move(shard.data)),
      spec_(shard.spec),
      support_(std::move(shard.support)),
      model_size_(shard.model_size),
      options_(options),
      term_(std::make_shared<const DataTerm>(
          DataTerm::ForProblem(spec_, shard_.matrix, shard_.labels, shard_.weights, shard_.folds))),
      objective_(term_, spec_.rows),
      independent_blocks_(spec_.independent_blocks() > 1 ? EntryBlocks(spec_, spec_.model_size()) : std::vector<uint32_t>()),
      derivatives_(term_, spec_.rows, shard_.own, options.memory_limit_bytes),
      x_(spec_.model_size(), 0.0),
      x_relaxed_(spec_.model_size(), 0.0),
      u_(spec_.model_size(), 0.0),
      center_(spec_.model_size(), 0.0) {}

WorkerReady ShardWorker::Ready(double load_seconds) const {
  WorkerReady ready;
  ready.worker = id_;
  ready.rows = shard_.rows();
  ready.cols = shard_.cols();
  ready.nnz = shard_.nnz();
  ready.curvature_trace = term_->CurvatureTraceAtZero();
  ready.load_seconds = load_seconds;
  ready.support = support_;
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

std::span<const double> ShardWorker::Local(const SharedVector& v, std::vector<double>& gathered) const {
  if (support_ == nullptr || v.size() != model_size_ || v.size() == x_.size()) return v;
  gathered.resize(support_->size());
  for (std::size_t k = 0; k < gathered.size(); ++k) gathered[k] = v[(*support_)[k]];
  return gathered;
}

WorkerReply ShardWorker::Serve(const RoundRequest& request, uint64_t invocation) {
  Stopwatch round_watch;
  WorkerReply reply;
  reply.worker = id_;
  reply.round = request.round;
  reply.timings.start_wall = WallSeconds();
  const std::span<const double> z =
      request.kind == RoundKind::kColumnStep ? request.z.span() : Local(request.z, z_local_);
  if (request.kind != RoundKind::kColumnStep && z.size() != x_.size()) {
    reply.status = ReplyStatus::kFailed;
    reply.error = "z has " + std::to_string(z.size()) + " entries, the model has " + std::to_string(x_.size());
    return reply;
  }
  if (request.kind == RoundKind::kColumnStep) {
    ServeColumns(request, reply);
  } else if (request.kind == RoundKind::kAdmm) {
    ServeAdmm(request, z, reply);
  } else if (request.kind == RoundKind::kScore) {
    ServeScore(request, z, reply);
  } else {
    ServeNewton(request, z, reply);
  }
  if (reply.status != ReplyStatus::kOk) return reply;
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

void ShardWorker::ServeNewton(const RoundRequest& request, std::span<const double> v, WorkerReply& reply) {
  const int64_t passes_before = derivatives_.data_passes();
  const std::size_t n = x_.size();
  Stopwatch solve_watch;
  if (request.kind == RoundKind::kEvaluate) {
    std::vector<double> gradient_and_diagonal(2 * n);
    reply.scalars.loss_at_z = derivatives_.Evaluate(request.round, v, gradient_and_diagonal);
    reply.w = std::move(gradient_and_diagonal);
    reply.w_vectors = 2;
  } else {
    // The point travels only to a worker that may not hold it.
    const bool needs_point = !derivatives_.Holds(request.point_round) && !request.point.empty();
    const std::span<const double> point =
        needs_point ? Local(request.point, point_local_) : std::span<const double>();
    std::vector<double> hv(n);
    if (Status done = derivatives_.HessianVector(request.point_round, point, v, hv, request.on_support); !done.ok()) {
      reply.status = ReplyStatus::kFailed;
      reply.error = done.message();
      return;
    }
    reply.w = std::move(hv);
  }
  reply.timings.solve_seconds = solve_watch.ElapsedSeconds();
  reply.timings.data_passes = derivatives_.data_passes() - passes_before;
}

void ShardWorker::ServeScore(const RoundRequest& request, std::span<const double> model, WorkerReply& reply) {
  Result<ScoreQuery> query = ScoreQuery::Parse(request.query.span(), spec_.copies - 1);
  if (!query.ok() || shard_.folds.empty()) {
    reply.status = ReplyStatus::kFailed;
    reply.error = query.ok() ? "a score round for rows without folds" : query.status().message();
    return;
  }
  Stopwatch solve_watch;
  if (scored_round_ != query->model_round) {
    if (!held_out_) held_out_.emplace(shard_, spec_);
    held_out_->Score(model);
    scored_round_ = query->model_round;
    reply.timings.data_passes = 1;
  }
  std::vector<double> answer;
  held_out_->Answer(*query, answer);
  reply.w = std::move(answer);
  reply.w_vectors = 0;
  reply.timings.solve_seconds = solve_watch.ElapsedSeconds();
}

// The block's columns of this worker's rows (the column layout gives it every row), by columns:
// made at the first column round, kept while the rounds name the same block.
Result<const ColumnBlock*> ShardWorker::ColumnsOf(const BlockRange& block) {
  if (block.end > shard_.cols()) {
    return InvalidArgument("a column round for columns up to " + std::to_string(block.end) + " of a shard of " +
                           std::to_string(shard_.cols()));
  }
  if (!column_block_ || column_block_->range() != block) {
    column_block_ = ColumnBlock::Of(shard_.matrix, block.begin, block.end, block.intercept);
  }
  return &*column_block_;
}

void ShardWorker::ServeColumns(const RoundRequest& request, WorkerReply& reply) {
  const auto rows = static_cast<std::size_t>(shard_.rows());
  Result<BlockRound> round = DecodeBlockRound(request.query.span());
  Result<const ColumnBlock*> block = round.ok() ? ColumnsOf(round->block) : Result<const ColumnBlock*>(round.status());
  if (block.ok() && !round->margins_only && request.z.size() != 2 * rows) {
    block = InvalidArgument("a column round with " + std::to_string(request.z.size()) + " derivatives for " +
                            std::to_string(rows) + " rows (two each)");
  }
  if (!block.ok()) {
    reply.status = ReplyStatus::kFailed;
    reply.error = block.status().message();
    return;
  }
  Stopwatch solve_watch;
  const ColumnBlock& columns = **block;
  if (round->margins_only) {
    std::vector<double> margins(rows, 0.0);
    AddBlockMargins(columns, round->x_block, margins);
    reply.w = std::move(margins);
    reply.timings.data_passes = 1;
  } else {
    const std::span<const double> z = request.z.span();
    const RowDerivatives at{{z.begin(), z.begin() + static_cast<std::ptrdiff_t>(rows)},
                            {z.begin() + static_cast<std::ptrdiff_t>(rows), z.end()}};
    const BlockStep step = MinimizeBlockModel(columns, at, round->x_block, round->model, round->eligible);
    reply.timings.local_iterations = step.passes;
    reply.timings.data_passes = (step.entries_read + columns.nnz() / 2) / std::max<int64_t>(columns.nnz(), 1);
    reply.w = EncodeBlockStep(step);
  }
  reply.w_vectors = 0;
  reply.timings.solve_seconds = solve_watch.ElapsedSeconds();
}

void ShardWorker::ServeAdmm(const RoundRequest& request, std::span<const double> z, WorkerReply& reply) {
  if (request.resume != nullptr) {
    if (Status resumed = Resume(*request.resume); !resumed.ok()) {
      reply.status = ReplyStatus::kFailed;
      reply.error = "cannot resume: " + resumed.message();
      return;
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
    if (!independent_blocks_.empty()) {
      newton.blocks = static_cast<int>(spec_.independent_blocks());
      newton.block_of = independent_blocks_;
    }
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
}

}  // namespace nimbus
