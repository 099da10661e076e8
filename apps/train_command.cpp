// nimbus train: the ADMM master with its workers.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "cli_common.h"
#include "commands.h"
#include "model.h"
#include "nimbus/admm/coordinator.h"
#include "nimbus/cloud/s3.h"
#include "nimbus/core/clock.h"
#include "nimbus/core/file_io.h"
#include "nimbus/data/libsvm_reader.h"
#include "nimbus/data/manifest.h"
#include "nimbus/metrics/cost.h"
#include "nimbus/metrics/trace.h"
#include "nimbus/runtime/lambda.h"
#include "nimbus/runtime/remote_executor.h"
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
  Prices prices;
  double function_memory_mb = 0;
  // Runtimes other than threads.
  std::string launch, hosts, listen = "tcp://127.0.0.1:0", advertise, shard_dir, barrier = "all";
  std::string inject_crash, inject_delay, inject_slow;
  std::string lambda_function, lambda_endpoint;
  bool lambda_pass_credentials = false;
  int64_t max_staleness = 2, fault_seed = 1, max_restarts = 3;
  double max_lifetime = 0, round_timeout_floor = 60, heartbeat = 1;
};

// The data, either in this process (a LIBSVM file) or as shards in a store.
struct Plan {
  ProblemSpec spec;
  LabelEncoding labels;
  double load_seconds = 0;
  int workers = 0;
  std::optional<Dataset> data;                            // file input
  std::vector<std::pair<int64_t, int64_t>> ranges;        // its row blocks, one per worker
  std::shared_ptr<Store> store;                           // store input
  Manifest manifest;
};

Result<Plan> PlanFromStore(const TrainFlags& flags, Loss loss) {
  NIMBUS_ASSIGN_OR_RETURN(std::unique_ptr<Store> owned, OpenAnyStore(flags.data, /*create=*/false));
  Plan plan;
  plan.store = std::move(owned);
  NIMBUS_ASSIGN_OR_RETURN(plan.manifest, ReadManifest(*plan.store));
  const int shards = static_cast<int>(plan.manifest.shards.size());
  if (flags.workers != 0 && flags.workers != shards) {
    return InvalidArgument("--workers: the store " + flags.data + " holds " + std::to_string(shards) +
                           " shards, one per worker; give --workers " + std::to_string(shards) +
                           " or leave it out (or split again with --shards " + std::to_string(flags.workers) + ")");
  }
  if (IsClassification(loss) != plan.manifest.encoding.binary) {
    return InvalidArgument(flags.data + ": the shards hold " + plan.manifest.encoding.Describe() + ", which the " +
                           LossName(loss) + " loss cannot use (split with --task " +
                           (IsClassification(loss) ? "classification" : "regression") + ")");
  }
  plan.spec.rows = plan.manifest.rows;
  plan.spec.cols = plan.manifest.cols;
  plan.labels = plan.manifest.encoding;
  plan.workers = shards;
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
  plan.workers = static_cast<int>(workers);
  plan.ranges = PartitionRows(data.matrix, plan.workers);
  plan.data = std::move(data);
  return plan;
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> items;
  std::size_t begin = 0;
  while (begin <= text.size() && !text.empty()) {
    const auto end = std::min(text.find(',', begin), text.size());
    if (end > begin) items.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return items;
}

// Where the executor's shards come from; for remote workers, file input is first written as
// shards (the same row blocks the threads runtime uses, so the iterates are the same).
struct Runtime {
  std::unique_ptr<Executor> executor;
  RemoteExecutor* remote = nullptr;
  std::optional<TemporaryDirectory> shard_directory;
  std::optional<TemporaryDirectory> state_directory;  // kept worker state beyond the memory limit
};

Result<Runtime> MakeRuntime(const TrainFlags& flags, const Plan& plan, const WorkerOptions& worker_options) {
  Runtime runtime;
  if (flags.runtime == "threads") {
    std::vector<ShardSource> shards;
    if (plan.data) {
      for (const auto& [begin, end] : plan.ranges) shards.push_back(ShardSource::InMemory(plan.data->Rows(begin, end)));
    } else {
      for (const ShardEntry& entry : plan.manifest.shards) {
        shards.push_back(ShardSource::InStore(plan.store, entry.key, entry.checksum));
      }
    }
    runtime.executor = std::make_unique<ThreadsExecutor>(std::move(shards), plan.spec, worker_options);
    return runtime;
  }

  std::string store_uri = plan.store ? plan.store->uri() : "";
  Manifest manifest = plan.manifest;
  if (plan.data) {
    std::string directory = flags.shard_dir;
    if (directory.empty()) {
      NIMBUS_ASSIGN_OR_RETURN(TemporaryDirectory temporary, TemporaryDirectory::Create("nimbus-shards"));
      directory = temporary.path();
      runtime.shard_directory = std::move(temporary);
    }
    NIMBUS_ASSIGN_OR_RETURN(std::unique_ptr<Store> store, OpenAnyStore(directory, /*create=*/true));
    NIMBUS_ASSIGN_OR_RETURN(manifest, WriteShards(*plan.data, plan.workers, flags.data, *store));
    store_uri = directory;
  }
  if (store_uri.find("://") == std::string::npos) store_uri = AbsolutePath(store_uri);
  std::vector<ShardAssignment> shards;
  for (const ShardEntry& entry : manifest.shards) shards.push_back({store_uri, entry.key, entry.checksum});

  RemoteOptions options;
  options.name = flags.runtime;
  options.listen = flags.listen;
  options.advertise = flags.advertise;
  options.heartbeat_seconds = flags.heartbeat;
  options.round_timeout_floor_seconds = flags.round_timeout_floor;
  options.max_restarts = static_cast<int>(flags.max_restarts);
  options.max_lifetime_seconds = flags.max_lifetime;
  NIMBUS_ASSIGN_OR_RETURN(TemporaryDirectory state_directory, TemporaryDirectory::Create("nimbus-state"));
  options.spill_directory = state_directory.path();
  runtime.state_directory = std::move(state_directory);
  NIMBUS_RETURN_IF_ERROR(options.Validate());
  std::unique_ptr<Launcher> launcher;
  if (flags.runtime == "process") {
    launcher = MakeProcessLauncher(CurrentExecutable());
  } else if (flags.runtime == "lambda") {
    if (flags.lambda_function.empty()) return InvalidArgument("--runtime lambda: needs --lambda-function NAME");
    NIMBUS_ASSIGN_OR_RETURN(AwsConfig config, LoadAwsConfig("lambda"));
    if (!flags.lambda_endpoint.empty()) config.endpoint_url = flags.lambda_endpoint;
    std::optional<AwsCredentials> passed;
    if (flags.lambda_pass_credentials) {
      NIMBUS_ASSIGN_OR_RETURN(AwsConfig s3, LoadAwsConfig("s3"));
      passed = s3.credentials;
    }
    launcher = MakeLambdaLauncher(flags.lambda_function, std::move(config), std::move(passed));
  } else {
    if (flags.launch.empty()) return InvalidArgument("--runtime command: needs --launch 'COMMAND ... {args}'");
    if (flags.launch.find("{args}") == std::string::npos) {
      return InvalidArgument("--launch: the template must contain {args}, where the worker's arguments go");
    }
    launcher = MakeCommandLauncher(flags.launch, SplitList(flags.hosts));
  }
  auto remote = std::make_unique<RemoteExecutor>(std::move(shards), plan.spec, worker_options, options, std::move(launcher));
  runtime.remote = remote.get();
  runtime.executor = std::move(remote);
  return runtime;
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
      "train", "--data FILE.svm|DIR [--l1 X] [--l2 X] [--workers K] [--runtime R] [--out MODEL] ...",
      "Solves  min_x (1/N) sum_r loss(y_r, a_r.x [+ b]) + l1 ||x||_1 + (l2/2) ||x||^2  with consensus ADMM\n"
      "across K workers. --data is a LIBSVM file (split into K row blocks) or a directory written by\n"
      "'nimbus split' (one shard per worker). Without --l1 and --l2 the problem gets l2 = 1/N, liblinear's\n"
      "default C = 1. Workers run as threads of this process, as local processes, or wherever a launch\n"
      "command starts them (they dial out to this master); any of them may fail and is replaced.");
  parser.AddString("data", "FILE.svm|DIR|s3://B/P", "training data: a LIBSVM file, or shards in a directory or S3",
                   &flags.data);
  parser.AddString("loss", "NAME", "logistic, squared or squared_hinge", &flags.loss);
  parser.AddDouble("l1", "X", "L1 regularization weight", &flags.l1);
  parser.AddDouble("l2", "X", "L2 regularization weight", &flags.l2);
  parser.AddSwitch("intercept", "fit an unregularized intercept b", &flags.intercept);
  parser.AddInt("workers", "K", "number of workers (default: cores for a file, shards for a directory)", &flags.workers);
  parser.AddString("runtime", "NAME", "where workers run: threads, process, command or lambda", &flags.runtime);
  parser.AddDouble("eps-abs", "X", "absolute tolerance of the stop test", &flags.admm.eps_abs);
  parser.AddDouble("eps-rel", "X", "relative tolerance of the stop test", &flags.admm.eps_rel);
  flags.max_iter = flags.admm.max_iterations;
  parser.AddInt("max-iter", "N", "iteration cap", &flags.max_iter);
  parser.AddString("out", "MODEL", "write the model here", &flags.out);
  parser.AddString("model-format", "FORMAT", "json, or liblinear (readable by liblinear-predict)", &flags.model_format);
  parser.AddString("trace", "FILE.jsonl", "write one JSON line per round and per worker event", &flags.trace);
  parser.AddString("summary-json", "FILE", "write the summary as one JSON object", &flags.summary_json);
  parser.AddDouble("rho", "X", "initial ADMM penalty (default: the data's curvature scale)", &flags.admm.rho);
  parser.AddDouble("rho-scale", "X", "multiplier on the automatic initial rho", &flags.admm.rho_scale);
  parser.AddDouble("inner-factor", "X", "x-update gradient tolerance relative to the residuals", &flags.admm.inner_factor);
  parser.AddDouble("inner-first", "X", "x-update relative tolerance in the first rounds", &flags.admm.inner_first_relative);
  parser.AddDouble("relaxation", "A", "over-relaxation alpha in [1, 1.8]", &flags.admm.relaxation);
  parser.AddSwitch("no-adaptive-rho", "keep rho fixed", &flags.no_adaptive_rho);
  parser.AddString("local-solver", "NAME", "x-update solver: newton-cg or lbfgs", &flags.local_solver);
  parser.AddDouble("target-objective", "F", "stop once the objective is <= F (for benchmarks)", &flags.target_objective);
  parser.AddString("barrier", "all|S", "wait for all workers each round, or for S of them (asynchronous ADMM)",
                   &flags.barrier);
  parser.AddInt("max-staleness", "TAU", "with --barrier S: no worker's reply may be older than TAU rounds",
                &flags.max_staleness);
  parser.AddString("launch", "TEMPLATE", "--runtime command: how to start a worker, e.g. 'ssh {host} nimbus worker {args}'",
                   &flags.launch);
  parser.AddString("hosts", "H1,H2,...", "--runtime command: values for {host}, round robin", &flags.hosts);
  parser.AddString("lambda-function", "NAME", "--runtime lambda: the function that runs workers", &flags.lambda_function);
  parser.AddString("lambda-endpoint", "URL", "--runtime lambda: the Lambda API (default: AWS's, or AWS_ENDPOINT_URL)",
                   &flags.lambda_endpoint);
  parser.AddSwitch("lambda-pass-credentials", "--runtime lambda: send this machine's AWS credentials in each event\n"
                   "                            (instead of relying on the function's role)", &flags.lambda_pass_credentials);
  parser.AddString("listen", "ENDPOINT", "where the master listens for workers", &flags.listen);
  parser.AddString("advertise", "ENDPOINT", "the address workers dial, if not the listening one (NAT, public host)",
                   &flags.advertise);
  parser.AddString("shard-dir", "DIR", "remote runtimes with a LIBSVM file: write the shards here (default: a\n"
                   "                            temporary directory, removed after the run)", &flags.shard_dir);
  parser.AddDouble("max-lifetime", "SECONDS", "workers hand over to a successor after this long (as Lambda's cap)",
                   &flags.max_lifetime);
  parser.AddDouble("round-timeout-floor", "SECONDS", "the least time a worker gets for a round before it is replaced",
                   &flags.round_timeout_floor);
  parser.AddDouble("heartbeat", "SECONDS", "heartbeat interval; 5 missed heartbeats mean a worker is gone",
                   &flags.heartbeat);
  parser.AddInt("max-restarts", "N", "new invocations of one worker within one round before giving up",
                &flags.max_restarts);
  parser.AddString("inject-crash", "P[@W]|@W:R", "tests: workers crash with probability P per round (or worker W in\n"
                   "                            round R)", &flags.inject_crash);
  parser.AddString("inject-delay", "MS[:P][@W]", "tests: workers sleep MS ms per round (with probability P; only worker W)",
                   &flags.inject_delay);
  parser.AddString("inject-slow", "FACTOR@W", "tests: worker W takes FACTOR times as long for every round",
                   &flags.inject_slow);
  parser.AddInt("fault-seed", "N", "seed of the injected faults", &flags.fault_seed);
  AddPriceOptions(parser, &flags.prices, &flags.function_memory_mb);
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
  if (flags.runtime != "threads" && flags.runtime != "process" && flags.runtime != "command" &&
      flags.runtime != "lambda") {
    return ReportError("train", InvalidArgument("--runtime: '" + flags.runtime +
                                                "' is not available (this build has: threads, process, command, lambda)"));
  }
  if (flags.workers < 0 || flags.workers > 4096) return ReportError("train", InvalidArgument("--workers: must be in [1, 4096]"));
  if (flags.max_iter < 0 || flags.max_iter > 100000000) return ReportError("train", InvalidArgument("--max-iter: must be >= 0"));
  flags.admm.max_iterations = static_cast<int>(flags.max_iter);
  flags.admm.adaptive_rho = !flags.no_adaptive_rho;
  if (parser.Given("target-objective")) flags.admm.target_objective = flags.target_objective;
  if (flags.barrier != "all") {
    char* end = nullptr;
    const long barrier = std::strtol(flags.barrier.c_str(), &end, 10);
    if (end == flags.barrier.c_str() || *end != '\0' || barrier < 1) {
      return ReportError("train", InvalidArgument("--barrier: 'all' or a number of workers >= 1, got '" + flags.barrier + "'"));
    }
    flags.admm.barrier = static_cast<int>(barrier);
  }
  flags.admm.max_staleness = static_cast<int>(flags.max_staleness);
  if (Status valid = flags.admm.Validate(); !valid.ok()) return ReportError("train", valid);
  flags.prices.function_memory_gb = flags.function_memory_mb / 1000;
  if (Status valid = flags.prices.Validate(); !valid.ok()) return ReportError("train", valid);
  WorkerOptions worker_options;
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

  Result<Plan> plan = LooksLikeStoreUri(flags.data) ? PlanFromStore(flags, *loss) : PlanFromFile(flags, *loss);
  if (!plan.ok()) return ReportError("train", plan.status());
  plan->spec.loss = *loss;
  plan->spec.intercept = flags.intercept;
  plan->spec.regularizer = {flags.l1, flags.l2};
  if (!parser.Given("l1") && !parser.Given("l2")) plan->spec.regularizer.l2 = 1.0 / static_cast<double>(plan->spec.rows);
  if (Status valid = plan->spec.Validate(); !valid.ok()) return ReportError("train", valid);
  if (flags.admm.barrier > plan->workers) {
    return ReportError("train", InvalidArgument("--barrier: " + flags.barrier + " of " + std::to_string(plan->workers) +
                                                " workers"));
  }

  std::unique_ptr<JsonlTraceFile> trace;
  if (!flags.trace.empty()) {
    Result<std::unique_ptr<JsonlTraceFile>> opened = JsonlTraceFile::Open(flags.trace);
    if (!opened.ok()) return ReportError("train", opened.status());
    trace = std::move(opened).value();
  }
  Result<Runtime> runtime = MakeRuntime(flags, *plan, worker_options);
  if (!runtime.ok()) return ReportError("train", runtime.status());
  if (runtime->remote != nullptr && trace) runtime->remote->SetTraceSink(trace.get());

  Coordinator coordinator(plan->spec, flags.admm, runtime->executor.get());
  if (trace) coordinator.SetTraceSink(trace.get());
  const bool show_progress = !flags.quiet && StderrIsTerminal();
  if (show_progress) coordinator.SetIterationCallback(PrintProgress);
  if (!flags.quiet) {
    std::fprintf(stderr, "nimbus train: %lld rows, %lld features, %s loss, l1 %g, l2 %g, %d %s workers\n",
                 static_cast<long long>(plan->spec.rows), static_cast<long long>(plan->spec.cols), LossName(*loss),
                 plan->spec.regularizer.l1, plan->spec.regularizer.l2, plan->workers,
                 runtime->executor->name().c_str());
  }

  Result<Solution> solution = coordinator.Solve();
  if (show_progress) std::fputc('\n', stderr);
  if (!solution.ok()) return ReportError("train", solution.status());
  Summary& summary = solution->summary;
  summary.load_seconds = plan->load_seconds;
  {
    // At Lambda's prices: every worker for the whole run, shard loads from S3, the master.
    const double run = summary.setup_seconds + summary.solve_seconds;
    int64_t s3_requests = 0;
    const int64_t shard_bytes = (plan->spec.rows * 16 + summary.data_nnz * 12) / std::max(1, plan->workers);
    for (int i = 0; i < plan->workers; ++i) s3_requests += 1 + ShardLoadRequests(shard_bytes);
    const Cost cost = EstimateCost(flags.prices, plan->workers + summary.worker_restarts, run * plan->workers,
                                   s3_requests, run + summary.load_seconds);
    summary.cost_dollars = cost.total_dollars();
    summary.cost_gb_seconds = cost.function_gb_seconds;
  }
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
