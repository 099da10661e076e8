// The facade: Solve is the steps of api/plan.h in order, with every option checked first.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

#include "api/testing.h"
#include "nimbus/api/plan.h"
#include "nimbus/checkpoint/checkpoint.h"
#include "nimbus/cloud/s3.h"
#include "nimbus/core/args.h"
#include "nimbus/core/clock.h"
#include "nimbus/core/format.h"
#include "nimbus/nimbus.h"
#include "nimbus/runtime/worker_process.h"
#ifdef NIMBUS_HAVE_MPI
#include "nimbus/solve/admm/admm_master.h"
#include "nimbus/mpi/mpi_runtime.h"
#endif

namespace nimbus {

TrainingData TrainingData::LibsvmFile(std::string path) {
  TrainingData data;
  data.location_ = std::move(path);
  return data;
}

TrainingData TrainingData::Store(std::string location) {
  TrainingData data;
  data.location_ = std::move(location);
  data.store_ = true;
  return data;
}

TrainingData TrainingData::At(std::string location) {
  // What the location holds (shards, or text) is found when the data is planned.
  return LibsvmFile(std::move(location));
}

TrainingData TrainingData::Csr(CsrView matrix, std::span<const double> labels) {
  TrainingData data;
  data.in_memory_ = true;
  data.matrix_ = matrix;
  data.labels_ = labels;
  return data;
}

TrainingData TrainingData::HeldByWorkers(std::vector<std::string> part_keys) {
  TrainingData data;
  data.location_ = "held parts";
  data.held_parts_ = std::move(part_keys);
  return data;
}

TrainingData TrainingData::WithSampleWeights(std::string file) && {
  sample_weights_file_ = std::move(file);
  return std::move(*this);
}

TrainingData TrainingData::WithSampleWeights(std::span<const double> weights) && {
  sample_weights_ = weights;
  return std::move(*this);
}

bool RuntimeAvailable(RuntimeKind kind) {
  switch (kind) {
    case RuntimeKind::kThreads:
    case RuntimeKind::kProcess:
    case RuntimeKind::kCommand: return true;
#ifdef NIMBUS_HAVE_AWS
    case RuntimeKind::kLambda: return true;
#endif
#ifdef NIMBUS_HAVE_MPI
    case RuntimeKind::kMpi: return true;
#endif
    default: return false;
  }
}

Status RuntimeOptions::Validate() const {
  if (!RuntimeAvailable(kind)) {
    std::string available;
    for (const auto& [runtime, name] : ChoiceNames<RuntimeKind>::names) {
      if (RuntimeAvailable(runtime)) available += (available.empty() ? "" : ", ") + std::string(name);
    }
    return InvalidArgument("--runtime: '" + std::string(NameOf(kind)) + "' is not available (this build has: " +
                           available + ")");
  }
  if (workers < 0 || workers > 4096) return InvalidArgument("--workers: must be in [1, 4096]");
  if (topology == Topology::kAllreduce && kind != RuntimeKind::kMpi) {
    return InvalidArgument("--topology allreduce: only for --runtime mpi");
  }
  if (start_worker) {
    if (kind != RuntimeKind::kCommand || !launch.empty() || relays > 0) {
      return InvalidArgument("start_worker: starts the command runtime's workers in place of --launch (and no relays)");
    }
    return Status::Ok();
  }
  if (kind == RuntimeKind::kCommand && launch.empty()) {
    return InvalidArgument("--runtime command: needs --launch 'COMMAND ... {args}'");
  }
  if (kind == RuntimeKind::kCommand && launch.find("{args}") == std::string::npos) {
    return InvalidArgument("--launch: the template must contain {args}, where the worker's arguments go");
  }
  if (kind == RuntimeKind::kLambda && lambda_function.empty()) {
    return InvalidArgument("--runtime lambda: needs --lambda-function NAME");
  }
  if (!(worker_memory_mb >= -1)) return InvalidArgument("--worker-memory-mb: must be >= 0");
  return ValidateRelays();
}

Status RuntimeOptions::ValidateRelays() const {
  if (relays < 0 || relay_fanout < 0) return InvalidArgument("--relays and --relay-fanout: must be >= 0");
  if (relay_fanout == 1) return InvalidArgument("--relay-fanout: a relay of one worker sums nothing: give 2 or more");
  if (relays == 0) {
    if (relay_fanout > 0) return InvalidArgument("--relay-fanout: needs --relays R");
    return Status::Ok();
  }
  if (kind != RuntimeKind::kProcess && kind != RuntimeKind::kCommand) {
    return InvalidArgument("--relays: relays are processes the master starts: --runtime process or command, not " +
                           std::string(NameOf(kind)));
  }
  if (relay_workers != RuntimeKind::kProcess && relay_workers != RuntimeKind::kThreads &&
      relay_workers != RuntimeKind::kCommand) {
    return InvalidArgument("--relay-workers: a relay runs its workers as process, threads or command, not " +
                           std::string(NameOf(relay_workers)));
  }
  if (kind != RuntimeKind::kCommand && (relay_workers == RuntimeKind::kCommand || !relay_hosts.empty())) {
    return InvalidArgument("--relay-workers command and --relay-hosts: the relays and their workers start by "
                           "--launch: give --runtime command");
  }
  if (relay_workers == RuntimeKind::kCommand && relay_hosts.empty()) {
    return InvalidArgument("--relay-workers command: give --relay-hosts, the hosts the relays run on (--hosts "
                           "are their workers')");
  }
  if (workers > 0 && relays > workers) {
    return InvalidArgument("--relays: " + std::to_string(relays) + " relays for " + std::to_string(workers) +
                           " workers: give at most --workers");
  }
  return Status::Ok();
}

Result<ClassWeights> ClassWeights::Parse(const std::string& text) {
  ClassWeights weights;
  if (text == "balanced") {
    weights.balanced = true;
    return weights;
  }
  for (const std::string& item : SplitList(text)) {
    const auto equals = item.find('=');
    const std::string_view text = item;
    const std::optional<double> label = equals == std::string::npos ? std::nullopt : ParseReal(text.substr(0, equals));
    const std::optional<double> weight = equals == std::string::npos ? std::nullopt : ParseReal(text.substr(equals + 1));
    if (!label || !weight) {
      return InvalidArgument("--class-weight: '" + item + "' is not LABEL=WEIGHT (e.g. --class-weight 1=5,-1=0.5, "
                             "or --class-weight balanced)");
    }
    if (!weights.by_label.emplace(*label, *weight).second) {
      return InvalidArgument("--class-weight: label " + FormatLabel(*label) + " is given twice");
    }
  }
  if (weights.by_label.empty()) return InvalidArgument("--class-weight: LABEL=W[,LABEL=W...] or balanced");
  return weights;
}

Status ClassWeights::Validate() const {
  for (const auto& [label, weight] : by_label) {
    if (!(weight >= 0) || !std::isfinite(weight) || !std::isfinite(label)) {
      return InvalidArgument("--class-weight: the weight of label " + FormatLabel(label) +
                             " must be a finite number >= 0");
    }
  }
  return Status::Ok();
}

// The column method runs in this process on the rows it holds (api/columns_solve.cpp): what the
// runtimes' workers and Newton's and ADMM's masters add is not there yet.
Status SolveOptions::ValidateColumns() const {
  if (algorithm != Algorithm::kColumns) {
    if (column_blocks == ColumnBlocks::kAuto) return Status::Ok();
    return InvalidArgument("--column-blocks: the column method's blocks (--algorithm columns)");
  }
  const std::string columns = "--algorithm columns: ";
  if (runtime.kind == RuntimeKind::kMpi && runtime.topology == Topology::kAllreduce) {
    return InvalidArgument(columns + "its workers send their blocks' steps to a master (--topology star), not "
                                     "--topology allreduce");
  }
  if (regularizer != nullptr) return InvalidArgument(columns + "l1 and l2 only, not a program's own regularizer");
  if (multiclass == Multiclass::kMultinomial) {
    return InvalidArgument(columns + "one-vs-rest only (--multiclass ovr), not the softmax");
  }
  if (admm.barrier != 0 || runtime.relays > 0) {
    return InvalidArgument(columns + "not with --barrier or --relays (ADMM's and Newton's)");
  }
  if (warm_start != nullptr) return InvalidArgument(columns + "it starts from zero (no --warm-start yet)");
  return Status::Ok();
}

Status SolveOptions::Validate() const {
  NIMBUS_RETURN_IF_ERROR(runtime.Validate());
  NIMBUS_RETURN_IF_ERROR(class_weights.Validate());
  if (!(liblinear_c >= 0) || !std::isfinite(liblinear_c)) {
    return InvalidArgument("liblinear_c: must be a finite number >= 0 (0: l1 and l2 as given)");
  }
  if (liblinear_c > 0 && regularizer != nullptr) {
    return InvalidArgument("liblinear_c: scales l1 and l2, not a program's own regularizer");
  }
  if (multiclass == Multiclass::kMultinomial && !(loss == Loss::kLogistic)) {
    return InvalidArgument(std::string("--multiclass multinomial: the softmax loss generalizes the logistic loss, not '") +
                           LossName(loss) + "' (one-vs-rest takes any classification loss)");
  }
  const bool allreduce = runtime.topology == Topology::kAllreduce;
  const bool lean = admm.message_precision == MessagePrecision::kFloat32;
  if (algorithm == Algorithm::kNewton && (admm.barrier != 0 || allreduce)) {
    return InvalidArgument("--algorithm newton: not with --barrier or --topology allreduce (ADMM's)");
  }
  NIMBUS_RETURN_IF_ERROR(ValidateColumns());
  if (!algorithm_profiles.empty() && algorithm != Algorithm::kAuto) {
    return InvalidArgument("--algorithm-profiles: for --algorithm auto, which chooses by them");
  }
  if (runtime.relays > 0 && (algorithm == Algorithm::kAdmm || admm.barrier != 0)) {
    return InvalidArgument("--relays: relays sum Newton's rounds; ADMM's (--algorithm admm, --barrier) are not "
                           "relayed yet");
  }
  if (regularizer != nullptr && allreduce) {
    return InvalidArgument("--topology allreduce: every rank applies the regularizer, and ranks know only l1 and l2");
  }
  if (lean && (runtime.kind == RuntimeKind::kThreads || allreduce)) {
    return InvalidArgument("--message-precision float32: only where messages cross a wire "
                           "(--runtime process, command, lambda, or mpi with the star topology)");
  }
  if (allreduce && admm.barrier != 0) {
    return InvalidArgument("--barrier: with --topology allreduce every rank waits for all");
  }
  if (!checkpoint.location.empty()) {
    if (checkpoint.every < 1) return InvalidArgument("--checkpoint-every: must be >= 1");
    if (runtime.kind == RuntimeKind::kMpi) {
      return InvalidArgument("--checkpoint: not with --runtime mpi (an MPI job lives and dies as a whole; its ranks "
                             "cannot be resumed one by one)");
    }
    if (admm.barrier != 0) return InvalidArgument("--checkpoint: needs synchronous rounds (--barrier all)");
  }
  if (checkpoint.resume && checkpoint.location.empty()) {
    return InvalidArgument("--resume: needs --checkpoint DIR|s3://BUCKET/PREFIX, where the run writes its checkpoints");
  }
  if (warm_start != nullptr && allreduce) {
    return InvalidArgument("--warm-start: not with --topology allreduce (every rank would need the model)");
  }
  NIMBUS_RETURN_IF_ERROR(admm.Validate());
  NIMBUS_RETURN_IF_ERROR(NewtonOptionsOf(*this).Validate());
  NIMBUS_RETURN_IF_ERROR(WorkerOptionsOf(*this).Validate());
  return prices.Validate();
}

NewtonOptions NewtonOptionsOf(const SolveOptions& options) {
  NewtonOptions newton;
  newton.gradient_tolerance = options.gradient_tolerance;
  newton.max_iterations = options.admm.max_iterations;
  newton.target_objective = options.admm.target_objective;
  newton.round_timeout_seconds = options.admm.round_timeout_seconds;
  newton.start_timeout_seconds = options.admm.start_timeout_seconds;
  newton.lean_products = options.admm.message_precision == MessagePrecision::kFloat32;
  return newton;
}

WorkerOptions WorkerOptionsOf(const SolveOptions& options) {
  WorkerOptions worker;
  worker.solver = options.local_solver;
  worker.general_form = options.consensus == ConsensusForm::kGeneral;
  if (options.test_hooks != nullptr) worker.faults = options.test_hooks->faults;
  return worker;
}

Model ModelOf(const Plan& plan, std::vector<double> weights) {
  Model model;
  model.loss = plan.spec.loss;
  model.regularizer = plan.spec.regularizer;
  model.intercept = plan.spec.intercept;
  model.cols = plan.spec.cols;
  if (plan.columns.renumbered()) {
    model.cols = plan.columns.source_cols;
    model.features = *plan.columns.features;
  }
  model.labels = plan.labels;
  model.classes = plan.spec.classes;
  model.multinomial = plan.spec.multinomial;
  model.weights = std::move(weights);
  return model;
}

int64_t SourceCols(const Plan& plan) { return plan.columns.renumbered() ? plan.columns.source_cols : plan.spec.cols; }

namespace {

// on_trace as the masters' and executors' trace sink.
class CallbackTraceSink final : public TraceSink {
 public:
  explicit CallbackTraceSink(std::function<void(std::string_view)> callback) : callback_(std::move(callback)) {}
  void Write(std::string_view json_object) override { callback_(json_object); }

 private:
  std::function<void(std::string_view)> callback_;
};

}  // namespace

std::unique_ptr<TraceSink> TraceSinkOf(const SolveOptions& options) {
  if (!options.on_trace) return nullptr;
  return std::make_unique<CallbackTraceSink>(options.on_trace);
}

Status CheckPlanFits(const Plan& plan, const SolveOptions& options, const MasterChoice& master) {
  const RuntimeOptions& runtime = options.runtime;
  const double limit_mb = runtime.worker_memory_mb >= 0             ? runtime.worker_memory_mb
                          : runtime.kind == RuntimeKind::kLambda ? options.prices.function_memory_gb * 1000
                                                                 : 0;
  const bool working_columns = master.algorithm == Algorithm::kNewton && plan.spec.regularizer.l1 > 0;
  // (The column method's workers hold the dense form.)
  const bool general_form = options.consensus == ConsensusForm::kGeneral && plan.column_blocks.empty();
  NIMBUS_RETURN_IF_ERROR(CheckWorkerMemory(plan, general_form, working_columns, limit_mb));
  if (options.admm.barrier > plan.workers) {
    return InvalidArgument("--barrier: " + std::to_string(options.admm.barrier) + " of " +
                           std::to_string(plan.workers) + " workers");
  }
  return Status::Ok();
}

std::unique_ptr<Master> MakeMaster(const ProblemSpec& spec, const MasterChoice& choice, const SolveOptions& options,
                                   Executor* executor, TraceSink* trace) {
  std::unique_ptr<Master> master = choice.Make(spec, executor);
  if (trace != nullptr) master->SetTraceSink(trace);
  if (options.on_iteration) master->SetIterationCallback(options.on_iteration);
  return master;
}

SolveResult ResultOf(const Plan& plan, const SolveOptions& options, Solution solution) {
  SolveResult result;
  result.summary = std::move(solution.summary);
  result.summary.load_seconds = plan.load_seconds;
  result.summary.cols = SourceCols(plan);
  if (options.runtime.relays > 0) {  // the master's executor counted the relays as its workers
    result.summary.relays = static_cast<int>(options.runtime.relays);
    result.summary.workers = plan.workers;
  }
  AddCostEstimate(options.prices, plan, &result.summary);
  result.model = ModelOf(plan, std::move(solution.model));
  return result;
}

Result<CheckpointWriter> CheckpointWriterOf(const SolveOptions& options) {
  const CheckpointOptions& checkpoint = options.checkpoint;
  if (checkpoint.location.empty()) return CheckpointWriter();
  Result<std::unique_ptr<Store>> opened = OpenAnyStore(checkpoint.location, /*create=*/true);
  if (!opened.ok()) return opened.status().WithContext("--checkpoint");
  std::shared_ptr<Store> store = std::move(opened).value();
  const Checkpoint kept{MasterState{}, checkpoint.run_arguments, checkpoint.working_directory};
  return CheckpointWriter([store, kept](const MasterState& state) {
    Checkpoint written = kept;
    written.state = state;
    Status status = WriteCheckpoint(*store, written);
    if (!status.ok()) {
      std::fprintf(stderr, "\nnimbus: warning: %s (the run goes on; the previous checkpoint stays)\n",
                   status.message().c_str());
    }
    return status;
  });
}

namespace {

// Checkpoints every `every` rounds into the store at `location`; a failed write is reported
// through the trace and the summary, and the run goes on with the previous checkpoint.
Status SetCheckpointing(const SolveOptions& options, Master* master) {
  NIMBUS_ASSIGN_OR_RETURN(CheckpointWriter writer, CheckpointWriterOf(options));
  if (!writer) return Status::Ok();
  master->SetCheckpointWriter(static_cast<int>(options.checkpoint.every), std::move(writer));
  if (options.checkpoint.resume) master->ResumeFrom(*options.checkpoint.resume);
  return Status::Ok();
}

// A start from the caller's model: its weights of the plan's columns. The model must have
// the plan's classes, so that its class k is the data's.
Status SetWarmStart(const Plan& plan, const SolveOptions& options, Master* master) {
  if (options.warm_start == nullptr) return Status::Ok();
  const Model& model = *options.warm_start;
  if (model.classes != plan.spec.classes || model.labels.ClassValues() != plan.labels.ClassValues()) {
    return InvalidArgument("--warm-start: the model is of " + model.labels.Describe() + " (" +
                           std::to_string(model.classes) + " weight vectors), the data of " + plan.labels.Describe() +
                           " (" + std::to_string(plan.spec.classes) + ")");
  }
  WarmStart warm;
  warm.x = model.ColumnWeights(plan.columns, plan.spec.cols, plan.spec.intercept);
  warm.reference_at_zero = true;
  master->WarmStartFrom(std::move(warm));
  return Status::Ok();
}

// The solve on a planned problem: this process is the master (rank 0 under mpirun).
// `auto_reason`: why auto chose the options' algorithm before planning (empty: it did not).
Result<SolveResult> SolvePlanned(const Plan& plan, const SolveOptions& options, const std::string& auto_reason = "") {
  NIMBUS_ASSIGN_OR_RETURN(MasterChoice choice, ChooseMasterFor(plan, options));
  if (!auto_reason.empty()) choice.reason = auto_reason;
  if (choice.algorithm == Algorithm::kColumns) return SolveByColumnsHere(plan, options, choice);
  NIMBUS_RETURN_IF_ERROR(CheckPlanFits(plan, options, choice));
  const std::unique_ptr<TraceSink> trace = TraceSinkOf(options);
  NIMBUS_ASSIGN_OR_RETURN(Runtime runtime, MakeRuntime(options.runtime, plan, WorkerOptionsOf(options)));
  if (runtime.remote != nullptr && trace) runtime.remote->SetTraceSink(trace.get());
  std::unique_ptr<Master> master = MakeMaster(plan.spec, choice, options, runtime.executor.get(), trace.get());
  NIMBUS_RETURN_IF_ERROR(SetCheckpointing(options, master.get()));
  NIMBUS_RETURN_IF_ERROR(SetWarmStart(plan, options, master.get()));
  if (options.on_start) {
    NIMBUS_RETURN_IF_ERROR(options.on_start(SolveStart{plan.spec, SourceCols(plan), plan.workers,
                                                       runtime.executor->name(), choice.algorithm, choice.reason}));
  }
  NIMBUS_ASSIGN_OR_RETURN(Solution solution, master->Solve());
  return ResultOf(plan, options, std::move(solution));
}

}  // namespace

#ifdef NIMBUS_HAVE_MPI
namespace {

// Under mpirun every rank runs Solve. An error ends the whole job (the other ranks would wait
// for rank 0 forever): it is printed, and the job aborts with the exit code.
[[noreturn]] void AbortJob(MpiSession& mpi, const Status& status) {
  mpi.Abort(ReportError("train", status));
}

// Ranks 1..K-1 of the allreduce topology run the master's logic alongside rank 0 on the same
// numbers; rank 0 reports. Should rank 0 not end the job on an error it met too, this rank does.
int RunAllreduceRank(MpiSession& mpi, const AdmmOptions& admm, uint64_t run_id) {
  Result<AssignBody> assignment = ReceiveAllreduceAssignment(run_id, Deadline::After(24 * 3600));
  // Text: this rank reads its part, and rank 0 plans from every rank's scan.
  Result<std::optional<TextPartRows>> rows =
      assignment.ok() ? AwaitAllreducePlan(mpi.rank(), run_id, &*assignment, Deadline::After(24 * 3600))
                      : Result<std::optional<TextPartRows>>(assignment.status());
  Result<ProblemSpec> spec = rows.ok() ? AssignedSpec(*assignment) : Result<ProblemSpec>(rows.status());
  Result<Solution> solution = spec.status();
  if (spec.ok()) {
    MpiAllreduceExecutor executor(mpi.rank(), mpi.size(), *assignment, run_id, std::move(rows).value());
    solution = AdmmMaster(*spec, admm, &executor).Solve();
  }
  if (!solution.ok() && solution.status().message() == kJobEnded) {
    mpi.EndNormally();  // rank 0 ended the job and reports why
    return kWorkerDone;
  }
  if (!solution.ok()) {
    std::this_thread::sleep_for(std::chrono::seconds(20));
    AbortJob(mpi, solution.status());
  }
  mpi.EndNormally();
  return solution->summary.ok() ? 0 : 1;
}

Result<SolveResult> SolveUnderMpi(const TrainingData& data, SolveOptions options) {
  NIMBUS_ASSIGN_OR_RETURN(std::unique_ptr<MpiSession> mpi, MpiSession::Start(nullptr, nullptr));
  options.runtime.run_id = mpi->ShareRunId();
  const bool allreduce = options.runtime.topology == Topology::kAllreduce;
  const int64_t ranks_needed = options.runtime.workers == 0 ? 0 : options.runtime.workers + (allreduce ? 0 : 1);
  if (ranks_needed != 0 && ranks_needed != mpi->size()) {
    AbortJob(*mpi, InvalidArgument("--workers " + std::to_string(options.runtime.workers) + " needs mpirun -n " +
                                   std::to_string(ranks_needed) + "; this job has " + std::to_string(mpi->size()) +
                                   " ranks"));
  }
  if (!allreduce && mpi->size() < 2) {
    AbortJob(*mpi, InvalidArgument("--runtime mpi: start it as mpirun -n K+1 (a master and K workers), or with "
                                   "--topology allreduce as mpirun -n K"));
  }
  options.runtime.workers = allreduce ? mpi->size() : mpi->size() - 1;
  if (mpi->rank() > 0) {
    SolveResult worker;
    worker.mpi_worker_rank = true;
    if (allreduce) {
      worker.mpi_worker_exit_code = RunAllreduceRank(*mpi, options.admm, options.runtime.run_id);
    } else {
      worker.mpi_worker_exit_code = RunMpiWorker(mpi->rank(), options.runtime.run_id, WallSeconds());
      if (worker.mpi_worker_exit_code == kWorkerDone) mpi->EndNormally();
    }
    return worker;
  }
  Result<Plan> plan = options.algorithm == Algorithm::kColumns
                         ? PlanDataInMemory(data, options.runtime.workers, options.loss)
                         : PlanData(data, options.runtime.workers, options.loss);
  Status planned = plan.ok() ? ScanData(*plan, options) : plan.status();
  if (planned.ok()) planned = SetProblem(options, &*plan);
  Result<SolveResult> result = planned.ok() ? SolvePlanned(*plan, options) : Result<SolveResult>(planned);
  if (!result.ok() && mpi->size() > 1) {
    TellEveryRankTheJobEnds(options.runtime.run_id, mpi->size(), allreduce, result.status().message());
  }
  mpi->EndNormally();  // the workers have had their BYE (the job's status is this rank's)
  return result;
}

}  // namespace
#endif

// The column method holds the rows here, in one block unless --workers asks for more (one
// block's coordinate descent sees every column's progress at once: Debian L1 1e-6, 40 rounds,
// 2 blocks 173; docs/evaluation.md).
int64_t PlannedWorkers(const SolveOptions& options) {
  const bool columns = options.algorithm == Algorithm::kColumns;
  return columns && options.runtime.workers == 0 ? 1 : options.runtime.workers;
}

// auto's rule for one l1 problem with an intercept (binary, logistic) on this process's threads,
// --workers not given: the column method, one block, when 4 copies of the data fit in half the
// memory (a path by columns peaked at 1.9-2.5 times its file). docs/benchmarks.md ("auto chooses
// the column method"): to F*(1 + 1e-4) it took 0.30-0.60x of Newton's time on 2 workers on
// Debian packages, Fashion-MNIST and Zipf text at both of their l1 strengths but Zipf's strong
// one (1.5x: 0.81 s against 0.53 s). Without an intercept Newton stays: there, on dense
// pixels, the columns' shared offset has no intercept to take it (Fashion-MNIST's path: 2.9x).
namespace {
std::string ChooseColumnsToTrain(const TrainingData& data, SolveOptions& solve) {
  if (!(solve.l1.value_or(0) > 0)) return "";
  return ChooseColumnsWithIntercept(data, "auto: l1 with an intercept on this process's threads, one block of columns",
                                    solve);
}
}  // namespace

Result<SolveResult> Solve(const TrainingData& data, const SolveOptions& options) {
  NIMBUS_RETURN_IF_ERROR(options.Validate());
  NIMBUS_RETURN_IF_ERROR(ValidateHeldParts(data, options));
#ifdef NIMBUS_HAVE_MPI
  if (options.runtime.kind == RuntimeKind::kMpi) return SolveUnderMpi(data, options);
#endif
  SolveOptions chosen = options;
  const std::string reason = ChooseColumnsToTrain(data, chosen);
  const int64_t workers = PlannedWorkers(chosen);
  const bool rows_here = chosen.algorithm == Algorithm::kColumns || ProfilesMayChooseColumns(chosen);
  NIMBUS_ASSIGN_OR_RETURN(Plan plan, rows_here ? PlanDataInMemory(data, workers, chosen.loss)
                                               : PlanData(data, workers, chosen.loss));
  NIMBUS_RETURN_IF_ERROR(ScanData(plan, chosen));
  NIMBUS_RETURN_IF_ERROR(SetProblem(chosen, &plan));
  if (!reason.empty() && plan.spec.classes > 1) {  // measured on binary problems: classes stay Newton's
    NIMBUS_RETURN_IF_ERROR(RepartitionForDefaultWorkers(plan));
    return SolvePlanned(plan, options);
  }
  return SolvePlanned(plan, chosen, reason);
}

}  // namespace nimbus
