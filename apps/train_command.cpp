// nimbus train: the ADMM master with its workers.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "cli_common.h"
#include "commands.h"
#include "model.h"
#include "nimbus/admm/coordinator.h"
#include "nimbus/core/clock.h"
#include "nimbus/core/file_io.h"
#include "nimbus/data/libsvm_reader.h"
#include "nimbus/data/manifest.h"
#include "nimbus/metrics/trace.h"
#include "nimbus/runtime/threads_executor.h"

namespace nimbus::cli {
namespace {

struct TrainFlags {
  std::string data, loss = "logistic", runtime = "threads", out, model_format = "json", trace, summary_json;
  std::string local_solver = "newton-cg";
  double l1 = 0, l2 = 0;
  bool intercept = false, no_adaptive_rho = false, quiet = false, verbose = false;
  int64_t workers = 0, max_iter = 0;
  double target_objective = 0;
  AdmmOptions admm;
};

// The data and how the workers get their shards.
struct Plan {
  ProblemSpec spec;
  LabelEncoding labels;
  std::vector<ShardSource> shards;
  double load_seconds = 0;
};

Result<Plan> PlanFromStore(const TrainFlags& flags, Loss loss) {
  NIMBUS_ASSIGN_OR_RETURN(std::unique_ptr<Store> owned, OpenStore(flags.data, /*create=*/false));
  std::shared_ptr<Store> store = std::move(owned);
  NIMBUS_ASSIGN_OR_RETURN(Manifest manifest, ReadManifest(*store));
  const int shards = static_cast<int>(manifest.shards.size());
  if (flags.workers != 0 && flags.workers != shards) {
    return InvalidArgument("--workers: the store " + flags.data + " holds " + std::to_string(shards) +
                           " shards, one per worker; give --workers " + std::to_string(shards) +
                           " or leave it out (or split again with --shards " + std::to_string(flags.workers) + ")");
  }
  if (IsClassification(loss) != manifest.encoding.binary) {
    return InvalidArgument(flags.data + ": the shards hold " + manifest.encoding.Describe() + ", which the " +
                           LossName(loss) + " loss cannot use (split with --task " +
                           (IsClassification(loss) ? "classification" : "regression") + ")");
  }
  Plan plan;
  plan.spec.rows = manifest.rows;
  plan.spec.cols = manifest.cols;
  plan.labels = manifest.encoding;
  for (const ShardEntry& entry : manifest.shards) {
    plan.shards.push_back(ShardSource::InStore(store, entry.key, entry.checksum));
  }
  return plan;
}

Result<Plan> PlanFromFile(const TrainFlags& flags, Loss loss) {
  Stopwatch watch;
  LibsvmReadOptions options;
  options.label_mode = IsClassification(loss) ? LabelMode::kBinary : LabelMode::kRegression;
  NIMBUS_ASSIGN_OR_RETURN(Dataset data, ReadLibsvmFile(flags.data, options));
  Plan plan;
  plan.load_seconds = watch.ElapsedSeconds();
  plan.spec.rows = data.rows();
  plan.spec.cols = data.cols();
  plan.labels = data.encoding;
  const int64_t default_workers = std::max<unsigned>(1, std::thread::hardware_concurrency());
  const int64_t workers = flags.workers > 0 ? flags.workers : std::min(default_workers, data.rows());
  if (workers > data.rows()) {
    return InvalidArgument("--workers: " + std::to_string(workers) + " workers for " + std::to_string(data.rows()) +
                           " rows: every worker needs at least one row");
  }
  for (const auto& [begin, end] : PartitionRows(data.matrix, static_cast<int>(workers))) {
    plan.shards.push_back(ShardSource::InMemory(data.Rows(begin, end)));
  }
  return plan;
}

// "\r iter  12  objective 0.4123456789  primal 1.2e-03/4.5e-05  dual ...  rho ...  1.3 s"
bool PrintProgress(const IterationInfo& info) {
  std::fprintf(stderr, "\r  iter %4d  objective %.10g  primal %.2e/%.2e  dual %.2e/%.2e  rho %.2e  %.1f s   ",
               info.iteration, info.objective, info.primal_residual, info.eps_primal, info.dual_residual,
               info.eps_dual, info.rho, info.elapsed_seconds);
  std::fflush(stderr);
  return true;
}

}  // namespace

int RunTrain(int argc, char** argv) {
  TrainFlags flags;
  ArgParser parser(
      "train", "--data FILE.svm|DIR [--l1 X] [--l2 X] [--workers K] [--out MODEL] ...",
      "Solves  min_x (1/N) sum_r loss(y_r, a_r.x [+ b]) + l1 ||x||_1 + (l2/2) ||x||^2  with consensus ADMM\n"
      "across K workers. --data is a LIBSVM file (split into K row blocks in memory) or a directory\n"
      "written by 'nimbus split' (one shard per worker, loaded by the worker). Without --l1 and --l2 the\n"
      "problem gets l2 = 1/N, liblinear's default C = 1.");
  parser.AddString("data", "FILE.svm|DIR", "training data: a LIBSVM file or a shard directory", &flags.data);
  parser.AddString("loss", "NAME", "logistic, squared or squared_hinge", &flags.loss);
  parser.AddDouble("l1", "X", "L1 regularization weight", &flags.l1);
  parser.AddDouble("l2", "X", "L2 regularization weight", &flags.l2);
  parser.AddSwitch("intercept", "fit an unregularized intercept b", &flags.intercept);
  parser.AddInt("workers", "K", "number of workers (default: cores for a file, shards for a directory)", &flags.workers);
  parser.AddString("runtime", "NAME", "where workers run: threads", &flags.runtime);
  parser.AddDouble("eps-abs", "X", "absolute tolerance of the stop test", &flags.admm.eps_abs);
  parser.AddDouble("eps-rel", "X", "relative tolerance of the stop test", &flags.admm.eps_rel);
  flags.max_iter = flags.admm.max_iterations;
  parser.AddInt("max-iter", "N", "iteration cap", &flags.max_iter);
  parser.AddString("out", "MODEL", "write the model here", &flags.out);
  parser.AddString("model-format", "FORMAT", "json, or liblinear (readable by liblinear-predict)", &flags.model_format);
  parser.AddString("trace", "FILE.jsonl", "write one JSON line per round", &flags.trace);
  parser.AddString("summary-json", "FILE", "write the summary as one JSON object", &flags.summary_json);
  parser.AddDouble("rho", "X", "initial ADMM penalty (default: the data's curvature scale)", &flags.admm.rho);
  parser.AddDouble("rho-scale", "X", "multiplier on the automatic initial rho", &flags.admm.rho_scale);
  parser.AddDouble("inner-factor", "X", "x-update gradient tolerance relative to the residuals", &flags.admm.inner_factor);
  parser.AddDouble("inner-first", "X", "x-update relative tolerance in the first rounds", &flags.admm.inner_first_relative);
  parser.AddDouble("relaxation", "A", "over-relaxation alpha in [1, 1.8]", &flags.admm.relaxation);
  parser.AddSwitch("no-adaptive-rho", "keep rho fixed", &flags.no_adaptive_rho);
  parser.AddString("local-solver", "NAME", "x-update solver: newton-cg or lbfgs", &flags.local_solver);
  parser.AddDouble("target-objective", "F", "stop once the objective is <= F (for benchmarks)", &flags.target_objective);
  parser.AddSwitch("quiet", "print nothing but errors", &flags.quiet);
  parser.AddSwitch("verbose", "print the full report instead of one line", &flags.verbose);
  parser.Require("data");
  int exit_code = 0;
  if (!ParseOrExit(parser, argc, argv, &exit_code)) return exit_code;

  // Options first: nothing is read before the command line is known to be good.
  Result<Loss> loss = ParseLoss(flags.loss);
  if (!loss.ok()) return ReportError("train", loss.status().WithContext("--loss"));
  Result<ModelFormat> model_format = ParseModelFormat(flags.model_format);
  if (!model_format.ok()) return ReportError("train", model_format.status().WithContext("--model-format"));
  Result<LocalSolver> local_solver = ParseLocalSolver(flags.local_solver);
  if (!local_solver.ok()) return ReportError("train", local_solver.status().WithContext("--local-solver"));
  if (flags.runtime != "threads") {
    return ReportError("train", InvalidArgument("--runtime: '" + flags.runtime + "' is not available (this build has: threads)"));
  }
  if (flags.workers < 0 || flags.workers > 4096) return ReportError("train", InvalidArgument("--workers: must be in [1, 4096]"));
  if (flags.max_iter < 0 || flags.max_iter > 100000000) return ReportError("train", InvalidArgument("--max-iter: must be >= 0"));
  flags.admm.max_iterations = static_cast<int>(flags.max_iter);
  flags.admm.adaptive_rho = !flags.no_adaptive_rho;
  if (parser.Given("target-objective")) flags.admm.target_objective = flags.target_objective;
  if (Status valid = flags.admm.Validate(); !valid.ok()) return ReportError("train", valid);
  WorkerOptions worker_options;
  worker_options.solver = *local_solver;

  // Output places are checked before the solve, so a long run does not end in a failed write.
  for (const std::string* path : {&flags.out, &flags.summary_json, &flags.trace}) {
    if (Status writable = CheckWritableLocation(*path); !path->empty() && !writable.ok()) {
      return ReportError("train", writable);
    }
  }
  Result<Plan> plan = LooksLikeStoreUri(flags.data) ? PlanFromStore(flags, *loss) : PlanFromFile(flags, *loss);
  if (!plan.ok()) return ReportError("train", plan.status());
  plan->spec.loss = *loss;
  plan->spec.intercept = flags.intercept;
  plan->spec.regularizer = {flags.l1, flags.l2};
  if (!parser.Given("l1") && !parser.Given("l2")) plan->spec.regularizer.l2 = 1.0 / static_cast<double>(plan->spec.rows);
  if (Status valid = plan->spec.Validate(); !valid.ok()) return ReportError("train", valid);

  std::unique_ptr<JsonlTraceFile> trace;
  if (!flags.trace.empty()) {
    Result<std::unique_ptr<JsonlTraceFile>> opened = JsonlTraceFile::Open(flags.trace);
    if (!opened.ok()) return ReportError("train", opened.status());
    trace = std::move(opened).value();
  }

  const int workers = static_cast<int>(plan->shards.size());
  ThreadsExecutor executor(std::move(plan->shards), plan->spec, worker_options);
  Coordinator coordinator(plan->spec, flags.admm, &executor);
  if (trace) coordinator.SetTraceSink(trace.get());
  const bool show_progress = !flags.quiet && StderrIsTerminal();
  if (show_progress) coordinator.SetIterationCallback(PrintProgress);
  if (!flags.quiet) {
    std::fprintf(stderr, "nimbus train: %lld rows, %lld features, %s loss, l1 %g, l2 %g, %d %s workers\n",
                 static_cast<long long>(plan->spec.rows), static_cast<long long>(plan->spec.cols), LossName(*loss),
                 plan->spec.regularizer.l1, plan->spec.regularizer.l2, workers, executor.name().c_str());
  }

  Result<Solution> solution = coordinator.Solve();
  if (show_progress) std::fputc('\n', stderr);
  if (!solution.ok()) return ReportError("train", solution.status());
  Summary& summary = solution->summary;
  summary.load_seconds = plan->load_seconds;
  if (trace && !trace->status().ok()) return ReportError("train", trace->status());

  if (!flags.out.empty()) {
    Model model;
    model.loss = *loss;
    model.regularizer = plan->spec.regularizer;
    model.intercept = plan->spec.intercept;
    model.cols = plan->spec.cols;
    model.labels = plan->labels;
    model.weights = solution->model;
    if (Status written = WriteModel(model, *model_format, flags.out); !written.ok()) return ReportError("train", written);
  }
  if (!flags.summary_json.empty()) {
    if (Status written = WriteFileAtomically(flags.summary_json, summary.ToJson() + "\n"); !written.ok()) {
      return ReportError("train", written);
    }
  }
  if (!flags.quiet) std::fputs((flags.verbose ? summary.FullReport() : summary.BriefReport() + "\n").c_str(), stdout);
  if (!summary.ok()) {
    std::fprintf(stderr, "nimbus train: error: %s\n", summary.message.c_str());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace nimbus::cli
