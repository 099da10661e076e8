// nimbus train: the command line over nimbus::Solve (nimbus/nimbus.h).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "train_flags.h"
#include "train_resume.h"

namespace nimbus::cli {
namespace {

// "\r iter  12  objective 0.4123456789  primal 1.2e-03/4.5e-05  dual ...  rho ...  1.3 s" (ADMM),
// "\r iter   4  objective 0.4123456789  subgradient 1.2e-03/4.5e-07  1.3 s" (Newton steps, the
// column method's iterations).
IterationCallback ProgressPrinter(Algorithm algorithm) {
  if (TestsSubgradient(algorithm)) {
    return [](const IterationInfo& info) {
      std::fprintf(stderr, "\r  iter %4d  objective %.10g  subgradient %.2e/%.2e  %.1f s   ", info.iteration,
                   info.objective, info.gradient_norm, info.gradient_tolerance, info.elapsed_seconds);
      std::fflush(stderr);
      return true;
    };
  }
  return [](const IterationInfo& info) {
    std::fprintf(stderr, "\r  iter %4d  objective %.10g  primal %.2e/%.2e  dual %.2e/%.2e  rho %.2e  %.1f s   ",
                 info.iteration, info.objective, info.primal_residual, info.eps_primal, info.dual_residual,
                 info.eps_dual, info.rho, info.elapsed_seconds);
    std::fflush(stderr);
    return true;
  };
}

// What the run prints as it goes: the start line, and progress lines on a terminal.
struct Printing {
  bool quiet = false;
  bool progress = false;
  IterationCallback print_progress;  // its form depends on the algorithm, known at the start
};

void PrintStart(const SolveStart& start) {
  const ProblemSpec& spec = start.spec;
  const std::string used = spec.cols == start.source_cols ? "" : " (" + std::to_string(spec.cols) + " occur)";
  std::fprintf(stderr, "nimbus train: %lld rows, %lld features%s, %s loss, l1 %g, l2 %g, %d %s workers, %s (%s)\n",
               static_cast<long long>(spec.rows), static_cast<long long>(start.source_cols), used.c_str(),
               LossName(spec.loss), spec.regularizer.l1, spec.regularizer.l2, start.workers, start.runtime.c_str(),
               NameOf(start.algorithm).data(), start.algorithm_reason.c_str());
}

Status WriteOutputs(const TrainFlags& flags, const SolveResult& result) {
  if (!flags.out.empty()) {
    NIMBUS_ASSIGN_OR_RETURN(ModelFormat format, ParseModelFormat(flags.model_format));
    NIMBUS_RETURN_IF_ERROR(WriteModel(result.model, format, flags.out));
  }
  if (!flags.summary_json.empty()) {
    NIMBUS_RETURN_IF_ERROR(WriteTextFile(flags.summary_json, result.summary.ToJson() + "\n"));
  }
  return Status::Ok();
}

// The trace file, the start line and the progress lines. The trace file is made once the
// options have proved to fit the data, before any worker starts; so is the check that a model
// fits liblinear's dense format.
void SetObservers(const TrainFlags& flags, std::unique_ptr<JsonlTraceFile>* trace, std::shared_ptr<Printing> printing,
                  SolveOptions* options) {
  options->on_start = [trace, &flags, printing](const SolveStart& start) -> Status {
    if (!flags.out.empty() && flags.model_format == "liblinear") {
      NIMBUS_RETURN_IF_ERROR(CheckLiblinearSize(start.source_cols).WithContext("--model-format liblinear"));
    }
    if (!flags.trace.empty()) {
      NIMBUS_ASSIGN_OR_RETURN(*trace, JsonlTraceFile::Open(flags.trace));
    }
    if (!printing->quiet) PrintStart(start);
    printing->print_progress = ProgressPrinter(start.algorithm);
    return Status::Ok();
  };
  if (!flags.trace.empty()) options->on_trace = [trace](std::string_view event) { (*trace)->Write(event); };
  if (printing->progress) {
    options->on_iteration = [printing](const IterationInfo& info) { return printing->print_progress(info); };
    options->on_load = LoadProgressPrinter("nimbus train");
  }
}

// The model and summary written, the report printed; the exit code.
int Finish(const TrainFlags& flags, const SolveResult& result, const JsonlTraceFile* trace) {
  if (result.mpi_worker_rank) return result.mpi_worker_exit_code;
  if (trace != nullptr && !trace->status().ok()) return ReportError("train", trace->status());
  if (Status written = WriteOutputs(flags, result); !written.ok()) return ReportError("train", written);
  const Summary& summary = result.summary;
  if (!flags.quiet) std::fputs((flags.verbose ? summary.FullReport() : summary.BriefReport() + "\n").c_str(), stdout);
  if (!summary.ok()) {
    std::fprintf(stderr, "nimbus train: error: %s\n", summary.message.c_str());
    return kExitFailure;
  }
  return kExitOk;
}

int Train(int argc, char** argv, std::optional<SavedRun> loaded) {
  const std::vector<std::string> arguments(argv + std::min(argc, 2), argv + argc);
  if (std::optional<int> rerun = RerunIfOnlyCheckpoint(arguments, loaded.has_value(), Train)) return *rerun;
  TrainFlags flags;
  ArgParser parser(
      "train", "--data FILE.svm|DIR [--l1 X] [--l2 X] [--workers K] [--runtime R] [--out MODEL] ...",
      "Solves  min_x (1/N) sum_r loss(y_r, a_r.x [+ b]) + l1 ||x||_1 + (l2/2) ||x||^2  across K workers, with\n"
      "distributed Newton-CG (the default) or consensus ADMM. --data is a LIBSVM file (split into K row\n"
      "blocks) or a directory written by 'nimbus split' (one shard per worker). Without --l1 and --l2 the\n"
      "problem gets l2 = 1/N, liblinear's default C = 1. Workers run as threads of this process, as local\n"
      "processes, or wherever a launch command starts them (they dial out to this master); any of them may\n"
      "fail and is replaced.");
  AddTrainOptions(parser, &flags);
  int exit_code = 0;
  if (!ParseOrExit(parser, argc, argv, &exit_code)) return exit_code;
  SolveOptions& options = flags.problem.options;
  if (Status valid = ApplyTrainFlags(parser, &flags); !valid.ok()) return ReportError("train", valid);
  if (Status set = SetCheckpointing(flags, arguments, std::move(loaded), &options); !set.ok()) {
    return ReportError("train", set);
  }
  std::unique_ptr<JsonlTraceFile> trace;
  auto printing = std::make_shared<Printing>(Printing{flags.quiet, !flags.quiet && StderrIsTerminal(), {}});
  SetObservers(flags, &trace, printing, &options);
  Result<SolveResult> result = Solve(TrainingDataOf(flags.problem), options);
  if (printing->progress && !(result.ok() && result->mpi_worker_rank)) std::fputc('\n', stderr);
  if (!result.ok()) return ReportError("train", result.status());
  return Finish(flags, *result, trace.get());
}

}  // namespace

int RunTrain(int argc, char** argv) { return Train(argc, argv, std::nullopt); }

}  // namespace nimbus::cli
