// nimbus predict and nimbus eval: a model on data the commands stream (nimbus/nimbus.h: PredictData,
// EvaluateData).
#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>

#include "cli_common.h"
#include "commands.h"
#include "solve_setup.h"

namespace nimbus::cli {

int RunPredict(int argc, char** argv) {
  std::string model_path, data, out;
  PredictOptions options;
  bool quiet = false;
  ArgParser parser("predict", "--model MODEL --data FILE.svm [--out FILE]",
                   "Writes one prediction per row of the data: the predicted label in the data's own encoding\n"
                   "(or the predicted value, for regression). Reads nimbus JSON and liblinear models. The data is\n"
                   "read as it streams (file(s), a directory or s3:// prefix, plain or .gz/.zst/.xz).");
  parser.AddString("model", "MODEL", "model file (nimbus JSON or liblinear format)", &model_path);
  parser.AddString("data", "FILE.svm", "LIBSVM data to predict", &data);
  parser.AddString("out", "FILE", "output file (default: standard output)", &out);
  parser.AddSwitch("scores", "add the scores: for logistic models the probability of the positive label (of\n"
                   "                            each class, in ascending order of label, for a multiclass model), the decision\n"
                   "                            value(s) otherwise", &options.scores);
  parser.AddSwitch("quiet", "no progress on the terminal", &quiet);
  parser.Require("model");
  parser.Require("data");
  int exit_code = 0;
  if (!ParseOrExit(parser, argc, argv, &exit_code)) return exit_code;

  Result<Model> model = ReadModel(model_path);
  if (!model.ok()) return ReportError("predict", model.status());
  if (!out.empty()) options.on_progress = TerminalProgress("predict", quiet);
  Result<int64_t> rows = PredictData(*model, data, out, options);
  return rows.ok() ? kExitOk : ReportError("predict", rows.status());
}

int RunEval(int argc, char** argv) {
  std::string model_path, data, class_weight;
  EvaluateOptions options;
  double l1 = -1, l2 = -1;
  bool json = false, quiet = false;
  ArgParser parser("eval", "--model MODEL --data FILE.svm",
                   "Measures a model on labelled data: accuracy, log loss and AUC for classifiers (for more than\n"
                   "two classes, each class's precision and recall and the confusion matrix in place of the AUC),\n"
                   "MSE and R^2 for regression, and the objective F with the model's regularization (or --l1/--l2).\n"
                   "The data is read as it streams (file(s), a directory or s3:// prefix, plain or .gz/.zst/.xz).");
  parser.AddString("model", "MODEL", "model file (nimbus JSON or liblinear format)", &model_path);
  parser.AddString("data", "FILE.svm", "LIBSVM data with labels", &data);
  parser.AddDouble("l1", "X", "L1 weight for the objective (default: the model's; liblinear models: 0)", &l1);
  parser.AddDouble("l2", "X", "L2 weight for the objective (default: the model's; liblinear models: 0)", &l2);
  parser.AddString("class-weight", "L=W,...", "class weights for the objective, as train takes them", &class_weight);
  parser.AddString("sample-weights", "FILE", "each row's weight for the objective, one per line", &options.sample_weights);
  parser.AddSwitch("json", "print one JSON object instead of text", &json);
  parser.AddSwitch("quiet", "no progress on the terminal", &quiet);
  parser.Require("model");
  parser.Require("data");
  int exit_code = 0;
  if (!ParseOrExit(parser, argc, argv, &exit_code)) return exit_code;

  Result<Model> model = ReadModel(model_path);
  if (!model.ok()) return ReportError("eval", model.status());
  if (parser.Given("l1")) model->regularizer.l1 = l1;
  if (parser.Given("l2")) model->regularizer.l2 = l2;
  if (model->regularizer.l1 < 0 || model->regularizer.l2 < 0) {
    return ReportError("eval", InvalidArgument("--l1, --l2: must be >= 0"));
  }
  if (!class_weight.empty()) {
    Result<ClassWeights> parsed = ClassWeights::Parse(class_weight);
    if (!parsed.ok()) return ReportError("eval", parsed.status());
    options.class_weights = *parsed;
  }
  options.on_progress = TerminalProgress("eval", quiet);
  Result<Evaluation> evaluation = EvaluateData(*model, data, options);
  if (!evaluation.ok()) return ReportError("eval", evaluation.status());
  std::fputs(json ? (evaluation->ToJson() + "\n").c_str() : evaluation->Report().c_str(), stdout);
  return kExitOk;
}

}  // namespace nimbus::cli
