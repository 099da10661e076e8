// Cross-validation (nimbus.h: CrossValidate): the K folds' training problems and the problem
// on all the data, as copies of one problem (ProblemSpec::copies), solved side by side along
// a regularization path's grid; each fold's model scored on the rows it did not see.
#include <cmath>

#include "nimbus/api/plan.h"
#include "nimbus/core/clock.h"
#include "nimbus/core/vector_ops.h"
#include "nimbus/data/folds.h"
#include "nimbus/nimbus.h"

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
  if (path.lambdas.empty() && (options.l1 || options.l2)) {
    grid.penalty = options.l1 ? "l1" : "l2";
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

// The copies: fold k's training problem weighs its rows N / N_k, the last copy is all the data.
void SetCopies(ProblemSpec& spec, const std::vector<Dataset>& held_out) {
  spec.copies = static_cast<int64_t>(held_out.size()) + 1;
  spec.copy_scales.clear();
  const auto n = static_cast<double>(spec.rows);
  for (const Dataset& fold : held_out) spec.copy_scales.push_back(n / (n - static_cast<double>(fold.rows())));
  spec.copy_scales.push_back(1.0);
}

// A point of the grid: each fold's model on its held-out rows, and the model on all the data.
CvPoint PointOf(const Plan& plan, const SolveOptions& options, const std::vector<Dataset>& held_out, double lambda,
                Solution solution) {
  CvPoint point;
  point.lambda = lambda;
  const auto folds = static_cast<int64_t>(held_out.size());
  for (int64_t k = 0; k < folds; ++k) {
    const Model model = ModelOf(plan, CopyOfModel(plan.spec, solution.model, k));
    point.folds.push_back(Evaluate(model, held_out[static_cast<std::size_t>(k)], plan.spec.class_weights));
  }
  point.scores = ScoresOf(point.folds, plan.spec);
  point.model = ModelOf(plan, CopyOfModel(plan.spec, solution.model, folds));
  // The summary's figures of the model on all the data (its own objective and nonzeros).
  ProblemSpec one = plan.spec;
  one.copies = 1;
  one.copy_scales.clear();
  point.summary = std::move(solution.summary);
  point.summary.objective = EvaluateObjective(one, plan.data->matrix, plan.data->labels, point.model.weights,
                                              plan.data->weights);
  point.summary.nnz = static_cast<int64_t>(
      CountNonzeros(std::span<const double>(point.model.weights).first(one.regularized_size())));
  point.summary.cols = SourceCols(plan);
  AddCostEstimate(options.prices, plan, &point.summary);
  return point;
}

}  // namespace

Result<CvResult> CrossValidate(const TrainingData& data, const SolveOptions& options, const CvOptions& cv) {
  Stopwatch wall;
  NIMBUS_RETURN_IF_ERROR(cv.Validate());
  if (data.is_store()) {
    return InvalidArgument("cv: the folds are made from every row's label on the master; give the LIBSVM file, not "
                           "the store " + data.location());
  }
  const auto [solve, grid] = OneLambdaOrGrid(options, cv.path);
  NIMBUS_ASSIGN_OR_RETURN(Plan plan, PlanPath(data, solve, grid, /*rows_in_memory=*/true));
  if (!plan.data) {
    return InvalidArgument("cv: the folds are made from every row's label on the master; give LIBSVM text, not the "
                           "store " + data.location());
  }
  CvResult result;
  result.penalty = grid.penalty;
  result.folds = cv.folds;
  NIMBUS_ASSIGN_OR_RETURN(result.metric, MetricOf(cv.metric, plan.spec));
  NIMBUS_ASSIGN_OR_RETURN(result.fold_of_rows,
                          StratifiedFolds(plan.data->labels, plan.labels.classification, cv.folds, cv.seed));
  plan.data->AdoptFolds(result.fold_of_rows);
  std::vector<Dataset> held_out;
  for (const std::vector<int64_t>& rows : RowsOfFolds(result.fold_of_rows, cv.folds)) {
    held_out.push_back(plan.data->SelectRows(rows));
  }
  SetCopies(plan.spec, held_out);
  NIMBUS_RETURN_IF_ERROR(plan.spec.Validate());  // K + 1 copies of the model must still fit
  result.load_seconds = wall.ElapsedSeconds();
  NIMBUS_ASSIGN_OR_RETURN(const GridOutcome outcome,
                          SolveGrid(plan, solve, grid, result.load_seconds, [&](double lambda, Solution solution) {
                            CvPoint point = PointOf(plan, solve, held_out, lambda, std::move(solution));
                            if (cv.on_point) cv.on_point(point);
                            result.points.push_back(std::move(point));
                          }));
  result.lambda_max = outcome.lambda_max;
  result.cost_dollars = outcome.cost_dollars;
  ChoosePoints(result);
  result.wall_seconds = wall.ElapsedSeconds();
  return result;
}

}  // namespace nimbus
