#include "nimbus/api/plan.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

#include "nimbus/admm/coordinator.h"
#include "nimbus/cloud/s3.h"
#include "nimbus/core/args.h"
#include "nimbus/core/clock.h"
#include "nimbus/data/feature_map.h"
#include "nimbus/data/libsvm_reader.h"
#include "nimbus/data/sample_weights.h"
#include "nimbus/runtime/launcher.h"
#include "nimbus/runtime/threads_executor.h"
#ifdef NIMBUS_HAVE_MPI
#include "nimbus/mpi/mpi_runtime.h"
#endif
#ifdef NIMBUS_HAVE_AWS
#include "nimbus/cloud/aws.h"
#include "nimbus/runtime/lambda.h"
#endif

namespace nimbus {
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
  if (IsClassification(loss) != plan.manifest.encoding.classification) {
    return InvalidArgument(location + ": the shards hold " + plan.manifest.encoding.Describe() + ", which the " +
                           LossName(loss) + " loss cannot use (split with --task " +
                           (IsClassification(loss) ? "classification" : "regression") + ")");
  }
  NIMBUS_ASSIGN_OR_RETURN(plan.columns, ReadColumnMap(*plan.store, plan.manifest));
  plan.spec.rows = plan.manifest.rows;
  plan.spec.cols = plan.manifest.cols;
  plan.labels = plan.manifest.encoding;
  plan.workers = shards;
  return plan;
}

// The caller's arrays hold a matrix: offsets that start at 0 and never decrease, and column
// indices that ascend in each row and stay below cols (a bad index would otherwise be a wild
// read in a worker, and a shard a remote worker refuses).
Status CheckCsr(const CsrView& matrix) {
  if (matrix.rows < 1 || matrix.row_ptr == nullptr || matrix.row_ptr[0] != 0) {
    return InvalidArgument("data: needs at least one row, and row_ptr[0] == 0");
  }
  if (matrix.cols < 1 || matrix.cols > (int64_t{1} << 32)) return InvalidArgument("data: cols must be in [1, 2^32]");
  if (matrix.nnz() > 0 && (matrix.col_idx == nullptr || matrix.values == nullptr)) {
    return InvalidArgument("data: nonzeros without col_idx or values");
  }
  // The shard format's rules (ascending indices too), so remote workers load what threads take.
  NIMBUS_RETURN_IF_ERROR(CheckCsrStructure(matrix).WithContext("data"));
  for (int64_t k = 0; k < matrix.nnz(); ++k) {
    if (!std::isfinite(matrix.values[k])) return InvalidArgument("data: values[" + std::to_string(k) + "] is not finite");
  }
  return Status::Ok();
}

// The caller's rows as a classifier or a regression sees them: for a classifier, two
// distinct label values become -1 and +1 (the larger +1), in a copy unless they already are;
// more become class indices in ascending order of value.
Result<Dataset> InMemoryDataset(const TrainingData& data, Loss loss) {
  const CsrView& matrix = data.matrix();
  if (static_cast<int64_t>(data.labels().size()) != matrix.rows) {
    return InvalidArgument("data: " + std::to_string(data.labels().size()) + " labels for " +
                           std::to_string(matrix.rows) + " rows");
  }
  NIMBUS_RETURN_IF_ERROR(CheckCsr(matrix));
  Dataset dataset;
  dataset.matrix = matrix;
  dataset.labels = data.labels();
  if (!IsClassification(loss)) {
    dataset.encoding.classification = false;
    return dataset;
  }
  DistinctLabels distinct;
  for (const double label : data.labels()) {
    if (!std::isfinite(label)) return InvalidArgument("data: a label is not a finite number");
    if (!distinct.Add(label)) {
      return InvalidArgument("data: more than " + std::to_string(kMaxClasses) +
                             " distinct labels, the most classes a classifier takes (a regression's targets? "
                             "Loss::kSquared)");
    }
  }
  dataset.encoding = distinct.Encoding();
  if (!dataset.encoding.multiclass() && dataset.encoding.negative == -1.0 && dataset.encoding.positive == 1.0) {
    return dataset;
  }
  auto encoded = std::make_shared<std::vector<double>>();
  encoded->reserve(data.labels().size());
  for (const double label : data.labels()) encoded->push_back(dataset.encoding.Encode(label));
  dataset.labels = *encoded;
  dataset.storage = std::move(encoded);
  return dataset;
}

// The rows' own weights, from the caller's array or a file, into `data` (which keeps them alive
// beside its arrays).
Status AttachSampleWeights(const TrainingData& source, Dataset& data) {
  if (!source.sample_weights().empty()) {
    NIMBUS_RETURN_IF_ERROR(CheckSampleWeights(source.sample_weights(), data.rows(), "sample weights"));
    data.weights = source.sample_weights();
    return Status::Ok();
  }
  if (source.sample_weights_file().empty()) return Status::Ok();
  return ReadSampleWeightsInto(source.sample_weights_file(), data);
}

Result<Plan> PlanInMemory(const TrainingData& source, int64_t requested_workers, Loss loss) {
  Stopwatch watch;
  Dataset data;
  if (source.in_memory()) {
    NIMBUS_ASSIGN_OR_RETURN(data, InMemoryDataset(source, loss));
    data = RenumberToOccurring(data);
  } else {
    LibsvmReadOptions options;
    options.label_mode = IsClassification(loss) ? LabelMode::kClassification : LabelMode::kRegression;
    options.renumber_columns = true;
    NIMBUS_ASSIGN_OR_RETURN(data, ReadLibsvmFile(source.location(), options));
  }
  Plan plan;
  plan.load_seconds = watch.ElapsedSeconds();
  NIMBUS_RETURN_IF_ERROR(AttachSampleWeights(source, data));
  plan.spec.rows = data.rows();
  plan.spec.cols = data.cols();
  plan.columns = data.columns;
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

// Lambda's: Invoke requests signed with this machine's AWS configuration.
Result<std::unique_ptr<Launcher>> MakeInvokeLauncher([[maybe_unused]] const RuntimeOptions& flags) {
#ifdef NIMBUS_HAVE_AWS
  NIMBUS_ASSIGN_OR_RETURN(AwsConfig config, LoadAwsConfig("lambda"));
  if (!flags.lambda_endpoint.empty()) config.endpoint_url = flags.lambda_endpoint;
  std::optional<AwsCredentials> passed;
  if (flags.lambda_pass_credentials) {
    NIMBUS_ASSIGN_OR_RETURN(AwsConfig s3, LoadAwsConfig("s3"));
    passed = s3.credentials;
  }
  return MakeLambdaLauncher(flags.lambda_function, std::move(config), std::move(passed));
#else
  return InvalidArgument("--runtime lambda: not in this build (NIMBUS_WITH_AWS=OFF)");
#endif
}

}  // namespace

Result<Plan> PlanData(const TrainingData& data, int64_t workers, Loss loss) {
  if (data.is_store() && (!data.sample_weights().empty() || !data.sample_weights_file().empty())) {
    return InvalidArgument("--sample-weights: the store " + data.location() +
                           " holds its rows' weights, if any (give them to nimbus split)");
  }
  NIMBUS_ASSIGN_OR_RETURN(Plan plan, data.is_store() ? PlanFromStore(data.location(), workers, loss)
                                           : PlanInMemory(data, workers, loss));
  plan.source = data.in_memory() ? "memory" : data.location();
  plan.spec.loss = loss;
  return plan;
}

Result<std::vector<double>> ClassWeightsOf(const ClassWeights& weights, const LabelEncoding& encoding,
                                           std::span<const double> labels, const std::string& source) {
  if (weights.empty()) return std::vector<double>{};
  NIMBUS_RETURN_IF_ERROR(weights.Validate());
  if (!encoding.classification) return InvalidArgument("--class-weight: the data has real-valued targets, not classes");
  const std::vector<double> values = encoding.ClassValues();
  std::vector<double> per_class(values.size(), 1.0);
  if (weights.balanced) {
    if (labels.empty()) {
      return InvalidArgument("--class-weight balanced: needs the rows of each class, which the store " + source +
                             " does not list; give the LIBSVM file, or the weights by label");
    }
    std::vector<double> counts(values.size(), 0.0);
    for (const double y : labels) counts[ClassIndex(y)] += 1;
    // scikit-learn's: N / (classes x the class's rows).
    const auto rows = static_cast<double>(labels.size()), classes = static_cast<double>(values.size());
    for (std::size_t c = 0; c < counts.size(); ++c) per_class[c] = counts[c] > 0 ? rows / (classes * counts[c]) : 1.0;
  }
  for (const auto& [label, weight] : weights.by_label) {
    const auto at = std::find(values.begin(), values.end(), label);
    if (at == values.end()) {
      return InvalidArgument("--class-weight: label " + FormatLabel(label) + " does not occur in " + source + " (" +
                             encoding.Describe() + ")");
    }
    per_class[static_cast<std::size_t>(at - values.begin())] *= weight;
  }
  return per_class;
}

Status SetProblem(const SolveOptions& options, Plan* plan) {
  const std::span<const double> labels = plan->data ? plan->data->labels : std::span<const double>();
  NIMBUS_ASSIGN_OR_RETURN(plan->spec.class_weights,
                          ClassWeightsOf(options.class_weights, plan->labels, labels, plan->source));
  plan->spec.intercept = options.intercept;
  plan->spec.multinomial = options.multiclass == "multinomial";
  plan->spec.classes = plan->labels.multiclass() ? static_cast<int64_t>(plan->labels.classes.size())
                       : plan->spec.multinomial ? 2 : 1;
  plan->spec.regularizer = {options.l1.value_or(0.0), options.l2.value_or(0.0), options.regularizer};
  if (!options.l1 && !options.l2 && !options.regularizer) {
    plan->spec.regularizer.l2 = 1.0 / static_cast<double>(plan->spec.rows);
  }
  return plan->spec.Validate();
}

double WorkerMemoryBytes(int64_t rows, int64_t nnz, int64_t model_size, bool general_form, int64_t blocks,
                         bool working_columns) {
  const double local = general_form ? static_cast<double>(std::min(model_size, (nnz + 1) * blocks))
                                    : static_cast<double>(model_size);
  const double per_nonzero = working_columns ? 18.0 : 12.0;
  return 48.0 * static_cast<double>(rows * blocks) + per_nonzero * static_cast<double>(nnz) + 160.0 * local;
}

Status CheckWorkerMemory(const Plan& plan, bool general_form, bool working_columns, double limit_mb) {
  if (limit_mb <= 0) return Status::Ok();
  const auto n = static_cast<int64_t>(plan.spec.model_size());
  auto check = [&](const std::string& shard, int64_t rows, int64_t nnz) -> Status {
    const double needed_mb =
        WorkerMemoryBytes(rows, nnz, n, general_form, plan.spec.blocks(), working_columns) / 1e6;
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

Result<Runtime> MakeRuntime(const RuntimeOptions& flags, const Plan& plan, const WorkerOptions& worker_options) {
  Runtime runtime;
  if (flags.kind == "threads") {
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
  for (std::size_t i = 0; i < manifest.shards.size(); ++i) {
    const ShardEntry& entry = manifest.shards[i];
    // (With an l1 term, L1 Newton's copy of the working columns counted: the larger need.)
    const auto estimate = static_cast<int64_t>(WorkerMemoryBytes(
        entry.rows, entry.nnz, static_cast<int64_t>(plan.spec.model_size()), worker_options.general_form,
        plan.spec.blocks(), plan.spec.regularizer.l1 > 0));
    shards.push_back({store_uri, entry.key, entry.checksum, {}, entry.rows, entry.nnz, estimate});
    if (plan.data && !plan.data->folds.empty()) {  // the same row blocks as the shards written
      const auto [begin, end] = plan.ranges[i];
      shards.back().folds.assign(plan.data->folds.begin() + begin, plan.data->folds.begin() + end);
    }
  }
#ifdef NIMBUS_HAVE_MPI
  if (flags.kind == "mpi" && flags.topology == "allreduce") {
    runtime.executor = std::make_unique<MpiAllreduceExecutor>(shards, plan.spec, worker_options, flags.run_id);
    return runtime;
  }
  if (flags.kind == "mpi") {
    runtime.executor = std::make_unique<MpiExecutor>(std::move(shards), plan.spec, worker_options, flags.run_id);
    return runtime;
  }
#endif

  RemoteOptions options;
  options.name = flags.kind;
  options.listen = flags.listen;
  options.advertise = flags.advertise;
  options.heartbeat_seconds = flags.heartbeat;
  options.round_timeout_floor_seconds = flags.round_timeout_floor;
  options.max_restarts = static_cast<int>(flags.max_restarts);
  options.max_lifetime_seconds = flags.max_lifetime;
  options.insecure = flags.insecure;
  options.memory_advice = std::string(worker_options.general_form ? "" : "or the general form (--consensus general), ") +
                          (flags.kind == "lambda" ? "or more memory for the function" : "or more memory per worker");
  NIMBUS_ASSIGN_OR_RETURN(TemporaryDirectory state_directory, TemporaryDirectory::Create("nimbus-state"));
  options.spill_directory = state_directory.path();
  runtime.state_directory = std::move(state_directory);
  NIMBUS_RETURN_IF_ERROR(options.Validate());
  std::unique_ptr<Launcher> launcher;
  if (flags.kind == "process") {
    launcher = MakeProcessLauncher(flags.worker_program.empty() ? CurrentExecutable() : flags.worker_program);
  } else if (flags.kind == "lambda") {
    NIMBUS_ASSIGN_OR_RETURN(launcher, MakeInvokeLauncher(flags));
  } else {
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

MasterChoice ChooseMaster(const SolveOptions& options) {
  const AdmmOptions& admm = options.admm;
  // With a regularizer known by its prox only, proximal Newton's every step is a solve of its
  // own (heart_scale, l1 as a program's regularizer: 104 rounds, ADMM 77).
  const bool rough = options.regularizer != nullptr && !options.regularizer->smooth();
  const bool admm_only = admm.barrier != 0 || admm.lean_messages || options.runtime.topology == "allreduce" || rough;
  MasterChoice choice;
  choice.algorithm = options.algorithm != "auto" ? options.algorithm : admm_only ? "admm" : "newton";
  // A resumed run goes on with the algorithm it began with (an earlier build's auto may differ).
  if (options.algorithm == "auto" && options.checkpoint.resume) choice.algorithm = options.checkpoint.resume->algorithm;
  choice.admm = admm;
  choice.newton = NewtonOptionsOf(options);
  return choice;
}

std::unique_ptr<Master> MasterChoice::Make(const ProblemSpec& spec, Executor* executor) const {
  if (algorithm == "newton") return std::make_unique<NewtonMaster>(spec, newton, executor);
  return std::make_unique<Coordinator>(spec, admm, executor);
}

}  // namespace nimbus
