// nimbus as a library: the whole product on one page.
//
//   #include <nimbus/nimbus.h>
//
//   nimbus::SolveOptions options;
//   options.l1 = 1e-4;
//   options.runtime.kind = nimbus::RuntimeKind::kProcess;   // or threads, command, lambda, mpi
//   options.runtime.workers = 4;
//   nimbus::Result<nimbus::SolveResult> result =
//       nimbus::Solve(nimbus::TrainingData::LibsvmFile("train.svm"), options);
//   if (!result.ok()) { /* result.status().message() names the option or the file and line */ }
//   double f = result->summary.objective;              // F at the model
//   nimbus::WriteModel(result->model, nimbus::ModelFormat::kJson, "model.json");
//
// Solve minimizes  F(x) = (1/N) sum_r loss(y_r, a_r . x [+ b]) + regularizer(x)  across K
// workers (threads of this process, local processes, launched commands, AWS Lambda functions
// or MPI ranks), with distributed Newton-CG or consensus ADMM. The loss is one of nimbus's
// (logistic, squared, squared hinge) or the program's own smooth one (problem/loss.h:
// CustomLoss), the regularizer l1 ||x||_1 + (l2/2) ||x||^2 or the program's own separable one
// (problem/problem.h: CustomRegularizer). examples/ has Poisson and Huber regression. Data
// of three classes or more trains one weight vector per class, one-vs-rest or multinomial
// (SolveOptions::multiclass). SolvePath solves along a regularization path, and CrossValidate
// runs K-fold cross-validation along one (the folds side by side on the same workers).
//
// Errors are Result/Status values (core/status.h), never exceptions; an option error names the
// option as the command line spells it (`nimbus train --help` lists them all).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nimbus/solve/admm/options.h"
#include "nimbus/executor/summary.h"
#include "nimbus/choices.h"
#include "nimbus/core/args.h"  // the command lines of nimbus and its workers (ArgParser, exit codes)
#include "nimbus/core/build_target.h"  // records the instruction set of a program's own code (lambda package)
#include "nimbus/core/clock.h"  // Stopwatch and the clocks the reports use
#include "nimbus/core/csr.h"
#include "nimbus/core/status.h"
#include "nimbus/core/trace.h"  // JsonlTraceFile, a file for SolveOptions::on_trace
#include "nimbus/data/dataset.h"
#include "nimbus/data/synthetic.h"
#include "nimbus/metrics/cost.h"
#include "nimbus/metrics/report.h"
#include "nimbus/metrics/scaling.h"
#include "nimbus/metrics/simulation.h"
#include "nimbus/model/evaluation.h"
#include "nimbus/model/model.h"
#include "nimbus/problem/problem.h"
#include "nimbus/runtime/lambda_emulator.h"

namespace nimbus {

struct MasterState;  // a solve's state between rounds, as checkpoints keep it (solve/master.h)
struct TestHooks;  // tests only: faults injected into the workers (src/api/testing.h, not installed)

// ---- The data ------------------------------------------------------------------------------

// Where a solve's rows come from. A LIBSVM file is read and split into one row block per
// worker; a store (a directory or s3://bucket/prefix written by `nimbus split`) holds one shard
// per worker, which the workers load themselves; the caller's CSR arrays are used in place on
// the threads runtime (other runtimes write them as shards first). When far fewer features
// occur than the largest index (hashed features), the solve runs over the features that occur
// (a renumbered copy of the column indices; data/feature_map.h) and the model maps back.
class TrainingData {
 public:
  // LIBSVM text: a file, a directory or S3 prefix of files, several of these separated by
  // commas, plain or compressed (.gz, .zst, .xz). The workers read it themselves, each its own
  // part (byte ranges of a file, or whole files); no process reads all of it. A directory or
  // prefix with a manifest.json is a store of shards instead.
  static TrainingData LibsvmFile(std::string path);
  static TrainingData Store(std::string location);
  // The same as LibsvmFile: shards if the location has a manifest, else text.
  static TrainingData At(std::string location);
  // Each row's column indices ascend (as in a LIBSVM file). `labels`: one per row; for a
  // classification loss any two distinct values (the larger becomes +1, as in a file), or up
  // to 1000 classes (SolveOptions::multiclass). Nothing is copied unless the labels need
  // encoding: the arrays must stay alive and unchanged until Solve returns.
  static TrainingData Csr(CsrView matrix, std::span<const double> labels);
  // Each row's own weight s_r >= 0 (a row counts s_r times; liblinear's instance weights), from
  // a file with one number per line and a line per row, or from the caller's array (which must
  // stay alive until Solve returns). A store carries its own (nimbus split --sample-weights).
  TrainingData WithSampleWeights(std::string file) &&;
  TrainingData WithSampleWeights(std::span<const double> weights) &&;
  // Rows held where they lie, in parts, by the processes that serve them (a Dask cluster's
  // partitions: python/nimbus/dask.py). Part i is worker i's: runtime.start_worker starts it
  // where its part is, and it runs ServeWorker with the part's rows. The master plans from
  // what each worker says its part holds (as it does for text) and reads no row.
  static TrainingData HeldByWorkers(std::vector<std::string> part_keys);

  const std::string& location() const { return location_; }  // file or store; empty for CSR
  bool is_store() const { return store_; }
  bool in_memory() const { return in_memory_; }
  const CsrView& matrix() const { return matrix_; }
  std::span<const double> labels() const { return labels_; }
  const std::string& sample_weights_file() const { return sample_weights_file_; }
  const std::vector<std::string>& held_parts() const { return held_parts_; }
  std::span<const double> sample_weights() const { return sample_weights_; }

 private:
  std::string location_;
  bool store_ = false;
  bool in_memory_ = false;
  CsrView matrix_;
  std::span<const double> labels_;
  std::string sample_weights_file_;
  std::span<const double> sample_weights_;
  std::vector<std::string> held_parts_;
};

// ---- The options ---------------------------------------------------------------------------

// A worker to start (RuntimeOptions::start_worker): `nimbus worker`'s arguments, and the run's
// client secret key apart from them (for a secure run; empty for an insecure one).
struct WorkerStart {
  int worker = 0;
  uint64_t invocation = 0;  // 1 for the first start, more for a replacement
  std::vector<std::string> arguments;
  std::string client_secret;
};
// What a start_worker call started, as the caller sees it.
struct StartedWorker {
  std::function<bool()> ended;  // true once it has finished, or failed to start (null: never known)
  std::function<void()> stop;   // asks it to end; best effort (null: nothing to do)
};

// Where the workers run.
struct RuntimeOptions {
  RuntimeKind kind = RuntimeKind::kThreads;
  int64_t workers = 0;           // K; 0: the store's shards, or this machine's cores for rows in memory
  // process: the program started as `PROGRAM worker ARGS` (default: this program, as the
  // nimbus CLI is). command: how to start one, with {args} (and {host}, from hosts).
  std::string worker_program;
  std::string launch, hosts;
  // command: starts a worker, in place of `launch` (python/nimbus/dask.py's submits a Dask task
  // that runs ServeWorker). It returns once the start is under way; a worker that never dials
  // in, or dies, is replaced by a new call when the master's timeouts say so. Called on the
  // master's thread.
  std::function<Result<StartedWorker>(const WorkerStart&)> start_worker;
  std::string listen = "tcp://127.0.0.1:0", advertise;
  std::string shard_dir;  // remote runtimes with a file: where its shards go (default: a temporary directory)
  std::string lambda_function, lambda_endpoint;
  bool lambda_pass_credentials = false;
  bool insecure = false;  // plaintext workers, loopback only
  int64_t max_restarts = 3;
  double max_lifetime = 0, round_timeout_floor = 60, heartbeat = 1;
  Topology topology = Topology::kStar;  // mpi: a master rank, or every rank a worker
  // process and command: the workers in this many groups, each served by a relay (a worker
  // process that starts its group's workers and sums their replies into one: runtime/relay.h),
  // so that the master's link carries one message a relay, not a worker; 0: no relays (the
  // star). A relay with more than relay_fanout workers starts relays of its own (a tree; 0:
  // no limit). Relays serve Newton's rounds.
  int64_t relays = 0, relay_fanout = 0;
  // How a relay runs its workers: processes or threads on its host, or (command) each started
  // by `launch` on its host of `hosts`, dialing the relay.
  RuntimeKind relay_workers = RuntimeKind::kProcess;
  std::string relay_hosts;  // command: the {host} values for the relays (default: hosts)
  double worker_memory_mb = -1;   // refuse up front above this (-1: the function's memory on lambda, else none)
  uint64_t run_id = 0;            // mpi: the id all ranks share (set by Solve)

  Status Validate() const;
  Status ValidateRelays() const;
};
// Whether this build has the runtime (lambda and mpi are optional parts).
bool RuntimeAvailable(RuntimeKind kind);

// What a solve writes as it goes, so a lost master can be resumed.
struct CheckpointOptions {
  std::string location;  // a directory or s3://bucket/prefix; empty: none
  int64_t every = 10;    // rounds (ADMM), Newton steps or the column method's iterations (binary, regression)
  std::vector<std::string> run_arguments;  // kept in the checkpoint (the CLI's own arguments)
  std::string working_directory;           // where they were given
  std::shared_ptr<const MasterState> resume;  // carry on from this state (ReadSavedRun)
};

// Class weights (liblinear's -wi W): the rows of a class count W times. By label as the data
// writes it, e.g. {{1, 5}} (labels not named weigh 1), or balanced (scikit-learn's: a class
// weighs N / (classes x its rows)).
struct ClassWeights {
  std::map<double, double> by_label;
  bool balanced = false;

  bool empty() const { return by_label.empty() && !balanced; }
  Status Validate() const;  // every weight a finite number >= 0
  // LABEL=W[,LABEL=W...] (`--class-weight 1=5,-1=0.5`), or "balanced"; errors name --class-weight.
  static Result<ClassWeights> Parse(const std::string& text);
};

struct SolveOptions {
  // The problem.
  Loss loss = Loss::kLogistic;    // or a program's own (problem/loss.h: CustomLoss, RegisterLoss)
  std::optional<double> l1, l2;  // neither (and no custom regularizer): l2 = 1/N (liblinear's C = 1)
  std::shared_ptr<const CustomRegularizer> regularizer;  // a program's own g, in place of l1 and l2
  bool intercept = false;
  ClassWeights class_weights;  // F = (1/N) sum_r W_{class r} s_r loss_r + g(x), with s_r the rows' own
  // Data of three classes or more: one-vs-rest (liblinear's: a binary problem per class, all
  // solved in the same rounds), multinomial (softmax; logistic loss, any number of classes), or
  // auto (scikit-learn's: multinomial for three classes or more, one binary problem for two).
  // The model then holds a weight vector per class (ProblemSpec::classes).
  Multiclass multiclass = Multiclass::kOvr;
  // > 0: l1 and l2 are shares of the penalty on the sum of the losses, liblinear's and
  // scikit-learn's C: the problem's are l1 / (C N) and l2 / (C N), once the data's N is known
  // (text the workers read). 0: l1 and l2 as given.
  double liblinear_c = 0;
  // The algorithm: newton, admm, columns (coordinate descent on blocks of columns: this
  // process reads the rows and steps runtime.workers blocks, one by default, on its threads, or
  // for Solve on another runtime's workers, a block of every row's columns each; paths and
  // cross-validation on threads), or auto (newton unless an ADMM-only option is set; columns,
  // one block on threads, for an l1 problem with an intercept (binary, logistic) and workers
  // not given, and for cross-validation along an l1 grid on threads; the summary says which
  // and why).
  Algorithm algorithm = Algorithm::kAuto;
  // columns, nimbus train's: which columns each block holds (auto: clustered by their rows for 2
  // to 64 blocks of a sparse matrix, contiguous otherwise, as measured).
  ColumnBlocks column_blocks = ColumnBlocks::kAuto;
  // auto: calibrated profiles of this kind of problem, one with each algorithm (`nimbus
  // simulate calibrate --algorithm newton`, and admm): where no option decides, auto takes the
  // algorithm they predict the shorter solve for, at this K on this runtime's platform (Lambda's
  // for lambda, else this machine's).
  std::vector<std::string> algorithm_profiles;
  AdmmOptions admm;              // its tolerances, iteration cap and target serve newton too
  double gradient_tolerance = kNewtonGradientTolerance;  // newton's stop test
  ConsensusForm consensus = ConsensusForm::kGeneral;  // general: a worker holds only the features its shard touches
  LocalSolver local_solver = LocalSolver::kNewtonCg;  // ADMM's x-update on each worker
  RuntimeOptions runtime;
  CheckpointOptions checkpoint;
  // Start from this model (a previous solve's, or one read with ReadModel) instead of zero:
  // its weights of the features the data has (0 for the others; its intercepts if both have
  // them). It must have the data's classes. Newton's stop test still scales the residual at
  // zero (one more round), so the answer is the one a cold start would give. A resumed run
  // (checkpoint.resume) carries on from its checkpoint instead.
  std::shared_ptr<const Model> warm_start;
  Prices prices;                 // for the summary's cost estimate
  // Observers, called on the solving thread.
  IterationCallback on_iteration;                        // return false to stop
  // LIBSVM text: how far the workers' reading has come, about once a second (as each worker
  // finishes, for MPI ranks) and once when every part is read.
  std::function<void(const struct LoadProgress&)> on_load;
  std::function<void(std::string_view json)> on_trace;   // one JSON object per round and worker event
  // Once the data is planned and the options fit it, before any worker starts: an error
  // returned here ends the solve with it.
  std::function<Status(const struct SolveStart&)> on_start;
  std::shared_ptr<const TestHooks> test_hooks;  // tests only (src/api/testing.h)

  // Every option and every combination, in one place. Errors name the option.
  Status Validate() const;
  Status ValidateColumns() const;  // --algorithm columns' part
};

// How far the workers' reading of LIBSVM text has come (on_load).
struct LoadProgress {
  uint64_t bytes_read = 0, bytes_total = 0;  // of the text as stored (a compressed file's compressed bytes)
  int workers_done = 0, workers = 0;
  double seconds = 0;  // since the workers were started
};

// What a solve is about to do (on_start): the problem as planned.
struct SolveStart {
  ProblemSpec spec;          // spec.cols: the columns solved over (the features that occur, when renumbered)
  int64_t source_cols = 0;   // the data's features: its largest index
  int workers = 0;
  std::string runtime;     // the executor's name
  Algorithm algorithm = Algorithm::kNewton;  // newton, admm or columns (never auto)
  std::string algorithm_reason;  // why (the summary's)
};

// ---- Solving -------------------------------------------------------------------------------

struct SolveResult {
  Model model;      // weights with the problem and the label encoding, ready to write or predict
                    // (over the data's own feature numbers, however the solve numbered them)
  Summary summary;  // why it stopped, objective, rounds, times, bytes, cost (summary.h)
  // Under mpirun, Solve runs on every rank: rank 0 returns the model, the others serve as
  // workers and return with this set (and no model).
  bool mpi_worker_rank = false;
  int mpi_worker_exit_code = 0;
};

// Plans the data, starts the workers, runs the master until its stop rule, stops the workers.
// An error Result for bad options or data, or a failed start; a worker failing mid-run is in
// the summary (!summary.ok()) with the newest model whose objective is known.
Result<SolveResult> Solve(const TrainingData& data, const SolveOptions& options);

// ---- Regularization paths ------------------------------------------------------------------

// A regularization path (glmnet's): solves at a descending grid of lambdas, each started from
// the model of the one before. Newton's workers keep their shards loaded from point to point;
// ADMM's start anew at each point (their duals belong to one problem), from the warm z.
struct PathOptions {
  // The term the grid varies: l1 (the lasso's, or with SolveOptions::l2 fixed the elastic
  // net's) or l2 (ridge, with SolveOptions::l1 fixed). The options must not set it.
  Penalty penalty = Penalty::kL1;
  // `length` points from lambda_max down to min_ratio x lambda_max, evenly in log (0: 1e-3
  // for l1, 1e-6 for l2). lambda_max for l1 is the smallest l1 whose model is zero,
  // ||grad f(x0)||_inf at x0 = 0 (with an intercept, the intercept's own optimum); for l2 no
  // lambda makes the model zero, and the grid starts at 1000 times that (glmnet's rule for
  // ridge: every weight below about 1e-3).
  int64_t length = 20;
  double min_ratio = 0;
  std::vector<double> lambdas;  // the grid itself, in place of length and min_ratio (solved largest first)
  // Or the grid as liblinear's (and scikit-learn's) C, penalties on the sum of the losses:
  // lambda = 1 / (C N), with N the rows, known once the data is read.
  std::vector<double> liblinear_cs;
  // LIBSVM data, with the training data's labels, to score each point's model on: accuracy,
  // log loss and AUC (classifiers), MSE and R^2 (regression). Empty: none.
  std::string validation;
  std::function<void(const struct PathPoint&)> on_point;  // after each point, on the solving thread

  Status Validate() const;
  double MinRatio() const { return min_ratio > 0 ? min_ratio : penalty == Penalty::kL2 ? 1e-6 : 1e-3; }
};

struct PathPoint {
  double lambda = 0;
  Model model;
  Summary summary;  // the point's own rounds, times and cost (the first point's setup starts the workers)
  std::optional<Evaluation> validation;
};

struct PathResult {
  Penalty penalty = Penalty::kL1;
  double lambda_max = 0;  // where the grid starts (l1: the smallest l1 whose model is zero)
  std::vector<PathPoint> points;  // largest lambda first
  double load_seconds = 0;  // reading the data (and the validation data)
  double wall_seconds = 0;  // the whole path, the load included
  double cost_dollars = 0;  // every point's, at the options' prices
  std::string data;         // TrainingData::location (empty for arrays)
  RuntimeKind runtime = RuntimeKind::kThreads;
  Loss loss = Loss::kLogistic;
  bool validated = false;   // the points hold validation scores (PathOptions::validation)

  // As `nimbus path` prints it: a row per point under the header (live, from on_point), a
  // heading and a footer; the whole as JSON.
  static std::string TableHeader(Loss loss);
  static std::string TableRow(std::size_t index, const PathPoint& point, Loss loss);
  std::string Heading() const;
  std::string Footer() const;
  std::string ToJson() const;
  // path.txt, path.json, path.dat and the plot in `directory` (drawn by `gnuplot` unless it is
  // empty), and with `models` every point's model as models/point-NN.json. Returns the plots.
  Result<std::vector<std::string>> Write(const std::string& directory, const std::string& gnuplot, bool models) const;
};

// The path over `data`. The options are Solve's, less the varied term; checkpoints and the
// MPI runtime are not for paths. An error Result for bad options or data; a point whose solve
// fails ends the path with the points before it (the failed one's summary says why).
Result<PathResult> SolvePath(const TrainingData& data, const SolveOptions& options, const PathOptions& path);

// ---- Cross-validation ----------------------------------------------------------------------

// K-fold cross-validation along a grid. The folds are stratified by label with a seed
// (data/folds.h). The K folds' training problems and the problem on all the data are solved
// side by side as copies of one problem (ProblemSpec::copies): every worker loads its shard
// once and serves every copy in the same pass over its rows, point after point of the grid.
struct CvOptions {
  int64_t folds = 5;
  uint64_t seed = 1;
  // The grid, as a path's. With SolveOptions::l1 (or only l2) given, that one value instead.
  PathOptions path;
  // What chooses lambda: "log_loss" (the logistic loss's default, glmnet's deviance),
  // "accuracy" (other classifiers'), "auc" (two classes), or "mse" (regression's); "" the default.
  std::string metric;
  std::function<void(const struct CvPoint&)> on_point;  // after each point, on the solving thread

  Status Validate() const;
};

struct CvScore {
  double mean = 0, std = 0;  // over the folds (std with K - 1 degrees of freedom)
  std::vector<double> folds;  // each fold's, fold 0 first
};

struct CvPoint {
  double lambda = 0;
  std::vector<Evaluation> folds;          // fold k's model on the rows held out in fold k
  std::map<std::string, CvScore> scores;  // accuracy, log_loss, auc (classifiers); mse, r_squared (regression)
  Model model;                            // on all the data, at this lambda
  Summary summary;                        // the point's rounds, times and cost, all copies together
};

struct CvResult {
  Penalty penalty = Penalty::kL1;
  std::string metric;
  double lambda_max = 0;
  int64_t folds = 0;
  int64_t rows = 0;                   // N, of every fold together
  std::vector<uint8_t> fold_of_rows;  // rows in memory: the fold each row is held out in (text: WriteFolds)
  std::vector<CvPoint> points;        // largest lambda first
  std::size_t best = 0;    // the point with the best mean metric
  std::size_t one_se = 0;  // the largest lambda within one standard error (std / sqrt K) of the best
  double load_seconds = 0, wall_seconds = 0, cost_dollars = 0;
  std::string data;  // TrainingData::location (empty for arrays)
  RuntimeKind runtime = RuntimeKind::kThreads;
  uint64_t seed = 1;  // the folds'

  // As `nimbus cv` prints it, as PathResult's. `refit_one_se`: the model refit on all the data
  // is one_se's, else best's.
  static std::string TableHeader(const CvPoint& first);  // a column per figure of CvPoint::scores
  static std::string TableRow(std::size_t index, const CvPoint& point);
  std::string Heading() const;
  std::string Footer() const;
  std::string ToJson(bool refit_one_se) const;
  // cv.txt, cv.json, cv.dat, model.json (the refit lambda's model) and the plot in `directory`.
  Result<std::vector<std::string>> Write(const std::string& directory, const std::string& gnuplot,
                                         bool refit_one_se) const;
};

// Cross-validation over `data`: LIBSVM text the workers read (each deals its own rows' folds,
// and scores its held-out rows; the master reads no row) or the caller's arrays (whose folds
// fold_of_rows lists). The options are Solve's, as for a path.
Result<CvResult> CrossValidate(const TrainingData& data, const SolveOptions& options, const CvOptions& cv);
// The fold of each row of the LIBSVM text at `data`, as CrossValidate deals them (a classifier's
// labels, or a regression's rows as one stratum), one per line into the file `out`: two passes
// over the text's labels in this process, in bounded memory.
Status WriteFolds(const std::string& data, const CvOptions& cv, bool classification, const std::string& out);

// ---- Data of any size ----------------------------------------------------------------------
//
// LIBSVM text given by location: a file, a directory or an S3 prefix of files, several of
// these separated by commas; plain, or compressed (.gz, .zst, .xz). The commands below read it
// as it streams, so their memory does not grow with the data (a few blocks of text per thread,
// and vectors the size of the model).

struct SplitOptions {
  int64_t shards = 0;       // one per worker
  bool regression = false;  // real-valued targets; else a classifier's labels (up to 1000 classes)
  std::string sample_weights;  // a file (or s3:// object) with each row's weight, a line per row
  int threads = 0;             // 0: this machine's cores
  // Values in 4 bytes where every one is exactly a float, in none where every one is 1 (exact
  // either way; shard format 2). Off: doubles (format 1, which builds before it read).
  bool compact_values = true;
  // Now and then, from the working threads: the pass ("reading", "writing"), bytes done, total.
  std::function<void(const std::string& pass, uint64_t done, uint64_t total)> on_progress;

  Status Validate() const;
};

struct SplitSummary {
  int64_t rows = 0, cols = 0, nnz = 0;
  int64_t source_cols = 0;  // the largest index (cols counts the features that occur when renumbered)
  int64_t shards = 0;       // written
  int64_t empty_parts = 0;  // slices that held no line (a long line, a small file), left out
  std::string labels;       // the encoding, described
  uint64_t bytes_read = 0;  // of the text, twice over (two passes)
  uint64_t shard_bytes = 0;         // written
  uint64_t double_shard_bytes = 0;  // what the shards would take with doubles for values
};

// Splits the text at `data` into binary shards and manifest.json in the store `out` (a
// directory, made if missing, or s3://bucket/prefix), for workers that load their own shard.
Result<SplitSummary> SplitData(const std::string& data, const std::string& out, const SplitOptions& options);

struct EvaluateOptions {
  ClassWeights class_weights;  // for the objective, as Solve takes them
  std::string sample_weights;  // each row's weight for the objective, a line per row
  std::function<void(const std::string& pass, uint64_t done, uint64_t total)> on_progress;
};

// `model` on the labelled text at `data`: Evaluate's figures (model/evaluation.h), the exact
// AUC included, the text streamed.
Result<Evaluation> EvaluateData(const Model& model, const std::string& data, const EvaluateOptions& options = {});

struct PredictOptions {
  // After each row's label: the probability of each class (logistic models; two classes: of
  // the positive one) or the decision values.
  bool scores = false;
  std::function<void(const std::string& pass, uint64_t done, uint64_t total)> on_progress;
};

// A line per row of the text at `data`: the predicted label in the data's own encoding (the
// predicted value, for regression), into the file `out` (written whole, or not at all), or
// standard output when `out` is empty. Returns the rows predicted.
Result<int64_t> PredictData(const Model& model, const std::string& data, const std::string& out,
                            const PredictOptions& options = {});

// ---- Scaling and the simulator's profile ----------------------------------------------------

// The same problem to the same tolerance once per worker count K (`nimbus scale`).
struct ScaleOptions {
  std::vector<int> workers = {1, 2, 4, 8, 16};  // ascending; the first is the speedups' baseline
  int repetitions = 1;  // solves per K; the fastest counts (they differ by what else the machine did)
  std::function<void(const std::string&)> progress;  // a line per K, and per round of repetitions

  Status Validate() const;
};
// `data` must be a LIBSVM file (it is split anew for each K), read into this process.
Result<ScaleResult> MeasureScaling(const TrainingData& data, const SolveOptions& options, const ScaleOptions& scale);

// The Profile `nimbus simulate` runs on, measured on this machine with the real parts: the
// problem solved at each K on the threads runtime with the master Solve would run (workers
// computing one at a time, so each worker's round is timed on its own), a few rounds of a wide
// generated problem, messages through ZeroMQ on 127.0.0.1, and worker processes' starts (of
// options.runtime.worker_program, by default this program) and shard loads.
struct CalibrationOptions {
  std::vector<int> workers = {1, 2, 4, 8, 16};  // ascending
  int repetitions = 2;              // solves per K; the fastest counts
  int64_t wide_features = 1000000;  // the wide problem's d
  std::function<void(const std::string&)> progress;  // one line per step

  Status Validate() const;
};
Result<Profile> Calibrate(const TrainingData& data, const SolveOptions& options, const CalibrationOptions& calibration);

// ---- Checkpoints, files and tests ----------------------------------------------------------

// A run's checkpoint read back (CheckpointOptions::location): the state a solve resumes from
// (CheckpointOptions::resume), and the run's arguments and working directory as they were kept.
struct SavedRun {
  std::shared_ptr<const MasterState> state;
  int64_t next_round = 0;  // the round the state resumes with
  std::vector<std::string> arguments;
  std::string working_directory;
};
// NotFound, saying where it looked, when `location` (a directory or s3://bucket/prefix) holds
// no checkpoint.
Result<SavedRun> ReadSavedRun(const std::string& location);

// `text` into the file at `path`, whole or not at all (a temporary file, then a rename).
Status WriteTextFile(const std::string& path, std::string_view text);

// Tests only: faults the workers inject into themselves, as the specifications of `nimbus
// train --inject-crash P[@W]|@W:R`, `--inject-delay MS[:P][@W]` and `--inject-slow FACTOR@W`
// (each may be empty).
struct FaultSpecs {
  std::string crash, delay, slow;
  uint64_t seed = 1;
};
Status InjectFaultsForTests(const FaultSpecs& specs, SolveOptions* options);

// ---- Lambda functions ----------------------------------------------------------------------

// The deployment package of a provided.al2023 Lambda function that runs nimbus workers:
// bootstrap, bin/nimbus-lambda and every shared library it needs (the loader and C library
// included). A binary built for more than x86-64-v2 (-march=native, say) is refused unless
// allowed: a Lambda host's CPU may lack its instructions (docs/lambda.md).
struct LambdaPackageOptions {
  std::string binary;  // the program packaged as bin/nimbus-lambda; empty: nimbus-lambda beside this one
  bool allow_cpu_specific = false;
  std::function<void(const std::string&)> on_warning;  // a program without build notes, or allowed anyway
};
struct LambdaPackage {
  std::string built_for;       // what the program's build notes say
  std::size_t libraries = 0;   // shared libraries packed
  uint64_t zipped_bytes = 0, unpacked_bytes = 0;
};
// Writes the zip to `out` whole, or not at all.
Result<LambdaPackage> WriteLambdaPackage(const std::string& out, const LambdaPackageOptions& options);
// The function's runtime loop (nimbus-lambda's main): serves invocations through the Lambda
// Runtime API until the function's instance ends. The local stand-in for the service is the
// LambdaEmulator (runtime/lambda_emulator.h). Both need the build's Lambda part
// (RuntimeAvailable(RuntimeKind::kLambda)).
int LambdaBootstrapMain();
// A program installed beside the running one (nimbus-lambda beside nimbus).
std::string SiblingProgram(const std::string& name);

// ---- A program's own workers ---------------------------------------------------------------

// Workers of the process and command runtimes (and Lambda functions) are programs started as
// `PROGRAM worker --connect ... --run ...`. The nimbus binary is one; a program that solves
// with a loss of its own (RegisterLoss) is its own worker program, so that its workers know
// that loss too. First thing in its main:
//
//   nimbus::RegisterLoss(std::make_shared<MyLoss>());
//   if (nimbus::IsWorkerInvocation(argc, argv)) return nimbus::WorkerMain(argc, argv);
//
// (the process runtime starts this same program by default: RuntimeOptions::worker_program).
bool IsWorkerInvocation(int argc, char** argv);
// Serves one worker until the master says BYE; returns the process's exit code.
// `process_start_wall` (WallSeconds() at process start) times cold starts; 0: now.
int WorkerMain(int argc, char** argv, double process_start_wall = 0);

// A part of TrainingData::HeldByWorkers, as the process that holds it has it: labels as the
// data has them (encoded as the plan of all the parts says), weights one per row or none.
struct HeldPart {
  std::string key;
  CsrView matrix;
  std::span<const double> labels, weights;
};
// Runs one worker here, on this thread, until it leaves, serving `part` (copied first):
// `arguments` and `client_secret` as WorkerStart gives them. Returns the worker's exit code
// (0: the master said BYE); an error (bad arguments, a part that does not fit its CSR) is
// printed to standard error, as `nimbus worker` prints it, with a non-zero code.
int ServeWorker(const std::vector<std::string>& arguments, const std::string& client_secret, const HeldPart& part);

}  // namespace nimbus
