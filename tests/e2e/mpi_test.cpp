// End to end: `nimbus train --runtime mpi` under OpenMPI's mpirun, rank 0 the master and the
// other ranks its workers. Every job runs under `timeout`, so a hang fails instead of waiting.
#include "e2e_support.h"

namespace nimbus::testing {
namespace {

CommandResult MpiRun(int ranks, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"timeout", "120", "mpirun", "--allow-run-as-root", "--oversubscribe",
                                   "-n", std::to_string(ranks), NIMBUS_BINARY, "train", "--runtime", "mpi"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv);
}

TEST(MpiRuntime, AStarOfRanksGivesTheThreadsModel) {
  TempDir dir;
  const CommandResult mpi = MpiRun(4, {"--data", HeartScalePath(), "--l1", "0.01", "--out", dir.File("mpi.json"),
                                       "--summary-json", dir.File("summary.json")});
  ASSERT_EQ(mpi.exit_code, 0) << mpi.out << mpi.err;
  EXPECT_NE(mpi.out.find("on 3 mpi workers"), std::string::npos) << mpi.out;
  Train({"--data", HeartScalePath(), "--l1", "0.01", "--workers", "3", "--out", dir.File("threads.json")});
  const std::string expected = ReadTextFile(dir.File("threads.json"));
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(ReadTextFile(dir.File("mpi.json")), expected);
  const std::string summary = ReadTextFile(dir.File("summary.json"));
  EXPECT_EQ(JsonField(summary, "runtime"), "\"mpi\"");
  EXPECT_GT(std::stoll(JsonField(summary, "bytes_sent")), 0);
}

// The distributed Newton master (the default for an L2 problem) over a star of ranks.
TEST(MpiRuntime, NewtonOverAStarOfRanksGivesTheThreadsModel) {
  TempDir dir;
  const CommandResult mpi = MpiRun(4, {"--data", HeartScalePath(), "--l2", "0.01", "--out", dir.File("mpi.json"),
                                       "--summary-json", dir.File("summary.json")});
  ASSERT_EQ(mpi.exit_code, 0) << mpi.out << mpi.err;
  EXPECT_EQ(JsonField(ReadTextFile(dir.File("summary.json")), "algorithm"), "\"newton\"");
  Train({"--data", HeartScalePath(), "--l2", "0.01", "--workers", "3", "--out", dir.File("threads.json")});
  const std::string expected = ReadTextFile(dir.File("threads.json"));
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(ReadTextFile(dir.File("mpi.json")), expected);
}

// The column method over a star of ranks, each holding a block of columns of every row.
TEST(MpiRuntime, TheColumnMethodsBlocksOnRanksGiveTheThreadsModel) {
  TempDir dir;
  const std::vector<std::string> args = {"--data", HeartScalePath(), "--l1", "0.01", "--intercept", "--algorithm",
                                         "columns"};
  std::vector<std::string> mpi_args = args;
  mpi_args.insert(mpi_args.end(), {"--out", dir.File("mpi.json"), "--summary-json", dir.File("summary.json")});
  const CommandResult mpi = MpiRun(4, mpi_args);
  ASSERT_EQ(mpi.exit_code, 0) << mpi.out << mpi.err;
  EXPECT_EQ(JsonField(ReadTextFile(dir.File("summary.json")), "algorithm"), "\"columns\"");
  std::vector<std::string> threads_args = args;
  threads_args.insert(threads_args.end(), {"--workers", "3", "--out", dir.File("threads.json")});
  Train(threads_args);
  const std::string expected = ReadTextFile(dir.File("threads.json"));
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(ReadTextFile(dir.File("mpi.json")), expected);
}

TEST(MpiRuntime, RanksLoadTheShardsOfADirectory) {
  TempDir dir;
  ASSERT_EQ(RunNimbus({"gen", "--rows", "3000", "--cols", "400", "--nnz-per-row", "12", "--seed", "5", "--out",
                       dir.File("d.svm")}).exit_code, 0);
  ASSERT_EQ(RunNimbus({"split", "--data", dir.File("d.svm"), "--shards", "2", "--out", dir.File("shards")}).exit_code, 0);
  const CommandResult mpi = MpiRun(3, {"--data", dir.File("shards"), "--l1", "1e-3", "--out", dir.File("mpi.json")});
  ASSERT_EQ(mpi.exit_code, 0) << mpi.out << mpi.err;
  Train({"--data", dir.File("shards"), "--l1", "1e-3", "--out", dir.File("threads.json")});
  EXPECT_EQ(ReadTextFile(dir.File("mpi.json")), ReadTextFile(dir.File("threads.json")));
}

TEST(MpiRuntime, BothFormsOfConsensusGiveTheThreadsModel) {
  TempDir dir;
  ASSERT_EQ(RunNimbus({"gen", "--rows", "3000", "--cols", "20000", "--nnz-per-row", "12", "--power-law", "1",
                       "--seed", "4", "--out", dir.File("p.svm")}).exit_code, 0);
  for (const std::string form : {"general", "dense"}) {
    const CommandResult mpi = MpiRun(4, {"--data", dir.File("p.svm"), "--l1", "1e-4", "--consensus", form, "--out",
                                         dir.File(form + "-mpi.json")});
    ASSERT_EQ(mpi.exit_code, 0) << mpi.out << mpi.err;
    Train({"--data", dir.File("p.svm"), "--l1", "1e-4", "--workers", "3", "--consensus", form, "--out",
           dir.File(form + "-threads.json")});
    EXPECT_EQ(ReadTextFile(dir.File(form + "-mpi.json")), ReadTextFile(dir.File(form + "-threads.json"))) << form;
  }
}

// The largest difference between two models' weights.
double LargestDifference(const std::string& a_path, const std::string& b_path) {
  Result<Model> a = ReadModel(a_path);
  Result<Model> b = ReadModel(b_path);
  EXPECT_TRUE(a.ok() && b.ok());
  if (!a.ok() || !b.ok() || a->cols != b->cols || a->intercept != b->intercept) return 1e300;
  // Feature by feature: a model read back holds only its listed features when they are few.
  double largest = std::abs(a->bias() - b->bias());
  for (int64_t j = 0; j < a->cols; ++j) largest = std::max(largest, std::abs(a->Weight(j) - b->Weight(j)));
  return largest;
}

TEST(MpiAllreduce, EveryRankAWorkerReachesTheThreadsOptimum) {
  TempDir dir;
  ASSERT_EQ(RunNimbus({"gen", "--rows", "3000", "--cols", "20000", "--nnz-per-row", "12", "--power-law", "1",
                       "--seed", "4", "--out", dir.File("p.svm")}).exit_code, 0);
  for (const std::string form : {"general", "dense"}) {
    const CommandResult mpi =
        MpiRun(3, {"--topology", "allreduce", "--data", dir.File("p.svm"), "--l1", "1e-4", "--intercept", "--consensus",
                   form, "--out", dir.File(form + "-mpi.json"), "--summary-json", dir.File(form + "-mpi-summary.json")});
    ASSERT_EQ(mpi.exit_code, 0) << mpi.out << mpi.err;
    EXPECT_NE(mpi.out.find("on 3 mpi-allreduce workers"), std::string::npos) << mpi.out;
    Train({"--data", dir.File("p.svm"), "--l1", "1e-4", "--intercept", "--workers", "3", "--consensus", form,
           "--algorithm", "admm", "--out", dir.File(form + "-threads.json"), "--summary-json",
           dir.File(form + "-threads-summary.json")});
    // The sums of the w_i are formed in another order, so the iterates agree to rounding.
    const std::string mpi_summary = ReadTextFile(dir.File(form + "-mpi-summary.json"));
    const std::string threads_summary = ReadTextFile(dir.File(form + "-threads-summary.json"));
    EXPECT_EQ(JsonField(mpi_summary, "iterations"), JsonField(threads_summary, "iterations")) << form;
    const double f_mpi = std::stod(JsonField(mpi_summary, "objective"));
    const double f_threads = std::stod(JsonField(threads_summary, "objective"));
    EXPECT_NEAR(f_mpi, f_threads, 1e-12 * f_threads) << form;
    EXPECT_LT(LargestDifference(dir.File(form + "-mpi.json"), dir.File(form + "-threads.json")), 1e-9) << form;
    // Each rank moves the blocks of z it does not compute, twice a round, not K models.
    EXPECT_GT(std::stoll(JsonField(mpi_summary, "bytes_sent")), 0);
  }
}

TEST(MpiAllreduce, RanksLoadTheShardsOfADirectory) {
  TempDir dir;
  ASSERT_EQ(RunNimbus({"gen", "--rows", "3000", "--cols", "400", "--nnz-per-row", "12", "--seed", "5", "--out",
                       dir.File("d.svm")}).exit_code, 0);
  ASSERT_EQ(RunNimbus({"split", "--data", dir.File("d.svm"), "--shards", "2", "--out", dir.File("shards")}).exit_code, 0);
  const CommandResult mpi = MpiRun(2, {"--topology", "allreduce", "--data", dir.File("shards"), "--l2", "1e-3", "--loss",
                                       "squared_hinge", "--out", dir.File("mpi.json")});
  ASSERT_EQ(mpi.exit_code, 0) << mpi.out << mpi.err;
  // The same algorithm in threads (auto would pick Newton, which the allreduce topology has not).
  Train({"--data", dir.File("shards"), "--l2", "1e-3", "--loss", "squared_hinge", "--algorithm", "admm", "--out",
         dir.File("threads.json")});
  EXPECT_LT(LargestDifference(dir.File("mpi.json"), dir.File("threads.json")), 1e-9);
}

TEST(MpiAllreduce, MistakesAreNamed) {
  const CommandResult ranks = MpiRun(3, {"--topology", "allreduce", "--data", HeartScalePath(), "--workers", "4"});
  EXPECT_EQ(ranks.exit_code, 2) << ranks.err;
  EXPECT_NE(ranks.err.find("--workers 4 needs mpirun -n 4; this job has 3 ranks"), std::string::npos) << ranks.err;
  const CommandResult barrier = RunNimbus({"train", "--runtime", "mpi", "--topology", "allreduce", "--barrier", "2",
                                           "--data", HeartScalePath()});
  EXPECT_EQ(barrier.exit_code, 2);
  EXPECT_NE(barrier.err.find("every rank waits for all"), std::string::npos) << barrier.err;
  const CommandResult threads = RunNimbus({"train", "--topology", "allreduce", "--data", HeartScalePath()});
  EXPECT_EQ(threads.exit_code, 2);
  EXPECT_NE(threads.err.find("only for --runtime mpi"), std::string::npos) << threads.err;
}

TEST(MpiRuntime, MistakesEndTheWholeJobWithTheirExitStatus) {
  TempDir dir;
  const CommandResult ranks = MpiRun(3, {"--data", HeartScalePath(), "--workers", "4"});
  EXPECT_EQ(ranks.exit_code, 2) << ranks.err;
  EXPECT_NE(ranks.err.find("--workers 4 needs mpirun -n 5; this job has 3 ranks"), std::string::npos) << ranks.err;
  const CommandResult missing = MpiRun(3, {"--data", dir.File("none.svm")});
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_NE(missing.err.find("none.svm"), std::string::npos) << missing.err;
  // Without mpirun there are no worker ranks.
  const CommandResult alone = RunNimbus({"train", "--runtime", "mpi", "--data", HeartScalePath()});
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_NE(alone.err.find("mpirun -n K+1"), std::string::npos) << alone.err;
}

}  // namespace
}  // namespace nimbus::testing

namespace nimbus::testing {
namespace {

// Ranks read their own parts of the text: a bad line in the last rank's part is named by its
// file and its line's number there, under both topologies, and the job ends with status 2.
TEST(MpiRuntime, ABadLineInARanksPartIsNamedByFileAndLine) {
  TempDir dir;
  std::string text = ReadTextFile(HeartScalePath());
  const std::size_t at = text.find('\n', text.size() * 9 / 10) + 1;
  text.insert(at, "+1 3:1 2:5\n");
  const long line = std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n') + 1;
  const std::string path = dir.File("bad.svm");
  WriteTextFile(path, text);
  for (const std::vector<std::string>& topology :
       {std::vector<std::string>{}, std::vector<std::string>{"--topology", "allreduce", "--algorithm", "admm"}}) {
    std::vector<std::string> args = {"--data", path, "--l1", "0.01"};
    args.insert(args.end(), topology.begin(), topology.end());
    const CommandResult mpi = MpiRun(topology.empty() ? 4 : 3, args);
    EXPECT_EQ(mpi.exit_code, 2) << mpi.err;
    EXPECT_NE(mpi.err.find(path + ":" + std::to_string(line) + ": feature index 2 after 3"), std::string::npos)
        << mpi.err;
  }
}

}  // namespace
}  // namespace nimbus::testing
