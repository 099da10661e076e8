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

#include "nimbus/executor/executor.h"
#include "nimbus/solve/master.h"
#include "nimbus/solve/newton/newton_master.h"
#include "nimbus/solve/admm/options.h"
#include "nimbus/executor/summary.h"
#include "nimbus/core/file_io.h"
#include "nimbus/core/trace.h"
#include "nimbus/data/manifest.h"
#include "nimbus/data/store.h"
#include "nimbus/data/text_input.h"
#include "nimbus/data/text_rows.h"
#include "nimbus/metrics/cost.h"
#include "nimbus/nimbus.h"
#include "nimbus/problem/problem.h"
#include "nimbus/runtime/remote_executor.h"
#include "nimbus/worker/shard_worker.h"

namespace nimbus {

struct Runtime;

// LIBSVM text that the workers read themselves, each its own slice; what it holds is known
// once they have scanned it (ScanData).
struct TextSource {
  TextFiles files;
  std::vector<TextSlice> slices;  // one per worker
  LibsvmReadOptions libsvm;
  std::optional<TextFile> sample_weights;
  // After the scan:
  std::vector<TextScan> scans;          // each worker's (its features dropped)
  std::optional<TextPlan> planned;      // the whole (its features kept)
  std::vector<uint64_t> weight_offsets;  // where each worker's weights begin
  // Cross-validation's folds, which each worker deals its rows (0: none; data/folds.h).
  int64_t folds = 0;
  uint64_t fold_seed = 0;
  // The workers that scanned it, holding their rows for the plan: MakeRuntime hands them over
  // once (mutable: taking them is not a change of the plan).
  mutable std::shared_ptr<Runtime> scanned;

  // Each worker's part, with the plan once there is one (and what a worker needs for it, the
  // master's estimate, for its report should the worker run out of memory).
  std::vector<TextPart> Parts(const std::vector<int64_t>& memory_estimates = {}) const;
  // Each stratum's rows in worker `part`'s slice (a classifier's classes, or a regression's
  // one stratum), from the scans.
  std::vector<int64_t> StratumRows(std::size_t part) const;
  // The folds of worker `part`'s rows, as it deals them.
  FoldPlan FoldsOf(std::size_t part) const;
};

// The data: in this process (the caller's arrays, or a LIBSVM file read here for the tools
// that cut it anew), as shards in a store, or as text the workers read themselves.
struct Plan {
  std::string source;  // the file or store; "memory" for the caller's arrays
  ProblemSpec spec;    // spec.cols: the columns the solve runs on
  ColumnMap columns;   // the source's feature of each column (renumbered when few occur)
  LabelEncoding labels;
  double load_seconds = 0;
  int workers = 0;
  std::optional<Dataset> data;                      // in this process
  std::vector<std::pair<int64_t, int64_t>> ranges;  // its row blocks, one per worker
  // The column method's layout instead (when not empty): worker i holds every row's entries in
  // the columns at positions [first, second) of block i, column j at column_position[j] (empty:
  // at j; the data stay in their order, each shard is selected from them as it is written).
  std::vector<std::pair<uint32_t, uint32_t>> column_blocks;
  std::vector<uint32_t> column_position;
  std::shared_ptr<Store> store;                     // store input
  Manifest manifest;
  std::optional<TextSource> text;                   // text input (the master reads no row)
};
// `workers` 0: the store's shard count, or this machine's cores for rows in memory. Columns
// are renumbered to the features that occur when far fewer occur than the largest index
// (data/feature_map.h): the master's and the workers' vectors follow the data, and the model
// maps back.
// A LIBSVM file (or several, or a directory or S3 prefix of them) is text the workers read.
Result<Plan> PlanData(const TrainingData& data, int64_t workers, Loss loss);
// Held parts (TrainingData::HeldByWorkers) stay with the workers their hosts run: only
// workers that start_worker starts can serve them, and no method that reads the rows here.
Status ValidateHeldParts(const TrainingData& data, const SolveOptions& options);
// A LIBSVM file read into this process (for the tools that cut the same rows anew for each
// worker count: scale, calibrate, cross-validation's folds).
Result<Plan> PlanDataInMemory(const TrainingData& data, int64_t workers, Loss loss);
// Text input: starts the workers, each reads and scans its slice, and completes the plan from
// their scans (rows, columns, labels); the workers wait for the problem (SetTextPlan, by
// MakeRuntime's caller). Nothing for other input.
Status ScanData(Plan& plan, const SolveOptions& options);
// Text input read into this process instead, as it streams (for runtimes whose workers do not
// read text themselves yet: MPI).
Status ReadTextHere(Plan& plan);
// W per class as ProblemSpec::class_weights holds them (the -1 class, the +1 class; or the
// classes in ascending order of label), from
// weights by label (a label `encoding` lacks is an error naming `source`) or balanced ones
// (from the encoded `labels`; empty: unknown, an error).
Result<std::vector<double>> ClassWeightsOf(const ClassWeights& weights, const LabelEncoding& encoding,
                                           std::span<const double> labels, const std::string& source);
// The same from each class's rows (in class order; none: unknown).
Result<std::vector<double>> ClassWeightsOfCounts(const ClassWeights& weights, const LabelEncoding& encoding,
                                                 const std::optional<std::vector<int64_t>>& class_rows,
                                                 const std::string& source);
// The plan's problem beyond its data: the intercept, the classes (SolveOptions::multiclass),
// the class weights, and the regularizer
// (the options' l1, l2 or custom one; without any, l2 = 1/N, liblinear's C = 1).
Status SetProblem(const SolveOptions& options, Plan* plan);
// What the tools that solve the same problem at several K (scale, calibrate) share: their
// worker counts (>= 1, ascending) and repetitions per count (1 to 100) checked, and the data
// (a LIBSVM file: shards hold one K's split) read into this process, split for the first K,
// with its problem set (Repartition splits it for the next).
Status ValidateRepeatedSolves(const std::vector<int>& workers, int repetitions);
Result<Plan> PlanForEveryK(const TrainingData& data, const SolveOptions& options, int first_workers);
// The program the process runtime starts as a worker: RuntimeOptions::worker_program, or this one.
std::string WorkerProgramOf(const RuntimeOptions& options);
// What a worker holds for a shard of `rows` rows and `nnz` nonzeros, in bytes: the shard
// (labels, row offsets, indices, values), the x-update's per-row arrays (per row and block
// for `blocks` > 1: classes times cross-validation's copies), and about 20 vectors of the
// worker's length (measured: 1.5 GB per worker at d = 10^7 in the dense form); in the general
// form that length is at most the shard's nonzeros (times the blocks). With
// `working_columns` (L1 Newton) the working set's 8 bytes a row (a worker under a memory limit
// copies no more than fits: worker/shard_derivatives.h).
double WorkerMemoryBytes(int64_t rows, int64_t nnz, int64_t model_size, bool general_form, int64_t blocks = 1,
                         bool working_columns = false);
// Fails, naming the first shard that would not fit, if a worker could need more than
// `limit_mb` megabytes (0: no limit). Checked before any worker starts.
Status CheckWorkerMemory(const Plan& plan, bool general_form, bool working_columns, double limit_mb);
// An in-memory plan split anew into `workers` row blocks.
Status Repartition(Plan& plan, int workers);
// The same into the default workers (DefaultWorkers, at most one a row): where auto had planned
// one block for the column method and the data turns out multiclass (one-vs-rest stays
// Newton's: the column rule was measured on binary problems), with the rows already read.
Status RepartitionForDefaultWorkers(Plan& plan);

// The solution over the plan's columns (spec.model_size() entries) as a model over the data's
// own features, with the plan's problem and label encoding.
Model ModelOf(const Plan& plan, std::vector<double> weights);
// The data's features: its largest index (the plan's columns may be renumbered).
int64_t SourceCols(const Plan& plan);

struct Runtime {
  std::unique_ptr<Executor> executor;
  RemoteExecutor* remote = nullptr;
  bool awaiting_plan = false;  // text: its workers scanned and wait for SetTextPlan
  bool general_form = false;   // the workers' form of consensus (for their memory estimates)
  std::optional<TemporaryDirectory> shard_directory;  // rows in memory, as shards for remote workers
};
// The workers' options from a solve's.
WorkerOptions WorkerOptionsOf(const SolveOptions& options);
// For remote runtimes, rows in memory are first written as shards (the same row blocks the
// threads runtime uses, so the iterates are the same).
// Text input: the workers that scanned it, told the plan, or (once they were taken) new ones
// that read their parts with the plan.
Result<Runtime> MakeRuntime(const RuntimeOptions& options, const Plan& plan, const WorkerOptions& worker_options);
// Tells a runtime whose workers scanned the text the problem and their parts of the plan.
Status SendTextPlan(const Plan& plan, Runtime& runtime);

// The run's price at `prices` (Lambda's by default) into summary.cost_*: every worker for the
// whole run, the replacements' invocations, the shard loads from S3, and the master.
void AddCostEstimate(const Prices& prices, const Plan& plan, Summary* summary);

// The master a solve runs, with its options.
struct MasterChoice {
  Algorithm algorithm = Algorithm::kAdmm;  // or kNewton or kColumns (no Master: SolveByColumnsHere), never kAuto
  std::string reason;                      // why, for the summary
  bool by_default = false;                 // auto, and no option or the problem called for one
  AdmmOptions admm;
  NewtonOptions newton;   // the iteration cap, target and timeouts shared with admm

  std::unique_ptr<Master> Make(const ProblemSpec& spec, Executor* executor) const;
};
// Newton's options from a solve's: the gradient test, and the iteration cap, target and
// timeouts it shares with ADMM.
NewtonOptions NewtonOptionsOf(const SolveOptions& options);
// auto: distributed Newton, unless an option asks for what only ADMM has (a partial barrier,
// the allreduce topology, a regularizer known by its prox), or a resumed run
// began with ADMM. The options are valid (SolveOptions::Validate). A solve chooses once, and
// its summary keeps the choice and the reason.
MasterChoice ChooseMaster(const SolveOptions& options);
// An error naming `command` where the options ask for the column method, which has no Master
// (where a command makes one and has no way of its own to the column method yet).
Status RefuseColumns(const SolveOptions& options, std::string_view command);
// The same for a planned problem; where auto chose by default and options.algorithm_profiles
// are given, the algorithm whose profile predicts the shorter time to solution for the plan's
// rows, columns, nonzeros and workers (metrics/simulator.h).
Result<MasterChoice> ChooseMasterFor(const Plan& plan, const SolveOptions& options);
// Whether auto may choose the column method from the options' profiles (one of them is its):
// the plan then holds the rows in this process, which the column method's layout needs.
bool ProfilesMayChooseColumns(const SolveOptions& options);

// on_trace as a sink for masters and executors; null without one.
std::unique_ptr<TraceSink> TraceSinkOf(const SolveOptions& options);
// What the data allows of the options and the chosen master: the workers' memory and the
// partial barrier.
Status CheckPlanFits(const Plan& plan, const SolveOptions& options, const MasterChoice& master);
// The chosen master for `spec` on `executor`, with the options' on_iteration and the trace.
std::unique_ptr<Master> MakeMaster(const ProblemSpec& spec, const MasterChoice& master, const SolveOptions& options,
                                   Executor* executor, TraceSink* trace);
// --algorithm columns (options valid): the column method on the plan's rows in this process,
// plan.workers blocks stepped on its threads (columns/column_descent.h), the summary's fields as
// every solve's (an iteration a round). Rows in a store are refused.
Result<SolveResult> SolveByColumnsHere(const Plan& plan, const SolveOptions& options, const MasterChoice& choice);
// The column method's workers' options: their vectors follow their rows and block (the dense form).
WorkerOptions ColumnWorkerOptionsOf(const SolveOptions& options);
// The plan's rows as plan.workers blocks of columns, a worker's each (Plan::column_blocks, laid
// out as --column-blocks asks), refused where a block's worker would not fit in its memory.
Result<Plan> ColumnLayoutFor(const Plan& plan, const SolveOptions& options, const MasterChoice& choice);
// The column method on `executor`'s workers (ColumnWorkerOptionsOf's), a block of the layout's
// each (ColumnLayoutFor): the workers started here, not stopped; the summary as every solve's.
Result<Solution> SolveByColumnsOn(const Plan& layout, const SolveOptions& options, const MasterChoice& choice,
                                  Executor& executor);
// The options' checkpoint writer (--checkpoint): each state into the store, a failed write
// warned of on stderr (the run goes on with the previous checkpoint); empty without a location.
Result<CheckpointWriter> CheckpointWriterOf(const SolveOptions& options);
// A master's solution as Solve returns it: the model over the data's features, the summary
// with the load, the data's columns and the cost.
SolveResult ResultOf(const Plan& plan, const SolveOptions& options, Solution solution);

// A regularization path's steps (SolvePath, CrossValidate). The plan of the data, with every
// option and the path's checked, and the varied term a placeholder each point sets.
// With `rows_in_memory`, a LIBSVM file is read here (cross-validation's folds), else its text
// is read by the workers.
Result<Plan> PlanPath(const TrainingData& data, const SolveOptions& options, const PathOptions& path,
                      bool rows_in_memory = false);
// The workers that solved a point, still holding their rows, and the number of the next round
// they may be sent: what cross-validation scores a point's models on.
struct PointWorkers {
  Executor& executor;
  int64_t next_round = 0;
};
// Each point's lambda and solution; the first's setup includes starting the workers and the
// solve at the path's start. An error ends the grid with it.
using GridPoint = std::function<Status(double lambda, Solution solution, PointWorkers& workers)>;
struct GridOutcome {
  double lambda_max = 0;
  double cost_dollars = 0;  // the workers priced once for every point's setup and solve, with the load
};
// Solves the plan's problem at every lambda of the path's grid, largest first, each from the
// one before, and gives each point to `point`; ends after a point whose workers failed.
// `load_seconds`: the master's reading of the data, for the price.
Result<GridOutcome> SolveGrid(Plan& plan, const SolveOptions& options, const PathOptions& path, double load_seconds,
                              const GridPoint& point);
// The same by the column method (--algorithm columns: an l1 path of a binary or regression
// problem, the rows in this process; columns/column_descent.h's strong rules and KKT check),
// each point's lambda and solution to `point` as it is solved; `reason`: why the column method
// (the summaries' algorithm_reason; empty: the options named it).
Result<GridOutcome> SolveGridByColumns(const Plan& plan, const SolveOptions& options, const PathOptions& path,
                                       double load_seconds, const std::string& reason,
                                       const std::function<Status(double lambda, Solution solution)>& point);
// Cross-validation by the column method: the K folds' training rows (fold_of_rows: each row's
// fold) and all the rows, a path each on the whole's grid, stepped point by point side by side
// on this process's cores. `point` gets each lambda's K fold models (the plan's columns, as
// Solution::model) and the whole's solution, whose summary counts every path's work.
struct FoldSolutions {
  std::vector<std::vector<double>> folds;
  Solution whole;
};
// `reason`: why the column method (the summary's algorithm_reason; empty: the options named it).
Result<GridOutcome> SolveFoldsByColumns(const Plan& plan, const SolveOptions& options, const PathOptions& path,
                                        double load_seconds, std::span<const uint8_t> fold_of_rows, int64_t folds,
                                        const std::string& reason,
                                        const std::function<Status(double lambda, FoldSolutions solutions)>& point);
// The grid, largest first: the caller's (its Cs over `rows`), or `length` points from
// `lambda_max` evenly in log.
std::vector<double> PathGrid(const PathOptions& path, double lambda_max, int64_t rows);
// Workers when none are asked for: this machine's cores.
int64_t DefaultWorkers();
// auto's choice of the column method on this process's threads, one block (the callers' rules:
// train's, path's and cv's), when no option calls for another and `copies` copies of the data
// fit in half the machine's memory: sets `solve` to it and returns `reason`, or returns "" and
// leaves `solve` as it was.
std::string ChooseColumnsHere(const TrainingData& data, int copies, std::string reason, SolveOptions& solve);
// The same for an l1 problem (the caller's test) with an intercept, logistic, --workers not
// given (train's and path's rules: a binary problem's, the caller checks once planned), when 4
// copies of the data fit (the column method's paths peaked at 1.9-2.5 times their files).
std::string ChooseColumnsWithIntercept(const TrainingData& data, std::string reason, SolveOptions& solve);
// The workers a solve plans for: the options' (0: the runtime's default), one block for the
// column method.
int64_t PlannedWorkers(const SolveOptions& options);


}  // namespace nimbus
