// What `nimbus train` and `nimbus scale` share: the data plan, the runtime options, and the
// executor they make.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "args.h"
#include "nimbus/admm/executor.h"
#include "nimbus/admm/master.h"
#include "nimbus/admm/newton.h"
#include "nimbus/admm/options.h"
#include "nimbus/admm/summary.h"
#include "nimbus/core/file_io.h"
#include "nimbus/data/manifest.h"
#include "nimbus/metrics/cost.h"
#include "nimbus/problem/problem.h"
#include "nimbus/runtime/remote_executor.h"
#include "nimbus/worker/shard_worker.h"

namespace nimbus::cli {

// The problem and its tolerance: --data, --loss, --l1, --l2, --intercept, --eps-abs, --eps-rel,
// --max-iter.
struct ProblemFlags {
  std::string data, loss = "logistic";
  double l1 = 0, l2 = 0;
  bool intercept = false;
  int64_t max_iter = 0;
  std::string consensus = "general";
  AdmmOptions admm;
  WorkerOptions worker;  // what the problem options say of the workers (set by CheckProblemOptions)
};
void AddProblemOptions(ArgParser& parser, ProblemFlags* flags);
// The loss, once the options are known good (sets flags->admm.max_iterations and
// flags->worker.general_form).
Result<Loss> CheckProblemOptions(ProblemFlags* flags);

// Where workers run and how the master treats them.
struct RuntimeFlags {
  std::string runtime = "threads";
  std::string launch, hosts, listen = "tcp://127.0.0.1:0", advertise, shard_dir;
  std::string lambda_function, lambda_endpoint;
  bool lambda_pass_credentials = false;
  bool insecure = false;  // plaintext workers, loopback only
  int64_t max_restarts = 3;
  double max_lifetime = 0, round_timeout_floor = 60, heartbeat = 1;
  uint64_t run_id = 0;  // mpi: the run id all ranks share
  std::string topology = "star";  // mpi: star (a master rank) or allreduce (every rank a worker)
};
void AddRuntimeOptions(ArgParser& parser, RuntimeFlags* flags);
Status CheckRuntimeName(const std::string& runtime);

// The data, either in this process (a LIBSVM file) or as shards in a store.
struct Plan {
  std::string source;  // the --data location
  ProblemSpec spec;
  LabelEncoding labels;
  double load_seconds = 0;
  int workers = 0;
  std::optional<Dataset> data;                      // file input
  std::vector<std::pair<int64_t, int64_t>> ranges;  // its row blocks, one per worker
  std::shared_ptr<Store> store;                     // store input
  Manifest manifest;
};
// `workers` 0: the store's shard count, or this machine's cores for a file.
Result<Plan> PlanData(const std::string& location, int64_t workers, Loss loss);
// The plan's loss, intercept and regularizer; without --l1 and --l2, l2 = 1/N (liblinear's
// default C = 1).
Status SetRegularizer(const ArgParser& parser, const ProblemFlags& flags, Plan* plan);
// What a worker holds for a shard of `rows` rows and `nnz` nonzeros, in bytes: the shard
// (labels, row offsets, indices, values), the x-update's per-row arrays, and about 20 vectors
// of the worker's length (measured: 1.5 GB per worker at d = 10^7 in the dense form); in the
// general form that length is at most the shard's nonzeros.
double WorkerMemoryBytes(int64_t rows, int64_t nnz, int64_t model_size, bool general_form);
// Fails, naming the first shard that would not fit, if a worker could need more than
// `limit_mb` megabytes (0: no limit). Checked before any worker starts.
Status CheckWorkerMemory(const Plan& plan, bool general_form, double limit_mb);

// A file plan split anew into `workers` row blocks.
Status Repartition(Plan& plan, int workers);

struct Runtime {
  std::unique_ptr<Executor> executor;
  RemoteExecutor* remote = nullptr;
  std::optional<TemporaryDirectory> shard_directory;  // a file's shards for remote workers
  std::optional<TemporaryDirectory> state_directory;  // kept worker state beyond the memory limit
};
// For remote runtimes, file input is first written as shards (the same row blocks the threads
// runtime uses, so the iterates are the same).
Result<Runtime> MakeRuntime(const RuntimeFlags& flags, const Plan& plan, const WorkerOptions& worker_options);

// The run's price at `prices` (Lambda's by default) into summary.cost_*: every worker for the
// whole run, the replacements' invocations, the shard loads from S3, and the master.
void AddCostEstimate(const Prices& prices, const Plan& plan, Summary* summary);

// --algorithm and --gradient-tolerance, with `nimbus train`'s meaning and defaults.
struct AlgorithmFlags {
  std::string algorithm = "auto";
  double gradient_tolerance = NewtonOptions{}.gradient_tolerance;
};
void AddAlgorithmOptions(ArgParser& parser, AlgorithmFlags* flags);

// The master a solve runs, with its options.
struct MasterChoice {
  std::string algorithm = "admm";  // or "newton"
  AdmmOptions admm;
  NewtonOptions newton;   // the iteration cap, target and timeouts shared with admm

  std::unique_ptr<Master> Make(const ProblemSpec& spec, Executor* executor) const;
};
// auto: distributed Newton, unless an option asks for what only ADMM has (a partial barrier,
// lean messages, the allreduce topology). Errors name the option.
Result<MasterChoice> ChooseMaster(const AlgorithmFlags& flags, const AdmmOptions& admm,
                                  const std::string& topology = "star");

}  // namespace nimbus::cli
