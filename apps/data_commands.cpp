// nimbus gen, split, predict and eval.
#include <cstdio>
#include <string>

#include "cli_common.h"
#include "commands.h"
#include "solve_setup.h"
#include "nimbus/api/plan.h"
#include "nimbus/model/evaluation.h"
#include "nimbus/model/model.h"
#include "nimbus/cloud/s3.h"
#include "nimbus/core/clock.h"
#include "nimbus/core/file_io.h"
#include "nimbus/data/libsvm_reader.h"
#include "nimbus/data/sample_weights.h"
#include "nimbus/data/manifest.h"
#include "nimbus/data/synthetic.h"

namespace nimbus::cli {
namespace {

Result<SyntheticTask> ParseTask(const std::string& name) {
  if (name == "classification") return SyntheticTask::kClassification;
  if (name == "regression") return SyntheticTask::kRegression;
  return InvalidArgument("--task: unknown task '" + name + "' (choose classification or regression)");
}

// Each class's weight for eval's objective (--class-weight text, for `data`'s labels; empty
// without), after reading the rows' own (--sample-weights file) into `data`.
Result<std::vector<double>> ObjectiveWeights(const Model& model, Dataset& data, const std::string& path,
                                             const std::string& class_weight, const std::string& sample_weights) {
  if (!sample_weights.empty()) NIMBUS_RETURN_IF_ERROR(ReadSampleWeightsInto(sample_weights, data));
  if (class_weight.empty()) return std::vector<double>{};
  NIMBUS_ASSIGN_OR_RETURN(const ClassWeights parsed, ParseClassWeights(class_weight));
  return ClassWeightsOf(parsed, model.labels, data.labels, path);
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

int RunSplit(int argc, char** argv) {
  std::string data, out, task = "classification", sample_weights;
  int64_t shards = 0;
  ArgParser parser("split", "--data FILE.svm --shards K --out DIR|s3://bucket/prefix",
                   "Splits a LIBSVM file into K row shards of nearly equal nonzeros, written in the binary\n"
                   "shard format with a manifest.json, for workers that load their own shard.");
  parser.AddString("data", "FILE.svm", "LIBSVM input file", &data);
  parser.AddInt("shards", "K", "number of shards (one per worker)", &shards);
  parser.AddString("out", "DIR|s3://B/P", "output store: a directory (created if missing) or s3://bucket/prefix", &out);
  parser.AddString("task", "T", "classification (two labels, mapped to -1/+1, or up to 1000 classes) or regression\n"
                   "                            (real targets)", &task);
  parser.AddString("sample-weights", "FILE", "each row's weight, one per line: the shards carry them", &sample_weights);
  parser.Require("data");
  parser.Require("shards");
  parser.Require("out");
  int exit_code = 0;
  if (!ParseOrExit(parser, argc, argv, &exit_code)) return exit_code;
  Result<SyntheticTask> parsed_task = ParseTask(task);
  if (!parsed_task.ok()) return ReportError("split", parsed_task.status());
  if (shards < 1 || shards > 1000000) return ReportError("split", InvalidArgument("--shards: must be in [1, 1000000]"));

  Stopwatch watch;
  LibsvmReadOptions read_options;
  read_options.label_mode = *parsed_task == SyntheticTask::kClassification ? LabelMode::kClassification : LabelMode::kRegression;
  read_options.renumber_columns = true;  // the shards hold the features that occur; the manifest, the map
  Result<Dataset> dataset = ReadLibsvmFile(data, read_options);
  if (!dataset.ok()) return ReportError("split", dataset.status());
  if (!sample_weights.empty()) {
    if (Status read = ReadSampleWeightsInto(sample_weights, *dataset); !read.ok()) return ReportError("split", read);
  }
  Result<std::unique_ptr<Store>> store = OpenAnyStore(out, /*create=*/true);
  if (!store.ok()) return ReportError("split", store.status());
  Result<Manifest> manifest = WriteShards(*dataset, static_cast<int>(shards), data, **store);
  if (!manifest.ok()) return ReportError("split", manifest.status());
  const std::string features =
      manifest->features ? std::to_string(manifest->features->source_cols) + " features (" +
                               std::to_string(manifest->cols) + " occur, renumbered)"
                         : std::to_string(manifest->cols) + " features";
  std::printf("wrote %zu shards of %s to %s: %lld rows, %s, %lld nonzeros, %s (%.2f s)\n", manifest->shards.size(),
              data.c_str(), out.c_str(), static_cast<long long>(manifest->rows), features.c_str(),
              static_cast<long long>(manifest->nnz), manifest->encoding.Describe().c_str(), watch.ElapsedSeconds());
  return kExitOk;
}

int RunPredict(int argc, char** argv) {
  std::string model_path, data, out;
  bool scores = false;
  ArgParser parser("predict", "--model MODEL --data FILE.svm [--out FILE]",
                   "Writes one prediction per row of the data: the predicted label in the data's own encoding\n"
                   "(or the predicted value, for regression). Reads nimbus JSON and liblinear models.");
  parser.AddString("model", "MODEL", "model file (nimbus JSON or liblinear format)", &model_path);
  parser.AddString("data", "FILE.svm", "LIBSVM data to predict", &data);
  parser.AddString("out", "FILE", "output file (default: standard output)", &out);
  parser.AddSwitch("scores", "add the scores: for logistic models the probability of the positive label (of\n"
                   "                            each class, in ascending order of label, for a multiclass model), the decision\n"
                   "                            value(s) otherwise", &scores);
  parser.Require("model");
  parser.Require("data");
  int exit_code = 0;
  if (!ParseOrExit(parser, argc, argv, &exit_code)) return exit_code;

  Result<Model> model = ReadModel(model_path);
  if (!model.ok()) return ReportError("predict", model.status());
  LibsvmReadOptions read_options;
  read_options.label_mode = LabelMode::kRegression;  // prediction ignores the labels' values
  read_options.renumber_columns = true;
  Result<Dataset> dataset = ReadLibsvmFile(data, read_options);
  if (!dataset.ok()) return ReportError("predict", dataset.status());

  const std::vector<double> values = DecisionValues(*model, *dataset);
  const auto c_count = static_cast<std::size_t>(model->classes);
  const bool logistic = model->loss == Loss::kLogistic;
  std::string text;
  char number[40];
  for (std::size_t r = 0; r < static_cast<std::size_t>(dataset->rows()); ++r) {
    const std::span<const double> row = std::span<const double>(values).subspan(r * c_count, c_count);
    text += FormatLabel(model->labels.classification ? model->labels.Decode(PredictedLabel(*model, row)) : row[0]);
    if (scores) {
      const std::vector<double> shown = logistic ? ClassProbabilities(*model, row) : std::vector<double>(row.begin(), row.end());
      for (const double score : shown) {
        std::snprintf(number, sizeof number, " %.17g", score);
        text += number;
      }
    }
    text += '\n';
  }
  if (out.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kExitOk;
  }
  const Status written = WriteFileAtomically(out, text);
  return written.ok() ? kExitOk : ReportError("predict", written);
}

int RunEval(int argc, char** argv) {
  std::string model_path, data, class_weight, sample_weights;
  double l1 = -1, l2 = -1;
  bool json = false;
  ArgParser parser("eval", "--model MODEL --data FILE.svm",
                   "Measures a model on labelled data: accuracy, log loss and AUC for classifiers (for more than\n"
                   "two classes, each class's precision and recall and the confusion matrix in place of the AUC),\n"
                   "MSE and R^2 for regression, and the objective F with the model's regularization (or --l1/--l2).");
  parser.AddString("model", "MODEL", "model file (nimbus JSON or liblinear format)", &model_path);
  parser.AddString("data", "FILE.svm", "LIBSVM data with labels", &data);
  parser.AddDouble("l1", "X", "L1 weight for the objective (default: the model's; liblinear models: 0)", &l1);
  parser.AddDouble("l2", "X", "L2 weight for the objective (default: the model's; liblinear models: 0)", &l2);
  parser.AddString("class-weight", "L=W,...", "class weights for the objective, as train takes them", &class_weight);
  parser.AddString("sample-weights", "FILE", "each row's weight for the objective, one per line", &sample_weights);
  parser.AddSwitch("json", "print one JSON object instead of text", &json);
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
  Result<Dataset> dataset = ReadLibsvmFileFor(data, model->labels);
  if (!dataset.ok()) return ReportError("eval", dataset.status());
  Result<std::vector<double>> class_weights = ObjectiveWeights(*model, *dataset, data, class_weight, sample_weights);
  if (!class_weights.ok()) return ReportError("eval", class_weights.status());
  const Evaluation evaluation = Evaluate(*model, *dataset, *class_weights);
  std::fputs(json ? (evaluation.ToJson() + "\n").c_str() : evaluation.Report().c_str(), stdout);
  return kExitOk;
}

}  // namespace nimbus::cli
