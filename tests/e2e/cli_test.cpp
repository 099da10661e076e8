// End to end: the nimbus command line — help, errors, outputs, files — as a user meets it.
#include <fstream>
#include <nlohmann/json.hpp>

#include "e2e_support.h"

namespace nimbus::testing {
namespace {

using Json = nlohmann::json;

TEST(Cli, EveryCommandHasHelp) {
  for (const char* command : {"gen", "split", "train", "predict", "eval"}) {
    const CommandResult result = RunNimbus({command, "--help"});
    EXPECT_EQ(result.exit_code, 0) << command;
    EXPECT_NE(result.out.find(std::string("usage: nimbus ") + command), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("--"), std::string::npos);
  }
  const CommandResult top = RunNimbus({"--help"});
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_NE(top.out.find("train"), std::string::npos);
}

TEST(Cli, UsageErrorsExitWithTwoAndSayWhatIsWrong) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{}, "usage: nimbus COMMAND"},
      {{"frobnicate"}, "unknown command 'frobnicate'"},
      {{"train", "--data", HeartScalePath(), "--bogus"}, "unknown option --bogus"},
      {{"train"}, "missing required option --data"},
      {{"train", "--data", HeartScalePath(), "--workers", "abc"}, "--workers: 'abc' is not an integer"},
      {{"train", "--data", HeartScalePath(), "--l1", "-1"}, "l1: must be a finite number >= 0"},
      {{"train", "--data", HeartScalePath(), "--relaxation", "3"}, "relaxation: must be in [1, 1.8]"},
      {{"train", "--data", HeartScalePath(), "--loss", "hinge"}, "unknown loss 'hinge'"},
      {{"train", "--data", HeartScalePath(), "--workers", "271"}, "every worker needs at least one row"},
      {{"train", "--data", "/nonexistent/file.svm"}, "/nonexistent/file.svm: no such file"},
      {{"gen", "--rows", "10", "--cols", "5", "--nnz-per-row", "6", "--out", "/tmp/x.svm"}, "nnz_per_row"},
      {{"split", "--data", HeartScalePath(), "--shards", "0", "--out", "/tmp/never"}, "--shards"},
  };
  for (const Case& c : cases) {
    const CommandResult result = RunNimbus(c.args);
    EXPECT_EQ(result.exit_code, 2) << c.message;
    EXPECT_NE(result.err.find(c.message), std::string::npos) << "expected '" << c.message << "' in: " << result.err;
  }
}

// --warm-start from liblinear's own model at twice the lambda: nimbus reaches liblinear's
// optimum at lambda, in fewer Newton steps than from zero. A model that cannot be read is
// named with the flag.
TEST(Cli, AWarmStartFromLiblinearsModelAtAnotherLambdaReachesTheOptimumSooner) {
  TempDir dir;
  const double lambda = 0.01, rows = 270;
  const std::string near = TrainLiblinear(6, 1.0 / (rows * 2 * lambda), 1e-6, HeartScalePath(), dir.File("near.model"));
  const std::string reference = TrainLiblinear(6, 1.0 / (rows * lambda), 1e-8, HeartScalePath(), dir.File("ref.model"));
  const std::vector<std::string> run = {"--data", HeartScalePath(), "--l1", Number(lambda), "--workers", "2"};
  auto with = [&run](std::vector<std::string> more) {
    more.insert(more.begin(), run.begin(), run.end());
    return more;
  };
  Train(with({"--summary-json", dir.File("cold.json")}));
  Train(with({"--warm-start", near, "--out", dir.File("warm.json"), "--summary-json", dir.File("warm_summary.json")}));
  const double ours = ObjectiveOf(dir.File("warm.json"), HeartScalePath(), lambda, 0);
  const double theirs = ObjectiveOf(reference, HeartScalePath(), lambda, 0);
  EXPECT_NEAR(ours, theirs, 1e-6 * theirs);
  const Json cold = Json::parse(ReadTextFile(dir.File("cold.json")));
  const Json warm = Json::parse(ReadTextFile(dir.File("warm_summary.json")));
  EXPECT_LT(warm["iterations"].get<int>(), cold["iterations"].get<int>()) << warm.dump();
  ExpectRefused({"train", "--data", HeartScalePath()},
                {{{"--warm-start", dir.File("none.json")}, "--warm-start: " + dir.File("none.json")}});
}

TEST(Cli, AModelWithANumberOutOfRangeIsAnError) {
  // What fuzzing found in the manifest reader (a number beyond double's range threw out of
  // the JSON library) holds for model files too.
  TempDir dir;
  WriteTextFile(dir.File("m.json"), R"({"format": "nimbus-model", "version": 1, "l1": 1e999})");
  const CommandResult result = RunNimbus({"predict", "--model", dir.File("m.json"), "--data", HeartScalePath()});
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find(dir.File("m.json") + ": not valid JSON"), std::string::npos) << result.err;
  // An integer field written as a double far beyond any integer (a cast would be undefined),
  // or as an integer beyond its type: a bad model, named.
  for (const std::string cols : {"1e300", "18446744073709551615", "5.5"}) {
    WriteTextFile(dir.File("m.json"), R"({"format": "nimbus-model", "version": 1, "loss": "logistic", "l1": 0,
        "l2": 1, "intercept": false, "cols": )" + cols + R"(, "labels": {"binary": true, "negative": -1,
        "positive": 1}, "weights": {"indices": [1], "values": [0.5]}})");
    const CommandResult bad = RunNimbus({"predict", "--model", dir.File("m.json"), "--data", HeartScalePath()});
    EXPECT_EQ(bad.exit_code, 2) << cols << ": " << bad.err;
    EXPECT_NE(bad.err.find(dir.File("m.json")), std::string::npos) << bad.err;
  }
}

TEST(Cli, AShardTooLargeForAWorkersMemoryIsRefusedBeforeTheStart) {
  TempDir dir;
  // 20,000 rows of 10 of 200,000 features: about 126,000 occur, more than half, so the columns
  // keep their numbers and a dense worker holds vectors of all 200,000 (32 MB of them).
  ASSERT_EQ(RunNimbus({"gen", "--rows", "20000", "--cols", "200000", "--nnz-per-row", "10", "--seed", "3", "--out",
                       dir.File("wide.svm")}).exit_code, 0);
  const CommandResult dense = RunNimbus({"train", "--data", dir.File("wide.svm"), "--workers", "2", "--consensus",
                                         "dense", "--worker-memory-mb", "20", "--trace", dir.File("t.jsonl")});
  EXPECT_EQ(dense.exit_code, 2) << dense.err;
  // 48 bytes a row, 12 a nonzero and 160 a feature: 0.48 + 1.2 + 32 MB.
  EXPECT_NE(dense.err.find("worker 0's rows of " + dir.File("wide.svm") + " (10000 rows, 100000 nonzeros) needs about "
                           "34 MB in a worker, over the 20 MB limit (--worker-memory-mb)"),
            std::string::npos)
      << dense.err;
  EXPECT_NE(dense.err.find("or --consensus general"), std::string::npos) << dense.err;
  // L1 Newton (what auto picks) also keeps where each row's working entries end, 8 bytes a
  // row (under a limit it copies its working set's columns only where they fit): 0.48 + 0.08
  // + 1.2 + 32 MB.
  const CommandResult l1 = RunNimbus({"train", "--data", dir.File("wide.svm"), "--workers", "2", "--consensus",
                                      "dense", "--l1", "1e-4", "--worker-memory-mb", "20"});
  EXPECT_EQ(l1.exit_code, 2) << l1.err;
  EXPECT_NE(l1.err.find("(10000 rows, 100000 nonzeros) needs about 34 MB"), std::string::npos) << l1.err;
  EXPECT_FALSE(FileExists(dir.File("t.jsonl"))) << "refused before anything started";
  // The general form holds the (at most 100,000) features a shard touches.
  Train({"--data", dir.File("wide.svm"), "--workers", "2", "--worker-memory-mb", "20"});
  // Shards in a store are named by their place: 0.48 + 1.2 + 16 MB.
  ASSERT_EQ(RunNimbus({"split", "--data", dir.File("wide.svm"), "--shards", "2", "--out", dir.File("s")}).exit_code, 0);
  const CommandResult shards = RunNimbus({"train", "--data", dir.File("s"), "--worker-memory-mb", "1"});
  EXPECT_EQ(shards.exit_code, 2) << shards.err;
  EXPECT_NE(shards.err.find(dir.File("s") + "/shard-00000.bin (10000 rows, 100000 nonzeros) needs about 18 MB"),
            std::string::npos)
      << shards.err;

  // 2,000 rows of 10 of 10^6 features: about 20,000 occur, and the solve runs over those
  // alone, so even a dense worker fits in 50 MB (it needed 161 MB when its vectors were sized
  // by the largest index).
  ASSERT_EQ(RunNimbus({"gen", "--rows", "2000", "--cols", "1000000", "--nnz-per-row", "10", "--seed", "3", "--out",
                       dir.File("sparse.svm")}).exit_code, 0);
  Train({"--data", dir.File("sparse.svm"), "--workers", "2", "--consensus", "dense", "--worker-memory-mb", "50"});
}

TEST(Cli, MalformedDataNamesFileAndLine) {
  TempDir dir;
  const std::string path = dir.File("bad.svm");
  struct Case {
    std::string contents;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"+1 1:0.5\n-1 2:x\n", ":2: invalid value 'x' for feature 2"},
      {"+1 1:0.5\n-1 0:1\n", ":2: feature index 0"},
      {"+1 3:0.5 2:1\n", ":1: feature index 2 after 3"},
      {"1 1:1\n1.5 1:1\n2 1:1\n0 1:0\n3 1:1\n2.5 x\n", ":6: expected INDEX:VALUE"},
      {"", ":1: empty file"},
      {"+1 1:nan\n", ":1: value 'nan' of feature 1 is not a finite number"},
  };
  for (const Case& c : cases) {
    WriteTextFile(path, c.contents);
    for (const char* command : {"train", "split"}) {
      std::vector<std::string> args{command, "--data", path};
      if (std::string(command) == "split") args.insert(args.end(), {"--shards", "1", "--out", dir.File("shards")});
      const CommandResult result = RunNimbus(args);
      EXPECT_EQ(result.exit_code, 2) << command << " " << c.message;
      EXPECT_NE(result.err.find(path + c.message), std::string::npos) << "expected '" << path + c.message << "' in: " << result.err;
    }
  }
  EXPECT_FALSE(FileExists(dir.File("shards/manifest.json")));
}

TEST(Cli, GenIsReproducibleBySeed) {
  TempDir dir;
  for (const char* name : {"a.svm", "b.svm"}) {
    ASSERT_EQ(RunNimbus({"gen", "--rows", "500", "--cols", "300", "--nnz-per-row", "7", "--seed", "42", "--out",
                         dir.File(name)}).exit_code, 0);
  }
  ASSERT_EQ(RunNimbus({"gen", "--rows", "500", "--cols", "300", "--nnz-per-row", "7", "--seed", "43", "--out",
                       dir.File("c.svm")}).exit_code, 0);
  EXPECT_EQ(ReadTextFile(dir.File("a.svm")), ReadTextFile(dir.File("b.svm")));
  EXPECT_NE(ReadTextFile(dir.File("a.svm")), ReadTextFile(dir.File("c.svm")));
}

TEST(Cli, SameInputsAndWorkersGiveABitIdenticalModel) {
  TempDir dir;
  ASSERT_EQ(RunNimbus({"gen", "--rows", "4000", "--cols", "1000", "--nnz-per-row", "12", "--seed", "9", "--out",
                       dir.File("d.svm")}).exit_code, 0);
  for (const char* name : {"a.json", "b.json"}) {
    Train({"--data", dir.File("d.svm"), "--l1", "1e-4", "--workers", "3", "--out", dir.File(name)});
  }
  const std::string a = ReadTextFile(dir.File("a.json"));
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, ReadTextFile(dir.File("b.json")));
}

TEST(Cli, ShardDirectoryGivesTheSameModelAsTheFile) {
  TempDir dir;
  const CommandResult split = RunNimbus({"split", "--data", HeartScalePath(), "--shards", "3", "--out", dir.File("s")});
  ASSERT_EQ(split.exit_code, 0) << split.err;
  EXPECT_TRUE(FileExists(dir.File("s/manifest.json")));
  EXPECT_TRUE(FileExists(dir.File("s/shard-00002.bin")));
  Train({"--data", dir.File("s"), "--l1", "0.01", "--out", dir.File("from_shards.json")});
  Train({"--data", HeartScalePath(), "--l1", "0.01", "--workers", "3", "--out", dir.File("from_file.json")});
  EXPECT_EQ(ReadTextFile(dir.File("from_shards.json")), ReadTextFile(dir.File("from_file.json")));

  const CommandResult mismatch = RunNimbus({"train", "--data", dir.File("s"), "--workers", "2"});
  EXPECT_EQ(mismatch.exit_code, 2);
  EXPECT_NE(mismatch.err.find("holds 3 shards"), std::string::npos) << mismatch.err;
}

TEST(Cli, LiblinearPredictReadsOurModel) {
  TempDir dir;
  Train({"--data", HeartScalePath(), "--l1", "0.01", "--workers", "2", "--intercept", "--out", dir.File("m.txt"),
         "--model-format", "liblinear"});
  const CommandResult theirs =
      RunCommand({"liblinear-predict", HeartScalePath(), dir.File("m.txt"), dir.File("theirs.txt")});
  ASSERT_EQ(theirs.exit_code, 0) << theirs.err;
  const CommandResult ours =
      RunNimbus({"predict", "--model", dir.File("m.txt"), "--data", HeartScalePath(), "--out", dir.File("ours.txt")});
  ASSERT_EQ(ours.exit_code, 0) << ours.err;
  const std::string predictions = ReadTextFile(dir.File("ours.txt"));
  EXPECT_EQ(std::count(predictions.begin(), predictions.end(), '\n'), 270);
  EXPECT_EQ(predictions, ReadTextFile(dir.File("theirs.txt")));
  // liblinear reports its accuracy; ours must agree.
  const CommandResult eval = RunNimbus({"eval", "--model", dir.File("m.txt"), "--data", HeartScalePath(), "--json"});
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  const double accuracy = std::stod(JsonField(eval.out, "accuracy"));
  const auto at = theirs.out.find("Accuracy = ");
  ASSERT_NE(at, std::string::npos) << theirs.out;
  EXPECT_NEAR(accuracy * 100, std::strtod(theirs.out.c_str() + at + 11, nullptr), 1e-3);
}

// Labels of round values (10, 20, 100) are written as liblinear writes them, so that
// liblinear-predict reads the model and its predictions are ours.
TEST(Cli, LiblinearPredictReadsRoundLabels) {
  TempDir dir;
  std::string text;
  std::ifstream heart(HeartScalePath());
  for (std::string line; std::getline(heart, line);) {
    const auto first = line.find(" 1:");
    const bool positive_feature = first != std::string::npos && line[first + 3] != '-';
    text += (line[0] == '-' ? "10" : positive_feature ? "20" : "100") + line.substr(line.find(' ')) + "\n";
  }
  WriteTextFile(dir.File("round.svm"), text);
  Train({"--data", dir.File("round.svm"), "--l2", "0.01", "--out", dir.File("m.txt"), "--model-format", "liblinear"});
  EXPECT_NE(ReadTextFile(dir.File("m.txt")).find("label 10 20 100\n"), std::string::npos);
  const CommandResult theirs =
      RunCommand({"liblinear-predict", dir.File("round.svm"), dir.File("m.txt"), dir.File("theirs.txt")});
  ASSERT_EQ(theirs.exit_code, 0) << theirs.err << theirs.out;
  ASSERT_EQ(RunNimbus({"predict", "--model", dir.File("m.txt"), "--data", dir.File("round.svm"), "--out",
                       dir.File("ours.txt")}).exit_code, 0);
  const std::string ours = ReadTextFile(dir.File("ours.txt"));
  EXPECT_EQ(ours, ReadTextFile(dir.File("theirs.txt")));
  EXPECT_EQ(ours.find("e+"), std::string::npos) << "a label written as 1e+01";
}

TEST(Cli, PredictionsUseTheFilesOwnLabels) {
  TempDir dir;
  // Labels 1 and 2: 2 is the larger, so it is the positive class.
  WriteTextFile(dir.File("d.svm"), "2 1:1 2:0.1\n1 1:-1 2:0.2\n2 1:0.8\n1 1:-0.9 2:-0.1\n2 1:1.2\n1 1:-1.1\n");
  Train({"--data", dir.File("d.svm"), "--l2", "0.01", "--workers", "2", "--out", dir.File("m.json")});
  const CommandResult predict = RunNimbus({"predict", "--model", dir.File("m.json"), "--data", dir.File("d.svm")});
  ASSERT_EQ(predict.exit_code, 0) << predict.err;
  EXPECT_EQ(predict.out, "2\n1\n2\n1\n2\n1\n");
  // A third label in data for this model is an error with its line.
  WriteTextFile(dir.File("other.svm"), "2 1:1\n3 1:1\n");
  const CommandResult eval = RunNimbus({"eval", "--model", dir.File("m.json"), "--data", dir.File("other.svm")});
  EXPECT_EQ(eval.exit_code, 2);
  EXPECT_NE(eval.err.find("other.svm:2: label '3' is not one of the model's labels"), std::string::npos) << eval.err;
}

TEST(Cli, SummaryJsonAndTraceHoldTheContractFields) {
  TempDir dir;
  Train({"--data", HeartScalePath(), "--l1", "0.01", "--workers", "2", "--summary-json", dir.File("s.json"), "--trace",
         dir.File("t.jsonl")});
  const Json summary = Json::parse(ReadTextFile(dir.File("s.json")));
  for (const char* field : {"termination", "iterations", "objective", "primal_residual", "dual_residual", "rho",
                            "gradient_norm", "gradient_tolerance", "nnz", "setup_seconds", "solve_seconds", "runtime",
                            "workers", "algorithm", "algorithm_reason"}) {
    EXPECT_TRUE(summary.contains(field)) << field;
  }
  EXPECT_EQ(summary["termination"], "converged");
  EXPECT_EQ(summary["runtime"], "threads");
  EXPECT_EQ(summary["workers"], 2);
  // Newton's stop test is in its own fields; ADMM's residuals are not Newton's to fill.
  EXPECT_EQ(summary["algorithm"], "newton");
  EXPECT_GT(summary["gradient_tolerance"].get<double>(), 0);
  EXPECT_LE(summary["gradient_norm"].get<double>(), summary["gradient_tolerance"].get<double>());
  EXPECT_EQ(summary["eps_primal"].get<double>(), 0);

  std::istringstream lines(ReadTextFile(dir.File("t.jsonl")));
  std::string line;
  int rounds = 0, setups = 0, summaries = 0;
  while (std::getline(lines, line)) {
    const Json event = Json::parse(line);
    if (event["event"] == "setup") ++setups;
    if (event["event"] == "summary") ++summaries;
    if (event["event"] == "round") {
      EXPECT_EQ(event["round"], rounds);
      ASSERT_EQ(event["workers"].size(), 2u);
      EXPECT_GT(event["workers"][0]["passes"].get<int>(), 0);
      EXPECT_TRUE(event.contains("master_seconds"));
      if (rounds > 0) {
        EXPECT_TRUE(event.contains("primal_residual"));
      }
      ++rounds;
    }
  }
  EXPECT_EQ(setups, 1);
  EXPECT_EQ(summaries, 1);
  EXPECT_EQ(rounds, summary["rounds"].get<int>());
}

TEST(Cli, NoProgressLineWhenStderrIsNotATerminal) {
  const CommandResult result = RunNimbus({"train", "--data", HeartScalePath(), "--l1", "0.01"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err.find('\r'), std::string::npos);
  EXPECT_NE(result.out.find("converged"), std::string::npos) << result.out;
}

TEST(Cli, ProgressLineOnATerminal) {
  const CommandResult result =
      RunInTerminal({NIMBUS_BINARY, "train", "--data", HeartScalePath(), "--l1", "0.01", "--workers", "2"});
  ASSERT_EQ(result.exit_code, 0) << result.out;
  EXPECT_NE(result.out.find("\r  iter    1  objective"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("converged"), std::string::npos);
}

TEST(Cli, IterationCapIsAnOutcomeNotAnError) {
  TempDir dir;
  Train({"--data", HeartScalePath(), "--l1", "0.01", "--max-iter", "3", "--summary-json", dir.File("s.json")});
  const Json summary = Json::parse(ReadTextFile(dir.File("s.json")));
  EXPECT_EQ(summary["termination"], "max_iterations");
  EXPECT_EQ(summary["iterations"], 3);
}

TEST(Cli, AFailedModelWriteLeavesNoFile) {
  TempDir dir;
  const std::string out = dir.File("missing/dir/m.json");
  const CommandResult result = RunNimbus({"train", "--data", HeartScalePath(), "--l1", "0.01", "--out", out});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.err.find("cannot create " + out), std::string::npos) << result.err;
  EXPECT_FALSE(FileExists(out));
}

TEST(Cli, EvalReportsQualityOfAModel) {
  TempDir dir;
  Train({"--data", HeartScalePath(), "--l2", "0.01", "--out", dir.File("m.json")});
  const CommandResult eval = RunNimbus({"eval", "--model", dir.File("m.json"), "--data", HeartScalePath()});
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  for (const char* key : {"accuracy", "log_loss", "auc", "objective"}) {
    EXPECT_NE(eval.out.find(key), std::string::npos) << key;
  }
  // On its own training data an L2 logistic model of heart_scale is well above chance.
  const CommandResult json = RunNimbus({"eval", "--model", dir.File("m.json"), "--data", HeartScalePath(), "--json"});
  EXPECT_GT(std::stod(JsonField(json.out, "accuracy")), 0.8);
  EXPECT_GT(std::stod(JsonField(json.out, "auc")), 0.85);
}

}  // namespace
}  // namespace nimbus::testing
