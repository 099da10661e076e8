// nimbus path: the regularization path over nimbus::SolvePath (nimbus/nimbus.h).
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "commands.h"
#include "nimbus/core/file_io.h"
#include "nimbus/core/format.h"
#include "nimbus/metrics/plot.h"
#include "nimbus/model/model.h"
#include "solve_setup.h"

namespace nimbus::cli {
namespace {

struct PathFlags : GridCommandFlags {
  PathOptions path;
  bool models = false;
};

void AddPathOptions(ArgParser& parser, PathFlags* flags) {
  flags->out = "nimbus-path";
  AddGridCommandOptions(parser, flags, &flags->path, "path.json");
  parser.AddString("validation", "FILE.svm", "held-out LIBSVM data to score every point on (accuracy, log loss, AUC;\n"
                   "                            MSE and R^2 for regression)", &flags->path.validation);
  parser.AddInt("workers", "K", "number of workers (default: cores for a file, shards for a directory)",
                &flags->problem.options.runtime.workers);
  parser.AddString("out", "DIR", "where to write path.txt, path.json, path.dat and the plot (default nimbus-path)",
                   &flags->out);
  parser.AddSwitch("models", "also write every point's model, DIR/models/point-NN.json", &flags->models);
}

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

std::string TableHeader(bool regression) {
  return Format("  %3s  %11s  %8s  %14s  %6s  %5s  %8s  %s\n", "#", "lambda", "nonzeros", "objective", "rounds", "steps",
                "seconds", regression ? "     val MSE       val R^2" : "val accuracy  val log loss   val AUC");
}

std::string TableRow(std::size_t index, const PathPoint& p, bool regression) {
  const Scores s = ScoresOf(p);
  const std::string scores = regression ? Format("%12s  %12s", Cell(s.mse, "%.6g").c_str(), Cell(s.r_squared, "%.6f").c_str())
                                        : Format("%12s  %12s  %8s", Cell(s.accuracy, "%.4f").c_str(),
                                                 Cell(s.log_loss, "%.6f").c_str(), Cell(s.auc, "%.4f").c_str());
  const Summary& m = p.summary;
  return Format("  %3zu  %11.5g  %8lld  %14.10g  %6d  %5d  %8.3f  %s%s\n", index + 1, p.lambda,
                static_cast<long long>(m.nnz), m.objective, m.rounds, m.iterations, m.setup_seconds + m.solve_seconds,
                scores.c_str(), m.termination == Termination::kConverged ? "" : ("  " + std::string(TerminationName(m.termination))).c_str());
}

std::string Heading(const PathFlags& flags, const PathResult& result) {
  const SolveOptions& options = flags.problem.options;
  return Format("nimbus path: %s, %s from %.5g (lambda_max) in %zu points, %s workers (%s)\n", flags.problem.data.c_str(),
                NameOf(result.penalty).data(), result.lambda_max, result.points.size(),
                result.points.empty() ? "-" : std::to_string(result.points.front().summary.workers).c_str(),
                NameOf(options.runtime.kind).data());
}

std::string Footer(const PathResult& result) {
  return Format("  %.3f s in all (%.3f s loading the data), $%.5f at Lambda's prices\n", result.wall_seconds,
                result.load_seconds, result.cost_dollars);
}

nlohmann::ordered_json JsonOf(const PathFlags& flags, const PathResult& result) {
  nlohmann::ordered_json json;
  json["data"] = flags.problem.data;
  json["penalty"] = result.penalty;
  json["lambda_max"] = result.lambda_max;
  json["runtime"] = flags.problem.options.runtime.kind;
  json["load_seconds"] = result.load_seconds;
  json["wall_seconds"] = result.wall_seconds;
  json["cost_dollars"] = result.cost_dollars;
  json["points"] = nlohmann::ordered_json::array();
  for (const PathPoint& p : result.points) {
    const Summary& m = p.summary;
    nlohmann::ordered_json point = {{"lambda", p.lambda},           {"nonzeros", m.nnz},
                                    {"objective", m.objective},     {"rounds", m.rounds},
                                    {"iterations", m.iterations},   {"termination", TerminationName(m.termination)},
                                    {"algorithm", m.algorithm},     {"setup_seconds", m.setup_seconds},
                                    {"solve_seconds", m.solve_seconds}, {"cost_dollars", m.cost_dollars}};
    if (p.validation) point["validation"] = nlohmann::ordered_json::parse(p.validation->ToJson());
    json["points"].push_back(std::move(point));
  }
  return json;
}

// path.dat and the plot of nonzeros and the validation loss (or the training objective)
// against lambda.
Result<std::vector<std::string>> WritePlot(const PathFlags& flags, const PathResult& result, bool regression) {
  std::string dat = "# lambda nonzeros objective val_accuracy val_log_loss val_auc val_mse val_r2\n";
  for (const PathPoint& p : result.points) {
    const Scores s = ScoresOf(p);
    dat += Format("%.10g %lld %.12g %.8g %.8g %.8g %.8g %.8g\n", p.lambda, static_cast<long long>(p.summary.nnz),
                  p.summary.objective, s.accuracy, s.log_loss, s.auc, s.mse, s.r_squared);
  }
  NIMBUS_RETURN_IF_ERROR(WriteFileAtomically(flags.out + "/path.dat", dat));
  const bool validated = !flags.path.validation.empty();
  const bool logistic = flags.problem.options.loss == Loss::kLogistic;
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
  return plots.Render(flags.out, "path.gp", flags.no_plots ? "" : "gnuplot");
}

Status WriteOutputs(const PathFlags& flags, const PathResult& result, bool regression, std::size_t* plots) {
  NIMBUS_RETURN_IF_ERROR(MakeDirectories(flags.out));
  std::string table = Heading(flags, result) + TableHeader(regression);
  for (std::size_t i = 0; i < result.points.size(); ++i) table += TableRow(i, result.points[i], regression);
  NIMBUS_RETURN_IF_ERROR(WriteFileAtomically(flags.out + "/path.txt", table + Footer(result)));
  NIMBUS_RETURN_IF_ERROR(WriteFileAtomically(flags.out + "/path.json", JsonOf(flags, result).dump(2) + "\n"));
  if (flags.models) {
    NIMBUS_RETURN_IF_ERROR(MakeDirectories(flags.out + "/models"));
    for (std::size_t i = 0; i < result.points.size(); ++i) {
      const std::string name = Format("%s/models/point-%02zu.json", flags.out.c_str(), i + 1);
      NIMBUS_RETURN_IF_ERROR(WriteModel(result.points[i].model, ModelFormat::kJson, name));
    }
  }
  NIMBUS_ASSIGN_OR_RETURN(std::vector<std::string> drawn, WritePlot(flags, result, regression));
  *plots = drawn.size();
  return Status::Ok();
}

}  // namespace

int RunPath(int argc, char** argv) {
  PathFlags flags;
  ArgParser parser("path", "--data FILE.svm [--validation FILE.svm] [--penalty l1|l2] [--out DIR]",
                   "Solves along a regularization path: lambda_max, the smallest l1 whose model is zero (from the\n"
                   "gradient where no weight is used), then a grid down to --path-min-ratio x lambda_max, each point\n"
                   "warm started from the one before on the same workers. Prints a row per point as it finishes\n"
                   "(objective, nonzeros, rounds, time, and the validation scores with --validation), and writes\n"
                   "DIR/path.txt, path.json, path.dat and the plot 'path' (nonzeros and validation loss against lambda).");
  AddPathOptions(parser, &flags);
  int exit_code = 0;
  if (!ParseOrExit(parser, argc, argv, &exit_code)) return exit_code;
  if (Status valid = ApplyGridCommandFlags(parser, &flags, &flags.path); !valid.ok()) return ReportError("path", valid);
  const bool regression = !IsClassification(flags.problem.options.loss);
  const bool table = !flags.quiet && !flags.json;
  if (!flags.quiet) flags.problem.options.on_load = LoadProgressPrinter("nimbus path");
  std::size_t printed = 0;
  flags.path.on_point = [&](const PathPoint& point) {
    if (!table) return;
    if (printed == 0) std::fputs(TableHeader(regression).c_str(), stdout);
    std::fputs(TableRow(printed++, point, regression).c_str(), stdout);
    std::fflush(stdout);
  };
  Result<PathResult> result = SolvePath(TrainingDataOf(flags.problem), flags.problem.options, flags.path);
  if (!result.ok()) return ReportError("path", result.status());
  std::size_t plots = 0;
  if (Status written = WriteOutputs(flags, *result, regression, &plots); !written.ok()) return ReportError("path", written);
  return FinishGridCommand("path", flags.json, table, JsonOf(flags, *result).dump(2) + "\n",
                           Heading(flags, *result) + Footer(*result) +
                               Format("wrote %s/path.txt, path.json, path.dat (%zu plots)\n", flags.out.c_str(), plots),
                           result->points.empty() ? nullptr : &result->points.back().summary);
}

}  // namespace nimbus::cli
