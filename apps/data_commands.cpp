// nimbus gen and nimbus split: data made, and data cut into shards (nimbus/nimbus.h: WriteSyntheticLibsvm,
// SplitData).
#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>

#include "cli_common.h"
#include "commands.h"
#include "nimbus/core/clock.h"
#include "solve_setup.h"

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

}  // namespace nimbus::cli
