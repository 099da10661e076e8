// The serverless star with real worker processes (`nimbus worker`) over real ZeroMQ sockets on
// 127.0.0.1: same answers as in-process workers, and the same answers when workers are
// killed, hung, retired at their lifetime cap, duplicated or sent forged messages.
#include "nimbus/runtime/remote_executor.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <zmq.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <random>
#include <thread>

#include "nimbus/solve/admm/admm_master.h"
#include "nimbus/solve/newton/newton_master.h"
#include "nimbus/core/file_io.h"
#include "nimbus/data/libsvm_reader.h"
#include "nimbus/data/manifest.h"
#include "nimbus/data/synthetic.h"
#include "nimbus/runtime/threads_executor.h"
#include "support/test_support.h"

namespace nimbus {
namespace {

using testing::TempDir;

constexpr int kWorkers = 4;

class RemoteExecutorTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    SyntheticOptions gen;
    gen.rows = 4000;
    gen.cols = 500;
    gen.nnz_per_row = 10;
    gen.seed = 21;
    ASSERT_TRUE(WriteSyntheticLibsvm(gen, dir_->File("d.svm")).ok());
    data_ = new Dataset(*ReadLibsvmFile(dir_->File("d.svm")));
    Result<std::unique_ptr<Store>> store = OpenStore(dir_->File("shards"), true);
    ASSERT_TRUE(store.ok());
    manifest_ = new Manifest(*WriteShards(*data_, kWorkers, "d.svm", **store));
    spec_.rows = data_->rows();
    spec_.cols = data_->cols();
    spec_.regularizer.l1 = 2e-4;
    // The fault-free answer, from in-process workers over the same row blocks.
    std::vector<ShardSource> shards;
    for (const auto& [begin, end] : PartitionRows(data_->matrix, kWorkers)) {
      shards.push_back(ShardSource::InMemory(data_->Rows(begin, end)));
    }
    ThreadsExecutor threads(std::move(shards), spec_, WorkerOptions{});
    AdmmMaster coordinator(spec_, AdmmOptions{}, &threads);
    reference_ = new Solution(*coordinator.Solve());
  }
  static void TearDownTestSuite() {
    delete reference_;
    delete manifest_;
    delete data_;
    delete dir_;
  }

  static std::vector<ShardAssignment> Shards() {
    std::vector<ShardAssignment> shards;
    for (const ShardEntry& entry : manifest_->shards) shards.push_back({dir_->File("shards"), entry.key, entry.checksum, {}});
    return shards;
  }

  static RemoteOptions FastOptions() {
    RemoteOptions options;
    options.heartbeat_seconds = 0.2;
    options.round_timeout_floor_seconds = 1.0;
    options.launch_timeout_seconds = 10;
    options.master_timeout_seconds = 10;
    return options;
  }

  // Solves with `kWorkers` worker processes; `during` runs after each tested iteration.
  static Result<Solution> SolveRemote(const RemoteOptions& options, const WorkerOptions& worker_options = {},
                                      std::function<void(int, RemoteExecutor&)> during = nullptr,
                                      std::unique_ptr<Launcher> launcher = nullptr, AdmmOptions admm = {}) {
    RemoteExecutor executor(Shards(), spec_, worker_options, options,
                            launcher ? std::move(launcher) : MakeProcessLauncher(NIMBUS_BINARY));
    AdmmMaster coordinator(spec_, admm, &executor);
    if (during) {
      coordinator.SetIterationCallback([&](const IterationInfo& info) {
        during(info.iteration, executor);
        return true;
      });
    }
    return coordinator.Solve();
  }

  static void ExpectSameAnswer(const Result<Solution>& solution, double relative) {
    ASSERT_TRUE(solution.ok()) << solution.status().ToString();
    ASSERT_EQ(solution->summary.termination, Termination::kConverged) << solution->summary.message;
    const double reference = reference_->summary.objective;
    EXPECT_NEAR(solution->summary.objective, reference, relative * reference);
  }

  static TempDir* dir_;
  static Dataset* data_;
  static Manifest* manifest_;
  static ProblemSpec spec_;
  static Solution* reference_;
};
TempDir* RemoteExecutorTest::dir_ = nullptr;
Dataset* RemoteExecutorTest::data_ = nullptr;
Manifest* RemoteExecutorTest::manifest_ = nullptr;
ProblemSpec RemoteExecutorTest::spec_;
Solution* RemoteExecutorTest::reference_ = nullptr;

TEST_F(RemoteExecutorTest, ProcessesGiveTheSameIteratesAsThreads) {
  Result<Solution> solution = SolveRemote(FastOptions());
  ASSERT_TRUE(solution.ok()) << solution.status().ToString();
  EXPECT_EQ(solution->model, reference_->model);  // bit for bit
  EXPECT_EQ(solution->summary.iterations, reference_->summary.iterations);
  EXPECT_EQ(solution->summary.runtime, "process");
  EXPECT_EQ(solution->summary.worker_restarts, 0);
  EXPECT_GT(solution->summary.bytes_sent, 0);
}

TEST_F(RemoteExecutorTest, KillNineAtARandomRoundIn20SeededTrials) {
  std::mt19937 rng(2026);
  const int iterations = reference_->summary.iterations;
  for (int trial = 0; trial < 20; ++trial) {
    WorkerOptions faults;
    faults.faults.crash_worker = static_cast<int>(rng() % kWorkers);
    faults.faults.crash_round = 1 + static_cast<int64_t>(rng() % static_cast<unsigned>(iterations - 1));
    SCOPED_TRACE("trial " + std::to_string(trial) + ": worker " + std::to_string(faults.faults.crash_worker) +
                 " killed in round " + std::to_string(faults.faults.crash_round));
    const Stopwatch watch;
    Result<Solution> solution = SolveRemote(FastOptions(), faults);
    ExpectSameAnswer(solution, 1e-8);
    EXPECT_EQ(solution->summary.worker_restarts, 1);
    EXPECT_LT(watch.ElapsedSeconds(), 30.0);  // a bounded run, not a hang
  }
}

TEST_F(RemoteExecutorTest, AWorkerKilledFromOutsideIsReplaced) {
  int64_t killed = -1;
  Result<Solution> solution = SolveRemote(FastOptions(), {}, [&](int iteration, RemoteExecutor& executor) {
    if (iteration != 3) return;
    killed = executor.worker_pids()[2];
    ::kill(static_cast<pid_t>(killed), SIGKILL);
  });
  ExpectSameAnswer(solution, 1e-8);
  EXPECT_GT(killed, 0);
  EXPECT_EQ(solution->summary.worker_restarts, 1);
}

TEST_F(RemoteExecutorTest, AHungWorkerIsReplacedAndEnded) {
  int64_t stopped = -1;
  Result<Solution> solution = SolveRemote(FastOptions(), {}, [&](int iteration, RemoteExecutor& executor) {
    if (iteration != 2) return;
    stopped = executor.worker_pids()[1];
    ::kill(static_cast<pid_t>(stopped), SIGSTOP);
  });
  ExpectSameAnswer(solution, 1e-8);
  EXPECT_GE(solution->summary.worker_restarts, 1);
  ASSERT_GT(stopped, 0);
  EXPECT_NE(::kill(static_cast<pid_t>(stopped), 0), 0) << "the hung worker was left running";
}

// The master stops for twice its workers' silence limit (5 heartbeats of 0.2 s: a stopped
// process, a starved core) while their heartbeats keep arriving. It reads what is waiting
// before it judges anyone silent, and keeps them all.
TEST_F(RemoteExecutorTest, AMasterThatStallsKeepsItsWorkers) {
  Result<Solution> solution = SolveRemote(FastOptions(), {}, [](int iteration, RemoteExecutor&) {
    if (iteration == 3) std::this_thread::sleep_for(std::chrono::seconds(2));
  });
  ExpectSameAnswer(solution, 1e-8);
  EXPECT_EQ(solution->summary.worker_restarts, 0);
}

TEST_F(RemoteExecutorTest, TheLifetimeCapHandsOverMidRun) {
  RemoteOptions options = FastOptions();
  options.max_lifetime_seconds = 0.25;
  WorkerOptions slow;
  slow.faults.delay_ms = 30;  // rounds long enough that workers reach their cap mid-run
  Result<Solution> solution = SolveRemote(options, slow);
  ExpectSameAnswer(solution, 1e-10);
  EXPECT_GE(solution->summary.worker_restarts, kWorkers);  // every worker handed over at least once
}

// Raw frames on a plain ZeroMQ socket, as an attacker or a broken client would send them.
void SendRaw(void* socket, const std::vector<Frame>& frames) {
  for (std::size_t i = 0; i < frames.size(); ++i) {
    zmq_send(socket, frames[i].data(), frames[i].size(), i + 1 < frames.size() ? ZMQ_SNDMORE : 0);
  }
}

// The checks behind the handshake: in a plaintext run (--insecure, loopback) anyone on the
// machine can connect, and what they send must still not get in.
TEST_F(RemoteExecutorTest, ForgedMessagesAreDroppedAndTheRunIsUnchanged) {
  void* context = zmq_ctx_new();
  int forged = 0;
  RemoteOptions options = FastOptions();
  options.insecure = true;
  Result<Solution> solution = SolveRemote(options, {}, [&](int iteration, RemoteExecutor& executor) {
    if (iteration != 2) return;
    void* rogue = zmq_socket(context, ZMQ_DEALER);
    const int linger = 0;
    zmq_setsockopt(rogue, ZMQ_LINGER, &linger, sizeof linger);
    ASSERT_EQ(zmq_connect(rogue, executor.endpoint().c_str()), 0);
    Envelope envelope;
    envelope.run_id = executor.run_id();
    envelope.worker = 1;
    envelope.invocation = 1;
    envelope.round = iteration + 1;
    WorkerReply reply;
    reply.round = iteration + 1;
    reply.w = std::vector<double>(spec_.model_size(), 1e6);  // a poisoned w
    // 1. another run's id
    Envelope foreign = envelope;
    foreign.run_id = executor.run_id() + 1;
    SendRaw(rogue, Encode(PackReply(foreign, reply)));
    // 2. a wrong protocol version
    std::vector<Frame> versioned = Encode(PackReply(envelope, reply));
    std::string header(versioned[0].text());
    header[4] = 7;
    versioned[0] = Frame::Adopt(header);
    SendRaw(rogue, versioned);
    // 3. truncated frames
    std::vector<Frame> truncated = Encode(PackReply(envelope, reply));
    truncated[2] = Frame::Copy(std::string(truncated[2].text()).substr(0, 100));
    SendRaw(rogue, truncated);
    // 4. a well-formed reply from a peer that never said HELLO (right run, worker, invocation)
    SendRaw(rogue, Encode(PackReply(envelope, reply)));
    // 5. a reply claiming an old invocation
    Envelope stale = envelope;
    stale.invocation = 0;
    SendRaw(rogue, Encode(PackReply(stale, reply)));
    forged = 5;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    zmq_close(rogue);
  });
  zmq_ctx_term(context);
  ASSERT_TRUE(solution.ok()) << solution.status().ToString();
  EXPECT_EQ(forged, 5);
  EXPECT_EQ(solution->model, reference_->model);  // nothing forged got in
  EXPECT_GE(solution->summary.messages_dropped, 5);
}

// A secure run (the default): clients without the run's keys, plaintext or with a key pair of
// their own, send a well-formed HELLO and a poisoned REPLY for a live worker and round. None
// of it reaches the master: nothing is even dropped, and the model is the fault-free one.
TEST_F(RemoteExecutorTest, ClientsWithoutTheRunsKeysCannotJoinOrSteerTheModel) {
  auto context = ZmqContext::Create();
  std::vector<std::unique_ptr<DealerTransport>> intruders;
  Result<Solution> solution = SolveRemote(FastOptions(), {}, [&](int iteration, RemoteExecutor& executor) {
    if (iteration != 2) return;
    // The master's public key is no secret (it is on every worker's command line).
    ClientCredentials own_pair;
    own_pair.client = *NewCurveKeyPair();
    own_pair.server_public = executor.server_key();
    ASSERT_FALSE(own_pair.server_public.empty());
    for (const ClientCredentials& credentials : {ClientCredentials{}, own_pair}) {
      Result<std::unique_ptr<DealerTransport>> intruder = DealerTransport::Connect(
          context, executor.endpoint(), "w1.1." + std::to_string(intruders.size()), executor.run_id(), credentials);
      ASSERT_TRUE(intruder.ok()) << intruder.status().ToString();
      Envelope envelope;
      envelope.worker = 1;
      envelope.invocation = 1;
      (void)(*intruder)->Send("", PackHello(envelope, {WallSeconds(), WallSeconds(), 1}));
      envelope.round = iteration + 1;
      WorkerReply reply;
      reply.round = iteration + 1;
      reply.w = std::vector<double>(spec_.model_size(), 1e6);
      (void)(*intruder)->Send("", PackReply(envelope, reply));
      intruders.push_back(std::move(intruder).value());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  });
  intruders.clear();
  ASSERT_TRUE(solution.ok()) << solution.status().ToString();
  EXPECT_EQ(solution->model, reference_->model);
  EXPECT_EQ(solution->summary.security, "curve");
  EXPECT_EQ(solution->summary.messages_dropped, 0);  // refused before any frame was read
  EXPECT_GE(solution->summary.clients_refused, 1);    // the key pair, by the ZAP handler
  EXPECT_EQ(solution->summary.worker_restarts, 0);
}

// A platform that runs one invocation twice (as an event retry can): both processes dial in.
// The second one runs `duplicate_binary`, which may be a wrapper that starts it late.
class DuplicatingLauncher final : public Launcher {
 public:
  explicit DuplicatingLauncher(std::string duplicate_binary = NIMBUS_BINARY)
      : duplicate_(MakeProcessLauncher(std::move(duplicate_binary))) {}

  Result<std::unique_ptr<Invocation>> Launch(const LaunchRequest& request) override {
    NIMBUS_ASSIGN_OR_RETURN(std::unique_ptr<Invocation> first, inner_->Launch(request));
    if (request.worker != 0 || request.invocation != 1) return first;
    NIMBUS_ASSIGN_OR_RETURN(std::unique_ptr<Invocation> second, duplicate_->Launch(request));
    return std::unique_ptr<Invocation>(std::make_unique<Both>(std::move(first), std::move(second)));
  }

 private:
  // Gone once both are gone.
  class Both final : public Invocation {
   public:
    Both(std::unique_ptr<Invocation> a, std::unique_ptr<Invocation> b) : a_(std::move(a)), b_(std::move(b)) {}
    bool Exited(std::string* how) override {
      const bool a = a_->Exited(how), b = b_->Exited(how);
      return a && b;
    }
    void Kill() override {
      a_->Kill();
      b_->Kill();
    }
    int64_t pid() const override { return a_->pid(); }

   private:
    std::unique_ptr<Invocation> a_, b_;
  };
  std::unique_ptr<Launcher> duplicate_;
  std::unique_ptr<Launcher> inner_ = MakeProcessLauncher(NIMBUS_BINARY);
};

TEST_F(RemoteExecutorTest, OfTwoLiveInvocationsOfOneWorkerExactlyOneCounts) {
  Result<Solution> solution = SolveRemote(FastOptions(), {}, nullptr, std::make_unique<DuplicatingLauncher>());
  ASSERT_TRUE(solution.ok()) << solution.status().ToString();
  EXPECT_EQ(solution->model, reference_->model);
  EXPECT_GE(solution->summary.messages_dropped, 1);  // the second HELLO
  EXPECT_EQ(solution->summary.worker_restarts, 0);
}

// A retry that starts slower than the whole run says HELLO only while the master ends the
// run: it is still told to leave, and still counted.
TEST_F(RemoteExecutorTest, ADuplicateThatDialsInAfterTheRunIsCountedToo) {
  const std::string wrapper = dir_->File("late-nimbus.sh");
  {
    std::ofstream script(wrapper);
    script << "#!/bin/sh\nsleep 1\nexec '" << NIMBUS_BINARY << "' \"$@\"\n";
  }
  ASSERT_EQ(chmod(wrapper.c_str(), 0755), 0);
  Result<Solution> solution = SolveRemote(FastOptions(), {}, nullptr, std::make_unique<DuplicatingLauncher>(wrapper));
  ASSERT_TRUE(solution.ok()) << solution.status().ToString();
  EXPECT_EQ(solution->model, reference_->model);
  EXPECT_EQ(solution->summary.messages_dropped, 1);  // the late HELLO, and nothing else
  EXPECT_EQ(solution->summary.worker_restarts, 0);
}

TEST_F(RemoteExecutorTest, PartialBarrierConvergesWithAWorkerFiveTimesSlower) {
  WorkerOptions slow;
  slow.faults.delay_ms = 5;       // every round takes some milliseconds ...
  slow.faults.slow_worker = 0;    // ... and worker 0 five times as long
  slow.faults.slow_factor = 5;
  AdmmOptions partial;
  partial.barrier = kWorkers - 1;
  partial.max_staleness = 3;
  partial.max_iterations = 2000;
  Result<Solution> solution = SolveRemote(FastOptions(), slow, nullptr, nullptr, partial);
  ExpectSameAnswer(solution, 1e-5);
  EXPECT_GT(solution->summary.stale_replies, 0);
}

TEST_F(RemoteExecutorTest, AWorkerThatKeepsDyingIsGivenUpWithTheReason) {
  WorkerOptions doomed;
  doomed.faults.crash_worker = 1;
  doomed.faults.crash_probability = 0.999;
  RemoteOptions options = FastOptions();
  options.max_restarts = 2;
  const Stopwatch watch;
  Result<Solution> solution = SolveRemote(options, doomed);
  ASSERT_TRUE(solution.ok()) << solution.status().ToString();
  EXPECT_EQ(solution->summary.termination, Termination::kWorkerFailed);
  EXPECT_NE(solution->summary.message.find("worker 1"), std::string::npos) << solution->summary.message;
  EXPECT_NE(solution->summary.message.find("killed by signal 9"), std::string::npos) << solution->summary.message;
  EXPECT_NE(solution->summary.message.find("gave up after 2 restarts"), std::string::npos) << solution->summary.message;
  EXPECT_LT(watch.ElapsedSeconds(), 30.0);
}

TEST_F(RemoteExecutorTest, AMissingShardFailsTheStartWithoutRetries) {
  std::vector<ShardAssignment> shards = Shards();
  shards[1].key = "missing.bin";
  RemoteExecutor executor(std::move(shards), spec_, WorkerOptions{}, FastOptions(), MakeProcessLauncher(NIMBUS_BINARY));
  Result<std::vector<WorkerReady>> ready = executor.Start(Deadline::After(30));
  ASSERT_FALSE(ready.ok());
  EXPECT_NE(ready.status().message().find("worker 1 could not start"), std::string::npos) << ready.status().message();
  EXPECT_NE(ready.status().message().find("missing.bin"), std::string::npos) << ready.status().message();
  EXPECT_EQ(executor.stats().restarts, 0);
  executor.Stop();
}

TEST(RemoteOptions, ValidateNamesTheField) {
  RemoteOptions options;
  options.heartbeat_seconds = 0;
  EXPECT_NE(options.Validate().message().find("heartbeat_seconds"), std::string::npos);
  options = RemoteOptions{};
  options.max_restarts = -1;
  EXPECT_NE(options.Validate().message().find("max_restarts"), std::string::npos);
}

// The distributed Newton master over worker processes: an L2 problem on the same shards.
class RemoteNewtonTest : public RemoteExecutorTest {
 protected:
  static ProblemSpec SmoothSpec() {
    ProblemSpec spec = spec_;
    spec.regularizer = {0, 1e-3};
    spec.intercept = false;
    return spec;
  }
  static Result<Solution> SolveNewton(Executor& executor) {
    NewtonOptions options;
    options.gradient_tolerance = 1e-8;
    NewtonMaster newton(SmoothSpec(), options, &executor);
    return newton.Solve();
  }
  static Result<Solution> SolveNewtonRemote(const WorkerOptions& worker_options) {
    WorkerOptions general = worker_options;
    general.general_form = true;
    RemoteExecutor executor(Shards(), SmoothSpec(), general, FastOptions(), MakeProcessLauncher(NIMBUS_BINARY));
    return SolveNewton(executor);
  }
  static const Solution& ThreadsAnswer() {
    static const Solution* answer = [] {
      std::vector<ShardSource> shards;
      for (const auto& [begin, end] : PartitionRows(data_->matrix, kWorkers)) {
        shards.push_back(ShardSource::InMemory(data_->Rows(begin, end)));
      }
      WorkerOptions general;
      general.general_form = true;
      ThreadsExecutor threads(std::move(shards), SmoothSpec(), general);
      return new Solution(*SolveNewton(threads));
    }();
    return *answer;
  }
};

TEST_F(RemoteNewtonTest, ProcessesGiveTheThreadsModelBitForBit) {
  const Solution& reference = ThreadsAnswer();
  ASSERT_EQ(reference.summary.termination, Termination::kConverged);
  EXPECT_LT(OptimalityViolation(SmoothSpec(), data_->matrix, data_->labels, reference.model), 1e-9);
  Result<Solution> solution = SolveNewtonRemote({});
  ASSERT_TRUE(solution.ok()) << solution.status().ToString();
  EXPECT_EQ(solution->model, reference.model);
  EXPECT_EQ(solution->summary.rounds, reference.summary.rounds);
  EXPECT_GT(solution->summary.bytes_sent, 0);
}

// Every round kind is hit: evaluations, products at the newest point and (after a rejected
// trial or for a replacement) at a point the new invocation never evaluated, which then
// travels with the request.
TEST_F(RemoteNewtonTest, KillNineAtARandomRoundIn12SeededTrials) {
  const Solution& reference = ThreadsAnswer();
  const int rounds = reference.summary.rounds;
  ASSERT_GT(rounds, 4);
  std::mt19937 rng(2027);
  for (int trial = 0; trial < 12; ++trial) {
    WorkerOptions faults;
    faults.faults.crash_worker = static_cast<int>(rng() % kWorkers);
    faults.faults.crash_round = 1 + static_cast<int64_t>(rng() % static_cast<unsigned>(rounds - 1));
    SCOPED_TRACE("trial " + std::to_string(trial) + ": worker " + std::to_string(faults.faults.crash_worker) +
                 " killed in round " + std::to_string(faults.faults.crash_round));
    const Stopwatch watch;
    Result<Solution> solution = SolveNewtonRemote(faults);
    ASSERT_TRUE(solution.ok()) << solution.status().ToString();
    EXPECT_EQ(solution->summary.termination, Termination::kConverged) << solution->summary.message;
    EXPECT_EQ(solution->model, reference.model);  // a replacement computes the same numbers
    EXPECT_EQ(solution->summary.worker_restarts, 1);
    EXPECT_LT(watch.ElapsedSeconds(), 30.0);
  }
}

}  // namespace
}  // namespace nimbus
