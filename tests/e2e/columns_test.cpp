// End to end: `nimbus train --algorithm columns`, the column method through the facade. Its
// optimum against liblinear is in liblinear_match_test.cpp (L1 and L2), multiclass_test.cpp
// (one-vs-rest), weights_test.cpp (class and sample weights), path_test.cpp (its paths, with
// strong rules) and cv_test.cpp (cross-validation); here the optimality condition with an
// intercept, the stop at a target objective, the summary, and what it refuses.
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

std::string ThreeClasses(const TempDir& run) {
  WriteTextFile(run.File("three.svm"), "1 1:1\n2 2:1\n3 1:-1\n1 1:0.5\n2 2:0.5\n3 2:-1\n");
  return run.File("three.svm");
}

TEST(Columns, WhatItDoesNotDoYetIsRefusedByName) {
  TempDir run;
  const std::string data = HeartScalePath();
  ExpectRefused({"train", "--data", data, "--algorithm", "columns"},
                {{{"--runtime", "process"}, "--algorithm columns: its blocks run on threads of this process"},
                 {{"--multiclass", "multinomial"}, "--algorithm columns: one-vs-rest only"},
                 {{"--barrier", "1", "--workers", "2"}, "--algorithm columns: not with --barrier or --relays"}});
  ExpectRefused({"path", "--data", data, "--algorithm", "columns"},
                {{{"--penalty", "l2"}, "--algorithm columns: l1 paths only"}});
  ExpectRefused({"cv", "--data", data, "--algorithm", "columns"},
                {{{"--penalty", "l2"}, "--algorithm columns: l1 paths only"}});
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
