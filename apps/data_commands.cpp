// nimbus gen, split, predict and eval.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>

#include "cli_common.h"
#include "commands.h"
#include "solve_setup.h"
#include "nimbus/model/evaluation.h"
#include "nimbus/model/model.h"
#include "nimbus/core/clock.h"
#include "nimbus/data/synthetic.h"

namespace nimbus::cli {
namespace {

Result<SyntheticTask> ParseTask(const std::string& name) {
  if (name == "classification") return SyntheticTask::kClassification;
  if (name == "regression") return SyntheticTask::kRegression;
  return InvalidArgument("--task: unknown task '" + name + "' (choose classification or regression)");
}

}  // namespace

int RunGen(int argc, char** argv) {
  SyntheticOptions options;
  std::string out, task = "classification";
  int64_t seed = 1;
  ArgParser parser("gen", "--rows N --cols D --nnz-per-row K --seed S --out FILE.svm",
                   "Writes synthetic sparse data in LIBSVM format: rows of unit length with K nonzeros each and\n"
                   "labels drawn from a planted sparse model. The same seed always gives the same file.");
  parser.AddInt("rows", "N", "number of rows (examples)", &options.rows);
  parser.AddInt("cols", "D", "number of features", &options.cols);
  parser.AddInt("nnz-per-row", "K", "nonzeros in every row", &options.nnz_per_row);
  parser.AddInt("seed", "S", "random seed", &seed);
  parser.AddString("out", "FILE.svm", "output file", &out);
  parser.AddInt("planted-nonzeros", "P", "nonzeros of the planted model (0: a tenth of the features)",
                &options.planted_nonzeros);
  parser.AddString("task", "T", "classification (labels +1/-1) or regression (real targets)", &task);
  parser.AddDouble("noise", "X", "regression: standard deviation of the target noise", &options.noise);
  parser.AddDouble("power-law", "S", "draw feature j with probability ~ j^-S (text data: about 1); 0: uniformly",
                   &options.power_law);
  parser.Require("rows");
  parser.Require("cols");
  parser.Require("nnz-per-row");
  parser.Require("out");
  int exit_code = 0;
  if (!ParseOrExit(parser, argc, argv, &exit_code)) return exit_code;
  if (seed < 0) return ReportError("gen", InvalidArgument("--seed: must be >= 0"));
  options.seed = static_cast<uint64_t>(seed);
  Result<SyntheticTask> parsed_task = ParseTask(task);
  if (!parsed_task.ok()) return ReportError("gen", parsed_task.status());
  options.task = *parsed_task;

  Stopwatch watch;
  Result<SyntheticSummary> summary = WriteSyntheticLibsvm(options, out);
  if (!summary.ok()) return ReportError("gen", summary.status());
  std::printf("wrote %s: %lld rows, %lld features, %lld nonzeros, planted model with %zu nonzeros", out.c_str(),
              static_cast<long long>(summary->rows), static_cast<long long>(options.cols),
              static_cast<long long>(summary->nnz), summary->planted.size());
  if (options.task == SyntheticTask::kClassification) {
    std::printf(", %lld positive rows", static_cast<long long>(summary->positives));
  }
  std::printf(" (%.2f s)\n", watch.ElapsedSeconds());
  return kExitOk;
}

// Progress on a terminal: a line that overwrites itself, at most every half second.
std::function<void(const std::string&, uint64_t, uint64_t)> TerminalProgress(const std::string& command, bool quiet) {
  if (quiet || !StderrIsTerminal()) return {};
  auto last = std::make_shared<double>(0);
  return [command, last](const std::string& pass, uint64_t done, uint64_t total) {
    const double now = MonotonicSeconds();
    if (done < total && now - *last < 0.5) return;
    *last = now;
    std::fprintf(stderr, "\r%s: %s %5.1f%% (%.2f of %.2f GB)%s", command.c_str(), pass.c_str(),
                 100.0 * static_cast<double>(done) / static_cast<double>(total), static_cast<double>(done) / 1e9,
                 static_cast<double>(total) / 1e9, done >= total ? "\n" : "");
  };
}

int RunSplit(int argc, char** argv) {
  std::string data, out, task = "classification";
  SplitOptions options;
  int64_t threads = 0;
  bool quiet = false;
  ArgParser parser("split", "--data FILE.svm|DIR|s3://... --shards K --out DIR|s3://bucket/prefix",
                   "Splits LIBSVM text into K row shards of nearly equal size, written in the binary shard format\n"
                   "with a manifest.json, for workers that load their own shard. The text is a file, several\n"
                   "separated by commas, or a directory or S3 prefix of files, plain or compressed (.gz, .zst, .xz);\n"
                   "it is read twice as it streams, on every core, in memory that does not grow with its size.");
  parser.AddString("data", "FILE.svm", "LIBSVM input: file(s), a directory or s3://bucket/prefix", &data);
  parser.AddInt("shards", "K", "number of shards (one per worker)", &options.shards);
  parser.AddString("out", "DIR|s3://B/P", "output store: a directory (created if missing) or s3://bucket/prefix", &out);
  parser.AddString("task", "T", "classification (two labels, mapped to -1/+1, or up to 1000 classes) or regression\n"
                   "                            (real targets)", &task);
  parser.AddString("sample-weights", "FILE", "each row's weight, one per line: the shards carry them",
                   &options.sample_weights);
  parser.AddInt("threads", "N", "threads that read and write (default: this machine's cores)", &threads);
  bool double_values = false;
  parser.AddSwitch("double-values", "every value in 8 bytes (shard format 1, which older builds read); by default\n"
                   "                            a shard's values take 4 bytes where each is exactly a float and none where\n"
                   "                            each is 1, exactly either way", &double_values);
  parser.AddSwitch("quiet", "no progress on the terminal", &quiet);
  parser.Require("data");
  parser.Require("shards");
  parser.Require("out");
  int exit_code = 0;
  if (!ParseOrExit(parser, argc, argv, &exit_code)) return exit_code;
  Result<SyntheticTask> parsed_task = ParseTask(task);
  if (!parsed_task.ok()) return ReportError("split", parsed_task.status());
  options.regression = *parsed_task == SyntheticTask::kRegression;
  options.threads = static_cast<int>(std::clamp<int64_t>(threads, -1, 4096));
  options.on_progress = TerminalProgress("split", quiet);
  options.compact_values = !double_values;

  Stopwatch watch;
  Result<SplitSummary> summary = SplitData(data, out, options);
  if (!summary.ok()) return ReportError("split", summary.status());
  const std::string features = summary->cols != summary->source_cols
                                   ? std::to_string(summary->source_cols) + " features (" +
                                         std::to_string(summary->cols) + " occur, renumbered)"
                                   : std::to_string(summary->cols) + " features";
  std::printf("wrote %lld shards of %s to %s: %lld rows, %s, %lld nonzeros, %s (%.2f s)\n",
              static_cast<long long>(summary->shards), data.c_str(), out.c_str(),
              static_cast<long long>(summary->rows), features.c_str(), static_cast<long long>(summary->nnz),
              summary->labels.c_str(), watch.ElapsedSeconds());
  const double nnz = std::max<double>(1, static_cast<double>(summary->nnz));
  std::printf("%.2f bytes per nonzero in the shards (%.2f with every value a double)\n",
              static_cast<double>(summary->shard_bytes) / nnz, static_cast<double>(summary->double_shard_bytes) / nnz);
  if (summary->empty_parts > 0) {
    std::printf("(%lld of the %lld parts held no line and were left out: fewer shards than asked)\n",
                static_cast<long long>(summary->empty_parts), static_cast<long long>(options.shards));
  }
  return kExitOk;
}

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
    Result<ClassWeights> parsed = ParseClassWeights(class_weight);
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
