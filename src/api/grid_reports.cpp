// What `nimbus path` and `nimbus cv` write and print of their results (nimbus/nimbus.h:
// PathResult, CvResult): the tables, JSON, gnuplot data and plots.
#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nimbus/core/file_io.h"
#include "nimbus/core/format.h"
#include "nimbus/metrics/plot.h"
#include "nimbus/nimbus.h"

namespace nimbus {
namespace {

// The validation figures a model's kind has: accuracy, log loss, AUC for classifiers (log loss
// for logistic ones, AUC for two classes), MSE and R^2 for regression; NaN where none.
struct Scores {
  double accuracy = NAN, log_loss = NAN, auc = NAN, mse = NAN, r_squared = NAN;
};
Scores ScoresOf(const PathPoint& point) {
  Scores s;
  if (!point.validation) return s;
  const Evaluation& e = *point.validation;
  if (!e.classification) {
    s.mse = e.mean_squared_error;
    s.r_squared = e.r_squared;
    return s;
  }
  s.accuracy = e.accuracy;
  if (point.model.loss == Loss::kLogistic) s.log_loss = e.log_loss;
  if (e.class_values.empty()) s.auc = e.auc;
  return s;
}

std::string Cell(double value, const char* format) { return std::isnan(value) ? "-" : Format(format, value); }

}  // namespace

std::string PathResult::TableHeader(Loss loss) {
  const bool regression = !IsClassification(loss);
  return Format("  %3s  %11s  %8s  %14s  %6s  %5s  %8s  %s\n", "#", "lambda", "nonzeros", "objective", "rounds", "steps",
                "seconds", regression ? "     val MSE       val R^2" : "val accuracy  val log loss   val AUC");
}

std::string PathResult::TableRow(std::size_t index, const PathPoint& p, Loss loss) {
  const bool regression = !IsClassification(loss);
  const Scores s = ScoresOf(p);
  const std::string scores = regression ? Format("%12s  %12s", Cell(s.mse, "%.6g").c_str(), Cell(s.r_squared, "%.6f").c_str())
                                        : Format("%12s  %12s  %8s", Cell(s.accuracy, "%.4f").c_str(),
                                                 Cell(s.log_loss, "%.6f").c_str(), Cell(s.auc, "%.4f").c_str());
  const Summary& m = p.summary;
  return Format("  %3zu  %11.5g  %8lld  %14.10g  %6d  %5d  %8.3f  %s%s\n", index + 1, p.lambda,
                static_cast<long long>(m.nnz), m.objective, m.rounds, m.iterations, m.setup_seconds + m.solve_seconds,
                scores.c_str(), m.termination == Termination::kConverged ? "" : ("  " + std::string(TerminationName(m.termination))).c_str());
}

std::string PathResult::Heading() const {
  std::string heading =
      Format("nimbus path: %s, %s from %.5g (lambda_max) in %zu points, %s workers (%s)\n", data.c_str(),
             NameOf(penalty).data(), lambda_max, points.size(),
             points.empty() ? "-" : std::to_string(points.front().summary.workers).c_str(), NameOf(runtime).data());
  if (!points.empty() && !points.front().summary.algorithm_reason.empty()) {
    const Summary& first = points.front().summary;
    heading += Format("  solved by %s (%s)\n", NameOf(first.algorithm).data(), first.algorithm_reason.c_str());
  }
  return heading;
}

std::string PathResult::Footer() const {
  return Format("  %.3f s in all (%.3f s loading the data), $%.5f at Lambda's prices\n", wall_seconds, load_seconds,
                cost_dollars);
}

std::string PathResult::ToJson() const {
  const PathResult& result = *this;
  nlohmann::ordered_json json;
  json["data"] = data;
  json["penalty"] = result.penalty;
  json["lambda_max"] = result.lambda_max;
  json["runtime"] = runtime;
  json["load_seconds"] = result.load_seconds;
  json["wall_seconds"] = result.wall_seconds;
  json["cost_dollars"] = result.cost_dollars;
  if (!result.points.empty()) {
    json["algorithm"] = NameOf(result.points.front().summary.algorithm);
    json["algorithm_reason"] = result.points.front().summary.algorithm_reason;
  }
  json["points"] = nlohmann::ordered_json::array();
  for (const PathPoint& p : result.points) {
    const Summary& m = p.summary;
    nlohmann::ordered_json point = {{"lambda", p.lambda},           {"nonzeros", m.nnz},
                                    {"objective", m.objective},     {"rounds", m.rounds},
                                    {"iterations", m.iterations},   {"termination", TerminationName(m.termination)},
                                    {"algorithm", NameOf(m.algorithm)}, {"setup_seconds", m.setup_seconds},
                                    {"solve_seconds", m.solve_seconds}, {"cost_dollars", m.cost_dollars}};
    if (p.validation) point["validation"] = nlohmann::ordered_json::parse(p.validation->ToJson());
    json["points"].push_back(std::move(point));
  }
  return json.dump(2) + "\n";
}

namespace {

// path.dat and the plot of nonzeros and the validation loss (or the training objective)
// against lambda.
Result<std::vector<std::string>> WritePlot(const PathResult& result, const std::string& directory,
                                           const std::string& gnuplot) {
  const bool regression = !IsClassification(result.loss);
  std::string dat = "# lambda nonzeros objective val_accuracy val_log_loss val_auc val_mse val_r2\n";
  for (const PathPoint& p : result.points) {
    const Scores s = ScoresOf(p);
    dat += Format("%.10g %lld %.12g %.8g %.8g %.8g %.8g %.8g\n", p.lambda, static_cast<long long>(p.summary.nnz),
                  p.summary.objective, s.accuracy, s.log_loss, s.auc, s.mse, s.r_squared);
  }
  NIMBUS_RETURN_IF_ERROR(WriteFileAtomically(directory + "/path.dat", dat));
  const bool validated = result.validated;
  const bool logistic = result.loss == Loss::kLogistic;
  const std::string second = !validated ? "3 t 'training objective'"
                             : regression ? "7 t 'validation MSE'"
                             : logistic  ? "5 t 'validation log loss'"
                                         : "4 t 'validation accuracy'";
  PlotScript plots;
  const std::string penalty(NameOf(result.penalty));
  plots.Add("path", "set title 'Regularization path (" + penalty + ")'\n"
            "set xlabel '" + penalty + " lambda'\nset logscale x\nset xrange [*:*] reverse\n"
            "set ylabel 'nonzeros'\nset y2label '" + second.substr(second.find('\'') + 1, second.rfind('\'') - second.find('\'') - 1) + "'\n"
            "set ytics nomirror\nset y2tics\n"
            "plot 'path.dat' u 1:2 w lp t 'nonzeros', '' u 1:" + second.substr(0, second.find(' ')) +
            " axes x1y2 w lp dt 2" + second.substr(second.find(' ')) + "\n"
            "unset logscale x\nset xrange [*:*] noreverse\nunset y2tics\nunset y2label\nset ytics mirror");
  return plots.Render(directory, "path.gp", gnuplot);
}

}  // namespace

Result<std::vector<std::string>> PathResult::Write(const std::string& directory, const std::string& gnuplot,
                                                   bool models) const {
  NIMBUS_RETURN_IF_ERROR(MakeDirectories(directory));
  std::string table = Heading() + TableHeader(loss);
  for (std::size_t i = 0; i < points.size(); ++i) table += TableRow(i, points[i], loss);
  NIMBUS_RETURN_IF_ERROR(WriteFileAtomically(directory + "/path.txt", table + Footer()));
  NIMBUS_RETURN_IF_ERROR(WriteFileAtomically(directory + "/path.json", ToJson()));
  if (models) {
    NIMBUS_RETURN_IF_ERROR(MakeDirectories(directory + "/models"));
    for (std::size_t i = 0; i < points.size(); ++i) {
      const std::string name = Format("%s/models/point-%02zu.json", directory.c_str(), i + 1);
      NIMBUS_RETURN_IF_ERROR(WriteModel(points[i].model, ModelFormat::kJson, name));
    }
  }
  return WritePlot(*this, directory, gnuplot);
}

// A column per figure (CvPoint::scores), in the order of their names.
std::string CvResult::TableHeader(const CvPoint& first) {
  std::string header = Format("  %3s  %11s  %8s  %6s  %8s", "#", "lambda", "nonzeros", "rounds", "seconds");
  for (const auto& [name, score] : first.scores) header += Format("  %21s", (name + " (mean, std)").c_str());
  return header + "\n";
}

std::string CvResult::TableRow(std::size_t index, const CvPoint& p) {
  const Summary& m = p.summary;
  std::string row = Format("  %3zu  %11.5g  %8lld  %6d  %8.3f", index + 1, p.lambda, static_cast<long long>(m.nnz),
                           m.rounds, m.setup_seconds + m.solve_seconds);
  for (const auto& [name, score] : p.scores) row += Format("  %11.6f %9.6f", score.mean, score.std);
  return row + (m.termination == Termination::kConverged ? "" : "  " + std::string(TerminationName(m.termination))) + "\n";
}

std::string CvResult::Heading() const {
  std::string heading =
      Format("nimbus cv: %s, %lld folds, %s over %zu lambdas from %.5g (lambda_max), %s workers (%s)\n", data.c_str(),
             static_cast<long long>(folds), NameOf(penalty).data(), points.size(), lambda_max,
             points.empty() ? "-" : std::to_string(points.front().summary.workers).c_str(), NameOf(runtime).data());
  if (!points.empty() && !points.front().summary.algorithm_reason.empty()) {
    const Summary& first = points.front().summary;
    heading += Format("  solved by %s (%s)\n", NameOf(first.algorithm).data(), first.algorithm_reason.c_str());
  }
  return heading;
}

std::string CvResult::Footer() const {
  const CvResult& result = *this;
  if (result.points.empty()) return "";
  const CvPoint& best = result.points[result.best];
  const CvPoint& one_se = result.points[result.one_se];
  return Format("  best %s: %.6f at lambda %.5g (#%zu); one standard error: lambda %.5g (#%zu, %.6f)\n"
                "  %.3f s in all (%.3f s loading the data), $%.5f at Lambda's prices\n",
                result.metric.c_str(), best.scores.at(result.metric).mean, best.lambda, result.best + 1, one_se.lambda,
                result.one_se + 1, one_se.scores.at(result.metric).mean, result.wall_seconds, result.load_seconds,
                result.cost_dollars);
}

std::string CvResult::ToJson(bool refit_one_se) const {
  const CvResult& result = *this;
  nlohmann::ordered_json json;
  json["data"] = data;
  json["folds"] = result.folds;
  json["seed"] = seed;
  json["penalty"] = result.penalty;
  json["metric"] = result.metric;
  json["lambda_max"] = result.lambda_max;
  json["runtime"] = runtime;
  if (!result.points.empty()) {
    json["algorithm"] = NameOf(result.points.front().summary.algorithm);
    json["algorithm_reason"] = result.points.front().summary.algorithm_reason;
    json["best"] = {{"point", result.best + 1}, {"lambda", result.points[result.best].lambda}};
    json["one_se"] = {{"point", result.one_se + 1}, {"lambda", result.points[result.one_se].lambda}};
  }
  json["refit"] = refit_one_se ? "1se" : "best";
  json["load_seconds"] = result.load_seconds;
  json["wall_seconds"] = result.wall_seconds;
  json["cost_dollars"] = result.cost_dollars;
  json["points"] = nlohmann::ordered_json::array();
  for (const CvPoint& p : result.points) {
    const Summary& m = p.summary;
    nlohmann::ordered_json point = {{"lambda", p.lambda},         {"nonzeros", m.nnz},
                                    {"objective", m.objective},   {"rounds", m.rounds},
                                    {"iterations", m.iterations}, {"termination", TerminationName(m.termination)},
                                    {"setup_seconds", m.setup_seconds}, {"solve_seconds", m.solve_seconds}};
    for (const auto& [name, score] : p.scores) point["scores"][name] = {{"mean", score.mean}, {"std", score.std}};
    point["folds"] = nlohmann::ordered_json::array();
    for (const Evaluation& e : p.folds) point["folds"].push_back(nlohmann::ordered_json::parse(e.ToJson()));
    json["points"].push_back(std::move(point));
  }
  return json.dump(2) + "\n";
}

namespace {

// cv.dat and the plot of the metric's mean with one standard deviation, and the nonzeros.
Result<std::vector<std::string>> WritePlot(const CvResult& result, const std::string& directory,
                                           const std::string& gnuplot) {
  std::string dat = "# lambda nonzeros mean std (" + result.metric + ")\n";
  for (const CvPoint& p : result.points) {
    const CvScore& s = p.scores.at(result.metric);
    dat += Format("%.10g %lld %.10g %.10g\n", p.lambda, static_cast<long long>(p.summary.nnz), s.mean, s.std);
  }
  NIMBUS_RETURN_IF_ERROR(WriteFileAtomically(directory + "/cv.dat", dat));
  PlotScript plots;
  const std::string penalty(NameOf(result.penalty));
  plots.Add("cv", "set title '" + std::to_string(result.folds) + "-fold cross-validation (" + penalty + ")'\n"
            "set xlabel '" + penalty + " lambda'\nset logscale x\nset xrange [*:*] reverse\n"
            "set ylabel '" + result.metric + "'\nset y2label 'nonzeros'\nset ytics nomirror\nset y2tics\n"
            "plot 'cv.dat' u 1:3:4 w yerrorlines t '" + result.metric + " (mean, std)', "
            "'' u 1:2 axes x1y2 w lp dt 2 t 'nonzeros'\n"
            "unset logscale x\nset xrange [*:*] noreverse\nunset y2tics\nunset y2label\nset ytics mirror");
  return plots.Render(directory, "cv.gp", gnuplot);
}

}  // namespace

Result<std::vector<std::string>> CvResult::Write(const std::string& directory, const std::string& gnuplot,
                                                 bool refit_one_se) const {
  NIMBUS_RETURN_IF_ERROR(MakeDirectories(directory));
  std::string table = Heading();
  if (!points.empty()) table += TableHeader(points.front());
  for (std::size_t i = 0; i < points.size(); ++i) table += TableRow(i, points[i]);
  NIMBUS_RETURN_IF_ERROR(WriteFileAtomically(directory + "/cv.txt", table + Footer()));
  NIMBUS_RETURN_IF_ERROR(WriteFileAtomically(directory + "/cv.json", ToJson(refit_one_se)));
  if (!points.empty()) {
    const CvPoint& chosen = points[refit_one_se ? one_se : best];
    NIMBUS_RETURN_IF_ERROR(WriteModel(chosen.model, ModelFormat::kJson, directory + "/model.json"));
  }
  return WritePlot(*this, directory, gnuplot);
}

}  // namespace nimbus
