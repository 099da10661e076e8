// Cross-validation (nimbus.h: CrossValidate): the K folds' training problems and the problem
// on all the data, as copies of one problem (ProblemSpec::copies), solved side by side along
// a regularization path's grid; each fold's model scored on the rows it did not see, by the
// workers that hold those rows (RoundKind::kScore), so the master reads no row.
#include <cmath>

#include "nimbus/api/plan.h"
#include "nimbus/core/clock.h"
#include "nimbus/core/vector_ops.h"
#include "nimbus/data/folds.h"
#include "nimbus/model/partial_evaluation.h"
#include "nimbus/nimbus.h"
#include "nimbus/worker/held_out_scores.h"

namespace nimbus {

Status CvOptions::Validate() const {
  if (folds < 2 || folds > kMaxFolds) {
    return InvalidArgument("--folds: must be in [2, " + std::to_string(kMaxFolds) + "]");
  }
  if (!metric.empty() && metric != "log_loss" && metric != "accuracy" && metric != "auc" && metric != "mse") {
    return InvalidArgument("--metric: '" + metric + "' is not log_loss, accuracy, auc or mse");
  }
  return path.Validate();
}

namespace {

// The options and grid a cv solves: with the varied term given as an option (l1, or l2 alone),
// that one lambda.
std::pair<SolveOptions, PathOptions> OneLambdaOrGrid(const SolveOptions& options, const PathOptions& path) {
  SolveOptions solve = options;
  PathOptions grid = path;
  if (path.lambdas.empty() && path.liblinear_cs.empty() && (options.l1 || options.l2)) {
    grid.penalty = options.l1 ? Penalty::kL1 : Penalty::kL2;
    grid.lambdas = {options.l1 ? *options.l1 : *options.l2};
    (options.l1 ? solve.l1 : solve.l2).reset();
  }
  return {solve, grid};
}

// The metric that chooses lambda: the options', or the loss's default.
Result<std::string> MetricOf(const std::string& asked, const ProblemSpec& spec) {
  const bool classification = IsClassification(spec.loss);
  const bool logistic = spec.loss == Loss::kLogistic;
  const std::string metric = !asked.empty() ? asked : !classification ? "mse" : logistic ? "log_loss" : "accuracy";
  if ((metric == "mse") == classification) {
    return InvalidArgument("--metric " + metric + ": " + (classification ? "the data is a classifier's (its loss is " +
                                                                               std::string(LossName(spec.loss)) + ")"
                                                                         : "for classifiers; a regression has mse"));
  }
  if (metric == "log_loss" && !logistic) return InvalidArgument("--metric log_loss: only logistic models give probabilities");
  if (metric == "auc" && spec.class_count() != 2) return InvalidArgument("--metric auc: for two classes only");
  return metric;
}

bool HigherIsBetter(const std::string& metric) { return metric == "accuracy" || metric == "auc"; }

// An evaluation's figures by name: those its kind of model has.
std::map<std::string, double> FiguresOf(const Evaluation& e, const ProblemSpec& spec) {
  if (!e.classification) return {{"mse", e.mean_squared_error}, {"r_squared", e.r_squared}};
  std::map<std::string, double> figures{{"accuracy", e.accuracy}};
  if (spec.loss == Loss::kLogistic) figures["log_loss"] = e.log_loss;
  if (spec.class_count() == 2) figures["auc"] = e.auc;
  return figures;
}

// Each figure per fold, and its mean and standard deviation (K - 1 degrees of freedom).
std::map<std::string, CvScore> ScoresOf(const std::vector<Evaluation>& folds, const ProblemSpec& spec) {
  std::map<std::string, std::vector<double>> values;
  for (const Evaluation& e : folds) {
    for (const auto& [name, value] : FiguresOf(e, spec)) values[name].push_back(value);
  }
  std::map<std::string, CvScore> scores;
  for (auto& [name, v] : values) {
    double mean = 0, squares = 0;
    for (const double x : v) mean += x / static_cast<double>(v.size());
    for (const double x : v) squares += (x - mean) * (x - mean);
    scores[name] = {mean, v.size() > 1 ? std::sqrt(squares / static_cast<double>(v.size() - 1)) : 0.0, std::move(v)};
  }
  return scores;
}

// The best point by the metric's mean, and the largest lambda (the first point: the grid
// descends) whose mean is within one standard error of the best's (glmnet's lambda.1se).
void ChoosePoints(CvResult& result) {
  const bool higher = HigherIsBetter(result.metric);
  auto mean = [&](std::size_t i) { return result.points[i].scores.at(result.metric).mean; };
  for (std::size_t i = 1; i < result.points.size(); ++i) {
    if (higher ? mean(i) > mean(result.best) : mean(i) < mean(result.best)) result.best = i;
  }
  if (result.points.empty()) return;
  const CvScore& best = result.points[result.best].scores.at(result.metric);
  const double error = best.std / std::sqrt(static_cast<double>(result.folds));
  result.one_se = result.best;
  for (std::size_t i = 0; i < result.best; ++i) {
    if (higher ? mean(i) >= best.mean - error : mean(i) <= best.mean + error) {
      result.one_se = i;
      break;
    }
  }
}

// The copies: fold k's training problem weighs its rows N / (N - N_k), the last copy is all
// the data.
void SetCopies(ProblemSpec& spec, const std::vector<int64_t>& fold_rows) {
  spec.copies = static_cast<int64_t>(fold_rows.size()) + 1;
  spec.copy_scales.clear();
  const auto n = static_cast<double>(spec.rows);
  for (const int64_t held_out : fold_rows) spec.copy_scales.push_back(n / (n - static_cast<double>(held_out)));
  spec.copy_scales.push_back(1.0);
}

// Each row's fold (data/folds.h), and each fold's rows. Rows in memory are dealt here (and
// `fold_of_rows` lists them); text is dealt by each worker from its rows' classes and the
// classes' rows before its part, as the whole would be.
Result<std::vector<int64_t>> DealFolds(Plan& plan, const CvOptions& cv, std::vector<uint8_t>* fold_of_rows) {
  if (plan.data) {
    NIMBUS_ASSIGN_OR_RETURN(*fold_of_rows, StratifiedFolds(plan.data->labels, plan.labels.classification, cv.folds,
                                                           cv.seed));
    plan.data->AdoptFolds(*fold_of_rows);
    std::vector<int64_t> rows(static_cast<std::size_t>(cv.folds), 0);
    for (const uint8_t fold : *fold_of_rows) ++rows[fold];
    return rows;
  }
  if (cv.folds > plan.spec.rows) {
    return InvalidArgument("--folds: " + std::to_string(cv.folds) + " folds of " + std::to_string(plan.spec.rows) +
                           " rows");
  }
  plan.text->folds = cv.folds;
  plan.text->fold_seed = cv.seed;
  const FoldPlan whole = plan.text->FoldsOf(0);
  return FoldDealer(cv.folds, cv.seed, whole.class_rows, {}).FoldRows();
}

// One score round: the model and the question to every worker, and their answers.
Result<std::vector<WorkerReply>> AskWorkers(PointWorkers& workers, const SharedVector& model, const ScoreQuery& query,
                                            double timeout_seconds) {
  RoundRequest request;
  request.kind = RoundKind::kScore;
  request.round = workers.next_round++;
  request.z = model;
  request.query = SharedVector(query.Pack());
  std::vector<WorkerReply> replies = workers.executor.RunRound(request, Deadline::After(timeout_seconds));
  for (const WorkerReply& reply : replies) {
    if (reply.status != ReplyStatus::kOk) {
      return Unavailable("worker " + std::to_string(reply.worker) + " could not score its rows: " +
                         (reply.error.empty() ? ReplyStatusName(reply.status) : reply.error));
    }
  }
  return replies;
}

// Each fold's sums (and the whole's) and AUC, added up over the workers' answers.
struct FoldFigures {
  std::vector<EvaluationSums> sums;  // the folds', then the whole's
  std::vector<AucRefinement> aucs;   // two classes: the folds'

  Status Add(const WorkerReply& reply, int level) {
    std::span<const double> in = reply.w.span();
    for (std::size_t k = 0; level == 0 && k < sums.size(); ++k) {
      EvaluationSums part(sums[k].loss, sums[k].classes, sums[k].multinomial);
      NIMBUS_RETURN_IF_ERROR(part.ReadFrom(in));
      sums[k].Merge(part);
    }
    for (AucRefinement& auc : aucs) NIMBUS_RETURN_IF_ERROR(auc.Add(in));
    if (!in.empty()) return InvalidArgument("an answer longer than its question");
    return Status::Ok();
  }
  // The AUC's question after this round's: the prefixes still open, fold by fold.
  ScoreQuery Next(const ScoreQuery& asked) {
    ScoreQuery next{asked.model_round, asked.level + 1, {}};
    for (std::size_t k = 0; k < aucs.size(); ++k) {
      aucs[k].Advance();
      for (const uint64_t prefix : aucs[k].open()) next.prefixes.emplace_back(static_cast<int64_t>(k), prefix);
    }
    return next;
  }
};

// The figures of each fold's model on the rows it held out, and of the model on all the data,
// from the workers that hold the rows: a round for the sums and the AUC's first digits, then
// the AUC's refinement (at most kAucLevels rounds in all).
Result<FoldFigures> ScoreFolds(const ProblemSpec& spec, const std::vector<double>& model, PointWorkers& workers,
                               double timeout_seconds) {
  const auto folds = static_cast<std::size_t>(spec.copies - 1);
  FoldFigures figures{std::vector<EvaluationSums>(folds + 1, EvaluationSums(spec.loss, spec.classes, spec.multinomial)),
                      std::vector<AucRefinement>(IsClassification(spec.loss) && spec.classes == 1 ? folds : 0)};
  const SharedVector z(model);
  ScoreQuery query{workers.next_round, 0, {}};
  for (std::size_t k = 0; k < figures.aucs.size(); ++k) query.prefixes.emplace_back(static_cast<int64_t>(k), 0);
  while (true) {
    NIMBUS_ASSIGN_OR_RETURN(const std::vector<WorkerReply> replies, AskWorkers(workers, z, query, timeout_seconds));
    for (const WorkerReply& reply : replies) {
      NIMBUS_RETURN_IF_ERROR(figures.Add(reply, query.level).WithContext("worker " + std::to_string(reply.worker)));
    }
    query = figures.Next(query);
    if (query.prefixes.empty()) return figures;
  }
}

// A point of the grid: each fold's model on its held-out rows, and the model on all the data.
Result<CvPoint> PointOf(const Plan& plan, const SolveOptions& options, double lambda, Solution solution,
                        PointWorkers& workers) {
  NIMBUS_ASSIGN_OR_RETURN(const FoldFigures figures,
                          ScoreFolds(plan.spec, solution.model, workers, options.admm.round_timeout_seconds));
  CvPoint point;
  point.lambda = lambda;
  const int64_t folds = plan.spec.copies - 1;
  for (int64_t k = 0; k < folds; ++k) {
    const Model model = ModelOf(plan, CopyOfModel(plan.spec, solution.model, k));
    point.folds.push_back(figures.sums[static_cast<std::size_t>(k)].Finish(model));
    if (!figures.aucs.empty()) point.folds.back().auc = figures.aucs[static_cast<std::size_t>(k)].Auc();
  }
  point.scores = ScoresOf(point.folds, plan.spec);
  point.model = ModelOf(plan, CopyOfModel(plan.spec, solution.model, folds));
  // The summary's figures of the model on all the data (its own objective and nonzeros).
  point.summary = std::move(solution.summary);
  point.summary.objective = figures.sums.back().Finish(point.model).objective;
  point.summary.nnz = static_cast<int64_t>(CountNonzeros(
      std::span<const double>(point.model.weights).first(static_cast<std::size_t>(point.model.held() * point.model.classes))));
  point.summary.cols = SourceCols(plan);
  AddCostEstimate(options.prices, plan, &point.summary);
  return point;
}

// Each fold's held-out rows, as data sets of their own (the column method's folds, in memory).
std::vector<Dataset> HeldOutRows(const Dataset& data, std::span<const uint8_t> fold_of_rows, int64_t folds) {
  std::vector<std::vector<int64_t>> rows(static_cast<std::size_t>(folds));
  for (std::size_t r = 0; r < fold_of_rows.size(); ++r) rows[fold_of_rows[r]].push_back(static_cast<int64_t>(r));
  std::vector<Dataset> held_out;
  for (const std::vector<int64_t>& fold : rows) held_out.push_back(data.SelectRows(fold));
  return held_out;
}

// A point of the column method's grid: each fold's model on its held-out rows, here, and the
// model on all the data.
CvPoint PointOf(const Plan& plan, const SolveOptions& options, double lambda, FoldSolutions solutions,
                const std::vector<Dataset>& held_out) {
  CvPoint point;
  point.lambda = lambda;
  for (std::size_t k = 0; k < held_out.size(); ++k) {
    const Model model = ModelOf(plan, std::move(solutions.folds[k]));
    point.folds.push_back(Evaluate(model, held_out[k], plan.spec.class_weights));
  }
  point.scores = ScoresOf(point.folds, plan.spec);
  SolveResult whole = ResultOf(plan, options, std::move(solutions.whole));
  point.model = std::move(whole.model);
  point.summary = std::move(whole.summary);
  return point;
}

// auto's choice for cross-validation along an l1 grid on this process's threads: the column
// method, its folds' paths side by side on the cores (one block each), when K + 4 copies of the
// data fit in half the machine's memory (the data, its folds' held-out rows, the whole's blocks
// by columns and the K folds' taken from them, about K + 2, with room to spare: Fashion-MNIST's
// 5 folds peaked at 6.7 times its 300 MB file, 8.1 before the folds' blocks came from the whole's).
// docs/benchmarks.md ("Cross-validation by columns"):
// 2.5x faster than Newton's copies on Debian packages (7.9 s against 19.5 s) and 1.8x on
// Fashion-MNIST (97.8 s against 173.4 s), sparse text and dense pixels. Sets `solve` to it and
// returns the reason, or returns "" and leaves `solve` as it was.
std::string ChooseColumns(const TrainingData& data, const PathOptions& grid, const CvOptions& cv, SolveOptions& solve) {
  if (grid.penalty != Penalty::kL1) return "";
  return ChooseColumnsHere(data, static_cast<int>(cv.folds) + 4,
                           "auto: cross-validation along an l1 grid on this process's threads, each fold's path on a "
                           "core",
                           solve);
}

// The grid's points, each scored on the folds' held-out rows: by the column method (each fold's
// path, and the whole's, side by side here), or as copies of one problem on the workers.
Result<GridOutcome> SolveCvGrid(Plan& plan, const SolveOptions& solve, const PathOptions& grid,
                                const std::string& reason, const std::vector<int64_t>& fold_rows,
                                const CvResult& result, const std::function<Status(CvPoint)>& add_point) {
  if (solve.algorithm == Algorithm::kColumns) {
    const std::vector<Dataset> held_out = HeldOutRows(*plan.data, result.fold_of_rows, result.folds);
    return SolveFoldsByColumns(plan, solve, grid, result.load_seconds, result.fold_of_rows, result.folds, reason,
                               [&](double lambda, FoldSolutions solutions) {
                                 return add_point(PointOf(plan, solve, lambda, std::move(solutions), held_out));
                               });
  }
  SetCopies(plan.spec, fold_rows);
  NIMBUS_RETURN_IF_ERROR(plan.spec.Validate());  // K + 1 copies of the model must still fit
  return SolveGrid(plan, solve, grid, result.load_seconds,
                   [&](double lambda, Solution solution, PointWorkers& workers) -> Status {
                     NIMBUS_ASSIGN_OR_RETURN(CvPoint point,
                                             PointOf(plan, solve, lambda, std::move(solution), workers));
                     return add_point(std::move(point));
                   });
}

}  // namespace

Result<CvResult> CrossValidate(const TrainingData& data, const SolveOptions& options, const CvOptions& cv) {
  Stopwatch wall;
  NIMBUS_RETURN_IF_ERROR(cv.Validate());
  const std::string not_a_store = "cv: give the LIBSVM text, not the store " + data.location() +
                                  " (the folds are dealt by each row's class, which a store does not list)";
  if (data.is_store()) return InvalidArgument(not_a_store);
  NIMBUS_RETURN_IF_ERROR(ValidateHeldParts(data, options));
  auto [solve, grid] = OneLambdaOrGrid(options, cv.path);
  const std::string reason = ChooseColumns(data, grid, cv, solve);
  NIMBUS_ASSIGN_OR_RETURN(Plan plan, PlanPath(data, solve, grid));
  if (!reason.empty() && plan.spec.classes > 1) {  // one-vs-rest's grids are Newton's, on the default workers
    solve = OneLambdaOrGrid(options, cv.path).first;
    NIMBUS_RETURN_IF_ERROR(RepartitionForDefaultWorkers(plan));
  }
  if (!plan.data && !plan.text) return InvalidArgument(not_a_store);
  CvResult result;
  result.penalty = grid.penalty;
  result.data = data.location();
  result.runtime = solve.runtime.kind;
  result.seed = cv.seed;
  result.folds = cv.folds;
  result.rows = plan.spec.rows;
  NIMBUS_ASSIGN_OR_RETURN(result.metric, MetricOf(cv.metric, plan.spec));
  NIMBUS_ASSIGN_OR_RETURN(const std::vector<int64_t> fold_rows, DealFolds(plan, cv, &result.fold_of_rows));
  result.load_seconds = wall.ElapsedSeconds();
  const std::function<Status(CvPoint)> add_point = [&](CvPoint point) {
    if (cv.on_point) cv.on_point(point);
    result.points.push_back(std::move(point));
    return Status::Ok();
  };
  NIMBUS_ASSIGN_OR_RETURN(const GridOutcome outcome,
                          SolveCvGrid(plan, solve, grid, reason, fold_rows, result, add_point));
  result.lambda_max = outcome.lambda_max;
  result.cost_dollars = outcome.cost_dollars;
  ChoosePoints(result);
  result.wall_seconds = wall.ElapsedSeconds();
  return result;
}

}  // namespace nimbus
