// nimbus train: the ADMM master with its workers.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "model.h"
#include "nimbus/admm/coordinator.h"
#include "nimbus/admm/newton.h"
#include "nimbus/checkpoint/checkpoint.h"
#include "nimbus/cloud/s3.h"
#include "nimbus/core/clock.h"
#include "nimbus/core/file_io.h"
#include "nimbus/metrics/cost.h"
#include "nimbus/metrics/trace.h"
#include "nimbus/mpi/mpi_runtime.h"
#include "nimbus/runtime/worker_process.h"
#include "solve_setup.h"

namespace nimbus::cli {
namespace {

struct TrainFlags {
  ProblemFlags problem;
  std::string out, model_format = "json", trace, summary_json;
  std::string local_solver = "newton-cg";
  bool no_adaptive_rho = false, quiet = false, verbose = false;
  int64_t workers = 0;
  double target_objective = 0;
  Prices prices;
  double function_memory_mb = 0;
  double worker_memory_mb = -1;  // -1: the function's memory for lambda, else no limit
  RuntimeFlags runtime;
  std::string barrier = "all";
  std::string message_precision = "float64";
  std::string inject_crash, inject_delay, inject_slow;
  int64_t max_staleness = 2, fault_seed = 1;
  std::string checkpoint;
  int64_t checkpoint_every = 10;
  bool resume = false;
  AlgorithmFlags algorithm;
};

// The checkpoint a --resume continues from; errors say where it was looked for.
Result<Checkpoint> LoadCheckpoint(const std::string& location) {
  Result<std::unique_ptr<Store>> store = OpenAnyStore(location, /*create=*/false);
  if (!store.ok()) return store.status().WithContext("--resume: cannot open " + location);
  Result<Checkpoint> checkpoint = ReadCheckpoint(**store);
  if (checkpoint.status().code() == StatusCode::kNotFound) {
    return NotFound("--resume: no checkpoint in " + location + " (" + (*store)->Describe(kCheckpointKey) +
                    " does not exist)");
  }
  return checkpoint;
}

std::string Joined(const std::vector<std::string>& arguments) {
  std::string text;
  for (const std::string& a : arguments) text += (text.empty() ? "" : " ") + a;
  return text;
}

// nimbus train; with `loaded`, the checkpoint a --resume continues from, already read.
int Train(int argc, char** argv, std::optional<Checkpoint> loaded);

// `nimbus train --checkpoint X --resume`: the run's own arguments, from its checkpoint, run
// again from the directory they were given in, with --resume (and --quiet or --verbose if
// asked for now). The checkpoint goes along, so it is read once.
int RerunFromCheckpoint(Checkpoint checkpoint, const std::vector<std::string>& printing) {
  if (!checkpoint.working_directory.empty() && ::chdir(checkpoint.working_directory.c_str()) != 0) {
    return ReportError("train", ErrnoError("--resume: cannot enter " + checkpoint.working_directory +
                                           ", where the run started", errno));
  }
  std::vector<std::string> arguments{"nimbus", "train"};
  arguments.insert(arguments.end(), checkpoint.arguments.begin(), checkpoint.arguments.end());
  arguments.insert(arguments.end(), printing.begin(), printing.end());
  arguments.push_back("--resume");
  std::vector<char*> argv;
  for (std::string& a : arguments) argv.push_back(a.data());
  argv.push_back(nullptr);
  return Train(static_cast<int>(arguments.size()), argv.data(), std::move(checkpoint));
}

// "\r iter  12  objective 0.4123456789  primal 1.2e-03/4.5e-05  dual ...  rho ...  1.3 s"
bool PrintProgress(const IterationInfo& info) {
  std::fprintf(stderr, "\r  iter %4d  objective %.10g  primal %.2e/%.2e  dual %.2e/%.2e  rho %.2e  %.1f s   ",
               info.iteration, info.objective, info.primal_residual, info.eps_primal, info.dual_residual,
               info.eps_dual, info.rho, info.elapsed_seconds);
  std::fflush(stderr);
  return true;
}

// "\r iter   4  objective 0.4123456789  subgradient 1.2e-03/4.5e-07  1.3 s" (Newton steps)
bool PrintNewtonProgress(const IterationInfo& info) {
  std::fprintf(stderr, "\r  iter %4d  objective %.10g  subgradient %.2e/%.2e  %.1f s   ", info.iteration,
               info.objective, info.primal_residual, info.eps_primal, info.elapsed_seconds);
  std::fflush(stderr);
  return true;
}

// Ranks 1..K-1 of the allreduce topology: a worker that runs the master's logic alongside
// rank 0 on the same numbers. Rank 0 reports and writes; these stay quiet.
int RunAllreduceRank(MpiSession& mpi, const AdmmOptions& admm, uint64_t run_id) {
  // Rank 0 meets the same failure and ends the job with its message; should it not within
  // a while, this rank ends it.
  auto fail = [&](const Status& status) {
    std::this_thread::sleep_for(std::chrono::seconds(20));
    mpi.Abort(ExitCodeOf(status));
    return ExitCodeOf(status);
  };
  // Rank 0 reads and splits the data first, which may take a while.
  Result<AssignBody> assignment = ReceiveAllreduceAssignment(run_id, Deadline::After(24 * 3600));
  if (!assignment.ok()) return fail(assignment.status());
  MpiAllreduceExecutor executor(mpi.rank(), mpi.size(), *assignment, run_id);
  Coordinator coordinator(AssignedSpec(*assignment), admm, &executor);
  Result<Solution> solution = coordinator.Solve();
  if (!solution.ok()) return fail(solution.status());
  mpi.EndNormally();
  return solution->summary.ok() ? kExitOk : kExitFailure;
}

int Train(int argc, char** argv, std::optional<Checkpoint> loaded) {
  // The run's arguments (after "nimbus train"), less those that change nothing in it (how
  // much it prints, --resume): what a checkpoint keeps.
  std::vector<std::string> arguments(argv + std::min(argc, 2), argv + argc);
  const auto asked = [&](const char* name) {
    return std::find(arguments.begin(), arguments.end(), name) != arguments.end();
  };
  const bool resume_asked = asked("--resume");
  std::vector<std::string> printing;
  for (const char* name : {"--quiet", "--verbose"}) {
    if (asked(name)) printing.push_back(name);
  }
  std::erase_if(arguments, [](const std::string& a) { return a == "--resume" || a == "--quiet" || a == "--verbose"; });
  if (resume_asked) {
    // `--checkpoint X --resume` alone: the rest of the arguments come from the checkpoint.
    const bool only_checkpoint = (arguments.size() == 2 && arguments[0] == "--checkpoint") ||
                                 (arguments.size() == 1 && arguments[0].rfind("--checkpoint=", 0) == 0);
    const bool has_checkpoint = std::any_of(arguments.begin(), arguments.end(), [](const std::string& a) {
      return a == "--checkpoint" || a.rfind("--checkpoint=", 0) == 0;
    });
    if (!has_checkpoint) {
      return ReportError("train", InvalidArgument("--resume: needs --checkpoint DIR|s3://BUCKET/PREFIX, where the run "
                                                  "wrote its checkpoints"));
    }
    if (only_checkpoint) {
      const std::string location = arguments.size() == 2 ? arguments[1] : arguments[0].substr(13);
      Result<Checkpoint> checkpoint = LoadCheckpoint(location);
      if (!checkpoint.ok()) return ReportError("train", checkpoint.status());
      return RerunFromCheckpoint(std::move(checkpoint).value(), printing);
    }
  }
  TrainFlags flags;
  ArgParser parser(
      "train", "--data FILE.svm|DIR [--l1 X] [--l2 X] [--workers K] [--runtime R] [--out MODEL] ...",
      "Solves  min_x (1/N) sum_r loss(y_r, a_r.x [+ b]) + l1 ||x||_1 + (l2/2) ||x||^2  across K workers, with\n"
      "distributed Newton-CG (the default) or consensus ADMM. --data is a LIBSVM file (split into K row\n"
      "blocks) or a directory written by 'nimbus split' (one shard per worker). Without --l1 and --l2 the\n"
      "problem gets l2 = 1/N, liblinear's default C = 1. Workers run as threads of this process, as local\n"
      "processes, or wherever a launch command starts them (they dial out to this master); any of them may\n"
      "fail and is replaced.");
  AddProblemOptions(parser, &flags.problem);
  parser.AddInt("workers", "K", "number of workers (default: cores for a file, shards for a directory)", &flags.workers);
  AddRuntimeOptions(parser, &flags.runtime);
  parser.AddString("topology", "NAME", "--runtime mpi: star (mpirun -n K+1: a master rank and K workers) or\n"
                   "                            allreduce (mpirun -n K: every rank a worker, z from an allreduce)",
                   &flags.runtime.topology);
  AddAlgorithmOptions(parser, &flags.algorithm);
  parser.AddString("out", "MODEL", "write the model here", &flags.out);
  parser.AddString("model-format", "FORMAT", "json, or liblinear (readable by liblinear-predict)", &flags.model_format);
  parser.AddString("trace", "FILE.jsonl", "write one JSON line per round and per worker event", &flags.trace);
  parser.AddString("summary-json", "FILE", "write the summary as one JSON object", &flags.summary_json);
  AdmmOptions& admm = flags.problem.admm;
  parser.AddDouble("rho", "X", "initial ADMM penalty (default: the data's curvature scale)", &admm.rho);
  parser.AddDouble("rho-scale", "X", "multiplier on the automatic initial rho", &admm.rho_scale);
  parser.AddDouble("inner-factor", "X", "x-update gradient tolerance relative to the residuals", &admm.inner_factor);
  parser.AddDouble("inner-first", "X", "x-update relative tolerance in the first rounds", &admm.inner_first_relative);
  parser.AddDouble("relaxation", "A", "over-relaxation alpha in [1, 1.8]", &admm.relaxation);
  parser.AddSwitch("no-adaptive-rho", "keep rho fixed", &flags.no_adaptive_rho);
  parser.AddString("local-solver", "NAME", "x-update solver: newton-cg or lbfgs", &flags.local_solver);
  parser.AddDouble("target-objective", "F", "stop once the objective is <= F (for benchmarks; newton's gradient test\n"
                   "                            is then off)", &flags.target_objective);
  parser.AddString("message-precision", "P", "float64, or float32: z and w on the wire in half the bytes until the\n"
                   "                            stop test first passes, then exact rounds to finish (remote runtimes)",
                   &flags.message_precision);
  parser.AddString("barrier", "all|S", "wait for all workers each round, or for S of them (asynchronous ADMM)",
                   &flags.barrier);
  parser.AddInt("max-staleness", "TAU", "with --barrier S: no worker's reply may be older than TAU rounds",
                &flags.max_staleness);
  parser.AddString("inject-crash", "P[@W]|@W:R", "tests: workers crash with probability P per round (or worker W in\n"
                   "                            round R)", &flags.inject_crash);
  parser.AddString("inject-delay", "MS[:P][@W]", "tests: workers sleep MS ms per round (with probability P; only worker W)",
                   &flags.inject_delay);
  parser.AddString("inject-slow", "FACTOR@W", "tests: worker W takes FACTOR times as long for every round",
                   &flags.inject_slow);
  parser.AddInt("fault-seed", "N", "seed of the injected faults", &flags.fault_seed);
  AddPriceOptions(parser, &flags.prices, &flags.function_memory_mb);
  parser.AddDouble("worker-memory-mb", "MB", "refuse before starting if a worker could need more (default: the\n"
                   "                            function memory with --runtime lambda, else no limit)",
                   &flags.worker_memory_mb);
  parser.AddString("checkpoint", "DIR|s3://B/P", "write the master's state here every --checkpoint-every rounds (one\n"
                   "                            object, replaced atomically), so that --resume can continue the run",
                   &flags.checkpoint);
  parser.AddInt("checkpoint-every", "M", "rounds (ADMM) or Newton steps between checkpoints", &flags.checkpoint_every);
  parser.AddSwitch("resume", "continue the run whose checkpoint --checkpoint names, from its last checkpoint\n"
                   "                            (give only --checkpoint, or the run's own arguments)", &flags.resume);
  parser.AddSwitch("quiet", "print nothing but errors", &flags.quiet);
  parser.AddSwitch("verbose", "print the full report instead of one line", &flags.verbose);
  parser.Require("data");
  int exit_code = 0;
  if (!ParseOrExit(parser, argc, argv, &exit_code)) return exit_code;

  // --resume: the run's arguments are in its checkpoint.
  std::optional<Checkpoint> resume;
  if (flags.resume) {
    Result<Checkpoint> checkpoint = loaded ? Result<Checkpoint>(std::move(*loaded)) : LoadCheckpoint(flags.checkpoint);
    if (!checkpoint.ok()) return ReportError("train", checkpoint.status());
    if (arguments != checkpoint->arguments) {
      return ReportError("train", InvalidArgument("--resume: give only --checkpoint, or the run's own arguments; "
                                                  "the checkpoint's run is: nimbus train " +
                                                  Joined(checkpoint->arguments)));
    }
    resume = std::move(checkpoint).value();
  }

  // Options first: nothing is read before the command line is known to be good.
  Result<Loss> loss = CheckProblemOptions(&flags.problem);
  if (!loss.ok()) return ReportError("train", loss.status());
  Result<ModelFormat> model_format = ParseModelFormat(flags.model_format);
  if (!model_format.ok()) return ReportError("train", model_format.status().WithContext("--model-format"));
  Result<LocalSolver> local_solver = ParseLocalSolver(flags.local_solver);
  if (!local_solver.ok()) return ReportError("train", local_solver.status().WithContext("--local-solver"));
  if (Status valid = CheckRuntimeName(flags.runtime.runtime); !valid.ok()) return ReportError("train", valid);
  if (flags.workers < 0 || flags.workers > 4096) return ReportError("train", InvalidArgument("--workers: must be in [1, 4096]"));
  admm.adaptive_rho = !flags.no_adaptive_rho;
  if (parser.Given("target-objective")) admm.target_objective = flags.target_objective;
  if (flags.barrier != "all") {
    char* end = nullptr;
    const long barrier = std::strtol(flags.barrier.c_str(), &end, 10);
    if (end == flags.barrier.c_str() || *end != '\0' || barrier < 1) {
      return ReportError("train", InvalidArgument("--barrier: 'all' or a number of workers >= 1, got '" + flags.barrier + "'"));
    }
    admm.barrier = static_cast<int>(barrier);
  }
  admm.max_staleness = static_cast<int>(flags.max_staleness);
  if (flags.message_precision != "float64" && flags.message_precision != "float32") {
    return ReportError("train", InvalidArgument("--message-precision: '" + flags.message_precision +
                                                "' is not float64 or float32"));
  }
  admm.lean_messages = flags.message_precision == "float32";
  const bool allreduce = flags.runtime.topology == "allreduce";
  if (admm.lean_messages && (flags.runtime.runtime == "threads" || allreduce)) {
    return ReportError("train", InvalidArgument("--message-precision float32: only where messages cross a wire "
                                                "(--runtime process, command, lambda, or mpi with the star topology)"));
  }
  if (flags.runtime.topology != "star" && !allreduce) {
    return ReportError("train", InvalidArgument("--topology: '" + flags.runtime.topology + "' is not star or allreduce"));
  }
  if (parser.Given("topology") && flags.runtime.runtime != "mpi") {
    return ReportError("train", InvalidArgument("--topology: only for --runtime mpi"));
  }
  if (allreduce && admm.barrier != 0) {
    return ReportError("train", InvalidArgument("--barrier: with --topology allreduce every rank waits for all"));
  }
  if (flags.checkpoint.empty() && parser.Given("checkpoint-every")) {
    return ReportError("train", InvalidArgument("--checkpoint-every: only with --checkpoint DIR|s3://BUCKET/PREFIX"));
  }
  if (!flags.checkpoint.empty()) {
    if (flags.checkpoint_every < 1) return ReportError("train", InvalidArgument("--checkpoint-every: must be >= 1"));
    if (flags.runtime.runtime == "mpi") {
      return ReportError("train", InvalidArgument("--checkpoint: not with --runtime mpi (an MPI job lives and dies as "
                                                  "a whole; its ranks cannot be resumed one by one)"));
    }
    if (admm.barrier != 0) {
      return ReportError("train", InvalidArgument("--checkpoint: needs synchronous rounds (--barrier all)"));
    }
  }
  if (Status valid = admm.Validate(); !valid.ok()) return ReportError("train", valid);
  if (Status valid = FinishPriceOptions(flags.function_memory_mb, &flags.prices); !valid.ok()) return ReportError("train", valid);
  WorkerOptions worker_options = flags.problem.worker;
  worker_options.solver = *local_solver;
  worker_options.faults.seed = static_cast<uint64_t>(flags.fault_seed);
  if (!flags.inject_crash.empty()) {
    if (Status parsed = ParseCrashSpec(flags.inject_crash, &worker_options.faults); !parsed.ok()) {
      return ReportError("train", parsed);
    }
  }
  if (!flags.inject_delay.empty()) {
    if (Status parsed = ParseDelaySpec(flags.inject_delay, &worker_options.faults); !parsed.ok()) {
      return ReportError("train", parsed);
    }
  }
  if (!flags.inject_slow.empty()) {
    if (Status parsed = ParseSlowSpec(flags.inject_slow, &worker_options.faults); !parsed.ok()) {
      return ReportError("train", parsed);
    }
  }
  // Output places are checked before the solve, so a long run does not end in a failed write.
  for (const std::string* path : {&flags.out, &flags.summary_json, &flags.trace}) {
    if (Status writable = CheckWritableLocation(*path); !path->empty() && !writable.ok()) {
      return ReportError("train", writable);
    }
  }

  // Under mpirun every rank runs this command: rank 0 is the master, ranks 1..K the workers.
  std::unique_ptr<MpiSession> mpi;
  // From here on an error on rank 0 ends the whole job with its exit status.
  auto fail = [&](const Status& status) {
    const int code = ReportError("train", status);
    if (mpi && mpi->size() > 1 && !mpi->ended_normally()) mpi->Abort(code);
    return code;
  };
  if (flags.runtime.runtime == "mpi") {
    Result<std::unique_ptr<MpiSession>> session = MpiSession::Start(&argc, &argv);
    if (!session.ok()) return fail(session.status());
    mpi = std::move(session).value();
    flags.runtime.run_id = mpi->ShareRunId();
    // star: rank 0 the master, ranks 1..K the workers; allreduce: every rank a worker.
    const int ranks_needed = flags.workers == 0 ? 0 : static_cast<int>(flags.workers) + (allreduce ? 0 : 1);
    if (ranks_needed != 0 && ranks_needed != mpi->size()) {
      return fail(InvalidArgument("--workers " + std::to_string(flags.workers) + " needs mpirun -n " +
                                  std::to_string(ranks_needed) + "; this job has " + std::to_string(mpi->size()) +
                                  " ranks"));
    }
    if (!allreduce && mpi->size() < 2) {
      return fail(InvalidArgument("--runtime mpi: start it as mpirun -n K+1 nimbus train ... (a master and K "
                                  "workers), or with --topology allreduce as mpirun -n K"));
    }
    flags.workers = allreduce ? mpi->size() : mpi->size() - 1;
    if (mpi->rank() > 0 && allreduce) return RunAllreduceRank(*mpi, admm, flags.runtime.run_id);
    if (mpi->rank() > 0) {
      const int code = RunMpiWorker(mpi->rank(), flags.runtime.run_id, WallSeconds());
      if (code == kWorkerDone) mpi->EndNormally();
      return code;
    }
  }

  Result<Plan> plan = PlanData(flags.problem.data, flags.workers, *loss);
  if (!plan.ok()) return fail(plan.status());
  if (Status valid = SetRegularizer(parser, flags.problem, &*plan); !valid.ok()) return fail(valid);
  const double worker_memory_mb = flags.worker_memory_mb >= 0 ? flags.worker_memory_mb
                                  : flags.runtime.runtime == "lambda" ? flags.function_memory_mb
                                                                      : 0;
  if (Status fits = CheckWorkerMemory(*plan, worker_options.general_form, worker_memory_mb); !fits.ok()) {
    return fail(fits);
  }
  if (admm.barrier > plan->workers) {
    return fail(InvalidArgument("--barrier: " + flags.barrier + " of " + std::to_string(plan->workers) +
                                                " workers"));
  }

  std::unique_ptr<JsonlTraceFile> trace;
  if (!flags.trace.empty()) {
    Result<std::unique_ptr<JsonlTraceFile>> opened = JsonlTraceFile::Open(flags.trace);
    if (!opened.ok()) return fail(opened.status());
    trace = std::move(opened).value();
  }
  Result<Runtime> runtime = MakeRuntime(flags.runtime, *plan, worker_options);
  if (!runtime.ok()) return fail(runtime.status());
  if (runtime->remote != nullptr && trace) runtime->remote->SetTraceSink(trace.get());

  Result<MasterChoice> choice = ChooseMaster(flags.algorithm, admm, flags.runtime.topology);
  if (!choice.ok()) return fail(choice.status());
  // A resumed run goes on with the algorithm it began with (an earlier build's auto may differ).
  if (resume && flags.algorithm.algorithm == "auto") choice->algorithm = resume->state.algorithm;
  const bool newton = choice->algorithm == "newton";
  std::unique_ptr<Master> master = choice->Make(plan->spec, runtime->executor.get());
  if (trace) master->SetTraceSink(trace.get());
  std::unique_ptr<Store> checkpoint_store;
  if (!flags.checkpoint.empty()) {
    Result<std::unique_ptr<Store>> store = OpenAnyStore(flags.checkpoint, /*create=*/true);
    if (!store.ok()) return fail(store.status().WithContext("--checkpoint"));
    checkpoint_store = std::move(store).value();
    if (!resume && !flags.quiet) {
      if (Result<Checkpoint> earlier = ReadCheckpoint(*checkpoint_store); earlier.ok()) {
        std::fprintf(stderr, "nimbus train: %s holds the checkpoint of an earlier run (at round %lld); this run "
                     "replaces it (to continue that run instead: --checkpoint %s --resume)\n",
                     flags.checkpoint.c_str(), static_cast<long long>(earlier->state.next_round),
                     flags.checkpoint.c_str());
      }
    }
    std::error_code error;
    const std::string working_directory = std::filesystem::current_path(error).string();
    const auto write = [&, working_directory](const MasterState& state) {
      Status written = WriteCheckpoint(*checkpoint_store, Checkpoint{state, arguments, working_directory});
      if (!written.ok()) {
        std::fprintf(stderr, "\nnimbus train: warning: %s (the run goes on; the previous checkpoint stays)\n",
                     written.message().c_str());
      }
      return written;
    };
    master->SetCheckpointWriter(static_cast<int>(flags.checkpoint_every), write);
  }
  if (resume) {
    if (!flags.quiet) {
      std::fprintf(stderr, "nimbus train: resuming from %s at round %lld\n", flags.checkpoint.c_str(),
                   static_cast<long long>(resume->state.next_round));
    }
    master->ResumeFrom(std::move(resume->state));
  }
  const bool show_progress = !flags.quiet && StderrIsTerminal();
  if (show_progress) master->SetIterationCallback(newton ? PrintNewtonProgress : PrintProgress);
  if (!flags.quiet) {
    std::fprintf(stderr, "nimbus train: %lld rows, %lld features, %s loss, l1 %g, l2 %g, %d %s workers, %s\n",
                 static_cast<long long>(plan->spec.rows), static_cast<long long>(plan->spec.cols), LossName(*loss),
                 plan->spec.regularizer.l1, plan->spec.regularizer.l2, plan->workers,
                 runtime->executor->name().c_str(), choice->algorithm.c_str());
  }

  Result<Solution> solution = master->Solve();
  if (mpi && solution.ok()) mpi->EndNormally();  // the workers have had their BYE
  if (show_progress) std::fputc('\n', stderr);
  if (!solution.ok()) return fail(solution.status());
  Summary& summary = solution->summary;
  summary.load_seconds = plan->load_seconds;
  AddCostEstimate(flags.prices, *plan, &summary);
  if (trace && !trace->status().ok()) return fail(trace->status());

  if (!flags.out.empty()) {
    Model model;
    model.loss = *loss;
    model.regularizer = plan->spec.regularizer;
    model.intercept = plan->spec.intercept;
    model.cols = plan->spec.cols;
    model.labels = plan->labels;
    model.weights = solution->model;
    if (Status written = WriteModel(model, *model_format, flags.out); !written.ok()) return fail(written);
  }
  if (!flags.summary_json.empty()) {
    if (Status written = WriteFileAtomically(flags.summary_json, summary.ToJson() + "\n"); !written.ok()) {
      return fail(written);
    }
  }
  if (!flags.quiet) std::fputs((flags.verbose ? summary.FullReport() : summary.BriefReport() + "\n").c_str(), stdout);
  if (!summary.ok()) {
    std::fprintf(stderr, "nimbus train: error: %s\n", summary.message.c_str());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

int RunTrain(int argc, char** argv) { return Train(argc, argv, std::nullopt); }

}  // namespace nimbus::cli
