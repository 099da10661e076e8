// End to end: `nimbus train --algorithm columns`, the column method through the facade. Its
// optimum against liblinear is in liblinear_match_test.cpp (L1 and L2), multiclass_test.cpp
// (one-vs-rest), weights_test.cpp (class and sample weights), path_test.cpp (its paths, with
// strong rules) and cv_test.cpp (cross-validation); here the optimality condition with an
// intercept, the stop at a target objective, the summary, its blocks on workers of the local
// runtimes (a worker replaced mid-run; mpi_test.cpp and lambda_test.cpp: ranks and functions),
// and what it refuses.
#include "e2e_support.h"

namespace nimbus::testing {
namespace {

TEST(Columns, InterceptAndElasticNetMeetTheOptimalityCondition) {
  TempDir run;
  for (const char* blocks : {"1", "3"}) {
    SCOPED_TRACE(std::string("--workers ") + blocks);
    Train({"--data", HeartScalePath(), "--algorithm", "columns", "--l1", "0.005", "--l2", "0.02", "--intercept",
           "--workers", blocks, "--gradient-tolerance", "1e-9", "--out", run.File("m.json")});
    EXPECT_LT(ViolationOf(run.File("m.json"), HeartScalePath(), LabelMode::kClassification), 1e-7);
    EXPECT_NE(ReadTextFile(run.File("m.json")).find("\"bias\""), std::string::npos);
  }
}

// --target-objective stops the method once F is there, as it does Newton: liblinear's optimum
// plus 1e-3, reached in fewer rounds than the default stop test takes.
TEST(Columns, StopsAtATargetObjectiveAndReportsItsRounds) {
  TempDir run;
  const double lambda = 0.01;
  const double optimum =
      ObjectiveOf(TrainLiblinear(6, 1.0 / (270 * lambda), 1e-8, HeartScalePath(), run.File("ll.model")),
                  HeartScalePath(), lambda, 0);
  Train({"--data", HeartScalePath(), "--algorithm", "columns", "--l1", Number(lambda), "--target-objective",
         Number(optimum * (1 + 1e-3)), "--summary-json", run.File("target.json")});
  Train({"--data", HeartScalePath(), "--algorithm", "columns", "--l1", Number(lambda), "--summary-json",
         run.File("default.json")});
  const nlohmann::json target = nlohmann::json::parse(ReadTextFile(run.File("target.json")));
  const nlohmann::json full = nlohmann::json::parse(ReadTextFile(run.File("default.json")));
  EXPECT_EQ(target["algorithm"], "columns");
  EXPECT_EQ(target["termination"], "target_objective");
  EXPECT_LE(target["objective"].get<double>(), optimum * (1 + 1e-3));
  EXPECT_EQ(full["termination"], "converged");
  EXPECT_NEAR(full["objective"].get<double>(), optimum, 1e-6 * optimum);
  EXPECT_LT(target["rounds"].get<int>(), full["rounds"].get<int>());
  EXPECT_EQ(full["rounds"], full["iterations"]);  // one round an iteration
  EXPECT_GT(full["data_passes"].get<int64_t>(), 0);
  // The start line names the method, the one-line summary its iterations and subgradient test.
  const CommandResult brief = RunNimbus({"train", "--data", HeartScalePath(), "--algorithm", "columns", "--l1", "0.01"});
  ASSERT_EQ(brief.exit_code, 0) << brief.err;
  EXPECT_NE(brief.err.find("columns (--algorithm columns)"), std::string::npos) << brief.err;
  EXPECT_NE(brief.out.find("iterations ("), std::string::npos) << brief.out;
  EXPECT_NE(brief.out.find("gradient norm"), std::string::npos) << brief.out;
}

// Train's arguments with more.
std::vector<std::string> With(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// The blocks on process and command workers, a block of columns each: the model the blocks on
// threads make, byte for byte (a worker's step is the same computation on the same numbers),
// which is liblinear's optimum. A worker killed in its third round is replaced, and the model
// does not change: a worker keeps nothing between rounds. `args` solve heart_scale at l1 0.01.
void BlocksOnWorkersGiveTheThreadsModel(const std::vector<std::string>& args) {
  TempDir run;
  const double lambda = 0.01;
  Train(With(args, {"--out", run.File("threads.json")}));
  const std::string expected = ReadTextFile(run.File("threads.json"));
  ASSERT_FALSE(expected.empty());
  const double optimum =
      ObjectiveOf(TrainLiblinear(6, 1.0 / (270 * lambda), 1e-8, HeartScalePath(), run.File("ll.model")),
                  HeartScalePath(), lambda, 0);
  EXPECT_NEAR(ObjectiveOf(run.File("threads.json"), HeartScalePath(), lambda, 0), optimum, 1e-6 * optimum);
  Train(With(args, {"--runtime", "process", "--out", run.File("process.json"), "--summary-json", run.File("p.json")}));
  EXPECT_EQ(ReadTextFile(run.File("process.json")), expected);
  const nlohmann::json process = nlohmann::json::parse(ReadTextFile(run.File("p.json")));
  EXPECT_EQ(process["runtime"], "process");
  EXPECT_EQ(process["algorithm"], "columns");
  EXPECT_GT(process["bytes_sent"].get<int64_t>(), 0);
  Train(With(args, {"--runtime", "command", "--launch", std::string(NIMBUS_BINARY) + " worker {args}", "--out",
                    run.File("command.json")}));
  EXPECT_EQ(ReadTextFile(run.File("command.json")), expected);
  Train(With(args, {"--runtime", "process", "--inject-crash", "@1:3", "--heartbeat", "0.2", "--out",
                    run.File("crashed.json"), "--summary-json", run.File("c.json")}));
  const nlohmann::json crashed = nlohmann::json::parse(ReadTextFile(run.File("c.json")));
  EXPECT_EQ(crashed["worker_restarts"], 1);
  EXPECT_EQ(crashed["termination"], "converged");
  EXPECT_EQ(ReadTextFile(run.File("crashed.json")), expected);
}

// Blocks of adjacent columns (auto's on this dense set) and clustered ones (each worker's shard
// holds its block's columns renumbered).
TEST(Columns, ItsBlocksOnWorkersGiveTheThreadsModelAndSurviveAWorkerReplaced) {
  for (const std::string blocks : {"auto", "clustered"}) {
    SCOPED_TRACE("--column-blocks " + blocks);
    BlocksOnWorkersGiveTheThreadsModel({"--data", HeartScalePath(), "--algorithm", "columns", "--l1", "0.01",
                                        "--workers", "3", "--gradient-tolerance", "1e-8", "--column-blocks", blocks});
  }
}

// A block too large for a worker's memory is refused before any worker starts, named by its
// columns: a dense worker of 200,000 features holds 32 MB of vectors beside its block.
TEST(Columns, ABlockTooLargeForAWorkersMemoryIsRefusedBeforeTheStart) {
  TempDir run;
  ASSERT_EQ(RunNimbus({"gen", "--rows", "20000", "--cols", "200000", "--nnz-per-row", "10", "--seed", "3", "--out",
                       run.File("wide.svm")}).exit_code, 0);
  const CommandResult refused =
      RunNimbus({"train", "--data", run.File("wide.svm"), "--algorithm", "columns", "--workers", "2", "--runtime",
                 "process", "--worker-memory-mb", "20", "--trace", run.File("t.jsonl")});
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("worker 0's columns [0, "), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("of " + run.File("wide.svm") + " (20000 rows, "), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("MB in a worker, over the 20 MB limit (--worker-memory-mb): use more workers"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(refused.err.find("--consensus general"), std::string::npos) << refused.err;
  EXPECT_FALSE(FileExists(run.File("t.jsonl"))) << "refused before anything started";
}

// With an intercept, sample weights and one-vs-rest's classes, process workers give the threads
// model too.
TEST(Columns, ItsWorkersServeInterceptsWeightsAndOneVsRest) {
  TempDir run;
  WriteTextFile(run.File("w.txt"), [] {
    std::string weights;
    for (int r = 0; r < 270; ++r) weights += r % 3 == 0 ? "2\n" : "0.5\n";
    return weights;
  }());
  WriteTextFile(run.File("four.svm"), "1 1:1 3:0.5\n2 2:1\n3 1:-1 4:1\n4 3:1\n1 1:0.5 4:-0.5\n2 2:0.5 3:0.25\n"
                                      "3 2:-1\n4 3:0.75 4:0.5\n1 2:0.25\n3 4:0.5\n");
  const std::vector<std::vector<std::string>> cases = {
      {"--data", HeartScalePath(), "--l1", "0.005", "--l2", "0.01", "--intercept", "--sample-weights",
       run.File("w.txt")},
      {"--data", run.File("four.svm"), "--l1", "0.01", "--intercept"}};
  for (std::size_t c = 0; c < cases.size(); ++c) {
    SCOPED_TRACE("case " + std::to_string(c));
    const std::vector<std::string> args = With(cases[c], {"--algorithm", "columns", "--workers", "2"});
    Train(With(args, {"--out", run.File("threads.json")}));
    Train(With(args, {"--runtime", "process", "--out", run.File("process.json")}));
    const std::string expected = ReadTextFile(run.File("threads.json"));
    ASSERT_FALSE(expected.empty());
    EXPECT_EQ(ReadTextFile(run.File("process.json")), expected);
  }
}

std::string ThreeClasses(const TempDir& run) {
  WriteTextFile(run.File("three.svm"), "1 1:1\n2 2:1\n3 1:-1\n1 1:0.5\n2 2:0.5\n3 2:-1\n");
  return run.File("three.svm");
}

// auto: an l1 problem with an intercept, binary and logistic, on threads with --workers not
// given is the column method's, one block (docs/benchmarks.md, "auto chooses the column
// method"), train's and path's alike; without the intercept, with --workers, l2 alone, on
// another runtime or with three classes, Newton's.
TEST(Columns, AutoSolvesL1WithAnInterceptByColumns) {
  TempDir run;
  const auto summary_of = [&](std::vector<std::string> args) {
    args.insert(args.end(), {"--summary-json", run.File("s.json")});
    Train(args);
    return nlohmann::json::parse(ReadTextFile(run.File("s.json")));
  };
  const std::vector<std::string> l1 = {"--data", HeartScalePath(), "--l1", "0.01", "--intercept"};
  const nlohmann::json chosen = summary_of(With(l1, {"--gradient-tolerance", "1e-9", "--out", run.File("m.json")}));
  EXPECT_EQ(chosen["algorithm"], "columns");
  EXPECT_NE(chosen["algorithm_reason"].get<std::string>().find("auto: l1 with an intercept"), std::string::npos)
      << chosen["algorithm_reason"];
  EXPECT_EQ(chosen["workers"], 1);
  EXPECT_LT(ViolationOf(run.File("m.json"), HeartScalePath(), LabelMode::kClassification), 1e-7);
  EXPECT_EQ(summary_of({"--data", HeartScalePath(), "--l1", "0.01"})["algorithm"], "newton");
  EXPECT_EQ(summary_of(With(l1, {"--workers", "2"}))["algorithm"], "newton");
  EXPECT_EQ(summary_of({"--data", HeartScalePath(), "--l2", "0.01", "--intercept"})["algorithm"], "newton");
  EXPECT_EQ(summary_of(With(l1, {"--runtime", "process"}))["algorithm"], "newton");
  const nlohmann::json three = summary_of({"--data", ThreeClasses(run), "--l1", "0.01", "--intercept"});
  EXPECT_EQ(three["algorithm"], "newton");
  // The default's workers, not the one block planned for the column method.
  EXPECT_EQ(three["workers"], summary_of({"--data", ThreeClasses(run), "--l1", "0.01"})["workers"]);
  EXPECT_EQ(three["termination"], "converged");
  const auto path_of = [&](const std::string& data, std::vector<std::string> args) {
    std::vector<std::string> all{"path", "--data", data, "--path-length", "3", "--json", "--no-plots"};
    all.insert(all.end(), args.begin(), args.end());
    return RunNimbusJson(all);
  };
  const nlohmann::json path = path_of(HeartScalePath(), {"--intercept"});
  EXPECT_EQ(path["algorithm"], "columns");
  EXPECT_NE(path["algorithm_reason"].get<std::string>().find("auto: an l1 path with an intercept"), std::string::npos);
  EXPECT_EQ(path["points"][0]["algorithm"], "columns");
  EXPECT_EQ(path_of(HeartScalePath(), {})["algorithm"], "newton");
  const nlohmann::json classes = path_of(ThreeClasses(run), {"--intercept"});
  EXPECT_EQ(classes["algorithm"], "newton");
  EXPECT_EQ(classes["points"].size(), 3u);
  EXPECT_EQ(classes["points"][0]["termination"], "converged");
}

TEST(Columns, WhatItDoesNotDoYetIsRefusedByName) {
  TempDir run;
  const std::string data = HeartScalePath();
  ExpectRefused({"train", "--data", data, "--algorithm", "columns"},
                {{{"--multiclass", "multinomial"}, "--algorithm columns: one-vs-rest only"},
                 {{"--runtime", "process", "--workers", "20"}, "--algorithm columns: 20 workers for 13 columns"},
                 {{"--barrier", "1", "--workers", "2"}, "--algorithm columns: not with --barrier or --relays"},
                 {{"--workers", "65", "--column-blocks", "clustered"},
                  "--column-blocks clustered: at most 64 blocks (a bit per block for each row), not 65"}});
  ExpectRefused({"train", "--data", data},
                {{{"--column-blocks", "contiguous"}, "--column-blocks: the column method's blocks (--algorithm columns)"}});
  ExpectRefused({"path", "--data", data, "--algorithm", "columns"},
                {{{"--penalty", "l2"}, "--algorithm columns: l1 paths only"},
                 {{"--runtime", "process"}, "--algorithm columns: paths and cross-validation run on this process's "
                                            "threads"}});
  ExpectRefused({"cv", "--data", data, "--algorithm", "columns"},
                {{{"--penalty", "l2"}, "--algorithm columns: l1 paths only"},
                 {{"--runtime", "process"}, "--algorithm columns: paths and cross-validation run on this process's "
                                            "threads"}});
  ExpectRefused({"train", "--data", ThreeClasses(run), "--algorithm", "columns"},
                {{{"--checkpoint", run.File("checkpoints")},
                  "--algorithm columns: checkpoints of binary and regression problems only"}});
  ExpectRefused({"cv", "--data", ThreeClasses(run), "--algorithm", "columns", "--folds", "2"},
                {{{}, "--algorithm columns: paths of binary or regression problems only"}});
  const CommandResult split = RunNimbus({"split", "--data", data, "--shards", "2", "--out", run.File("store")});
  ASSERT_EQ(split.exit_code, 0) << split.err;
  ExpectRefused({"train", "--data", run.File("store"), "--algorithm", "columns", "--workers", "2"},
                {{{}, "is a store of shards; the column method reads LIBSVM text or arrays"}});
}

}  // namespace
}  // namespace nimbus::testing
