// Calibrate (nimbus/nimbus.h): measures the Profile the simulator runs on (metrics/simulator.h)
// on this machine, with the real parts: solves of the user's problem at each K with the master
// `nimbus train` would run (ADMM or Newton, through the Master seam, or the column method with
// a block of columns a worker) on the threads runtime
// (workers computing one at a time, so every worker's round is timed on its own), a short
// solve of a wide generated problem (to tell the cost per coordinate from the cost per
// nonzero), ROUND and REPLY messages through ZeroMQ on 127.0.0.1, worker process starts and
// shard loads.

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iterator>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <thread>

#include "nimbus/api/plan.h"
#include "nimbus/columns/block_round.h"
#include "nimbus/core/subprocess.h"
#include "nimbus/core/clock.h"
#include "nimbus/core/file_io.h"
#include "nimbus/core/format.h"
#include "nimbus/data/libsvm_reader.h"
#include "nimbus/data/manifest.h"
#include "nimbus/data/shard.h"
#include "nimbus/data/synthetic.h"
#include "nimbus/metrics/least_squares.h"
#include "nimbus/metrics/simulation.h"
#include "nimbus/nimbus.h"
#include "nimbus/runtime/threads_executor.h"
#include "nimbus/transport/transport.h"
#include "nimbus/wire/codec.h"


namespace nimbus {
namespace {

// What a calibration runs: the caller's options, and the master and workers its solves use.
struct CalibrationSetup {
  std::vector<int> workers;
  MasterChoice master;  // the algorithm and its options (ChooseMaster)
  SolveOptions options;  // the column method's (it has no Master)
  WorkerOptions worker;
  std::string executable;  // the nimbus binary, whose start-up is timed
  int64_t wide_features = 0;
  int repetitions = 0;
  std::function<void(const std::string&)> progress;
};

// One round as the master saw it: what it sent and got back, each worker's compute time, and
// when it went out and when its last reply was in (seconds on the recorder's clock).
struct RecordedRound {
  int64_t round = -1;
  double dispatch = 0, collected = 0;
  int requests = 0, replies = 0;
  // Summed over the round's messages, in vectors of doubles as they go on the wire: a lean one
  // (float32) counts half, a mostly-zero one its nonzeros' share (VectorFrameBytes). The column
  // method's: its block's (the block's size each) and the rows' (N doubles each).
  double request_vectors = 0, reply_vectors = 0;
  double request_row_vectors = 0, reply_row_vectors = 0;
  bool lean = false;
  std::vector<std::size_t> block_sizes;  // the column method's: each worker's block
  std::vector<double> computes;
  std::vector<int> computed_by;  // the worker of each of computes
  double data_passes = 0, local_iterations = 0, cg_iterations = 0;  // summed over its workers
};

// `values` (`vectors` vectors end to end) in vectors of doubles, as they go on the wire.
double WireVectors(const SharedVector& values, bool lean, int vectors) {
  if (values.empty()) return vectors;
  return static_cast<double>(vectors) * static_cast<double>(VectorFrameBytes(values, lean)) /
         (static_cast<double>(values.size()) * sizeof(double));
}

// Sits between a master and its executor and records every round without changing it. The
// threads runtime moves no bytes, so the messages are counted as a runtime with a wire sends
// them: a vector each way, the second of an evaluation's reply, and a product's point where
// the worker did not evaluate it last (PointFor, the rule every such runtime follows); each
// counted by its bytes on the wire (WireVectors). The column method's round goes to each worker
// on its own (its block's question) and counts its block's and its rows' vectors.
class RoundRecorder final : public Executor {
 public:
  RoundRecorder(Executor& inner, std::size_t model_size, int64_t rows)
      : inner_(inner), model_size_(model_size), rows_(static_cast<double>(std::max<int64_t>(rows, 1))) {}

  std::string name() const override { return inner_.name(); }
  int workers() const override { return inner_.workers(); }
  Result<std::vector<WorkerReady>> Start(Deadline deadline) override {
    last_evaluated_.assign(static_cast<std::size_t>(inner_.workers()), -1);
    Result<std::vector<WorkerReady>> ready = inner_.Start(deadline);
    if (ready.ok() && !ready->empty() && model_size_ > 0) {
      double held = 0;  // the workers' coordinates, over the model's
      for (const WorkerReady& r : *ready) {
        held += r.support ? static_cast<double>(r.support->size()) / static_cast<double>(model_size_) : 1.0;
      }
      local_fraction_ = std::clamp(held / static_cast<double>(ready->size()), 1e-12, 1.0);
    }
    return ready;
  }
  void Dispatch(const RoundRequest& request, std::span<const int> workers) override {
    if (request.kind == RoundKind::kColumnStep) {
      DispatchColumns(request, workers);
      return;
    }
    RecordedRound round;
    round.round = request.round;
    round.dispatch = clock_.ElapsedSeconds();
    round.lean = request.lean;
    const double z_vectors = WireVectors(request.z, request.lean, 1);
    for (const int worker : workers) {
      int64_t& last = last_evaluated_[static_cast<std::size_t>(worker)];
      round.request_vectors += z_vectors + (PointFor(request, last, nullptr).empty() ? 0 : 1);
      if (request.kind == RoundKind::kEvaluate) last = request.round;
      ++round.requests;
    }
    rounds_.push_back(std::move(round));
    inner_.Dispatch(request, workers);
  }
  std::vector<WorkerReply> Collect(int count, Deadline deadline) override {
    std::vector<WorkerReply> replies = inner_.Collect(count, deadline);
    if (rounds_.empty()) return replies;
    RecordedRound& round = rounds_.back();
    for (const WorkerReply& r : replies) {
      if (r.status != ReplyStatus::kOk) continue;
      ++round.replies;
      if (round.block_sizes.empty()) {
        round.reply_vectors += WireVectors(r.w, round.lean, r.w_vectors);
      } else {
        CountColumnReply(r, round);
      }
      round.computes.push_back(r.timings.compute_seconds);
      round.computed_by.push_back(r.worker);
      round.data_passes += static_cast<double>(r.timings.data_passes);
      round.local_iterations += r.timings.local_iterations;
      round.cg_iterations += r.timings.cg_iterations;
    }
    round.collected = clock_.ElapsedSeconds();
    return replies;
  }
  void Stop() override { inner_.Stop(); }
  void AddCounters(Summary& summary) const override { inner_.AddCounters(summary); }
  Status Restore(const std::vector<WorkerHistory>& histories) override { return inner_.Restore(histories); }

  const std::vector<RecordedRound>& rounds() const { return rounds_; }
  double local_fraction() const { return local_fraction_; }

 private:
  // A column reply's vectors: its rows' (A_b delta, and A_b z where it set weights to zero: N
  // doubles each) and its block's (the rest: its step, sparse, and its figures).
  void CountColumnReply(const WorkerReply& reply, RecordedRound& round) const {
    const std::size_t block = round.block_sizes[static_cast<std::size_t>(reply.worker)];
    const Result<BlockStep> step = DecodeBlockStep(reply.w.span(), block, static_cast<int64_t>(rows_));
    const double row_vectors = step.ok() && !step->zero_margin_change.empty() ? 2 : 1;
    round.reply_row_vectors += row_vectors;
    round.reply_vectors += std::max(0.0, static_cast<double>(reply.w.size()) - row_vectors * rows_) /
                           static_cast<double>(std::max<std::size_t>(block, 1));
  }

  // One worker's part of a column round: the rows' derivatives (2 N doubles; none for margins)
  // and its block's question (the block's weights, and what the strong rules let it step).
  void DispatchColumns(const RoundRequest& request, std::span<const int> workers) {
    if (rounds_.empty() || rounds_.back().round != request.round) {
      RecordedRound round;
      round.round = request.round;
      round.dispatch = clock_.ElapsedSeconds();
      round.block_sizes.assign(static_cast<std::size_t>(inner_.workers()), 1);
      rounds_.push_back(std::move(round));
    }
    RecordedRound& round = rounds_.back();
    const Result<BlockRound> question = DecodeBlockRound(request.query.span());
    const std::size_t block = question.ok() ? question->block.size() : 0;
    for (const int worker : workers) {
      round.block_sizes[static_cast<std::size_t>(worker)] = block;
      round.request_row_vectors += static_cast<double>(request.z.size()) / rows_;
      round.request_vectors += static_cast<double>(request.query.size()) / static_cast<double>(std::max<std::size_t>(block, 1));
      ++round.requests;
    }
    inner_.Dispatch(request, workers);
  }

  Executor& inner_;
  const std::size_t model_size_;
  const double rows_;
  double local_fraction_ = 1;  // the mean worker's support over the model (1: the dense form)
  Stopwatch clock_;
  std::vector<int64_t> last_evaluated_;  // per worker, the round of the point it evaluated last
  std::vector<RecordedRound> rounds_;
};

// What one solve on the threads runtime, workers one at a time, shows per worker and round.
struct Measured {
  ProfilePoint point;
  double shard_nnz = 0;  // mean over workers
  double model_size = 0;
  double rows = 0;
  double local_size() const { return point.local_fraction * model_size; }  // a worker's coordinates
  std::vector<std::vector<double>> round_computes;  // per round, each worker's compute time
  std::vector<double> round_spans;                  // per round, dispatch to the last reply
};

// The slowest worker's compute over the solve against the mean: the lasting spread of the
// workers' shares of the work. A round's own noise is left out: it averages away over a solve,
// and a platform draws its own (Platform::jitter_sigma, stragglers).
double ImbalanceOf(const std::map<int, double>& worker_compute) {
  double total = 0, slowest = 0;
  for (const auto& [worker, seconds] : worker_compute) {
    total += seconds;
    slowest = std::max(slowest, seconds);
  }
  if (total <= 0) return 1.0;
  return std::max(1.0, slowest / (total / static_cast<double>(worker_compute.size())));
}

// The profile's figures of K from the recorded rounds: the work per worker and round, the
// slowest worker over the mean, the messages, and the master's time between rounds.
ProfilePoint PointOf(const std::vector<RecordedRound>& rounds, const Summary& summary, int k) {
  ProfilePoint point;
  point.workers = k;
  point.iterations = summary.iterations;
  point.rounds = static_cast<int>(rounds.size());
  point.cg_steps = summary.algorithm == Algorithm::kNewton ? static_cast<int>(summary.cg_iterations) : 0;
  double worker_rounds = 0, compute = 0, passes = 0, local = 0, cg = 0, gaps = 0;
  double requests = 0, replies = 0, request_vectors = 0, reply_vectors = 0, request_rows = 0, reply_rows = 0;
  std::map<int, double> worker_compute;  // each worker's compute over the solve
  for (std::size_t i = 0; i < rounds.size(); ++i) {
    const RecordedRound& round = rounds[i];
    const double total = std::accumulate(round.computes.begin(), round.computes.end(), 0.0);
    worker_rounds += static_cast<double>(round.computes.size());
    compute += total;
    passes += round.data_passes;
    local += round.local_iterations;
    cg += round.cg_iterations;
    requests += round.requests;
    replies += round.replies;
    request_vectors += round.request_vectors;
    reply_vectors += round.reply_vectors;
    request_rows += round.request_row_vectors;
    reply_rows += round.reply_row_vectors;
    if (i > 0) gaps += round.dispatch - rounds[i - 1].collected;
    for (std::size_t c = 0; c < round.computes.size(); ++c) worker_compute[round.computed_by[c]] += round.computes[c];
  }
  const double per_worker_round = 1 / std::max(worker_rounds, 1.0);
  point.compute_seconds = compute * per_worker_round;
  point.data_passes = passes * per_worker_round;
  point.local_iterations = local * per_worker_round;
  point.cg_iterations = cg * per_worker_round;
  point.imbalance = ImbalanceOf(worker_compute);
  point.master_seconds = rounds.size() > 1 ? gaps / static_cast<double>(rounds.size() - 1) : 0;
  point.request_vectors = requests > 0 ? request_vectors / requests : 1;
  point.reply_vectors = replies > 0 ? reply_vectors / replies : 1;
  point.request_row_vectors = requests > 0 ? request_rows / requests : 0;
  point.reply_row_vectors = replies > 0 ? reply_rows / replies : 0;
  return point;
}

// What a calibration solves at K: the problem on its workers' shards, and for the column method
// the plan of its blocks (ColumnLayoutFor), which it solves instead of a master.
struct SolveAt {
  const ProblemSpec& spec;
  const Plan* column_layout = nullptr;
};

Result<Measured> MeasureSolve(const SolveAt& at, std::vector<ShardSource> shards, const CalibrationSetup& setup,
                              const MasterChoice& master, int64_t nnz, int concurrency) {
  const ProblemSpec& spec = at.spec;
  const int k = static_cast<int>(shards.size());
  ThreadsExecutor executor(std::move(shards), spec, setup.worker, concurrency);
  RoundRecorder recorder(executor, spec.model_size(), spec.rows);
  NIMBUS_ASSIGN_OR_RETURN(Solution solution, at.column_layout != nullptr
                                                 ? SolveByColumnsOn(*at.column_layout, setup.options, master, recorder)
                                                 : master.Make(spec, &recorder)->Solve());
  if (at.column_layout != nullptr) executor.Stop();
  const Summary& summary = solution.summary;
  if (!summary.ok()) return Unavailable("calibration solve at K = " + std::to_string(k) + ": " + summary.message);
  Measured m;
  m.point = PointOf(recorder.rounds(), summary, k);
  // A block of columns a worker: 1/K of the model each (the layout's blocks hold about as many).
  m.point.local_fraction = at.column_layout != nullptr ? 1.0 / k : recorder.local_fraction();
  for (const RecordedRound& round : recorder.rounds()) {
    m.round_computes.push_back(round.computes);
    m.round_spans.push_back(round.collected - round.dispatch);
  }
  m.shard_nnz = static_cast<double>(nnz) / k;
  m.model_size = static_cast<double>(spec.model_size());
  m.rows = static_cast<double>(spec.rows);
  return m;
}

// A few rounds of a problem with many more features than nonzeros: its rounds are mostly
// the per-coordinate work (ADMM's x-update; the master's vectors for both algorithms).
Result<Measured> MeasureWideProblem(int64_t features, const CalibrationSetup& setup) {
  NIMBUS_ASSIGN_OR_RETURN(TemporaryDirectory scratch, TemporaryDirectory::Create("nimbus-calibrate-wide"));
  SyntheticOptions gen;
  gen.rows = 2000;
  gen.cols = features;
  gen.nnz_per_row = 10;
  gen.planted_nonzeros = 100;
  const std::string path = scratch.path() + "/wide.svm";
  NIMBUS_RETURN_IF_ERROR(WriteSyntheticLibsvm(gen, path).status());
  LibsvmReadOptions read;
  NIMBUS_ASSIGN_OR_RETURN(Dataset data, ReadLibsvmFile(path, read));
  ProblemSpec spec;
  spec.rows = data.rows();
  spec.cols = features;
  spec.regularizer.l2 = 1.0 / static_cast<double>(spec.rows);
  const int64_t nnz = data.nnz();
  data.matrix.cols = features;
  std::vector<ShardSource> shards;
  shards.push_back(ShardSource::InMemory(std::move(data)));
  MasterChoice few = setup.master;
  few.admm.max_iterations = few.newton.max_iterations = 6;
  few.admm.target_objective.reset();
  few.newton.target_objective.reset();
  CalibrationSetup plain = setup;
  plain.worker = WorkerOptions{};
  return MeasureSolve({spec}, std::move(shards), plain, few, nnz, /*concurrency=*/1);
}

// Half the round trip of a ROUND of d doubles out and a REPLY of d doubles back through real
// ZeroMQ sockets on 127.0.0.1, encoded, encrypted (CurveZMQ, as runs are) and decoded as the
// runtimes do.
Result<double> OneWayMessageSeconds(int64_t model_size, int repetitions) {
  const auto context = ZmqContext::Create();
  constexpr uint64_t kRun = 1;
  NIMBUS_ASSIGN_OR_RETURN(const RunKeys keys, RunKeys::Generate());
  NIMBUS_ASSIGN_OR_RETURN(std::unique_ptr<RouterTransport> router,
                          RouterTransport::Bind(context, "tcp://127.0.0.1:0", kRun, int64_t{1} << 30, keys.server));
  NIMBUS_ASSIGN_OR_RETURN(std::unique_ptr<DealerTransport> dealer,
                          DealerTransport::Connect(context, router->endpoint(), "w0.1", kRun, keys.client));
  const std::size_t size = static_cast<std::size_t>(model_size);
  Status worker_status;
  std::thread worker([&] {
    for (int i = 0; i <= repetitions; ++i) {
      Result<Incoming> in = dealer->Receive(Deadline::After(30));
      if (!in.ok()) {
        worker_status = in.status();
        return;
      }
      Result<RoundRequest> round = UnpackRound(in->message, size);
      if (!round.ok()) {
        worker_status = round.status();
        return;
      }
      WorkerReply reply;
      reply.round = round->round;
      reply.w = round->z.ToVector();  // a fresh vector, as a worker's w is
      Envelope envelope;
      envelope.worker = 0;
      envelope.invocation = 1;
      envelope.round = round->round;
      if (Status sent = dealer->Send("", PackReply(envelope, reply)); !sent.ok()) {
        worker_status = sent;
        return;
      }
    }
  });
  // The router learns the dealer's routing id from its first message; say hello first.
  Status master_status = dealer->Send("", PackHello(Envelope{}, HelloBody{}));
  if (master_status.ok()) master_status = router->Receive(Deadline::After(30)).status();
  auto z = std::make_shared<std::vector<double>>(size, 0.5);
  Stopwatch watch;
  for (int i = 0; i <= repetitions && master_status.ok(); ++i) {
    if (i == 1) watch = Stopwatch();  // the first exchange warms the connection up
    RoundRequest request;
    request.round = i;
    request.z = z;
    Envelope envelope;
    envelope.worker = 0;
    envelope.invocation = 1;
    envelope.round = i;
    master_status = router->Send("w0.1", PackRound(envelope, request));
    if (!master_status.ok()) break;
    Result<Incoming> in = router->Receive(Deadline::After(30));
    if (!in.ok()) {
      master_status = in.status();
      break;
    }
    master_status = UnpackReply(in->message, size).status();
  }
  const double seconds = watch.ElapsedSeconds();
  worker.join();
  NIMBUS_RETURN_IF_ERROR(master_status);
  NIMBUS_RETURN_IF_ERROR(worker_status);
  return seconds / repetitions / 2;
}

// Spawning the nimbus binary: the master's cost to start a worker process (the median).
Result<double> ProcessSpawnSeconds(const std::string& executable, int repetitions) {
  std::vector<double> spawns;
  SpawnOptions help;
  help.argv = {executable, "--help"};
  help.stdout_file = "/dev/null";
  for (int i = 0; i < repetitions; ++i) {
    Stopwatch watch;
    NIMBUS_ASSIGN_OR_RETURN(const pid_t pid, Spawn(help));
    const double spawn = watch.ElapsedSeconds();
    NIMBUS_ASSIGN_OR_RETURN(const int status, WaitFor(pid));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return Internal(executable + " --help did not exit cleanly");
    spawns.push_back(spawn);
  }
  std::sort(spawns.begin(), spawns.end());
  return spawns[spawns.size() / 2];
}

// Worker processes started by the process runtime, `workers` at once, the data split among
// them. With one, the whole data its shard: launch to HELLO (loading, linking, main, its link
// to the master), the shard's load, and HELLO to READY beyond the load (ASSIGN, and making the
// worker of the shard in a fresh process, whose first touches of new memory fault its pages
// in). With more: the first launch to the last HELLO over their number, what each start costs
// when they contend (on this machine more than one alone: page faults do not overlap). The
// fastest of a few starts.
struct WorkerStart {
  double process_seconds = std::numeric_limits<double>::infinity();
  double load_seconds = std::numeric_limits<double>::infinity();
  double prepare_seconds = std::numeric_limits<double>::infinity();
};

Result<WorkerStart> MeasureWorkerStart(Plan& plan, int workers, const WorkerOptions& worker,
                                       const std::string& executable, int repetitions) {
  NIMBUS_RETURN_IF_ERROR(Repartition(plan, workers));
  RuntimeOptions options;
  options.kind = RuntimeKind::kProcess;
  options.workers = workers;
  options.worker_program = executable;
  WorkerStart fastest;
  for (int run = 0; run < repetitions; ++run) {
    NIMBUS_ASSIGN_OR_RETURN(Runtime runtime, MakeRuntime(options, plan, worker));
    Result<std::vector<WorkerReady>> ready = runtime.executor->Start(Deadline::After(120));
    runtime.executor->Stop();
    if (!ready.ok() || ready->empty()) return ready.status().WithContext("calibration: worker processes' start");
    double first_launch = std::numeric_limits<double>::infinity(), last_hello = 0;
    for (const WorkerReady& r : *ready) {
      first_launch = std::min(first_launch, r.invoke_wall);
      last_hello = std::max(last_hello, r.hello_wall);
    }
    const WorkerReady& r = ready->front();
    fastest.process_seconds = std::min(fastest.process_seconds, (last_hello - first_launch) / workers);
    fastest.load_seconds = std::min(fastest.load_seconds, r.load_seconds);
    fastest.prepare_seconds = std::min(fastest.prepare_seconds, r.ready_wall - r.hello_wall - r.load_seconds);
  }
  return fastest;
}

std::string MachineName() {
  Result<std::string> cpuinfo = ReadFileToString("/proc/cpuinfo");
  if (cpuinfo.ok()) {
    const auto at = cpuinfo->find("model name");
    if (at != std::string::npos) {
      const auto colon = cpuinfo->find(':', at);
      const auto end = cpuinfo->find('\n', at);
      if (colon != std::string::npos && colon < end) return cpuinfo->substr(colon + 2, end - colon - 2);
    }
  }
  return "unknown";
}

std::string Today() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d", &utc);
  return text;
}


using Say = std::function<void(const std::string&)>;

// The problem's shards at K, written once for all of K's solves. The workers load them from
// files, as process workers do (the rows' place in memory changes what a pass over them costs).
struct ShardsAt {
  int k = 0;
  std::optional<Plan> column_layout;  // the column method's blocks, a worker's each
  TemporaryDirectory directory;
  std::shared_ptr<Store> store;
  Manifest manifest;

  std::vector<ShardSource> Sources() const {
    std::vector<ShardSource> sources;
    for (const ShardEntry& entry : manifest.shards) sources.push_back(ShardSource::InStore(store, entry.key, entry.checksum));
    return sources;
  }
  SolveAt Solve(const Plan& plan) const {
    return column_layout ? SolveAt{column_layout->spec, &*column_layout} : SolveAt{plan.spec};
  }
};

// Rows at K, or for the column method every row's entries in K blocks of columns.
Result<ShardsAt> WriteShardsAt(Plan& plan, int k, const CalibrationSetup& setup) {
  NIMBUS_RETURN_IF_ERROR(Repartition(plan, k));
  ShardsAt at;
  at.k = k;
  NIMBUS_ASSIGN_OR_RETURN(at.directory, TemporaryDirectory::Create("nimbus-calibrate-shards"));
  NIMBUS_ASSIGN_OR_RETURN(std::unique_ptr<Store> store, OpenStore(at.directory.path(), /*create=*/true));
  at.store = std::move(store);
  if (setup.master.algorithm != Algorithm::kColumns) {
    NIMBUS_ASSIGN_OR_RETURN(at.manifest, WriteShards(*plan.data, k, plan.source, *at.store));
    return at;
  }
  NIMBUS_ASSIGN_OR_RETURN(at.column_layout, ColumnLayoutFor(plan, setup.options, setup.master));
  const Plan& layout = *at.column_layout;
  NIMBUS_ASSIGN_OR_RETURN(at.manifest, WriteColumnShards(*layout.data, layout.column_blocks, layout.column_position,
                                                         layout.source, *at.store));
  return at;
}

// What K's solves showed so far: the fastest with the workers computing one at a time (each
// worker's own cost; the solves are deterministic, so runs differ only by what else this
// machine did meanwhile), and the shortest span of the rounds with all computing at once.
struct SolvesAt {
  std::optional<Measured> alone;
  double slowest_alone = 0;  // the slowest one-at-a-time solve's compute per worker and round
  double together_span = std::numeric_limits<double>::infinity();
};

Status SolveOnceMore(const Plan& plan, const ShardsAt& shards, const CalibrationSetup& options, int cores,
                     int64_t nnz, SolvesAt& solves) {
  NIMBUS_ASSIGN_OR_RETURN(Measured m, MeasureSolve(shards.Solve(plan), shards.Sources(), options, options.master, nnz, 1));
  solves.slowest_alone = std::max(solves.slowest_alone, m.point.compute_seconds);
  if (!solves.alone || m.point.compute_seconds < solves.alone->point.compute_seconds) solves.alone = std::move(m);
  if (shards.k > 1 && cores > 1) {
    NIMBUS_ASSIGN_OR_RETURN(Measured together,
                            MeasureSolve(shards.Solve(plan), shards.Sources(), options, options.master, nnz, 0));
    solves.together_span = std::min(solves.together_span,
                                    std::accumulate(together.round_spans.begin(), together.round_spans.end(), 0.0));
  }
  return Status::Ok();
}

// K's point: the fastest solve alone, and what computing all at once costs beyond perfect
// sharing of the cores.
Measured MeasuredAt(const SolvesAt& solves, int cores) {
  Measured m = *solves.alone;
  if (m.point.compute_seconds > 0) m.point.spread = solves.slowest_alone / m.point.compute_seconds - 1;
  if (std::isfinite(solves.together_span)) {
    // The same rounds (the solve is deterministic) as perfect sharing of the cores would run
    // them from the one-at-a-time compute times.
    double shared_span = 0;
    for (const std::vector<double>& computes : m.round_computes) {
      const std::vector<double> ends = ShareCores(std::vector<double>(computes.size(), 0.0), computes, cores);
      shared_span += *std::max_element(ends.begin(), ends.end());
    }
    if (shared_span > 0) m.point.shared_slowdown = std::max(1.0, solves.together_span / shared_span);
  }
  return m;
}

// Every K's solves, the repetitions interleaved (K = 1, 2, ..., then again), so that a slow
// spell of this machine (other tenants of its host) falls on one repetition of several K
// rather than on every repetition of one.
Result<std::vector<Measured>> MeasureEveryK(Plan& plan, const CalibrationSetup& options, int cores, int64_t nnz,
                                            const Say& say) {
  std::vector<ShardsAt> shards;
  for (const int k : options.workers) {
    NIMBUS_ASSIGN_OR_RETURN(ShardsAt at, WriteShardsAt(plan, k, options));
    shards.push_back(std::move(at));
  }
  std::vector<SolvesAt> solves(shards.size());
  for (int run = 0; run < options.repetitions; ++run) {
    for (std::size_t i = 0; i < shards.size(); ++i) {
      NIMBUS_RETURN_IF_ERROR(SolveOnceMore(plan, shards[i], options, cores, nnz, solves[i]));
    }
    say(Format("solves at every K: %d of %d", run + 1, options.repetitions));
  }
  std::vector<Measured> measured;
  for (const SolvesAt& at : solves) measured.push_back(MeasuredAt(at, cores));
  return measured;
}

// The fitted worker cost of each solve against its measured one.
void SayFitted(const Profile& profile, const std::vector<const Measured*>& solves, const Say& say) {
  std::string fitted = "the fitted worker cost against the measured, ms per round:";
  for (const Measured* m : solves) {
    const double model = profile.seconds_per_nnz * m->point.data_passes * m->shard_nnz +
                         profile.CoordinateSeconds(m->local_size()) *
                             (m->point.cg_iterations + m->point.local_iterations) * m->local_size() +
                         profile.seconds_per_round + profile.seconds_per_row * m->rows;
    fitted += Format(" K=%d d=%.0f %.2f/%.2f", m->point.workers, m->model_size, 1e3 * model, 1e3 * m->point.compute_seconds);
  }
  say(fitted);
}

// Worker: y = a passes nnz_i + b (cg + local) d + c on the calibration's d, each row weighted
// by 1/y so that every point counts by its relative error; then the wide problem's cost per
// coordinate with a and c known.
void FitWorkerCosts(const std::vector<Measured>& measured, const Measured& wide, Profile& profile, const Say& say) {
  std::vector<std::vector<double>> rows;
  std::vector<double> y;
  for (const Measured& m : measured) {
    const double weight = 1 / std::max(m.point.compute_seconds, 1e-9);
    rows.push_back({m.point.data_passes * m.shard_nnz * weight,
                    (m.point.cg_iterations + m.point.local_iterations) * m.local_size() * weight, weight});
    y.push_back(1.0);
  }
  const std::vector<double> fit = NonNegativeLeastSquares(rows, y);
  profile.seconds_per_nnz = fit[0];
  profile.seconds_per_coordinate = fit[1];
  profile.seconds_per_round = fit[2];
  const double wide_rest = wide.point.compute_seconds - profile.seconds_per_nnz * wide.point.data_passes * wide.shard_nnz -
                           profile.seconds_per_round;
  profile.wide_cols = static_cast<int64_t>(wide.model_size);
  // A Newton master's workers make no steps of their own: no cost per coordinate to tell.
  const double wide_steps = wide.point.cg_iterations + wide.point.local_iterations;
  profile.seconds_per_coordinate_wide =
      wide_steps > 0 ? std::max(0.0, wide_rest / (wide_steps * wide.model_size)) : profile.seconds_per_coordinate;
  std::vector<const Measured*> all;
  for (const Measured& m : measured) all.push_back(&m);
  all.push_back(&wide);
  SayFitted(profile, all, say);
}

// The column method's worker: y = a passes nnz_i + b local D_i + r N, D_i its block; the rows'
// term is a round's reading of their derivatives and writing of its change of the margins, with
// the round's fixed costs (the calibration's solves all have its N). Weighted as above. Its
// master: y = r_reply K v N + r N (summing the K blocks' v row vectors each, their changes of the
// margins and of their zeroed weights'; the line search
// and the next derivatives over the rows). No wide problem: its cost per coordinate is the
// problem's at every d.
void FitColumnCosts(const std::vector<Measured>& measured, Profile& profile, const Say& say) {
  std::vector<std::vector<double>> rows, master_rows;
  std::vector<double> y;
  for (const Measured& m : measured) {
    const double weight = 1 / std::max(m.point.compute_seconds, 1e-9);
    const double master_weight = 1 / std::max(m.point.master_seconds, 1e-9);
    rows.push_back({m.point.data_passes * m.shard_nnz * weight, m.point.local_iterations * m.local_size() * weight,
                    m.rows * weight});
    master_rows.push_back(
        {m.point.workers * m.point.reply_row_vectors * m.rows * master_weight, m.rows * master_weight});
    y.push_back(1.0);
  }
  const std::vector<double> fit = NonNegativeLeastSquares(rows, y);
  profile.seconds_per_nnz = fit[0];
  profile.seconds_per_coordinate = profile.seconds_per_coordinate_wide = fit[1];
  profile.seconds_per_row = fit[2];
  const std::vector<double> master = NonNegativeLeastSquares(master_rows, y);
  profile.master_seconds_per_reply_row = master[0];
  profile.master_seconds_per_row = master[1];
  std::vector<const Measured*> all;
  for (const Measured& m : measured) all.push_back(&m);
  SayFitted(profile, all, say);
  say(Format("fitted: %.3g ns per nonzero pass, %.3g ns per coordinate and pass, %.3g ns per row and round; master "
             "%.3g ns per reply row, %.3g ns per row",
             1e9 * profile.seconds_per_nnz, 1e9 * profile.seconds_per_coordinate, 1e9 * profile.seconds_per_row,
             1e9 * profile.master_seconds_per_reply_row, 1e9 * profile.master_seconds_per_row));
}

// Master: y = r K d_i + c d per round (d_i a worker's coordinates, which its reply carries),
// weighted the same way, over the problem's points and the wide problem's.
void FitMasterCosts(std::vector<Measured> measured, const Measured& wide, Profile& profile) {
  measured.push_back(wide);
  std::vector<std::vector<double>> rows;
  std::vector<double> y;
  for (const Measured& m : measured) {
    const double weight = 1 / std::max(m.point.master_seconds, 1e-9);
    rows.push_back({m.point.workers * m.local_size() * weight, m.model_size * weight});
    y.push_back(1.0);
  }
  const std::vector<double> fit = NonNegativeLeastSquares(rows, y);
  profile.master_seconds_per_reply_coordinate = fit[0];
  profile.master_seconds_per_coordinate = fit[1];
}

// Messages: one way = latency + bytes / bandwidth, from a small and two model-sized sizes,
// each the fastest of `passes` passes over the three (a slow spell of this shared machine
// during one pass made a model-sized message a third slower: 0.34 GB/s where other
// calibrations measured 0.5).
Status MeasureMessages(int passes, Profile& profile) {
  const int64_t model = std::max<int64_t>(1, static_cast<int64_t>(profile.ModelSize(static_cast<double>(profile.cols))));
  const std::pair<int64_t, int> sizes[] = {{1, 200}, {model, 20}, {1000000, 10}};
  std::vector<double> fastest(std::size(sizes), std::numeric_limits<double>::infinity());
  for (int pass = 0; pass < std::max(1, passes); ++pass) {
    for (std::size_t i = 0; i < std::size(sizes); ++i) {
      NIMBUS_ASSIGN_OR_RETURN(const double seconds, OneWayMessageSeconds(sizes[i].first, sizes[i].second));
      fastest[i] = std::min(fastest[i], seconds);
    }
  }
  std::vector<std::vector<double>> rows;
  std::vector<double> y;
  for (std::size_t i = 0; i < std::size(sizes); ++i) {
    const double weight = 1 / std::max(fastest[i], 1e-9);
    rows.push_back({weight, 8.0 * static_cast<double>(sizes[i].first) * weight});
    y.push_back(1.0);
  }
  const std::vector<double> fit = NonNegativeLeastSquares(rows, y);
  profile.message_latency_seconds = fit[0];
  profile.message_bandwidth = fit[1] > 0 ? 1 / fit[1] : 1e12;
  return Status::Ok();
}

std::string Described(const ProfilePoint& p, Algorithm algorithm, int repetitions) {
  return Format("K = %d: %d rounds (%d %s), %.3f ms per worker and round (%.2f passes; slowest %.2fx the mean; %.2fx "
                "sharing the cores%s), %.3f ms master per round, %.2f and %.2f vectors per request and reply of %.1f%% "
                "of the model%s",
                p.workers, p.rounds, p.iterations, algorithm == Algorithm::kNewton ? "Newton steps" : "iterations",
                1e3 * p.compute_seconds, p.data_passes, p.imbalance, p.shared_slowdown,
                repetitions > 1 ? Format("; the fastest of %d solves, the slowest +%.1f%%", repetitions, 100 * p.spread).c_str()
                                : "",
                1e3 * p.master_seconds, p.request_vectors, p.reply_vectors, 100 * p.local_fraction,
                p.request_row_vectors + p.reply_row_vectors > 0
                    ? Format(", and %.2f and %.2f of the rows", p.request_row_vectors, p.reply_row_vectors).c_str()
                    : "");
}

// This machine's speed drifts (other tenants of its host: 30-75 ms for one 40 ms pass over a
// cached vector, from one second to the next), and a profile is only as good as its solves
// agree. Says so where they disagreed by more than the validation's tolerance.
void WarnOfSpread(const std::vector<Measured>& measured, const Say& say) {
  const auto widest = std::max_element(measured.begin(), measured.end(), [](const Measured& a, const Measured& b) {
    return a.point.spread < b.point.spread;
  });
  if (widest == measured.end() || widest->point.spread <= kValidationTolerance) return;
  say(Format("note: this machine's speed varied between the repetitions, by up to +%.0f%% at K = %d; the profile "
             "keeps each K's fastest, and predictions from it are good to about that. More --repeat narrows it, "
             "as does a quieter machine.",
             100 * widest->point.spread, widest->point.workers));
}

// A master's costs: its workers' and its own, the wide problem's rounds telling the cost per
// coordinate from the cost per nonzero.
Status FitMasterCostsWithWideProblem(const std::vector<Measured>& measured, const CalibrationSetup& options,
                                     Profile& profile, const Say& say) {
  NIMBUS_ASSIGN_OR_RETURN(Measured wide, MeasureWideProblem(options.wide_features, options));
  say(Format("wide problem (d = %lld): %d rounds, %.3f ms per worker and round over %.1f CG and %.1f Newton "
             "iterations, %.3f ms master per round",
             static_cast<long long>(options.wide_features), wide.point.rounds, 1e3 * wide.point.compute_seconds,
             wide.point.cg_iterations, wide.point.local_iterations, 1e3 * wide.point.master_seconds));
  FitWorkerCosts(measured, wide, profile, say);
  FitMasterCosts(measured, wide, profile);
  say(Format("fitted: %.3g ns per nonzero pass, %.3g ns per coordinate and local iteration (%.3g ns at d = %lld), "
             "%.3g ms per round; master %.3g ns per reply coordinate, %.3g ns per coordinate",
             1e9 * profile.seconds_per_nnz, 1e9 * profile.seconds_per_coordinate,
             1e9 * profile.seconds_per_coordinate_wide, static_cast<long long>(profile.wide_cols),
             1e3 * profile.seconds_per_round,
             1e9 * profile.master_seconds_per_reply_coordinate, 1e9 * profile.master_seconds_per_coordinate));
  return Status::Ok();
}

Result<Profile> CalibrateOn(Plan& plan, const CalibrationSetup& options) {
  const Say say = [&](const std::string& line) {
    if (options.progress) options.progress(line);
  };
  Profile profile;
  profile.machine = MachineName();
  profile.date = Today();
  profile.algorithm = options.master.algorithm;
  profile.cores = static_cast<int>(std::max<unsigned>(1, std::thread::hardware_concurrency()));
  profile.data = plan.source;
  profile.rows = plan.spec.rows;
  profile.cols = plan.spec.cols;
  profile.blocks = plan.spec.blocks();
  profile.nnz = plan.data->nnz();

  NIMBUS_ASSIGN_OR_RETURN(const std::vector<Measured> measured, MeasureEveryK(plan, options, profile.cores, profile.nnz, say));
  for (const Measured& m : measured) {
    say(Described(m.point, profile.algorithm, options.repetitions));
    profile.points.push_back(m.point);
  }
  WarnOfSpread(measured, say);
  if (profile.columns()) {
    FitColumnCosts(measured, profile, say);
  } else {
    NIMBUS_RETURN_IF_ERROR(FitMasterCostsWithWideProblem(measured, options, profile, say));
  }
  NIMBUS_RETURN_IF_ERROR(MeasureMessages(options.repetitions, profile));
  NIMBUS_ASSIGN_OR_RETURN(profile.process_spawn_seconds, ProcessSpawnSeconds(options.executable, 5));
  NIMBUS_ASSIGN_OR_RETURN(const WorkerStart worker, MeasureWorkerStart(plan, 1, options.worker, options.executable, 3));
  // The process starts of the largest K at once: what one costs when they contend.
  const int most = *std::max_element(options.workers.begin(), options.workers.end());
  WorkerStart contended = worker;
  if (most > 1) {
    NIMBUS_ASSIGN_OR_RETURN(contended, MeasureWorkerStart(plan, most, options.worker, options.executable, 3));
  }
  profile.process_start_seconds = std::max(0.0, std::max(worker.process_seconds, contended.process_seconds));
  profile.shard_load_bandwidth = ShardBytes(static_cast<double>(profile.rows), static_cast<double>(profile.nnz)) /
                                 std::max(worker.load_seconds, 1e-6);
  profile.prepare_seconds_per_nnz = std::max(0.0, worker.prepare_seconds) / static_cast<double>(profile.nnz);
  say(Format("messages: %.1f us latency, %.2f GB/s; a worker process starts in %.1f ms (spawn %.2f ms); shards load "
             "at %.2f GB/s, and a worker prepares its shard in %.2f ns per nonzero",
             1e6 * profile.message_latency_seconds, profile.message_bandwidth / 1e9, 1e3 * profile.process_start_seconds,
             1e3 * profile.process_spawn_seconds, profile.shard_load_bandwidth / 1e9, 1e9 * profile.prepare_seconds_per_nnz));
  NIMBUS_RETURN_IF_ERROR(profile.Validate());
  return profile;
}

}  // namespace

Status CalibrationOptions::Validate() const {
  NIMBUS_RETURN_IF_ERROR(ValidateRepeatedSolves(workers, repetitions));
  if (wide_features < 1) return InvalidArgument("calibrate: the wide problem needs at least one feature");
  return Status::Ok();
}

Result<Profile> Calibrate(const TrainingData& data, const SolveOptions& options, const CalibrationOptions& calibration) {
  NIMBUS_RETURN_IF_ERROR(calibration.Validate());
  // The solves run in this process, but the profile counts the messages a runtime with a wire
  // sends, float32 ones too.
  SolveOptions checked = options;
  checked.admm.message_precision = MessagePrecision::kFloat64;
  NIMBUS_RETURN_IF_ERROR(checked.Validate());
  NIMBUS_ASSIGN_OR_RETURN(Plan plan, PlanForEveryK(data, options, calibration.workers.front()));
  CalibrationSetup setup;
  setup.workers = calibration.workers;
  setup.master = ChooseMaster(options);
  setup.options = checked;
  setup.worker = setup.master.algorithm == Algorithm::kColumns ? ColumnWorkerOptionsOf(options) : WorkerOptionsOf(options);
  setup.executable = WorkerProgramOf(options.runtime);
  setup.wide_features = calibration.wide_features;
  setup.repetitions = calibration.repetitions;
  setup.progress = calibration.progress;
  return CalibrateOn(plan, setup);
}

}  // namespace nimbus
