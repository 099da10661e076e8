// The regularization path (nimbus.h: SolvePath): lambda_max from the gradient at the model
// no weight enters, then a descending grid, each point warm started from the one before.
#include <algorithm>
#include <cmath>
#include <utility>

#include "nimbus/api/plan.h"
#include "nimbus/core/clock.h"
#include "nimbus/core/format.h"
#include "nimbus/data/libsvm_reader.h"
#include "nimbus/nimbus.h"

namespace nimbus {

Status PathOptions::Validate() const {
  if (length < 1 || length > 1000) return InvalidArgument("--path-length: must be in [1, 1000]");
  if (min_ratio != 0 && !(min_ratio > 0 && min_ratio < 1)) return InvalidArgument("--path-min-ratio: must be in (0, 1)");
  for (const double lambda : lambdas) {
    if (!(lambda > 0) || !std::isfinite(lambda)) {
      return InvalidArgument("--lambdas: " + Format("%g", lambda) + " is not a finite number > 0");
    }
  }
  for (const double c : liblinear_cs) {
    if (!(c > 0) || !std::isfinite(c)) return InvalidArgument("Cs: " + Format("%g", c) + " is not a finite number > 0");
  }
  if (!lambdas.empty() && !liblinear_cs.empty()) return InvalidArgument("path: the grid as lambdas or as Cs, not both");
  return Status::Ok();
}

namespace {

// An l1 no weight's gradient passes: the model of the path's start (the intercept alone).
constexpr double kNoWeightEnters = 1e300;
// For l2 the grid starts where every weight is below about 1e-3 (glmnet's rule for ridge).
constexpr double kRidgeStart = 1e3;

// The same started workers for solve after solve: Start starts them once, Stop keeps them
// (Release stops them), and each solve's counters are its own.
class KeptExecutor final : public Executor {
 public:
  explicit KeptExecutor(Executor& inner) : inner_(inner) {}
  ~KeptExecutor() override { Release(); }

  std::string name() const override { return inner_.name(); }
  int workers() const override { return inner_.workers(); }
  Result<std::vector<WorkerReady>> Start(Deadline deadline) override {
    if (!ready_) {
      NIMBUS_ASSIGN_OR_RETURN(std::vector<WorkerReady> ready, inner_.Start(deadline));
      ready_ = std::move(ready);
    }
    return *ready_;
  }
  void Dispatch(const RoundRequest& request, std::span<const int> workers) override {
    inner_.Dispatch(request, workers);
  }
  std::vector<WorkerReply> Collect(int count, Deadline deadline) override { return inner_.Collect(count, deadline); }
  void Stop() override {}
  void Release() { inner_.Stop(); }
  void AddCounters(Summary& summary) const override {
    Summary now;
    inner_.AddCounters(now);
    summary.worker_restarts += now.worker_restarts - counted_.worker_restarts;
    summary.messages_dropped += now.messages_dropped - counted_.messages_dropped;
    summary.bytes_sent += now.bytes_sent - counted_.bytes_sent;
    summary.bytes_received += now.bytes_received - counted_.bytes_received;
    summary.clients_refused += now.clients_refused - counted_.clients_refused;
    summary.security = now.security;
    counted_ = now;
  }

 private:
  Executor& inner_;
  std::optional<std::vector<WorkerReady>> ready_;
  mutable Summary counted_;
};

// What a path cannot take, beyond Solve's checks.
Status CheckPathOptions(const SolveOptions& options, const PathOptions& path) {
  if (options.regularizer != nullptr) return InvalidArgument("path: a program's own regularizer has no lambda to vary");
  if (!options.checkpoint.location.empty()) return InvalidArgument("--checkpoint: not for a path (each point is short)");
  if (options.runtime.kind == RuntimeKind::kMpi) return InvalidArgument("--runtime mpi: not for a path (yet)");
  if (options.warm_start != nullptr) {
    return InvalidArgument("--warm-start: a path starts from no weight and warm-starts each point from the one before");
  }
  const bool l1 = path.penalty == Penalty::kL1;
  if (!l1 && options.algorithm == Algorithm::kColumns) {
    return InvalidArgument("--algorithm columns: l1 paths only (--penalty l1), its strong rules are l1's");
  }
  if (l1 ? options.l1.has_value() : options.l2.has_value()) {
    const std::string fixed = l1 ? "--l2" : "--l1";
    return InvalidArgument("--" + std::string(NameOf(path.penalty)) + ": the path varies it (give --lambdas for a grid of your own; " + fixed +
                           " stays fixed along the path)");
  }
  return Status::Ok();
}

}  // namespace

std::vector<double> PathGrid(const PathOptions& path, double lambda_max, int64_t rows) {
  std::vector<double> grid = path.lambdas;
  for (const double c : path.liblinear_cs) grid.push_back(1.0 / (c * static_cast<double>(rows)));
  if (grid.empty()) {
    for (int64_t i = 0; i < path.length; ++i) {
      const double t = path.length == 1 ? 0.0 : static_cast<double>(i) / static_cast<double>(path.length - 1);
      grid.push_back(lambda_max * std::pow(path.MinRatio(), t));
    }
  }
  std::sort(grid.begin(), grid.end(), std::greater<>());
  return grid;
}

namespace {

// The path's start x0 (no weight; the intercept at its own optimum) and the smooth part's
// gradient there, by Newton with an l1 no weight's gradient passes.
Result<Solution> SolvePathStart(const ProblemSpec& problem, const SolveOptions& options, Executor& executor,
                                TraceSink* trace) {
  ProblemSpec spec = problem;
  spec.regularizer.l1 = kNoWeightEnters;
  NewtonMaster master(spec, NewtonOptionsOf(options), &executor);
  if (trace != nullptr) master.SetTraceSink(trace);
  NIMBUS_ASSIGN_OR_RETURN(Solution start, master.Solve());
  if (!start.summary.ok()) return Unavailable("the path's start (no weight, lambda_max): " + start.summary.message);
  if (start.gradient.size() != spec.model_size()) return Internal("the path's start has no gradient");
  return start;
}

// The grid's first lambda: for l1 the largest |gradient| of a weight at x0, below which that
// weight enters the model.
Result<double> LambdaMax(const ProblemSpec& spec, std::span<const double> gradient, Penalty penalty) {
  double largest = 0;
  for (std::size_t j = 0; j < spec.regularized_size(); ++j) largest = std::max(largest, std::abs(gradient[j]));
  if (!(largest > 0)) {
    return InvalidArgument("path: every weight's gradient is zero where no weight is used (the features are all "
                           "zero, or carry nothing about the labels): every lambda gives the same model");
  }
  return penalty == Penalty::kL1 ? largest : kRidgeStart * largest;
}

// The points after the start, on `kept` workers (Newton) or on fresh ones per point (ADMM).
class GridRun {
 public:
  GridRun(Plan& plan, const SolveOptions& options, const MasterChoice& master, const PathOptions& path,
          TraceSink* trace)
      : plan_(plan), options_(options), master_(master), path_(path), trace_(trace) {}

  // The points of `grid` from the path's start, whose time goes to the first point's setup;
  // `total` sums the points' times and restarts. Ends after a point whose workers failed.
  Status Run(const std::vector<double>& grid, const Solution& start, KeptExecutor* kept, const GridPoint& point,
             Summary& total) {
    std::vector<double> x = start.model, scratch;
    int64_t next_round = start.summary.rounds;
    bool first = true;
    for (const double lambda : grid) {
      (path_.penalty == Penalty::kL1 ? plan_.spec.regularizer.l1 : plan_.spec.regularizer.l2) = lambda;
      // The stop test scales F's residual at x0 for this lambda, as a solve from x0 would.
      const double reference = OptimalityResidual(plan_.spec, start.model, start.gradient, scratch);
      WarmStart warm{x, kept != nullptr ? next_round : 0, reference};
      std::optional<Runtime> fresh_runtime;
      std::optional<KeptExecutor> fresh;
      if (kept == nullptr) NIMBUS_RETURN_IF_ERROR(StartFresh(fresh_runtime, fresh));
      Executor& executor = kept != nullptr ? *kept : *fresh;
      NIMBUS_ASSIGN_OR_RETURN(Solution solution, SolveOn(executor, warm));
      PointWorkers workers{executor, warm.first_round + solution.summary.rounds};
      x = solution.model;
      if (std::exchange(first, false)) solution.summary.setup_seconds += start.summary.setup_seconds + start.summary.solve_seconds;
      Tally(solution.summary, total);
      const bool failed = !solution.summary.ok();
      NIMBUS_RETURN_IF_ERROR(point(lambda, std::move(solution), workers));
      next_round = workers.next_round;
      if (failed) break;
    }
    return Status::Ok();
  }

 private:
  Result<Solution> SolveOn(Executor& executor, const WarmStart& warm) {
    std::unique_ptr<Master> master = MakeMaster(plan_.spec, master_, options_, &executor, trace_);
    master->WarmStartFrom(warm);
    return master->Solve();
  }

  // ADMM's workers keep duals of one problem: each point starts its own, kept past the
  // master's Stop until the point has been handed on (cross-validation scores on them).
  Status StartFresh(std::optional<Runtime>& runtime, std::optional<KeptExecutor>& workers) {
    NIMBUS_ASSIGN_OR_RETURN(runtime, MakeRuntime(options_.runtime, plan_, WorkerOptionsOf(options_)));
    if (runtime->remote != nullptr && trace_ != nullptr) runtime->remote->SetTraceSink(trace_);
    workers.emplace(*runtime->executor);
    return Status::Ok();
  }

  static void Tally(const Summary& point, Summary& total) {
    total.setup_seconds += point.setup_seconds;
    total.solve_seconds += point.solve_seconds;
    total.worker_restarts += point.worker_restarts;
    total.data_nnz = point.data_nnz;
  }

  Plan& plan_;
  const SolveOptions& options_;
  const MasterChoice& master_;
  const PathOptions& path_;
  TraceSink* trace_;
};

}  // namespace

Result<Plan> PlanPath(const TrainingData& data, const SolveOptions& options, const PathOptions& path,
                      bool rows_in_memory) {
  NIMBUS_RETURN_IF_ERROR(options.Validate());
  NIMBUS_RETURN_IF_ERROR(path.Validate());
  NIMBUS_RETURN_IF_ERROR(CheckPathOptions(options, path));
  SolveOptions planned = options;
  (path.penalty == Penalty::kL1 ? planned.l1 : planned.l2) = 1.0;  // a placeholder: each point sets its own
  const int64_t workers = PlannedWorkers(options);
  rows_in_memory = rows_in_memory || options.algorithm == Algorithm::kColumns;
  NIMBUS_ASSIGN_OR_RETURN(Plan plan, rows_in_memory ? PlanDataInMemory(data, workers, options.loss)
                                                    : PlanData(data, workers, options.loss));
  NIMBUS_RETURN_IF_ERROR(ScanData(plan, planned));
  NIMBUS_RETURN_IF_ERROR(SetProblem(planned, &plan));
  return plan;
}

Result<GridOutcome> SolveGrid(Plan& plan, const SolveOptions& options, const PathOptions& path, double load_seconds,
                              const GridPoint& point) {
  NIMBUS_RETURN_IF_ERROR(RefuseColumns(options, "cross-validation"));
  const MasterChoice master = ChooseMaster(options);
  NIMBUS_RETURN_IF_ERROR(CheckPlanFits(plan, options, master));
  const std::unique_ptr<TraceSink> trace = TraceSinkOf(options);
  NIMBUS_ASSIGN_OR_RETURN(Runtime runtime, MakeRuntime(options.runtime, plan, WorkerOptionsOf(options)));
  if (runtime.remote != nullptr && trace) runtime.remote->SetTraceSink(trace.get());
  KeptExecutor kept(*runtime.executor);
  NIMBUS_ASSIGN_OR_RETURN(Solution start, SolvePathStart(plan.spec, options, kept, trace.get()));
  GridOutcome outcome;
  NIMBUS_ASSIGN_OR_RETURN(outcome.lambda_max, LambdaMax(plan.spec, start.gradient, path.penalty));
  const bool newton = master.algorithm == Algorithm::kNewton;
  if (!newton) kept.Release();
  GridRun run(plan, options, master, path, trace.get());
  // The grid's price: its workers once, for every point's setup and solve.
  Summary total;
  total.load_seconds = load_seconds;
  NIMBUS_RETURN_IF_ERROR(run.Run(PathGrid(path, outcome.lambda_max, plan.spec.rows), start, newton ? &kept : nullptr, point, total));
  AddCostEstimate(options.prices, plan, &total);
  outcome.cost_dollars = total.cost_dollars;
  return outcome;
}

// auto's rule for an l1 path with an intercept (binary, logistic) on this process's threads,
// --workers not given: the column method, one block (strong rules, warm starts), when 4 copies
// of the data fit in half the memory (its paths peaked at 1.9-2.5 times their files).
// docs/benchmarks.md ("auto chooses the column method"): 20 points in 0.05-0.71x of Newton's
// time on 2 workers on Debian packages, Zipf text and Fashion-MNIST. Without an intercept
// Newton stays: on dense pixels the column method took 2.9x its time there.
namespace {
std::string ChooseColumnsForPath(const TrainingData& data, const PathOptions& path, SolveOptions& solve) {
  if (path.penalty != Penalty::kL1) return "";
  return ChooseColumnsWithIntercept(
      data, "auto: an l1 path with an intercept on this process's threads, one block of columns", solve);
}
}  // namespace

Result<PathResult> SolvePath(const TrainingData& data, const SolveOptions& requested, const PathOptions& path) {
  Stopwatch wall;
  NIMBUS_RETURN_IF_ERROR(ValidateHeldParts(data, requested));
  SolveOptions options = requested;
  std::string reason = ChooseColumnsForPath(data, path, options);
  NIMBUS_ASSIGN_OR_RETURN(Plan plan, PlanPath(data, options, path));
  if (!reason.empty() && plan.spec.classes > 1) {  // measured on binary problems: classes stay Newton's
    options = requested;
    reason.clear();
    NIMBUS_RETURN_IF_ERROR(RepartitionForDefaultWorkers(plan));
  }
  std::optional<Dataset> validation;
  if (!path.validation.empty()) {
    Result<Dataset> read = ReadLibsvmFileFor(path.validation, plan.labels);
    if (!read.ok()) return read.status().WithContext("--validation");
    validation = std::move(read).value();
  }
  PathResult result;
  result.penalty = path.penalty;
  result.data = data.location();
  result.runtime = options.runtime.kind;
  result.loss = options.loss;
  result.validated = validation.has_value();
  result.load_seconds = wall.ElapsedSeconds();
  const auto add_point = [&](double lambda, Solution solution) {
    PathPoint point{lambda, {}, {}, {}};
    SolveResult solved = ResultOf(plan, options, std::move(solution));
    point.model = std::move(solved.model);
    point.summary = std::move(solved.summary);
    point.summary.load_seconds = 0;  // the path's, once
    if (validation) point.validation = Evaluate(point.model, *validation, plan.spec.class_weights);
    if (path.on_point) path.on_point(point);
    result.points.push_back(std::move(point));
    return Status::Ok();
  };
  NIMBUS_ASSIGN_OR_RETURN(const GridOutcome grid,
                          options.algorithm == Algorithm::kColumns
                              ? SolveGridByColumns(plan, options, path, result.load_seconds, reason, add_point)
                              : SolveGrid(plan, options, path, result.load_seconds,
                                          [&](double lambda, Solution solution, PointWorkers&) {
                                            return add_point(lambda, std::move(solution));
                                          }));
  result.lambda_max = grid.lambda_max;
  result.cost_dollars = grid.cost_dollars;
  result.wall_seconds = wall.ElapsedSeconds();
  return result;
}

}  // namespace nimbus
