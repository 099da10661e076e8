// nimbus cv: K-fold cross-validation along a grid, over nimbus::CrossValidate (nimbus/nimbus.h).
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

struct CvFlags : GridCommandFlags {
  CvOptions cv;
  std::string refit = "best";
  int64_t seed = 1;
  bool write_folds = false;
};

void AddCvOptions(ArgParser& parser, CvFlags* flags) {
  flags->out = "nimbus-cv";
  AddGridCommandOptions(parser, flags, &flags->cv.path, "cv.json");
  parser.AddInt("folds", "K", "folds, stratified by label", &flags->cv.folds);
  parser.AddInt("seed", "S", "the folds' shuffle", &flags->seed);
  parser.AddString("metric", "NAME", "what chooses lambda: log_loss (logistic's default), accuracy (other\n"
                   "                            classifiers'), auc (two classes) or mse (regression's)", &flags->cv.metric);
  parser.AddString("refit", "best|1se", "the lambda of DIR/model.json: the best mean metric (default), or the\n"
                   "                            largest within one standard error of it", &flags->refit);
  parser.AddInt("workers", "K", "number of workers (default: this machine's cores)",
                &flags->problem.options.runtime.workers);
  parser.AddString("out", "DIR", "where to write cv.txt, cv.json, cv.dat, model.json and the plot\n"
                   "                            (default nimbus-cv)", &flags->out);
  parser.AddSwitch("write-folds", "also write DIR/folds.txt, each row's fold, by reading the text's labels here\n"
                   "                            (the workers deal the folds of their own rows; this is a pass of its own)",
                   &flags->write_folds);
}

Status ApplyCvFlags(const ArgParser& parser, CvFlags* flags) {
  NIMBUS_RETURN_IF_ERROR(ApplyGridCommandFlags(parser, flags, &flags->cv.path));
  if (flags->seed < 0) return InvalidArgument("--seed: must be >= 0");
  flags->cv.seed = static_cast<uint64_t>(flags->seed);
  if (flags->refit != "best" && flags->refit != "1se") return InvalidArgument("--refit: '" + flags->refit + "' is not best or 1se");
  return flags->cv.Validate();
}

// A column per figure (CvPoint::scores), in the order of their names.
std::string TableHeader(const CvPoint& first) {
  std::string header = Format("  %3s  %11s  %8s  %6s  %8s", "#", "lambda", "nonzeros", "rounds", "seconds");
  for (const auto& [name, score] : first.scores) header += Format("  %21s", (name + " (mean, std)").c_str());
  return header + "\n";
}

std::string TableRow(std::size_t index, const CvPoint& p) {
  const Summary& m = p.summary;
  std::string row = Format("  %3zu  %11.5g  %8lld  %6d  %8.3f", index + 1, p.lambda, static_cast<long long>(m.nnz),
                           m.rounds, m.setup_seconds + m.solve_seconds);
  for (const auto& [name, score] : p.scores) row += Format("  %11.6f %9.6f", score.mean, score.std);
  return row + (m.termination == Termination::kConverged ? "" : "  " + std::string(TerminationName(m.termination))) + "\n";
}

std::string Heading(const CvFlags& flags, const CvResult& result) {
  return Format("nimbus cv: %s, %lld folds, %s over %zu lambdas from %.5g (lambda_max), %s workers (%s)\n",
                flags.problem.data.c_str(), static_cast<long long>(result.folds), NameOf(result.penalty).data(),
                result.points.size(), result.lambda_max,
                result.points.empty() ? "-" : std::to_string(result.points.front().summary.workers).c_str(),
                NameOf(flags.problem.options.runtime.kind).data());
}

std::string Footer(const CvResult& result) {
  if (result.points.empty()) return "";
  const CvPoint& best = result.points[result.best];
  const CvPoint& one_se = result.points[result.one_se];
  return Format("  best %s: %.6f at lambda %.5g (#%zu); one standard error: lambda %.5g (#%zu, %.6f)\n"
                "  %.3f s in all (%.3f s loading the data), $%.5f at Lambda's prices\n",
                result.metric.c_str(), best.scores.at(result.metric).mean, best.lambda, result.best + 1, one_se.lambda,
                result.one_se + 1, one_se.scores.at(result.metric).mean, result.wall_seconds, result.load_seconds,
                result.cost_dollars);
}

nlohmann::ordered_json JsonOf(const CvFlags& flags, const CvResult& result) {
  nlohmann::ordered_json json;
  json["data"] = flags.problem.data;
  json["folds"] = result.folds;
  json["seed"] = flags.cv.seed;
  json["penalty"] = result.penalty;
  json["metric"] = result.metric;
  json["lambda_max"] = result.lambda_max;
  json["runtime"] = flags.problem.options.runtime.kind;
  if (!result.points.empty()) {
    json["best"] = {{"point", result.best + 1}, {"lambda", result.points[result.best].lambda}};
    json["one_se"] = {{"point", result.one_se + 1}, {"lambda", result.points[result.one_se].lambda}};
  }
  json["refit"] = flags.refit;
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
  return json;
}

// cv.dat and the plot of the metric's mean with one standard deviation, and the nonzeros.
Result<std::vector<std::string>> WritePlot(const CvFlags& flags, const CvResult& result) {
  std::string dat = "# lambda nonzeros mean std (" + result.metric + ")\n";
  for (const CvPoint& p : result.points) {
    const CvScore& s = p.scores.at(result.metric);
    dat += Format("%.10g %lld %.10g %.10g\n", p.lambda, static_cast<long long>(p.summary.nnz), s.mean, s.std);
  }
  NIMBUS_RETURN_IF_ERROR(WriteFileAtomically(flags.out + "/cv.dat", dat));
  PlotScript plots;
  const std::string penalty(NameOf(result.penalty));
  plots.Add("cv", "set title '" + std::to_string(result.folds) + "-fold cross-validation (" + penalty + ")'\n"
            "set xlabel '" + penalty + " lambda'\nset logscale x\nset xrange [*:*] reverse\n"
            "set ylabel '" + result.metric + "'\nset y2label 'nonzeros'\nset ytics nomirror\nset y2tics\n"
            "plot 'cv.dat' u 1:3:4 w yerrorlines t '" + result.metric + " (mean, std)', "
            "'' u 1:2 axes x1y2 w lp dt 2 t 'nonzeros'\n"
            "unset logscale x\nset xrange [*:*] noreverse\nunset y2tics\nunset y2label\nset ytics mirror");
  return plots.Render(flags.out, "cv.gp", flags.no_plots ? "" : "gnuplot");
}

Status WriteOutputs(const CvFlags& flags, const CvResult& result, std::size_t* plots) {
  NIMBUS_RETURN_IF_ERROR(MakeDirectories(flags.out));
  std::string table = Heading(flags, result);
  if (!result.points.empty()) table += TableHeader(result.points.front());
  for (std::size_t i = 0; i < result.points.size(); ++i) table += TableRow(i, result.points[i]);
  NIMBUS_RETURN_IF_ERROR(WriteFileAtomically(flags.out + "/cv.txt", table + Footer(result)));
  NIMBUS_RETURN_IF_ERROR(WriteFileAtomically(flags.out + "/cv.json", JsonOf(flags, result).dump(2) + "\n"));
  if (flags.write_folds) {
    NIMBUS_RETURN_IF_ERROR(WriteFolds(flags.problem.data, flags.cv, IsClassification(flags.problem.options.loss),
                                      flags.out + "/folds.txt"));
  }
  if (!result.points.empty()) {
    const CvPoint& chosen = result.points[flags.refit == "best" ? result.best : result.one_se];
    NIMBUS_RETURN_IF_ERROR(WriteModel(chosen.model, ModelFormat::kJson, flags.out + "/model.json"));
  }
  NIMBUS_ASSIGN_OR_RETURN(std::vector<std::string> drawn, WritePlot(flags, result));
  *plots = drawn.size();
  return Status::Ok();
}

}  // namespace

int RunCv(int argc, char** argv) {
  CvFlags flags;
  ArgParser parser("cv", "--data FILE.svm [--folds K] [--l1 X | --path-length N | --lambdas X1,X2,...] [--out DIR]",
                   "K-fold cross-validation: the folds' training problems and the problem on all the data are solved\n"
                   "side by side on the same workers, along a regularization path (as nimbus path's, warm started) or\n"
                   "at the one --l1 or --l2 given. Reports each lambda's mean and standard deviation over the folds of\n"
                   "accuracy, log loss and AUC (MSE and R^2 for regression), the best lambda and the largest within one\n"
                   "standard error of it. The workers read their own parts of the text, deal their rows' folds\n"
                   "(stratified by label, following --seed) and score the rows they hold out. Writes DIR/cv.txt,\n"
                   "cv.json, cv.dat, model.json (all the data, at the --refit lambda), the plot 'cv', and with\n"
                   "--write-folds folds.txt (each row's held-out fold).");
  AddCvOptions(parser, &flags);
  int exit_code = 0;
  if (!ParseOrExit(parser, argc, argv, &exit_code)) return exit_code;
  if (Status valid = ApplyCvFlags(parser, &flags); !valid.ok()) return ReportError("cv", valid);
  const bool table = !flags.quiet && !flags.json;
  if (!flags.quiet) flags.problem.options.on_load = LoadProgressPrinter("nimbus cv");
  std::size_t printed = 0;
  flags.cv.on_point = [&](const CvPoint& point) {
    if (!table) return;
    if (printed == 0) std::fputs(TableHeader(point).c_str(), stdout);
    std::fputs(TableRow(printed++, point).c_str(), stdout);
    std::fflush(stdout);
  };
  Result<CvResult> result = CrossValidate(TrainingDataOf(flags.problem), flags.problem.options, flags.cv);
  if (!result.ok()) return ReportError("cv", result.status());
  std::size_t plots = 0;
  if (Status written = WriteOutputs(flags, *result, &plots); !written.ok()) return ReportError("cv", written);
  return FinishGridCommand("cv", flags.json, table, JsonOf(flags, *result).dump(2) + "\n",
                           Heading(flags, *result) + Footer(*result) +
                               Format("wrote %s/cv.txt, cv.json, cv.dat, %smodel.json (%zu plots)\n",
                                      flags.out.c_str(), flags.write_folds ? "folds.txt, " : "", plots),
                           result->points.empty() ? nullptr : &result->points.back().summary);
}

}  // namespace nimbus::cli
