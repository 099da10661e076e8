#include "train_flags.h"

#include <cstdlib>
#include <memory>

namespace nimbus::cli {

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
  parser.AddChoice("column-blocks", "HOW", "columns: clustered (columns that share rows in one block), contiguous\n"
                   "                            (runs of adjacent columns), or auto (clustered for 2 to 64 blocks\n"
                   "                            of sparse data)",
                   &options.column_blocks);
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
  parser.AddChoice("message-precision", "P", "float64, or float32: half the bytes on the wire (remote runtimes); admm:\n"
                   "                            z and w until the stop test first passes, then exact rounds to finish;\n"
                   "                            newton: Hessian-vector products (evaluations stay exact)",
                   &admm.message_precision);
  parser.AddString("algorithm-profiles", "P1,P2[,P3]", "auto: a calibrated profile of each algorithm to choose among, two\n"
                   "                            or more (nimbus simulate calibrate --algorithm newton, admm, columns);\n"
                   "                            auto takes the one they predict the shortest solve for, here (or on\n"
                   "                            Lambda for --runtime lambda)",
                   &flags->algorithm_profiles);
  parser.AddString("barrier", "all|S", "wait for all workers each round, or for S of them (asynchronous ADMM)",
                   &flags->barrier);
  parser.AddInt("max-staleness", "TAU", "with --barrier S: no worker's reply may be older than TAU rounds",
                &flags->max_staleness);
  parser.AddString("inject-crash", "P[@W]|@W:R", "tests: workers crash with probability P per round (or worker W in\n"
                   "                            round R)", &flags->faults.crash);
  parser.AddString("inject-delay", "MS[:P][@W]", "tests: workers sleep MS ms per round (with probability P; only worker W)",
                   &flags->faults.delay);
  parser.AddString("inject-slow", "FACTOR@W", "tests: worker W takes FACTOR times as long for every round",
                   &flags->faults.slow);
  parser.AddInt("fault-seed", "N", "seed of the injected faults", &flags->fault_seed);
  AddPriceOptions(parser, &options.prices, &flags->function_memory_mb);
  parser.AddDouble("worker-memory-mb", "MB", "refuse before starting if a worker could need more (default: the\n"
                   "                            function memory with --runtime lambda, else no limit)",
                   &options.runtime.worker_memory_mb);
  parser.AddString("checkpoint", "DIR|s3://B/P", "write the master's state here every --checkpoint-every rounds (one\n"
                   "                            object, replaced atomically), so that --resume can continue the run",
                   &options.checkpoint.location);
  parser.AddInt("checkpoint-every", "M", "rounds (ADMM), Newton steps or the column method's iterations\n"
                "                            between checkpoints", &options.checkpoint.every);
  parser.AddSwitch("resume", "continue the run whose checkpoint --checkpoint names, from its last checkpoint\n"
                   "                            (give only --checkpoint, or the run's own arguments; outputs may change)",
                   &flags->resume);
  parser.AddSwitch("quiet", "print nothing but errors", &flags->quiet);
  parser.AddSwitch("verbose", "print the full report instead of one line", &flags->verbose);
  parser.Require("data");
}

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
  options.algorithm_profiles = SplitList(flags->algorithm_profiles);
  if (parser.Given("checkpoint-every") && options.checkpoint.location.empty()) {
    return InvalidArgument("--checkpoint-every: only with --checkpoint DIR|s3://BUCKET/PREFIX");
  }
  NIMBUS_RETURN_IF_ERROR(FinishPriceOptions(flags->function_memory_mb, &options.prices));
  FaultSpecs& faults = flags->faults;
  faults.seed = static_cast<uint64_t>(flags->fault_seed);
  if (!faults.crash.empty() || !faults.delay.empty() || !faults.slow.empty()) {
    NIMBUS_RETURN_IF_ERROR(InjectFaultsForTests(faults, &options));  // (tests' flags: the workers' own faults)
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

}  // namespace nimbus::cli
