// --algorithm columns through the facade: the column method (columns/column_descent.h) on the
// rows this process holds, its blocks stepped on this process's threads or, for nimbus train on
// another runtime, on its workers, a block of columns each.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <optional>
#include <thread>
#include <utility>

#include "api/testing.h"
#include "nimbus/api/plan.h"
#include "nimbus/columns/block_round.h"
#include "nimbus/columns/column_descent.h"
#include "nimbus/core/clock.h"
#include "nimbus/core/vector_ops.h"
#include "nimbus/executor/trace_schema.h"
#include "solve/solve_steps.h"
#include "solve/trace_events.h"

namespace nimbus {
namespace {

// The facade's options as the column method's: a block per worker, up to two threads a block
// as the cores allow; the stop test and cap are Newton's (the same subgradient test).
ColumnDescentOptions ColumnOptionsOf(const Plan& plan, const SolveOptions& options) {
  ColumnDescentOptions columns;
  columns.blocks = plan.workers;
  columns.threads = std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, 2 * plan.workers);
  columns.max_iterations = static_cast<int>(std::min<int64_t>(options.admm.max_iterations, 1 << 30));
  // A target objective turns the subgradient test off, as it does Newton's.
  columns.gradient_tolerance = options.admm.target_objective ? 0 : options.gradient_tolerance;
  return columns;
}

// The options' observer, and their target objective, as the column method's on_iteration.
std::function<bool(const ColumnDescentSummary&)> ObserverOf(const SolveOptions& options, Stopwatch& watch) {
  const IterationCallback& observer = options.on_iteration;
  const std::optional<double> target = options.admm.target_objective;
  return [&observer, &watch, target](const ColumnDescentSummary& now) {
    const IterationInfo info{.algorithm = Algorithm::kColumns,
                             .iteration = now.iterations,
                             .elapsed_seconds = watch.ElapsedSeconds(),
                             .objective = now.objective,
                             .gradient_norm = now.subgradient_norm,
                             .gradient_tolerance = now.subgradient_tolerance};
    const bool go_on = !observer || observer(info);
    return go_on && !(target && now.objective <= *target);
  };
}

// The options' as one solve's, observed.
ColumnDescentOptions ObservedOptionsOf(const Plan& plan, const SolveOptions& options, Stopwatch& watch) {
  ColumnDescentOptions columns = ColumnOptionsOf(plan, options);
  columns.on_iteration = ObserverOf(options, watch);
  return columns;
}

// The method's outcome as every solve's summary. `summary`: the run's so far (a runtime's
// counters and rounds, the checkpoints), if any.
Summary SummaryOf(const Plan& plan, const MasterChoice& choice, const ColumnDescentSummary& outcome,
                  const SolveOptions& options, double solve_seconds, Summary summary) {
  summary.algorithm = Algorithm::kColumns;
  summary.algorithm_reason = choice.reason;
  if (summary.runtime.empty()) summary.runtime = std::string(NameOf(RuntimeKind::kThreads));
  summary.workers = plan.workers;
  summary.rows = plan.spec.rows;
  summary.cols = summary.solved_cols = plan.spec.cols;
  summary.data_nnz = plan.data->nnz();
  // On workers, the rounds they answered (the last, whose steps met the stop test, is no
  // iteration); in this process, an iteration a round.
  summary.iterations = outcome.iterations;
  summary.rounds = std::max(summary.rounds, outcome.iterations);
  summary.objective = outcome.objective;
  summary.gradient_norm = outcome.subgradient_norm;
  summary.gradient_tolerance = outcome.subgradient_tolerance;
  summary.data_passes = static_cast<int64_t>(outcome.data_passes + 0.5);
  summary.solve_seconds = solve_seconds;
  // On workers, the master's own part is what the wait for their rounds leaves.
  if (summary.wait_seconds > 0) summary.master_seconds = std::max(0.0, solve_seconds - summary.wait_seconds);
  summary.message = outcome.message;
  const std::optional<double> target = options.admm.target_objective;
  const bool reached_target = target && outcome.objective <= *target;
  summary.termination = outcome.converged ? Termination::kConverged
                        : outcome.failed  ? Termination::kWorkerFailed
                        : reached_target  ? Termination::kTargetObjective
                        : outcome.stopped ? Termination::kUserStopped
                                          : Termination::kMaxIterations;
  if (reached_target && !outcome.converged) summary.message = "reached the target objective";
  return summary;
}

// The rows in this process, and a problem the method solves.
Status CheckColumnsPlan(const Plan& plan) {
  if (!plan.data) {
    return InvalidArgument("--algorithm columns: " + plan.source +
                           " is a store of shards; the column method reads LIBSVM text or arrays in this process");
  }
  if (plan.spec.multinomial) {
    return InvalidArgument("--algorithm columns: one-vs-rest only, not the softmax (--multiclass ovr)");
  }
  return Status::Ok();
}

Solution SolutionOf(const Plan& plan, const MasterChoice& choice, std::vector<double> x,
                    const ColumnDescentSummary& outcome, const SolveOptions& options, double seconds,
                    Summary run = {}) {
  Solution solution;
  solution.summary = SummaryOf(plan, choice, outcome, options, seconds, std::move(run));
  solution.summary.nnz =
      static_cast<int64_t>(CountNonzeros(std::span<const double>(x).first(plan.spec.regularized_size())));
  solution.model = std::move(x);
  return solution;
}

// A path's plan: the rows in this process, a binary or regression problem, on its threads.
Status CheckColumnsPathPlan(const Plan& plan, const SolveOptions& options) {
  NIMBUS_RETURN_IF_ERROR(CheckColumnsPlan(plan));
  if (options.runtime.kind != RuntimeKind::kThreads) {
    return InvalidArgument("--algorithm columns: paths and cross-validation run on this process's threads (--runtime "
                           "threads), not --runtime " + std::string(NameOf(options.runtime.kind)) +
                           " yet (nimbus train runs on any)");
  }
  if (plan.spec.classes > 1) return InvalidArgument("--algorithm columns: paths of binary or regression problems only");
  if (options.column_blocks != ColumnBlocks::kAuto) {
    return InvalidArgument("--column-blocks: nimbus train's (a path's blocks are contiguous)");
  }
  return Status::Ok();
}

Status CheckLambdaMax(double lambda_max) {
  if (lambda_max > 0) return Status::Ok();
  return InvalidArgument("path: every weight's gradient is zero where no weight is used: every lambda gives the same "
                         "model");
}

// A grid's price: the load, and the path's start (each point's solve is priced with the point).
double CostOfGrid(const Plan& plan, const SolveOptions& options, double load_seconds, double start_seconds) {
  Summary total;
  total.load_seconds = load_seconds;
  total.solve_seconds = start_seconds;
  AddCostEstimate(options.prices, plan, &total);
  return total.cost_dollars;
}

// The K folds' paths on their training rows, then the whole's (ColumnPath::StartFolds), started
// on this process's cores. A fold's problem is the whole's on its rows: its loss averaged over
// them, the same lambdas.
Result<std::vector<ColumnPath>> StartFoldPaths(const Plan& plan, const SolveOptions& options,
                                               std::span<const uint8_t> fold_of_rows, int64_t folds, int cores) {
  ColumnPathOptions one_core{ColumnOptionsOf(plan, options), true, {}};
  one_core.descent.threads = 1;  // the paths share the cores
  const Dataset& data = *plan.data;
  return ColumnPath::StartFolds(plan.spec, data.matrix, data.labels, data.weights, fold_of_rows, folds, one_core,
                                cores);
}

// A fold's work into the point's: its rounds and passes over the data, as the copies of
// cross-validation's other methods count theirs.
void AddWork(const ColumnDescentSummary& fold, ColumnDescentSummary& point) {
  point.iterations += fold.iterations;
  point.data_passes += fold.data_passes;
  point.step_halvings += fold.step_halvings;
}

// The column method's state as a checkpoint keeps every run's (solve/master.h: MasterState).
MasterState MasterStateOf(const ColumnDescentCheckpoint& kept) {
  MasterState state;
  state.algorithm = Algorithm::kColumns;
  state.iterations = state.next_round = kept.iterations;
  state.gradient_reference = kept.subgradient_reference;
  state.z = kept.x;
  state.z_last = kept.last_step;
  state.curvature_scale = kept.curvature_scale;
  state.damping = kept.damping;
  state.margins = kept.margins;
  state.margin_step = kept.last_margin_step;
  return state;
}

// And back, for a resumed run: a column method's state of this problem's size.
Result<std::shared_ptr<const ColumnDescentCheckpoint>> ColumnStateOf(const MasterState& state, const Plan& plan) {
  if (state.algorithm != Algorithm::kColumns) {
    return InvalidArgument("--resume: the checkpoint is of an --algorithm " + std::string(NameOf(state.algorithm)) +
                           " run, not of the column method's");
  }
  if (state.z.size() != static_cast<std::size_t>(plan.spec.model_size())) {
    return InvalidArgument("--resume: the checkpoint holds " + std::to_string(state.z.size()) +
                           " weights, the data's model " + std::to_string(plan.spec.model_size()));
  }
  const std::span<const double> x = state.z, last_step = state.z_last, margins = state.margins,
                                margin_step = state.margin_step;
  return std::make_shared<const ColumnDescentCheckpoint>(ColumnDescentCheckpoint{
      {x.begin(), x.end()}, {last_step.begin(), last_step.end()}, static_cast<int>(state.iterations),
      state.gradient_reference, state.curvature_scale, state.damping, {margins.begin(), margins.end()},
      {margin_step.begin(), margin_step.end()}});
}

// --checkpoint (every --checkpoint-every iterations, counted in `summary`) and --resume, as the
// column method's: binary and regression problems (one-vs-rest's classes are solved in turn).
Status SetCheckpoints(const Plan& plan, const SolveOptions& options, ColumnDescentOptions& columns, Summary& summary) {
  const CheckpointOptions& checkpoint = options.checkpoint;
  if (checkpoint.location.empty()) return Status::Ok();
  if (plan.spec.one_vs_rest()) {
    return InvalidArgument("--algorithm columns: checkpoints of binary and regression problems only, not of "
                           "one-vs-rest's classes (--checkpoint)");
  }
  NIMBUS_ASSIGN_OR_RETURN(CheckpointWriter writer, CheckpointWriterOf(options));
  columns.checkpoint_every = static_cast<int>(checkpoint.every);
  columns.on_checkpoint = [writer = std::move(writer), &summary](const ColumnDescentCheckpoint& kept) {
    Stopwatch writing;
    const bool written = writer(MasterStateOf(kept)).ok();
    summary.checkpoint_seconds += writing.ElapsedSeconds();
    ++(written ? summary.checkpoints : summary.checkpoint_failures);
  };
  if (checkpoint.resume) {
    NIMBUS_ASSIGN_OR_RETURN(columns.resume, ColumnStateOf(*checkpoint.resume, plan));
    summary.resumed_at_round = checkpoint.resume->next_round;
  }
  return Status::Ok();
}

// Tests only (--inject-delay): each iteration takes this much longer, as a slow worker's round
// would, so that a run lasts long enough to be killed in its middle.
void InjectDelay(const SolveOptions& options, ColumnDescentOptions& columns) {
  if (options.test_hooks == nullptr || !(options.test_hooks->faults.delay_ms > 0)) return;
  const FaultInjection faults = options.test_hooks->faults;
  columns.on_iteration = [faults, observer = std::move(columns.on_iteration)](const ColumnDescentSummary& now) {
    std::this_thread::sleep_for(std::chrono::duration<double>(faults.DelaySeconds(0, 0, now.iterations)));
    return !observer || observer(now);
  };
}

// --trace: the problem as a "setup" event, then a "round" per iteration (kind column-step): its
// objective at its end, the subgradient norm at its start against the stop test's tolerance (as
// Newton's rounds carry theirs) and its seconds.
// The last step round the workers answered (the column method on a runtime), for the trace:
// its number, the wait for it, and each worker's timings.
struct WorkerRound {
  int64_t round = -1;  // -1: none since the last iteration's event
  double wait_seconds = 0, dispatch_wall = 0, replies_wall = 0;
  std::vector<WorkerReply> replies;
};

// Writes each iteration's "round" event; returns what writes one, for the last round the
// workers answered (its steps met the stop test: no iteration, but a round of theirs). Null
// without a trace.
using RoundTracer = std::function<void(const ColumnDescentSummary& now)>;
RoundTracer TraceIterations(TraceSink* trace, const Plan& plan, RuntimeKind runtime, ColumnDescentOptions& columns,
                            Stopwatch& watch, std::shared_ptr<WorkerRound> last_round) {
  if (trace == nullptr) return {};
  const int blocks = runtime == RuntimeKind::kThreads ? columns.blocks : plan.workers;
  trace->Write(SetupEvent(std::string(NameOf(runtime)), blocks, plan.spec, {}, 0, 0));
  auto last_end = std::make_shared<double>(0.0);
  RoundTracer write = [trace, &watch, last_end, last_round](const ColumnDescentSummary& now) {
    TraceRound round;
    round.round = now.iterations;
    round.kind = RoundKind::kColumnStep;
    round.time = watch.ElapsedSeconds();
    round.objective = now.objective;
    round.primal_residual = now.subgradient_norm;
    round.eps_primal = now.subgradient_tolerance;
    round.master_seconds = round.time - *last_end;
    if (last_round->round >= 0) {  // the workers' round, and the wait for it
      round.round = last_round->round;
      round.wait_seconds = last_round->wait_seconds;
      round.master_seconds -= last_round->wait_seconds;
      round.dispatch = last_round->dispatch_wall;
      round.replies = last_round->replies_wall;
      for (const WorkerReply& r : last_round->replies) round.workers.push_back({r.timings, r.worker});
      *last_round = WorkerRound{};
    }
    *last_end = round.time;
    trace->Write(TraceLine(round));
  };
  columns.on_iteration = [write, observer = std::move(columns.on_iteration)](const ColumnDescentSummary& now) {
    write(now);
    return !observer || observer(now);
  };
  return write;
}

// The columns of the plan's workers' blocks, as the options ask.
Result<ColumnLayout> BlockLayoutOf(const Plan& plan, ColumnBlocks how) {
  const CsrView& matrix = plan.data->matrix;
  switch (how) {
    case ColumnBlocks::kClustered:
      if (plan.workers > 64) {
        return InvalidArgument("--column-blocks clustered: at most 64 blocks (a bit per block for each row), not " +
                               std::to_string(plan.workers) + " (--workers)");
      }
      return ClusterColumns(matrix, plan.workers);
    case ColumnBlocks::kContiguous: return ColumnLayout{{}, CutColumns(matrix, plan.workers)};
    case ColumnBlocks::kAuto: break;
  }
  return LayOutColumns(matrix, plan.workers);
}

// The blocks on a runtime's workers, worker b holding every row's entries in block b's columns
// (Plan::column_blocks): a step is a round, the rows' derivatives out, each block's step and
// A_B delta back. A worker keeps nothing between rounds (x on its block comes with each), so
// one the runtime replaces answers the round as the lost one would have.
class WorkerBlockStepper final : public BlockStepper {
 public:
  // Each step round's replies go to `last_round` (for the trace).
  WorkerBlockStepper(Executor& executor, std::vector<BlockRange> blocks, int64_t nnz, int64_t rows,
                     double round_timeout_seconds, Summary& summary, std::shared_ptr<WorkerRound> last_round)
      : executor_(executor), blocks_(std::move(blocks)), nnz_(nnz), rows_(rows),
        round_timeout_seconds_(round_timeout_seconds), summary_(summary), last_round_(std::move(last_round)) {}
  const std::vector<BlockRange>& blocks() const override { return blocks_; }
  int64_t nnz() const override { return nnz_; }

  Result<std::vector<BlockStep>> Step(const RowDerivatives& at, std::span<const double> x,
                                      const BlockModelOptions& model, std::span<const uint8_t> eligible) override {
    auto derivatives = std::make_shared<std::vector<double>>(at.first);
    derivatives->insert(derivatives->end(), at.second.begin(), at.second.end());
    const double dispatch_wall = WallSeconds();
    Stopwatch wait;
    NIMBUS_ASSIGN_OR_RETURN(std::vector<WorkerReply> replies,
                            Run(SharedVector(std::move(derivatives)), x, model, eligible, false));
    *last_round_ = {next_round_ - 1, wait.ElapsedSeconds(), dispatch_wall, WallSeconds(), replies};
    std::vector<BlockStep> steps;
    for (std::size_t b = 0; b < blocks_.size(); ++b) {
      Result<BlockStep> step = DecodeBlockStep(replies[b].w, blocks_[b].size(), rows_);
      if (!step.ok()) return step.status().WithContext("worker " + std::to_string(b));
      steps.push_back(std::move(step).value());
    }
    return steps;
  }

  Result<std::vector<double>> Margins(std::span<const double> v) override {
    NIMBUS_ASSIGN_OR_RETURN(const std::vector<WorkerReply> replies, Run({}, v, {}, {}, true));
    std::vector<double> margins(static_cast<std::size_t>(rows_), 0.0);
    for (const WorkerReply& reply : replies) {
      if (reply.w.size() != margins.size()) {
        return Internal("worker " + std::to_string(reply.worker) + " sent " + std::to_string(reply.w.size()) +
                        " margins for " + std::to_string(rows_) + " rows");
      }
      for (std::size_t r = 0; r < margins.size(); ++r) margins[r] += reply.w[r];
    }
    return margins;
  }

 private:
  // One round: block b's question to worker b; the replies in worker order, or an error naming
  // a worker the runtime could not keep (or that did not answer before the deadline).
  Result<std::vector<WorkerReply>> Run(const SharedVector& derivatives, std::span<const double> x,
                                       const BlockModelOptions& model, std::span<const uint8_t> eligible,
                                       bool margins_only) {
    std::vector<RoundRequest> requests(blocks_.size());
    for (std::size_t b = 0; b < blocks_.size(); ++b) {
      const BlockRange& block = blocks_[b];
      BlockRound question{block, margins_only, model, {}, {}};
      const std::span<const double> own = x.subspan(block.begin, block.size());
      question.x_block.assign(own.begin(), own.end());
      if (!eligible.empty()) {
        const std::span<const uint8_t> held = eligible.subspan(block.begin, block.size());
        question.eligible.assign(held.begin(), held.end());
      }
      requests[b].round = next_round_;
      requests[b].kind = RoundKind::kColumnStep;
      requests[b].z = derivatives;
      requests[b].query = SharedVector(EncodeBlockRound(question));
    }
    ++next_round_;
    Stopwatch wait;
    std::vector<WorkerReply> replies = executor_.RunRound(requests, Deadline::After(round_timeout_seconds_));
    summary_.wait_seconds += wait.ElapsedSeconds();
    summary_.rounds = static_cast<int>(next_round_);
    for (const WorkerReply& reply : replies) {
      if (reply.status != ReplyStatus::kOk) {
        return Unavailable("worker " + std::to_string(reply.worker) + " " + ReplyStatusName(reply.status) +
                           " in round " + std::to_string(reply.round) + " (column-step): " + reply.error);
      }
      summary_.worker_compute_seconds += reply.timings.compute_seconds;
    }
    return replies;
  }

  Executor& executor_;
  std::vector<BlockRange> blocks_;
  int64_t nnz_, rows_;
  double round_timeout_seconds_;
  Summary& summary_;
  std::shared_ptr<WorkerRound> last_round_;
  int64_t next_round_ = 0;
};

// The plan's rows as `blocks`' column blocks, a worker's each (Plan::column_blocks; the columns
// at their positions in the blocks' order when it is not theirs), refused if a block's worker
// would not fit in its memory.
Result<Plan> ColumnLayoutOf(const Plan& plan, const SolveOptions& options, const MasterChoice& choice,
                            const ColumnLayout& blocks) {
  if (plan.workers > plan.spec.cols) {
    return InvalidArgument("--algorithm columns: " + std::to_string(plan.workers) + " workers for " +
                           std::to_string(plan.spec.cols) + " columns (a block of columns each)");
  }
  Plan layout = plan;
  if (!blocks.order.empty()) layout.column_position = blocks.PositionOf();
  for (int b = 0; b < blocks.blocks(); ++b) layout.column_blocks.emplace_back(blocks.cuts[b], blocks.cuts[b + 1]);
  NIMBUS_RETURN_IF_ERROR(CheckPlanFits(layout, options, choice));
  return layout;
}

// The layout's blocks, the last holding the intercept (if any).
std::vector<BlockRange> BlockRangesOf(const Plan& layout) {
  std::vector<BlockRange> blocks;
  for (const auto& [begin, end] : layout.column_blocks) {
    blocks.push_back({begin, end, layout.spec.intercept && blocks.size() + 1 == layout.column_blocks.size()});
  }
  return blocks;
}

// The method with the layout's blocks stepped on `executor`'s workers, started here (their
// counters into `run`; the caller stops them).
Result<ColumnDescentResult> SolveOnExecutor(const Plan& layout, const SolveOptions& options,
                                            const ColumnDescentOptions& columns, Executor& executor,
                                            std::shared_ptr<WorkerRound> last_round, Summary& run) {
  NIMBUS_RETURN_IF_ERROR(StartWorkers(executor, layout.spec, options.admm.start_timeout_seconds, run).status());
  WorkerBlockStepper stepper(executor, BlockRangesOf(layout), layout.data->nnz(), layout.spec.rows,
                             NewtonOptionsOf(options).round_timeout_seconds, run, std::move(last_round));
  return SolveByColumns(layout.spec, layout.data->labels, layout.data->weights, stepper, columns);
}

// The method with its blocks stepped on the options' runtime, a worker each for the layout's
// blocks; the runtime's counters into `run`.
Result<ColumnDescentResult> SolveOnWorkers(const Plan& layout, const SolveOptions& options,
                                           const ColumnDescentOptions& columns, TraceSink* trace,
                                           std::shared_ptr<WorkerRound> last_round, Summary& run) {
  NIMBUS_ASSIGN_OR_RETURN(Runtime runtime, MakeRuntime(options.runtime, layout, ColumnWorkerOptionsOf(options)));
  if (runtime.remote != nullptr && trace != nullptr) runtime.remote->SetTraceSink(trace);
  Executor& executor = *runtime.executor;
  Result<ColumnDescentResult> solved = SolveOnExecutor(layout, options, columns, executor, std::move(last_round), run);
  executor.Stop();
  executor.AddCounters(run);
  return solved;
}

}  // namespace

std::string ChooseColumnsHere(const TrainingData& data, int copies, std::string reason, SolveOptions& solve) {
  if (solve.algorithm != Algorithm::kAuto || solve.runtime.kind != RuntimeKind::kThreads ||
      !solve.algorithm_profiles.empty() || solve.checkpoint.resume != nullptr) {
    return "";
  }
  SolveOptions columns = solve;
  columns.algorithm = Algorithm::kColumns;
  columns.runtime.workers = 1;
  if (!columns.ValidateColumns().ok()) return "";
  // The data's bytes in memory: 12 a stored entry; a file's text takes at least as many, and
  // compressed text up to about ten times its size (a list of files or a directory: not here).
  std::error_code error;
  const std::string& location = data.location();
  const bool compressed = location.ends_with(".gz") || location.ends_with(".zst") || location.ends_with(".xz");
  const uintmax_t bytes = data.in_memory() ? static_cast<uintmax_t>(data.matrix().nnz()) * 12
                                           : std::filesystem::file_size(location, error) * (compressed ? 10 : 1);
  const double memory = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
  if (error || !(static_cast<double>(bytes) * copies <= memory / 2)) return "";
  solve = columns;
  return reason;
}

std::string ChooseColumnsWithIntercept(const TrainingData& data, std::string reason, SolveOptions& solve) {
  if (!solve.intercept || !(solve.loss == Loss::kLogistic) || solve.runtime.workers != 0) return "";
  return ChooseColumnsHere(data, 4, std::move(reason), solve);
}

WorkerOptions ColumnWorkerOptionsOf(const SolveOptions& options) {
  WorkerOptions worker = WorkerOptionsOf(options);
  worker.general_form = false;  // a worker's vectors follow its rows and block, not the model
  return worker;
}

Result<Plan> ColumnLayoutFor(const Plan& plan, const SolveOptions& options, const MasterChoice& choice) {
  NIMBUS_RETURN_IF_ERROR(CheckColumnsPlan(plan));
  NIMBUS_ASSIGN_OR_RETURN(const ColumnLayout blocks, BlockLayoutOf(plan, options.column_blocks));
  return ColumnLayoutOf(plan, options, choice, blocks);
}

Result<Solution> SolveByColumnsOn(const Plan& layout, const SolveOptions& options, const MasterChoice& choice,
                                  Executor& executor) {
  Stopwatch watch;
  ColumnDescentOptions columns = ObservedOptionsOf(layout, options, watch);
  Summary run;
  NIMBUS_ASSIGN_OR_RETURN(ColumnDescentResult solved, SolveOnExecutor(layout, options, columns, executor,
                                                                      std::make_shared<WorkerRound>(), run));
  executor.AddCounters(run);
  const double seconds = watch.ElapsedSeconds() - run.setup_seconds;
  return SolutionOf(layout, choice, std::move(solved.x), solved.summary, options, seconds, std::move(run));
}

Result<SolveResult> SolveByColumnsHere(const Plan& plan, const SolveOptions& options, const MasterChoice& choice) {
  NIMBUS_RETURN_IF_ERROR(CheckColumnsPlan(plan));
  const std::unique_ptr<TraceSink> trace = TraceSinkOf(options);
  const RuntimeKind runtime = options.runtime.kind;
  NIMBUS_ASSIGN_OR_RETURN(ColumnLayout blocks, BlockLayoutOf(plan, options.column_blocks));
  std::optional<Plan> layout;  // on workers: a block of columns each
  if (runtime != RuntimeKind::kThreads) {
    NIMBUS_ASSIGN_OR_RETURN(layout, ColumnLayoutOf(plan, options, choice, blocks));
  }
  if (options.on_start) {
    NIMBUS_RETURN_IF_ERROR(options.on_start(SolveStart{plan.spec, SourceCols(plan), plan.workers,
                                                       std::string(NameOf(runtime)), choice.algorithm, choice.reason}));
  }
  Stopwatch watch;
  ColumnDescentOptions columns = ObservedOptionsOf(plan, options, watch);
  columns.layout = std::move(blocks);
  Summary run;  // the checkpoints, and a runtime's counters
  NIMBUS_RETURN_IF_ERROR(SetCheckpoints(plan, options, columns, run));
  InjectDelay(options, columns);
  const auto last_round = std::make_shared<WorkerRound>();
  const RoundTracer trace_round = TraceIterations(trace.get(), plan, runtime, columns, watch, last_round);
  const Dataset& data = *plan.data;
  NIMBUS_ASSIGN_OR_RETURN(ColumnDescentResult solved,
                          runtime == RuntimeKind::kThreads
                              ? SolveByColumns(plan.spec, data.matrix, data.labels, data.weights, columns)
                              : SolveOnWorkers(*layout, options, columns, trace.get(), last_round, run));
  if (trace_round && last_round->round >= 0) trace_round(solved.summary);
  const double seconds = watch.ElapsedSeconds() - run.setup_seconds;
  Solution solution = SolutionOf(plan, choice, std::move(solved.x), solved.summary, options, seconds, std::move(run));
  if (trace != nullptr) trace->Write(TraceLine(solution.summary));
  return ResultOf(plan, options, std::move(solution));
}

Result<GridOutcome> SolveGridByColumns(const Plan& plan, const SolveOptions& options, const PathOptions& path,
                                       double load_seconds, const std::string& reason,
                                       const std::function<Status(double lambda, Solution solution)>& point) {
  NIMBUS_RETURN_IF_ERROR(CheckColumnsPathPlan(plan, options));
  MasterChoice choice = ChooseMaster(options);
  if (!reason.empty()) choice.reason = reason;
  const Dataset& data = *plan.data;
  Stopwatch watch;
  NIMBUS_ASSIGN_OR_RETURN(ColumnPath solver, ColumnPath::Start(plan.spec, data.matrix, data.labels, data.weights,
                                                               {ObservedOptionsOf(plan, options, watch), true, {}}));
  GridOutcome outcome;
  outcome.lambda_max = solver.l1_max();
  NIMBUS_RETURN_IF_ERROR(CheckLambdaMax(outcome.lambda_max));
  const double start_seconds = watch.ElapsedSeconds();
  for (const double l1 : PathGrid(path, outcome.lambda_max, plan.spec.rows)) {
    NIMBUS_ASSIGN_OR_RETURN(const ColumnPathPoint solved, solver.Next(l1));
    const double seconds = watch.ElapsedSeconds();
    watch = Stopwatch();
    NIMBUS_RETURN_IF_ERROR(point(l1, SolutionOf(plan, choice, solved.x, solved.summary, options, seconds)));
    if (solved.summary.stopped) break;
  }
  outcome.cost_dollars = CostOfGrid(plan, options, load_seconds, start_seconds);
  return outcome;
}

Result<GridOutcome> SolveFoldsByColumns(const Plan& plan, const SolveOptions& options, const PathOptions& path,
                                        double load_seconds, std::span<const uint8_t> fold_of_rows, int64_t folds,
                                        const std::string& reason,
                                        const std::function<Status(double lambda, FoldSolutions solutions)>& point) {
  NIMBUS_RETURN_IF_ERROR(CheckColumnsPathPlan(plan, options));
  MasterChoice choice = ChooseMaster(options);
  if (!reason.empty()) choice.reason = reason;
  Stopwatch watch;
  const int cores = static_cast<int>(std::max(std::thread::hardware_concurrency(), 1u));
  NIMBUS_ASSIGN_OR_RETURN(std::vector<ColumnPath> paths, StartFoldPaths(plan, options, fold_of_rows, folds, cores));
  GridOutcome outcome;
  // The largest of the paths' own, as the copies of the other methods' cross-validation have it:
  // at its first point no path has a weight.
  for (const ColumnPath& solver : paths) outcome.lambda_max = std::max(outcome.lambda_max, solver.l1_max());
  NIMBUS_RETURN_IF_ERROR(CheckLambdaMax(outcome.lambda_max));
  const double start_seconds = watch.ElapsedSeconds();
  watch = Stopwatch();
  // A point's seconds: from the last point's emission to its own (the paths run on between).
  const std::vector<double> grid = PathGrid(path, outcome.lambda_max, plan.spec.rows);
  NIMBUS_RETURN_IF_ERROR(StepPathsAlongGrid(paths, grid, cores, [&](double l1, std::vector<ColumnPathPoint> solved) {
    FoldSolutions solutions;
    ColumnPathPoint& whole = solved.back();
    for (std::size_t k = 0; k + 1 < solved.size(); ++k) {
      solutions.folds.push_back(std::move(solved[k].x));
      AddWork(solved[k].summary, whole.summary);
    }
    solutions.whole = SolutionOf(plan, choice, std::move(whole.x), whole.summary, options, watch.ElapsedSeconds());
    watch = Stopwatch();
    return point(l1, std::move(solutions));
  }));
  outcome.cost_dollars = CostOfGrid(plan, options, load_seconds, start_seconds);
  return outcome;
}

}  // namespace nimbus
