#include "solve_setup.h"

#include "cli_common.h"

#include <algorithm>
#include <cmath>
#include <thread>

#include "nimbus/cloud/aws.h"
#include "nimbus/cloud/s3.h"
#include "nimbus/admm/coordinator.h"
#include "nimbus/core/clock.h"
#include "nimbus/core/format.h"
#include "nimbus/data/libsvm_reader.h"
#include "nimbus/mpi/mpi_runtime.h"
#include "nimbus/runtime/lambda.h"
#include "nimbus/runtime/launcher.h"
#include "nimbus/runtime/threads_executor.h"

namespace nimbus::cli {
namespace {

Result<Plan> PlanFromStore(const std::string& location, int64_t workers, Loss loss) {
  NIMBUS_ASSIGN_OR_RETURN(std::unique_ptr<Store> owned, OpenAnyStore(location, /*create=*/false));
  Plan plan;
  plan.store = std::move(owned);
  NIMBUS_ASSIGN_OR_RETURN(plan.manifest, ReadManifest(*plan.store));
  const int shards = static_cast<int>(plan.manifest.shards.size());
  if (workers != 0 && workers != shards) {
    return InvalidArgument("--workers: the store " + location + " holds " + std::to_string(shards) +
                           " shards, one per worker; give --workers " + std::to_string(shards) +
                           " or leave it out (or split again with --shards " + std::to_string(workers) + ")");
  }
  if (IsClassification(loss) != plan.manifest.encoding.binary) {
    return InvalidArgument(location + ": the shards hold " + plan.manifest.encoding.Describe() + ", which the " +
                           LossName(loss) + " loss cannot use (split with --task " +
                           (IsClassification(loss) ? "classification" : "regression") + ")");
  }
  plan.spec.rows = plan.manifest.rows;
  plan.spec.cols = plan.manifest.cols;
  plan.labels = plan.manifest.encoding;
  plan.workers = shards;
  return plan;
}

Result<Plan> PlanFromFile(const std::string& path, int64_t requested_workers, Loss loss) {
  Stopwatch watch;
  LibsvmReadOptions options;
  options.label_mode = IsClassification(loss) ? LabelMode::kBinary : LabelMode::kRegression;
  NIMBUS_ASSIGN_OR_RETURN(Dataset data, ReadLibsvmFile(path, options));
  Plan plan;
  plan.load_seconds = watch.ElapsedSeconds();
  plan.spec.rows = data.rows();
  plan.spec.cols = data.cols();
  plan.labels = data.encoding;
  const int64_t default_workers = std::max<unsigned>(1, std::thread::hardware_concurrency());
  const int64_t workers = requested_workers > 0 ? requested_workers : std::min(default_workers, data.rows());
  if (workers > data.rows()) {
    return InvalidArgument("--workers: " + std::to_string(workers) + " workers for " + std::to_string(data.rows()) +
                           " rows: every worker needs at least one row");
  }
  plan.workers = static_cast<int>(workers);
  plan.ranges = PartitionRows(data.matrix, plan.workers);
  plan.data = std::move(data);
  return plan;
}

}  // namespace

void AddProblemOptions(ArgParser& parser, ProblemFlags* flags) {
  parser.AddString("data", "FILE.svm|DIR|s3://B/P", "training data: a LIBSVM file, or shards in a directory or S3",
                   &flags->data);
  parser.AddString("loss", "NAME", "logistic, squared or squared_hinge", &flags->loss);
  parser.AddDouble("l1", "X", "L1 regularization weight", &flags->l1);
  parser.AddDouble("l2", "X", "L2 regularization weight", &flags->l2);
  parser.AddSwitch("intercept", "fit an unregularized intercept b", &flags->intercept);
  parser.AddDouble("eps-abs", "X", "absolute tolerance of the stop test", &flags->admm.eps_abs);
  parser.AddDouble("eps-rel", "X", "relative tolerance of the stop test", &flags->admm.eps_rel);
  flags->max_iter = flags->admm.max_iterations;
  parser.AddInt("max-iter", "N", "iteration cap", &flags->max_iter);
  parser.AddString("consensus", "FORM", "dense (every worker holds all of z) or general (a worker holds the\n"
                   "                            features its shard touches; messages follow the data, not d)",
                   &flags->consensus);
}

Result<Loss> CheckProblemOptions(ProblemFlags* flags) {
  Result<Loss> loss = ParseLoss(flags->loss);
  if (!loss.ok()) return loss.status().WithContext("--loss");
  if (flags->max_iter < 0 || flags->max_iter > 100000000) return InvalidArgument("--max-iter: must be >= 0");
  flags->admm.max_iterations = static_cast<int>(flags->max_iter);
  if (flags->consensus != "dense" && flags->consensus != "general") {
    return InvalidArgument("--consensus: '" + flags->consensus + "' is not dense or general");
  }
  flags->worker.general_form = flags->consensus == "general";
  return loss;
}

Status SetRegularizer(const ArgParser& parser, const ProblemFlags& flags, Plan* plan) {
  plan->spec.intercept = flags.intercept;
  plan->spec.regularizer = {flags.l1, flags.l2};
  if (!parser.Given("l1") && !parser.Given("l2")) plan->spec.regularizer.l2 = 1.0 / static_cast<double>(plan->spec.rows);
  return plan->spec.Validate();
}

void AddRuntimeOptions(ArgParser& parser, RuntimeFlags* flags) {
  parser.AddString("runtime", "NAME", "where workers run: threads, process, command, lambda or mpi (under mpirun)",
                   &flags->runtime);
  parser.AddString("launch", "TEMPLATE", "--runtime command: how to start a worker, e.g. 'ssh {host} nimbus worker {args}'",
                   &flags->launch);
  parser.AddString("hosts", "H1,H2,...", "--runtime command: values for {host}, round robin", &flags->hosts);
  parser.AddString("lambda-function", "NAME", "--runtime lambda: the function that runs workers", &flags->lambda_function);
  parser.AddString("lambda-endpoint", "URL", "--runtime lambda: the Lambda API (default: AWS's, or AWS_ENDPOINT_URL)",
                   &flags->lambda_endpoint);
  parser.AddSwitch("lambda-pass-credentials", "--runtime lambda: send this machine's AWS credentials in each event\n"
                   "                            (instead of relying on the function's role)", &flags->lambda_pass_credentials);
  parser.AddString("listen", "ENDPOINT", "where the master listens for workers", &flags->listen);
  parser.AddString("advertise", "ENDPOINT", "the address workers dial, if not the listening one (NAT, public host)",
                   &flags->advertise);
  parser.AddSwitch("insecure", "workers speak plaintext, without the run's CurveZMQ keys (allowed only when\n"
                   "                            --listen is a loopback address)", &flags->insecure);
  parser.AddString("shard-dir", "DIR", "remote runtimes with a LIBSVM file: write the shards here (default: a\n"
                   "                            temporary directory, removed after the run; with mpi on several\n"
                   "                            machines, a directory all of them see)", &flags->shard_dir);
  parser.AddDouble("max-lifetime", "SECONDS", "workers hand over to a successor after this long (as Lambda's cap)",
                   &flags->max_lifetime);
  parser.AddDouble("round-timeout-floor", "SECONDS", "the least time a worker gets for a round before it is replaced",
                   &flags->round_timeout_floor);
  parser.AddDouble("heartbeat", "SECONDS", "heartbeat interval; 5 missed heartbeats mean a worker is gone",
                   &flags->heartbeat);
  parser.AddInt("max-restarts", "N", "new invocations of one worker within one round before giving up",
                &flags->max_restarts);
}

Status CheckRuntimeName(const std::string& runtime) {
  if (runtime == "threads" || runtime == "process" || runtime == "command" || runtime == "lambda" || runtime == "mpi") {
    return Status::Ok();
  }
  return InvalidArgument("--runtime: '" + runtime +
                         "' is not available (this build has: threads, process, command, lambda, mpi)");
}

Result<Plan> PlanData(const std::string& location, int64_t workers, Loss loss) {
  NIMBUS_ASSIGN_OR_RETURN(Plan plan,
                          LooksLikeStoreUri(location) ? PlanFromStore(location, workers, loss) : PlanFromFile(location, workers, loss));
  plan.source = location;
  plan.spec.loss = loss;
  return plan;
}

double WorkerMemoryBytes(int64_t rows, int64_t nnz, int64_t model_size, bool general_form) {
  const double local = general_form ? static_cast<double>(std::min(model_size, nnz + 1)) : static_cast<double>(model_size);
  return 48.0 * static_cast<double>(rows) + 12.0 * static_cast<double>(nnz) + 160.0 * local;
}

Status CheckWorkerMemory(const Plan& plan, bool general_form, double limit_mb) {
  if (limit_mb <= 0) return Status::Ok();
  const auto n = static_cast<int64_t>(plan.spec.model_size());
  auto check = [&](const std::string& shard, int64_t rows, int64_t nnz) -> Status {
    const double needed_mb = WorkerMemoryBytes(rows, nnz, n, general_form) / 1e6;
    if (needed_mb <= limit_mb) return Status::Ok();
    return InvalidArgument(shard + " (" + std::to_string(rows) + " rows, " + std::to_string(nnz) +
                           " nonzeros) needs about " + std::to_string(static_cast<int64_t>(std::ceil(needed_mb))) +
                           " MB in a worker, over the " + std::to_string(static_cast<int64_t>(limit_mb)) +
                           " MB limit (--worker-memory-mb): use more workers (or split into more shards)" +
                           (general_form ? "" : ", or --consensus general"));
  };
  if (plan.data) {
    for (std::size_t i = 0; i < plan.ranges.size(); ++i) {
      const auto [begin, end] = plan.ranges[i];
      const int64_t nnz = plan.data->matrix.row_ptr[end] - plan.data->matrix.row_ptr[begin];
      NIMBUS_RETURN_IF_ERROR(check("worker " + std::to_string(i) + "'s rows of " + plan.source, end - begin, nnz));
    }
    return Status::Ok();
  }
  for (const ShardEntry& entry : plan.manifest.shards) {
    NIMBUS_RETURN_IF_ERROR(check(plan.store->Describe(entry.key), entry.rows, entry.nnz));
  }
  return Status::Ok();
}

Status Repartition(Plan& plan, int workers) {
  if (!plan.data) return InvalidArgument(plan.source + ": the shards of a store cannot be split anew; give a LIBSVM file");
  if (workers < 1 || workers > plan.data->rows()) {
    return InvalidArgument("--workers: " + std::to_string(workers) + " workers for " + std::to_string(plan.data->rows()) +
                           " rows");
  }
  plan.workers = workers;
  plan.ranges = PartitionRows(plan.data->matrix, workers);
  return Status::Ok();
}

Result<Runtime> MakeRuntime(const RuntimeFlags& flags, const Plan& plan, const WorkerOptions& worker_options) {
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
    NIMBUS_ASSIGN_OR_RETURN(manifest, WriteShards(*plan.data, plan.workers, plan.source, *store));
    store_uri = directory;
  }
  if (store_uri.find("://") == std::string::npos) store_uri = AbsolutePath(store_uri);
  std::vector<ShardAssignment> shards;
  for (const ShardEntry& entry : manifest.shards) shards.push_back({store_uri, entry.key, entry.checksum});
  if (flags.runtime == "mpi" && flags.topology == "allreduce") {
    runtime.executor = std::make_unique<MpiAllreduceExecutor>(shards, plan.spec, worker_options, flags.run_id);
    return runtime;
  }
  if (flags.runtime == "mpi") {
    runtime.executor = std::make_unique<MpiExecutor>(std::move(shards), plan.spec, worker_options, flags.run_id);
    return runtime;
  }

  RemoteOptions options;
  options.name = flags.runtime;
  options.listen = flags.listen;
  options.advertise = flags.advertise;
  options.heartbeat_seconds = flags.heartbeat;
  options.round_timeout_floor_seconds = flags.round_timeout_floor;
  options.max_restarts = static_cast<int>(flags.max_restarts);
  options.max_lifetime_seconds = flags.max_lifetime;
  options.insecure = flags.insecure;
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

void AddCostEstimate(const Prices& prices, const Plan& plan, Summary* summary) {
  const double run = summary->setup_seconds + summary->solve_seconds;
  // A shard holds a label and an offset per row (16 bytes) and an index and value per entry.
  const int64_t shard_bytes = (plan.spec.rows * 16 + summary->data_nnz * 12) / std::max(1, plan.workers);
  const int64_t s3_requests = plan.workers * (1 + ShardLoadRequests(shard_bytes));
  const Cost cost = EstimateCost(prices, plan.workers + summary->worker_restarts, run * plan.workers, s3_requests,
                                 run + summary->load_seconds);
  summary->cost_dollars = cost.total_dollars();
  summary->cost_gb_seconds = cost.function_gb_seconds;
}

void AddAlgorithmOptions(ArgParser& parser, AlgorithmFlags* flags) {
  parser.AddString("algorithm", "NAME", "admm, newton (Newton-CG over the shards: trust region; active sets with\n"
                   "                            --l1), or auto (newton unless an option needs admm)", &flags->algorithm);
  parser.AddDouble("gradient-tolerance", "X", "newton: stop when the minimum-norm subgradient of F is X times its\n"
                   "                            norm at the start", &flags->gradient_tolerance);
}

Result<MasterChoice> ChooseMaster(const AlgorithmFlags& flags, const AdmmOptions& admm, const std::string& topology) {
  const bool admm_only = admm.barrier != 0 || admm.lean_messages || topology == "allreduce";
  MasterChoice choice;
  if (flags.algorithm == "auto") {
    choice.algorithm = admm_only ? "admm" : "newton";
  } else if (flags.algorithm == "admm" || flags.algorithm == "newton") {
    choice.algorithm = flags.algorithm;
  } else {
    return InvalidArgument("--algorithm: '" + flags.algorithm + "' is not admm, newton or auto");
  }
  if (choice.algorithm == "newton" && admm_only) {
    return InvalidArgument("--algorithm newton: not with --barrier, --message-precision float32 or --topology "
                           "allreduce (ADMM's)");
  }
  choice.admm = admm;
  choice.newton.gradient_tolerance = flags.gradient_tolerance;
  choice.newton.max_iterations = admm.max_iterations;
  choice.newton.target_objective = admm.target_objective;
  choice.newton.round_timeout_seconds = admm.round_timeout_seconds;
  choice.newton.start_timeout_seconds = admm.start_timeout_seconds;
  if (!(flags.gradient_tolerance > 0 && flags.gradient_tolerance < 1)) {
    return InvalidArgument(Format("--gradient-tolerance: must be in (0, 1), got %g", flags.gradient_tolerance));
  }
  NIMBUS_RETURN_IF_ERROR(choice.newton.Validate());
  return choice;
}

std::unique_ptr<Master> MasterChoice::Make(const ProblemSpec& spec, Executor* executor) const {
  if (algorithm == "newton") return std::make_unique<NewtonMaster>(spec, newton, executor);
  return std::make_unique<Coordinator>(spec, admm, executor);
}

}  // namespace nimbus::cli
