// The steps of a solve, for the commands that take them one at a time (nimbus scale runs one
// plan at several worker counts; simulate calibrate records rounds): the data plan, the
// runtime it runs on, the master, the cost. Solve (nimbus.h) is these in order.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nimbus/admm/executor.h"
#include "nimbus/admm/master.h"
#include "nimbus/admm/newton.h"
#include "nimbus/admm/options.h"
#include "nimbus/admm/summary.h"
#include "nimbus/core/file_io.h"
#include "nimbus/core/trace.h"
#include "nimbus/data/manifest.h"
#include "nimbus/data/store.h"
#include "nimbus/metrics/cost.h"
#include "nimbus/nimbus.h"
#include "nimbus/problem/problem.h"
#include "nimbus/runtime/remote_executor.h"
#include "nimbus/worker/shard_worker.h"

namespace nimbus {

// The data, either in this process (a LIBSVM file, or the caller's arrays) or as shards in a
// store.
struct Plan {
  std::string source;  // the file or store; "memory" for the caller's arrays
  ProblemSpec spec;    // spec.cols: the columns the solve runs on
  ColumnMap columns;   // the source's feature of each column (renumbered when few occur)
  LabelEncoding labels;
  double load_seconds = 0;
  int workers = 0;
  std::optional<Dataset> data;                      // in this process
  std::vector<std::pair<int64_t, int64_t>> ranges;  // its row blocks, one per worker
  std::shared_ptr<Store> store;                     // store input
  Manifest manifest;
};
// `workers` 0: the store's shard count, or this machine's cores for rows in memory. Columns
// are renumbered to the features that occur when far fewer occur than the largest index
// (data/feature_map.h): the master's and the workers' vectors follow the data, and the model
// maps back.
Result<Plan> PlanData(const TrainingData& data, int64_t workers, Loss loss);
// W per class as ProblemSpec::class_weights holds them (the -1 class, the +1 class; or the
// classes in ascending order of label), from
// weights by label (a label `encoding` lacks is an error naming `source`) or balanced ones
// (from the encoded `labels`; empty: unknown, an error).
Result<std::vector<double>> ClassWeightsOf(const ClassWeights& weights, const LabelEncoding& encoding,
                                           std::span<const double> labels, const std::string& source);
// The plan's problem beyond its data: the intercept, the classes (SolveOptions::multiclass),
// the class weights, and the regularizer
// (the options' l1, l2 or custom one; without any, l2 = 1/N, liblinear's C = 1).
Status SetProblem(const SolveOptions& options, Plan* plan);
// What a worker holds for a shard of `rows` rows and `nnz` nonzeros, in bytes: the shard
// (labels, row offsets, indices, values), the x-update's per-row arrays (per row and block
// for `blocks` > 1: classes times cross-validation's copies), and about 20 vectors of the
// worker's length (measured: 1.5 GB per worker at d = 10^7 in the dense form); in the general
// form that length is at most the shard's nonzeros (times the blocks). With
// `working_columns` (L1 Newton) a copy of at most half the nonzeros besides.
double WorkerMemoryBytes(int64_t rows, int64_t nnz, int64_t model_size, bool general_form, int64_t blocks = 1,
                         bool working_columns = false);
// Fails, naming the first shard that would not fit, if a worker could need more than
// `limit_mb` megabytes (0: no limit). Checked before any worker starts.
Status CheckWorkerMemory(const Plan& plan, bool general_form, bool working_columns, double limit_mb);
// An in-memory plan split anew into `workers` row blocks.
Status Repartition(Plan& plan, int workers);

// The solution over the plan's columns (spec.model_size() entries) as a model over the data's
// own features, with the plan's problem and label encoding.
Model ModelOf(const Plan& plan, std::vector<double> weights);
// The data's features: its largest index (the plan's columns may be renumbered).
int64_t SourceCols(const Plan& plan);

struct Runtime {
  std::unique_ptr<Executor> executor;
  RemoteExecutor* remote = nullptr;
  std::optional<TemporaryDirectory> shard_directory;  // rows in memory, as shards for remote workers
  std::optional<TemporaryDirectory> state_directory;  // kept worker state beyond the memory limit
};
// The workers' options from a solve's.
WorkerOptions WorkerOptionsOf(const SolveOptions& options);
// For remote runtimes, rows in memory are first written as shards (the same row blocks the
// threads runtime uses, so the iterates are the same).
Result<Runtime> MakeRuntime(const RuntimeOptions& options, const Plan& plan, const WorkerOptions& worker_options);

// The run's price at `prices` (Lambda's by default) into summary.cost_*: every worker for the
// whole run, the replacements' invocations, the shard loads from S3, and the master.
void AddCostEstimate(const Prices& prices, const Plan& plan, Summary* summary);

// on_trace as a sink for masters and executors; null without one.
std::unique_ptr<TraceSink> TraceSinkOf(const SolveOptions& options);
// What the data allows of the options: the workers' memory and the partial barrier.
Status CheckPlanFits(const Plan& plan, const SolveOptions& options);
// The options' master (ChooseMaster) for `spec` on `executor`, with the trace and on_iteration.
std::unique_ptr<Master> MakeMaster(const ProblemSpec& spec, const SolveOptions& options, Executor* executor,
                                   TraceSink* trace);
// A master's solution as Solve returns it: the model over the data's features, the summary
// with the load, the data's columns and the cost.
SolveResult ResultOf(const Plan& plan, const SolveOptions& options, Solution solution);

// A regularization path's steps (SolvePath, CrossValidate). The plan of the data, with every
// option and the path's checked, and the varied term a placeholder each point sets.
Result<Plan> PlanPath(const TrainingData& data, const SolveOptions& options, const PathOptions& path);
// Each point's lambda and solution; the first's setup includes starting the workers and the
// solve at the path's start.
using GridPoint = std::function<void(double lambda, Solution solution)>;
struct GridOutcome {
  double lambda_max = 0;
  double cost_dollars = 0;  // the workers priced once for every point's setup and solve, with the load
};
// Solves the plan's problem at every lambda of the path's grid, largest first, each from the
// one before, and gives each point to `point`; ends after a point whose workers failed.
// `load_seconds`: the master's reading of the data, for the price.
Result<GridOutcome> SolveGrid(Plan& plan, const SolveOptions& options, const PathOptions& path, double load_seconds,
                              const GridPoint& point);

// The master a solve runs, with its options.
struct MasterChoice {
  std::string algorithm = "admm";  // or "newton"
  AdmmOptions admm;
  NewtonOptions newton;   // the iteration cap, target and timeouts shared with admm

  std::unique_ptr<Master> Make(const ProblemSpec& spec, Executor* executor) const;
};
// Newton's options from a solve's: the gradient test, and the iteration cap, target and
// timeouts it shares with ADMM.
NewtonOptions NewtonOptionsOf(const SolveOptions& options);
// auto: distributed Newton, unless an option asks for what only ADMM has (a partial barrier,
// lean messages, the allreduce topology). The options are valid (SolveOptions::Validate).
MasterChoice ChooseMaster(const SolveOptions& options);

}  // namespace nimbus
