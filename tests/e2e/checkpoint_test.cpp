// End to end: checkpoints and --resume through the nimbus binary. A master killed with -9
// in the middle of a run is resumed from its last checkpoint and ends with the model of a run
// that was never interrupted (threads and process workers; ADMM with L1, Newton with L2 and
// L1, and the column method); checkpoints in S3; a full disk keeps the previous checkpoint;
// mistakes are named.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "e2e_support.h"
#include "nimbus/checkpoint/checkpoint.h"
#include "nimbus/cloud/s3.h"
#include "nimbus/data/synthetic.h"

extern char** environ;

namespace nimbus::testing {
namespace {

using Json = nlohmann::json;

class CheckpointCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    SyntheticOptions gen;
    gen.rows = 20000;
    gen.cols = 2000;
    gen.nnz_per_row = 20;
    gen.seed = 3;
    ASSERT_TRUE(WriteSyntheticLibsvm(gen, Data()).ok());
    // F* from liblinear (-s 6: L1-regularized logistic regression; C = 1 / (N l1) makes its
    // objective N C times ours).
    const std::string reference =
        TrainLiblinear(6, 1.0 / (gen.rows * kL1), 1e-6, Data(), dir_->File("liblinear.model"));
    optimum_ = ObjectiveOf(reference, Data(), kL1, 0);
    // and with L2 (-s 0), the problem the default algorithm solves with Newton.
    const std::string smooth = TrainLiblinear(0, 1.0 / (gen.rows * kL2), 1e-6, Data(), dir_->File("l2.model"));
    optimum_l2_ = ObjectiveOf(smooth, Data(), 0, kL2);
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string Data() { return dir_->File("d.svm"); }

  // The problem's arguments; 150 ms of injected delay per round keeps the run going long
  // enough to be killed in its middle (it changes no number).
  // With L1 the run is ADMM's (by name), with L2 Newton's (the default): many short rounds, so
  // less delay in each.
  // The column method (`columns`, L1) takes about 10 rounds of 3 blocks here: 150 ms each.
  static std::vector<std::string> Problem(const std::string& runtime, bool l2 = false, bool newton = false,
                                          bool columns = false) {
    return {"--data", Data(), l2 ? "--l2" : "--l1", Number(l2 ? kL2 : kL1), "--workers", "3", "--runtime", runtime,
            "--inject-delay", (l2 || newton) && !columns ? "30" : "150", "--algorithm", AlgorithmOf(l2, newton, columns)};
  }
  static std::string AlgorithmOf(bool l2, bool newton, bool columns) {
    return columns ? "columns" : l2 || newton ? "auto" : "admm";
  }

  static std::map<int64_t, double> Weights(const std::string& path) {
    const Json model = Json::parse(ReadTextFile(path));
    std::map<int64_t, double> weights;
    const Json& w = model.at("weights");
    for (std::size_t i = 0; i < w.at("indices").size(); ++i) {
      weights[w["indices"][i].get<int64_t>()] = w["values"][i].get<double>();
    }
    return weights;
  }
  static double LargestDifference(const std::string& a, const std::string& b) {
    std::map<int64_t, double> x = Weights(a), y = Weights(b);
    double largest = 0;
    for (const auto& [j, v] : x) largest = std::max(largest, std::abs(v - (y.count(j) ? y[j] : 0.0)));
    for (const auto& [j, v] : y) largest = std::max(largest, std::abs(v - (x.count(j) ? x[j] : 0.0)));
    return largest;
  }

  // Starts `nimbus train ARGS` in a process group of its own, its output in files.
  static pid_t StartTrain(const std::vector<std::string>& args, const std::string& log) {
    std::vector<std::string> argv{NIMBUS_BINARY, "train"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> pointers;
    for (std::string& a : argv) pointers.push_back(a.data());
    pointers.push_back(nullptr);
    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    posix_spawn_file_actions_addopen(&files, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&files, 1, 2);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
    pid_t pid = -1;
    EXPECT_EQ(posix_spawn(&pid, pointers[0], &files, &attributes, pointers.data(), environ), 0);
    posix_spawn_file_actions_destroy(&files);
    posix_spawnattr_destroy(&attributes);
    return pid;
  }

  // The round the newest checkpoint in `directory` resumes at, or 0 if there is none yet.
  static int64_t CheckpointRound(const std::string& directory) {
    DirectoryStore store(directory);
    Result<Checkpoint> checkpoint = ReadCheckpoint(store);
    return checkpoint.ok() ? checkpoint->state.next_round : 0;
  }

  // Kills the master with SIGKILL once it has checkpointed round `round`, resumes the run
  // with `nimbus train --checkpoint DIR --resume` and compares the model with an
  // uninterrupted run's.
  static void KillAndResume(const std::string& runtime, bool l2 = false, bool newton = false, bool columns = false) {
    TempDir dir;
    std::vector<std::string> plain = Problem(runtime, l2, newton, columns);
    for (const std::string& a : {std::string("--out"), dir.File("plain.json")}) plain.push_back(a);
    Train(plain);

    std::vector<std::string> args = Problem(runtime, l2, newton, columns);
    for (const std::string& a : {std::string("--checkpoint"), dir.File("cp"), std::string("--checkpoint-every"),
                                 std::string("2"), std::string("--out"), dir.File("resumed.json"),
                                 std::string("--summary-json"), dir.File("summary.json")}) {
      args.push_back(a);
    }
    const pid_t master = StartTrain(args, dir.File("first.log"));
    ASSERT_GT(master, 0);
    // Bounded: at most 60 s for the checkpoint of round 4 to appear.
    int64_t round = 0;
    for (int i = 0; i < 3000 && round < 4; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      round = CheckpointRound(dir.File("cp"));
    }
    ::kill(master, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(master, &status, 0), master);
    ::kill(-master, SIGKILL);  // the process runtime's workers, orphaned (they would leave on their own)
    ASSERT_GE(round, 4) << ReadTextFile(dir.File("first.log"));
    ASSERT_TRUE(WIFSIGNALED(status)) << "the run ended before it could be killed: "
                                     << ReadTextFile(dir.File("first.log"));
    ASSERT_FALSE(FileExists(dir.File("resumed.json")));

    const CommandResult resumed = RunNimbus({"train", "--checkpoint", dir.File("cp"), "--resume"});
    ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
    EXPECT_NE(resumed.err.find("resuming from"), std::string::npos) << resumed.err;
    const Json summary = Json::parse(ReadTextFile(dir.File("summary.json")));
    EXPECT_GE(summary["resumed_at_round"].get<int64_t>(), round);
    EXPECT_EQ(summary["termination"], "converged");
    const std::string algorithm = AlgorithmOf(l2, newton, columns);
    EXPECT_EQ(summary["algorithm"], algorithm == "auto" ? "newton" : algorithm);
    // The column method's checkpoint keeps its margins as summed: the same model, bit for bit.
    const double model_difference = LargestDifference(dir.File("resumed.json"), dir.File("plain.json"));
    if (columns) {
      EXPECT_EQ(model_difference, 0.0);
    } else {
      EXPECT_LT(model_difference, 1e-9);
    }
    const double l1 = l2 ? 0 : kL1, l2_weight = l2 ? kL2 : 0, optimum = l2 ? optimum_l2_ : optimum_;
    const double objective = ObjectiveOf(dir.File("resumed.json"), Data(), l1, l2_weight);
    EXPECT_NEAR(objective, ObjectiveOf(dir.File("plain.json"), Data(), l1, l2_weight), 1e-12);
    // and both solve the problem: within the stop test's tolerance of liblinear's optimum
    EXPECT_LT(objective, optimum * (1 + 1e-5)) << "F* " << optimum;
  }

  static constexpr double kL1 = 1e-4;
  static constexpr double kL2 = 1e-4;
  static double optimum_l2_;
  static TempDir* dir_;
  static double optimum_;
};

TempDir* CheckpointCli::dir_ = nullptr;
double CheckpointCli::optimum_ = 0;
double CheckpointCli::optimum_l2_ = 0;

TEST_F(CheckpointCli, AMasterKilledWithSignal9IsResumedToTheSameModel) { KillAndResume("threads"); }

TEST_F(CheckpointCli, AProcessRunsMasterKilledWithSignal9IsResumedToTheSameModel) { KillAndResume("process"); }

TEST_F(CheckpointCli, ANewtonMasterKilledWithSignal9IsResumedToTheSameModel) { KillAndResume("threads", true); }

TEST_F(CheckpointCli, ANewtonMasterWithProcessWorkersKilledWithSignal9IsResumedToTheSameModel) {
  KillAndResume("process", true);
}

// With an l1 term: Newton's active-set cycles.
TEST_F(CheckpointCli, AnL1NewtonMasterKilledWithSignal9IsResumedToTheSameModel) {
  KillAndResume("process", false, true);
}

// The column method in this process: x, its last step and its models' adaptation come back.
TEST_F(CheckpointCli, AColumnMethodsMasterKilledWithSignal9IsResumedToTheSameModel) {
  KillAndResume("threads", false, false, true);
}

// On process workers, a block of columns each: the resumed master takes x, the last step and
// their margins from the checkpoint, and goes on to the same model.
TEST_F(CheckpointCli, AColumnMethodsMasterWithProcessWorkersKilledWithSignal9IsResumedToTheSameModel) {
  KillAndResume("process", false, false, true);
}

TEST_F(CheckpointCli, CheckpointsGoToS3AndAResumeReadsThem) {
  MotoServer server;
  server.ExportEnvironment();
  AwsConfig config;
  config.credentials = {"testing", "testing", ""};
  config.endpoint_url = server.endpoint();
  ASSERT_TRUE(S3Client(config).CreateBucket("runs").ok());
  TempDir dir;
  const std::vector<std::string> args{"--data", Data(), "--l1", "1e-4", "--workers", "2", "--algorithm", "admm",
                                      "--checkpoint", "s3://runs/job-1", "--checkpoint-every", "3", "--out",
                                      dir.File("m.json")};
  Train(args);
  Result<std::unique_ptr<Store>> store = OpenAnyStore("s3://runs/job-1", false);
  ASSERT_TRUE(store.ok());
  Result<Checkpoint> checkpoint = ReadCheckpoint(**store);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().ToString();
  EXPECT_EQ(checkpoint->arguments, args);
  EXPECT_EQ(checkpoint->state.next_round % 3, 0);
  // Resuming a finished run from its last checkpoint ends where it ended.
  const std::string first = ReadTextFile(dir.File("m.json"));
  const CommandResult resumed = RunNimbus({"train", "--checkpoint", "s3://runs/job-1", "--resume", "--quiet"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  WriteTextFile(dir.File("first.json"), first);
  EXPECT_LT(LargestDifference(dir.File("m.json"), dir.File("first.json")), 1e-9);
  std::vector<std::string> full = args;
  full.push_back("--resume");
  Train(full);  // the run's own arguments with --resume work as well
  EXPECT_LT(LargestDifference(dir.File("m.json"), dir.File("first.json")), 1e-9);
  // The outputs of a resumed run are the user's to choose: new ones beside the run's own ...
  const CommandResult outputs = RunNimbus({"train", "--checkpoint", "s3://runs/job-1", "--resume", "--quiet",
                                           "--out", dir.File("again.json"), "--summary-json", dir.File("s.json")});
  ASSERT_EQ(outputs.exit_code, 0) << outputs.err;
  EXPECT_LT(LargestDifference(dir.File("again.json"), dir.File("first.json")), 1e-9);
  EXPECT_EQ(Json::parse(ReadTextFile(dir.File("s.json")))["termination"], "converged");
  // ... and with the run's own arguments too.
  full.insert(full.end(), {"--trace", dir.File("t.jsonl"), "--verbose"});
  Train(full);
  EXPECT_TRUE(FileExists(dir.File("t.jsonl")));
}

TEST_F(CheckpointCli, AFullDiskKeepsThePreviousCheckpointAndTheRunGoesOn) {
  // A 200 KB file system in a mount namespace of its own: one checkpoint (129 KB) fits, a
  // second beside it (written whole before it replaces the first) does not.
  if (RunCommand({"/usr/bin/unshare", "--mount", "/bin/true"}).exit_code != 0) {
    GTEST_SKIP() << "cannot make a mount namespace here";
  }
  TempDir dir;
  const std::string mount_point = dir.File("small");
  const std::string script =
      "mkdir -p " + mount_point + " && mount -t tmpfs -o size=200k tmpfs " + mount_point + " || exit 99; " +
      NIMBUS_BINARY + " train --data " + Data() + " --l1 1e-4 --workers 3 --algorithm admm --consensus dense " +
      "--checkpoint " +
      mount_point + " --checkpoint-every 2 --out " + dir.File("m.json") + " --summary-json " + dir.File("s.json") +
      "; code=$?; cp " + mount_point + "/* " + dir.path() + "/; ls -A " + mount_point + " > " + dir.File("listing") +
      "; exit $code";
  const CommandResult result = RunCommand({"/usr/bin/unshare", "--mount", "/bin/sh", "-c", script});
  if (result.exit_code == 99) GTEST_SKIP() << "cannot mount a tmpfs here: " << result.err;
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("warning: cannot write"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("the previous checkpoint stays"), std::string::npos) << result.err;
  const Json summary = Json::parse(ReadTextFile(dir.File("s.json")));
  EXPECT_EQ(summary["checkpoints"], 1);
  EXPECT_GE(summary["checkpoint_failures"].get<int>(), 1);
  EXPECT_EQ(ReadTextFile(dir.File("listing")), std::string(kCheckpointKey) + "\n");  // no partial file left
  DirectoryStore copied(dir.path());
  Result<Checkpoint> kept = ReadCheckpoint(copied);
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_EQ(kept->state.next_round, 2);
  EXPECT_TRUE(FileExists(dir.File("m.json")));
}

TEST_F(CheckpointCli, MistakesAreNamed) {
  TempDir dir;
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--resume"}, "--resume: needs --checkpoint"},
      {{"--checkpoint", dir.File("none"), "--resume"}, "no such directory"},
      {{"--data", Data(), "--checkpoint", dir.File("c"), "--checkpoint-every", "0"}, "--checkpoint-every: must be >= 1"},
      {{"--data", Data(), "--checkpoint", dir.File("c"), "--barrier", "1", "--workers", "2"}, "needs synchronous rounds"},
      {{"--data", Data(), "--checkpoint", dir.File("c"), "--runtime", "mpi"}, "not with --runtime mpi"},
      {{"--data", Data(), "--checkpoint-every", "5"}, "--checkpoint-every: only with --checkpoint"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args{"train"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const CommandResult result = RunNimbus(args);
    EXPECT_NE(result.exit_code, 0) << c.message;
    EXPECT_NE(result.err.find(c.message), std::string::npos) << "expected '" << c.message << "' in: " << result.err;
  }
  // An empty directory has no checkpoint; other arguments than the run's are refused.
  ASSERT_EQ(RunCommand({"/bin/mkdir", dir.File("empty")}).exit_code, 0);
  const CommandResult empty = RunNimbus({"train", "--checkpoint", dir.File("empty"), "--resume"});
  EXPECT_NE(empty.err.find("no checkpoint in " + dir.File("empty")), std::string::npos) << empty.err;
  Train({"--data", Data(), "--l1", "1e-4", "--workers", "2", "--checkpoint", dir.File("c"), "--checkpoint-every", "2"});
  const CommandResult other = RunNimbus({"train", "--data", Data(), "--l1", "2e-4", "--checkpoint", dir.File("c"),
                                         "--resume"});
  EXPECT_NE(other.exit_code, 0);
  EXPECT_NE(other.err.find("the checkpoint's run is: nimbus train --data " + Data() + " --l1 1e-4"), std::string::npos)
      << other.err;
  // A damaged checkpoint is named, not used.
  std::string bytes = ReadTextFile(dir.File("c/checkpoint.nimbus"));
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 1);
  WriteTextFile(dir.File("c/checkpoint.nimbus"), bytes);
  const CommandResult damaged = RunNimbus({"train", "--checkpoint", dir.File("c"), "--resume"});
  EXPECT_NE(damaged.exit_code, 0);
  EXPECT_NE(damaged.err.find("checkpoint.nimbus: not a usable checkpoint: checksum mismatch"), std::string::npos)
      << damaged.err;
}

}  // namespace
}  // namespace nimbus::testing
