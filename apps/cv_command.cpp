// nimbus cv: K-fold cross-validation along a grid, over nimbus::CrossValidate (nimbus/nimbus.h).
#include <cstdio>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
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
    if (printed == 0) std::fputs(CvResult::TableHeader(point).c_str(), stdout);
    std::fputs(CvResult::TableRow(printed++, point).c_str(), stdout);
    std::fflush(stdout);
  };
  Result<CvResult> result = CrossValidate(TrainingDataOf(flags.problem), flags.problem.options, flags.cv);
  if (!result.ok()) return ReportError("cv", result.status());
  const bool one_se = flags.refit == "1se";
  Result<std::vector<std::string>> plots = result->Write(flags.out, flags.no_plots ? "" : "gnuplot", one_se);
  if (!plots.ok()) return ReportError("cv", plots.status());
  if (flags.write_folds) {
    const bool classification = IsClassification(flags.problem.options.loss);
    if (Status written = WriteFolds(flags.problem.data, flags.cv, classification, flags.out + "/folds.txt"); !written.ok()) {
      return ReportError("cv", written);
    }
  }
  const std::string wrote = "wrote " + flags.out + "/cv.txt, cv.json, cv.dat, " +
                            (flags.write_folds ? "folds.txt, " : "") + "model.json (" + std::to_string(plots->size()) +
                            " plots)\n";
  return FinishGridCommand("cv", flags.json, table, result->ToJson(one_se), result->Heading() + result->Footer() + wrote,
                           result->points.empty() ? nullptr : &result->points.back().summary);
}

}  // namespace nimbus::cli
