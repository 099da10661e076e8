// nimbus train: the command line over nimbus::Solve (nimbus/nimbus.h).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/testing.h"
#include "cli_common.h"
#include "commands.h"
#include "nimbus/checkpoint/checkpoint.h"
#include "nimbus/cloud/s3.h"
#include "nimbus/core/file_io.h"
#include "nimbus/core/trace.h"
#include "nimbus/nimbus.h"
#include "solve_setup.h"

namespace nimbus::cli {
namespace {

struct TrainFlags {
  ProblemFlags problem;  // problem.options: what the flags below end up as
  std::string out, model_format = "json", trace, summary_json, warm_start;
  std::string local_solver = "newton-cg";
  bool no_adaptive_rho = false, quiet = false, verbose = false, resume = false;
  double target_objective = 0;
  double function_memory_mb = 0;
  std::string barrier = "all";
  std::string inject_crash, inject_delay, inject_slow;
  int64_t max_staleness = 2, fault_seed = 1;
};

// ---- The run's arguments, and what a --resume may change -----------------------------------

// Options that choose where a run's results go or how much it prints: a resumed run takes
// them from its own command line (falling back on the checkpoint's for the outputs).
const std::vector<std::string> kOutputOptions = {"--out", "--model-format", "--summary-json", "--trace"};
const std::vector<std::string> kPrintingSwitches = {"--quiet", "--verbose", "--resume"};

struct SplitArguments {
  std::vector<std::string> run;                // what defines the run (and the checkpoint keeps)
  std::map<std::string, std::string> outputs;  // --out X, ... as option -> value
  std::vector<std::string> printing;           // --quiet, --verbose (not --resume)
};

SplitArguments Split(const std::vector<std::string>& arguments) {
  SplitArguments split;
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const std::string& a = arguments[i];
    const std::string name = a.substr(0, a.find('='));
    if (std::find(kPrintingSwitches.begin(), kPrintingSwitches.end(), a) != kPrintingSwitches.end()) {
      if (a != "--resume") split.printing.push_back(a);
    } else if (std::find(kOutputOptions.begin(), kOutputOptions.end(), name) != kOutputOptions.end()) {
      if (name != a) {
        split.outputs[name] = a.substr(name.size() + 1);
      } else if (i + 1 < arguments.size()) {
        split.outputs[name] = arguments[++i];
      }
    } else {
      split.run.push_back(a);
    }
  }
  return split;
}

std::vector<std::string> Joined(const SplitArguments& split) {
  std::vector<std::string> arguments = split.run;
  for (const auto& [name, value] : split.outputs) arguments.insert(arguments.end(), {name, value});
  arguments.insert(arguments.end(), split.printing.begin(), split.printing.end());
  return arguments;
}

std::string Text(const std::vector<std::string>& arguments) {
  std::string text;
  for (const std::string& a : arguments) text += (text.empty() ? "" : " ") + a;
  return text;
}

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

int Train(int argc, char** argv, std::optional<Checkpoint> loaded);

// `nimbus train --checkpoint X --resume [outputs]`: the run's own arguments, from its
// checkpoint, run again from the directory they were given in, with the outputs and printing
// asked for now in place of the checkpoint's. The checkpoint goes along, so it is read once.
int RerunFromCheckpoint(Checkpoint checkpoint, const SplitArguments& now) {
  if (!checkpoint.working_directory.empty() && ::chdir(checkpoint.working_directory.c_str()) != 0) {
    return ReportError("train", ErrnoError("--resume: cannot enter " + checkpoint.working_directory +
                                           ", where the run started", errno));
  }
  SplitArguments rerun = Split(checkpoint.arguments);
  for (const auto& [name, value] : now.outputs) rerun.outputs[name] = value;
  rerun.printing = now.printing;
  std::vector<std::string> arguments{"nimbus", "train"};
  for (const std::string& a : Joined(rerun)) arguments.push_back(a);
  arguments.push_back("--resume");
  std::vector<char*> argv;
  for (std::string& a : arguments) argv.push_back(a.data());
  argv.push_back(nullptr);
  return Train(static_cast<int>(arguments.size()), argv.data(), std::move(checkpoint));
}

// The checkpoint to resume from, if --resume: `loaded`, or read from --checkpoint. The run's
// arguments must be the checkpoint's, outputs and printing aside.
Result<std::optional<MasterState>> ResumeState(const TrainFlags& flags, const std::vector<std::string>& arguments,
                                               std::optional<Checkpoint> loaded) {
  if (!flags.resume) return std::optional<MasterState>();
  NIMBUS_ASSIGN_OR_RETURN(Checkpoint checkpoint,
                          loaded ? Result<Checkpoint>(std::move(*loaded))
                                 : LoadCheckpoint(flags.problem.options.checkpoint.location));
  if (Split(arguments).run != Split(checkpoint.arguments).run) {
    return InvalidArgument("--resume: give only --checkpoint, or the run's own arguments; the checkpoint's run is: "
                           "nimbus train " + Text(checkpoint.arguments));
  }
  return std::optional<MasterState>(std::move(checkpoint.state));
}

// ---- Flags to options ----------------------------------------------------------------------

void AddTrainOptions(ArgParser& parser, TrainFlags* flags) {
  SolveOptions& options = flags->problem.options;
  AdmmOptions& admm = options.admm;
  AddProblemOptions(parser, &flags->problem);
  parser.AddInt("workers", "K", "number of workers (default: cores for a file, shards for a directory)",
                &options.runtime.workers);
  AddRuntimeOptions(parser, &options.runtime);
  parser.AddChoice("topology", "NAME", "--runtime mpi: star (mpirun -n K+1: a master rank and K workers) or\n"
                   "                            allreduce (mpirun -n K: every rank a worker, z from an allreduce)",
                   &options.runtime.topology);
  AddAlgorithmOptions(parser, &options);
  parser.AddString("warm-start", "MODEL", "start from this model (nimbus's or liblinear's, of the same classes)\n"
                   "                            instead of zero; the answer is the same, reached sooner from near it",
                   &flags->warm_start);
  parser.AddString("out", "MODEL", "write the model here", &flags->out);
  parser.AddString("model-format", "FORMAT", "json, or liblinear (readable by liblinear-predict)", &flags->model_format);
  parser.AddString("trace", "FILE.jsonl", "write one JSON line per round and per worker event", &flags->trace);
  parser.AddString("summary-json", "FILE", "write the summary as one JSON object", &flags->summary_json);
  parser.AddDouble("rho", "X", "initial ADMM penalty (default: the data's curvature scale)", &admm.rho);
  parser.AddDouble("rho-scale", "X", "multiplier on the automatic initial rho", &admm.rho_scale);
  parser.AddDouble("inner-factor", "X", "x-update gradient tolerance relative to the residuals", &admm.inner_factor);
  parser.AddDouble("inner-first", "X", "x-update relative tolerance in the first rounds", &admm.inner_first_relative);
  parser.AddDouble("relaxation", "A", "over-relaxation alpha in [1, 1.8]", &admm.relaxation);
  parser.AddSwitch("no-adaptive-rho", "keep rho fixed", &flags->no_adaptive_rho);
  parser.AddString("local-solver", "NAME", "x-update solver: newton-cg or lbfgs", &flags->local_solver);
  parser.AddDouble("target-objective", "F", "stop once the objective is <= F (for benchmarks; newton's gradient test\n"
                   "                            is then off)", &flags->target_objective);
  parser.AddChoice("message-precision", "P", "float64, or float32: z and w on the wire in half the bytes until the\n"
                   "                            stop test first passes, then exact rounds to finish (remote runtimes)",
                   &admm.message_precision);
  parser.AddString("barrier", "all|S", "wait for all workers each round, or for S of them (asynchronous ADMM)",
                   &flags->barrier);
  parser.AddInt("max-staleness", "TAU", "with --barrier S: no worker's reply may be older than TAU rounds",
                &flags->max_staleness);
  parser.AddString("inject-crash", "P[@W]|@W:R", "tests: workers crash with probability P per round (or worker W in\n"
                   "                            round R)", &flags->inject_crash);
  parser.AddString("inject-delay", "MS[:P][@W]", "tests: workers sleep MS ms per round (with probability P; only worker W)",
                   &flags->inject_delay);
  parser.AddString("inject-slow", "FACTOR@W", "tests: worker W takes FACTOR times as long for every round",
                   &flags->inject_slow);
  parser.AddInt("fault-seed", "N", "seed of the injected faults", &flags->fault_seed);
  AddPriceOptions(parser, &options.prices, &flags->function_memory_mb);
  parser.AddDouble("worker-memory-mb", "MB", "refuse before starting if a worker could need more (default: the\n"
                   "                            function memory with --runtime lambda, else no limit)",
                   &options.runtime.worker_memory_mb);
  parser.AddString("checkpoint", "DIR|s3://B/P", "write the master's state here every --checkpoint-every rounds (one\n"
                   "                            object, replaced atomically), so that --resume can continue the run",
                   &options.checkpoint.location);
  parser.AddInt("checkpoint-every", "M", "rounds (ADMM) or Newton steps between checkpoints", &options.checkpoint.every);
  parser.AddSwitch("resume", "continue the run whose checkpoint --checkpoint names, from its last checkpoint\n"
                   "                            (give only --checkpoint, or the run's own arguments; outputs may change)",
                   &flags->resume);
  parser.AddSwitch("quiet", "print nothing but errors", &flags->quiet);
  parser.AddSwitch("verbose", "print the full report instead of one line", &flags->verbose);
  parser.Require("data");
}

// The flags that are not options' fields as they stand: names and specs into values.
Status ApplyTrainFlags(const ArgParser& parser, TrainFlags* flags) {
  NIMBUS_RETURN_IF_ERROR(ApplyProblemFlags(parser, &flags->problem));
  SolveOptions& options = flags->problem.options;
  AdmmOptions& admm = options.admm;
  Result<LocalSolver> local_solver = ParseLocalSolver(flags->local_solver);
  if (!local_solver.ok()) return local_solver.status().WithContext("--local-solver");
  options.local_solver = *local_solver;
  if (Result<ModelFormat> format = ParseModelFormat(flags->model_format); !format.ok()) {
    return format.status().WithContext("--model-format");
  }
  admm.adaptive_rho = !flags->no_adaptive_rho;
  if (parser.Given("target-objective")) admm.target_objective = flags->target_objective;
  if (flags->barrier != "all") {
    char* end = nullptr;
    const long barrier = std::strtol(flags->barrier.c_str(), &end, 10);
    if (end == flags->barrier.c_str() || *end != '\0' || barrier < 1) {
      return InvalidArgument("--barrier: 'all' or a number of workers >= 1, got '" + flags->barrier + "'");
    }
    admm.barrier = static_cast<int>(barrier);
  }
  admm.max_staleness = static_cast<int>(flags->max_staleness);
  if (parser.Given("checkpoint-every") && options.checkpoint.location.empty()) {
    return InvalidArgument("--checkpoint-every: only with --checkpoint DIR|s3://BUCKET/PREFIX");
  }
  NIMBUS_RETURN_IF_ERROR(FinishPriceOptions(flags->function_memory_mb, &options.prices));
  if (!flags->inject_crash.empty() || !flags->inject_delay.empty() || !flags->inject_slow.empty()) {
    FaultInjection faults;
    faults.seed = static_cast<uint64_t>(flags->fault_seed);
    if (!flags->inject_crash.empty()) NIMBUS_RETURN_IF_ERROR(ParseCrashSpec(flags->inject_crash, &faults));
    if (!flags->inject_delay.empty()) NIMBUS_RETURN_IF_ERROR(ParseDelaySpec(flags->inject_delay, &faults));
    if (!flags->inject_slow.empty()) NIMBUS_RETURN_IF_ERROR(ParseSlowSpec(flags->inject_slow, &faults));
    InjectFaults(options, std::move(faults));  // (tests' flags: the workers' own faults)
  }
  if (!flags->warm_start.empty() && !flags->resume) {  // a resumed run starts from its checkpoint
    Result<Model> start = ReadModel(flags->warm_start);
    if (!start.ok()) return start.status().WithContext("--warm-start");
    options.warm_start = std::make_shared<const Model>(std::move(start).value());
  }
  // Output places are checked before the solve, so a long run does not end in a failed write.
  for (const std::string* path : {&flags->out, &flags->summary_json, &flags->trace}) {
    if (!path->empty()) NIMBUS_RETURN_IF_ERROR(CheckWritableLocation(*path));
  }
  return options.Validate();
}

// ---- What the run prints and writes --------------------------------------------------------

// "\r iter  12  objective 0.4123456789  primal 1.2e-03/4.5e-05  dual ...  rho ...  1.3 s" (ADMM),
// "\r iter   4  objective 0.4123456789  subgradient 1.2e-03/4.5e-07  1.3 s" (Newton steps).
IterationCallback ProgressPrinter(Algorithm algorithm) {
  if (algorithm == Algorithm::kNewton) {
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

// What the run prints as it goes: the notes on checkpoints, the start line, and progress
// lines on a terminal.
struct Printing {
  bool quiet = false;
  bool progress = false;
  IterationCallback print_progress;  // its form depends on the algorithm, known at the start
};

void PrintCheckpointNotes(const SolveOptions& options) {
  const std::string& location = options.checkpoint.location;
  if (options.checkpoint.resume) {
    std::fprintf(stderr, "nimbus train: resuming from %s at round %lld\n", location.c_str(),
                 static_cast<long long>(options.checkpoint.resume->next_round));
  } else if (!location.empty()) {
    Result<std::unique_ptr<Store>> store = OpenAnyStore(location, /*create=*/false);
    Result<Checkpoint> earlier = store.ok() ? ReadCheckpoint(**store) : Result<Checkpoint>(store.status());
    if (earlier.ok()) {
      std::fprintf(stderr, "nimbus train: %s holds the checkpoint of an earlier run (at round %lld); this run "
                   "replaces it (to continue that run instead: --checkpoint %s --resume)\n", location.c_str(),
                   static_cast<long long>(earlier->state.next_round), location.c_str());
    }
  }
}

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
    NIMBUS_RETURN_IF_ERROR(WriteFileAtomically(flags.summary_json, result.summary.ToJson() + "\n"));
  }
  return Status::Ok();
}

// ---- The command ---------------------------------------------------------------------------

// `--resume` with only `--checkpoint X` (and outputs): the checkpoint's run again. An exit code
// when that (or a mistake in it) is what happens; nothing otherwise.
std::optional<int> RerunIfOnlyCheckpoint(const std::vector<std::string>& arguments, bool loaded) {
  const SplitArguments given = Split(arguments);
  const bool resume = std::find(arguments.begin(), arguments.end(), "--resume") != arguments.end();
  const bool only_checkpoint = (given.run.size() == 2 && given.run[0] == "--checkpoint") ||
                               (given.run.size() == 1 && given.run[0].rfind("--checkpoint=", 0) == 0);
  const bool has_checkpoint = std::any_of(given.run.begin(), given.run.end(), [](const std::string& a) {
    return a == "--checkpoint" || a.rfind("--checkpoint=", 0) == 0;
  });
  if (resume && !has_checkpoint) {
    return ReportError("train", InvalidArgument("--resume: needs --checkpoint DIR|s3://BUCKET/PREFIX, where the run "
                                                "wrote its checkpoints"));
  }
  if (!resume || !only_checkpoint || loaded) return std::nullopt;
  Result<Checkpoint> checkpoint = LoadCheckpoint(given.run.size() == 2 ? given.run[1] : given.run[0].substr(13));
  if (!checkpoint.ok()) return ReportError("train", checkpoint.status());
  return RerunFromCheckpoint(std::move(checkpoint).value(), given);
}

// What a checkpoint keeps of the run, and the state a --resume continues from.
Status SetCheckpointing(const TrainFlags& flags, const std::vector<std::string>& arguments,
                        std::optional<Checkpoint> loaded, SolveOptions* options) {
  NIMBUS_ASSIGN_OR_RETURN(options->checkpoint.resume, ResumeState(flags, arguments, std::move(loaded)));
  const SplitArguments given = Split(arguments);
  options->checkpoint.run_arguments = Joined({given.run, given.outputs, {}});
  std::error_code no_directory;
  options->checkpoint.working_directory = std::filesystem::current_path(no_directory).string();
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
  if (!flags.quiet) PrintCheckpointNotes(*options);
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

int Train(int argc, char** argv, std::optional<Checkpoint> loaded) {
  const std::vector<std::string> arguments(argv + std::min(argc, 2), argv + argc);
  if (std::optional<int> rerun = RerunIfOnlyCheckpoint(arguments, loaded.has_value())) return *rerun;
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
