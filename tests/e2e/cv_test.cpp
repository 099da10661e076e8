// End to end: `nimbus cv`. Its scores at one lambda equal the mean over the folds of separate
// `nimbus train` runs on each fold's training rows, scored by `nimbus eval` on its held-out
// rows (the folds read back from folds.txt); its folds are stratified; its model on all the
// data equals liblinear's; and a grid's best and one-standard-error lambdas follow their rule.
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "e2e_support.h"

namespace nimbus::testing {
namespace {

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

double LabelOf(const std::string& line) { return std::stod(line.substr(0, line.find(' '))); }

nlohmann::json RunCv(const std::vector<std::string>& args) {
  std::vector<std::string> all{"cv", "--json", "--no-plots"};
  all.insert(all.end(), args.begin(), args.end());
  return RunNimbusJson(all);
}

// heart_scale with three classes: -1 stays, +1 splits by the sign of feature 1.
std::string ThreeClassHeart(const TempDir& dir) {
  std::string text;
  for (const std::string& line : Lines(HeartScalePath())) {
    const auto first = line.find(" 1:");
    const bool positive_feature = first != std::string::npos && line[first + 3] != '-';
    const std::string label = LabelOf(line) < 0 ? "1" : positive_feature ? "2" : "3";
    text += label + line.substr(line.find(' ')) + "\n";
  }
  WriteTextFile(dir.File("three.svm"), text);
  return dir.File("three.svm");
}

struct CvCase {
  std::string name, data, runtime, algorithm;
  std::vector<std::string> extra;  // problem flags given to cv and train alike
  double tolerance;                // on the log loss's mean (the solvers' own accuracy)
};

class CvMatchesSeparateRuns : public ::testing::TestWithParam<std::string> {};

TEST_P(CvMatchesSeparateRuns, ScoresAreTheMeanOfTrainAndEvalOnEachFold) {
  TempDir run;
  const std::map<std::string, CvCase> cases = {
      {"binary_threads", {"", HeartScalePath(), "threads", "newton", {"--l1", "0.01"}, 1e-7}},
      {"binary_process_intercept", {"", HeartScalePath(), "process", "newton", {"--l1", "0.01", "--intercept"}, 1e-7}},
      {"binary_admm_l2", {"", HeartScalePath(), "threads", "admm", {"--l2", "0.01"}, 1e-5}},
      {"ovr_process", {"", ThreeClassHeart(run), "process", "newton", {"--l2", "0.003"}, 1e-7}},
      {"multinomial_threads", {"", ThreeClassHeart(run), "threads", "newton",
                               {"--l1", "0.003", "--multiclass", "multinomial"}, 1e-7}},
      // The column method's folds are solved side by side on this process's cores, each its own
      // path; the separate runs it is checked against are Newton's.
      {"binary_columns_intercept", {"", HeartScalePath(), "threads", "columns", {"--l1", "0.01", "--intercept"}, 1e-7}},
      {"binary_columns_elastic_net", {"", HeartScalePath(), "threads", "columns", {"--l1", "0.003", "--l2", "0.01"}, 1e-7}},
  };
  const CvCase& c = cases.at(GetParam());
  const bool tight = c.algorithm != "admm";
  std::vector<std::string> solver{"--algorithm", c.algorithm};
  if (tight) solver.insert(solver.end(), {"--gradient-tolerance", "1e-10"});
  if (!tight) solver.insert(solver.end(), {"--eps-rel", "1e-7", "--eps-abs", "1e-10"});
  std::vector<std::string> train_solver = solver;
  if (c.algorithm == "columns") train_solver[1] = "newton";

  std::vector<std::string> cv{"--data", c.data, "--folds", "4", "--seed", "7", "--runtime", c.runtime, "--workers",
                              "3", "--out", run.File("cv"), "--write-folds"};
  cv.insert(cv.end(), c.extra.begin(), c.extra.end());
  cv.insert(cv.end(), solver.begin(), solver.end());
  const nlohmann::json result = RunCv(cv);
  ASSERT_EQ(result["points"].size(), 1u);
  const nlohmann::json& scores = result["points"][0]["scores"];

  // The same folds, trained and evaluated one at a time.
  const std::vector<std::string> rows = Lines(c.data);
  const std::vector<std::string> folds = Lines(run.File("cv/folds.txt"));
  ASSERT_EQ(folds.size(), rows.size());
  std::map<std::string, double> sums;
  for (int k = 0; k < 4; ++k) {
    std::string train, held_out;
    for (std::size_t r = 0; r < rows.size(); ++r) (std::stoi(folds[r]) == k ? held_out : train) += rows[r] + "\n";
    const std::string fold = run.File("fold" + std::to_string(k));
    WriteTextFile(fold + "-train.svm", train);
    WriteTextFile(fold + "-test.svm", held_out);
    std::vector<std::string> args{"--data", fold + "-train.svm", "--out", fold + ".json", "--workers", "2"};
    args.insert(args.end(), c.extra.begin(), c.extra.end());
    args.insert(args.end(), train_solver.begin(), train_solver.end());
    Train(args);
    const CommandResult eval = RunNimbus({"eval", "--model", fold + ".json", "--data", fold + "-test.svm", "--json"});
    ASSERT_EQ(eval.exit_code, 0) << eval.err;
    for (const char* name : {"accuracy", "log_loss", "auc"}) {
      if (scores.contains(name)) sums[name] += std::stod(JsonField(eval.out, name)) / 4;
    }
  }
  EXPECT_NEAR(scores["accuracy"]["mean"].get<double>(), sums["accuracy"], 1e-12);
  EXPECT_NEAR(scores["log_loss"]["mean"].get<double>(), sums["log_loss"], c.tolerance);
  if (scores.contains("auc")) {
    EXPECT_NEAR(scores["auc"]["mean"].get<double>(), sums["auc"], 1e-12);
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, CvMatchesSeparateRuns,
                         ::testing::Values("binary_threads", "binary_process_intercept", "binary_admm_l2",
                                           "ovr_process", "multinomial_threads", "binary_columns_intercept",
                                           "binary_columns_elastic_net"));

TEST(CvCli, FoldsAreStratifiedAndFollowTheSeed) {
  TempDir run;
  const std::string data = ThreeClassHeart(run);
  for (const char* seed : {"1", "2"}) {
    RunCv({"--data", data, "--folds", "7", "--seed", seed, "--l2", "0.01", "--out", run.File(std::string("s") + seed),
           "--write-folds"});
  }
  const std::vector<std::string> rows = Lines(data);
  const std::vector<std::string> first = Lines(run.File("s1/folds.txt"));
  const std::vector<std::string> second = Lines(run.File("s2/folds.txt"));
  EXPECT_NE(first, second);
  std::map<double, std::map<int, int>> counts;  // label -> fold -> rows
  for (std::size_t r = 0; r < rows.size(); ++r) ++counts[LabelOf(rows[r])][std::stoi(first[r])];
  for (const auto& [label, per_fold] : counts) {
    int least = 1 << 30, most = 0;
    for (int k = 0; k < 7; ++k) {
      const int n = per_fold.count(k) ? per_fold.at(k) : 0;
      least = std::min(least, n);
      most = std::max(most, n);
    }
    EXPECT_LE(most - least, 1) << "label " << label;
  }
  // The same seed gives the same folds.
  RunCv({"--data", data, "--folds", "7", "--seed", "1", "--l2", "0.01", "--out", run.File("again"), "--write-folds"});
  EXPECT_EQ(Lines(run.File("again/folds.txt")), first);
}

// Along a grid: the model on all the data at each lambda is liblinear's, and best and one-SE
// follow from the table.
class CvGrid : public ::testing::TestWithParam<std::string> {};

TEST_P(CvGrid, RefitsOnAllTheDataAndChoosesByTheRule) {
  TempDir run;
  const nlohmann::json result = RunCv({"--data", HeartScalePath(), "--path-length", "6", "--refit", "1se", "--out",
                                       run.File("cv"), "--algorithm", GetParam()});
  ASSERT_EQ(result["points"].size(), 6u);
  EXPECT_EQ(result["metric"], "log_loss");
  std::size_t best = 0;
  for (std::size_t i = 0; i < 6; ++i) {
    const double mean = result["points"][i]["scores"]["log_loss"]["mean"].get<double>();
    if (mean < result["points"][best]["scores"]["log_loss"]["mean"].get<double>()) best = i;
  }
  EXPECT_EQ(result["best"]["point"].get<std::size_t>(), best + 1);
  const nlohmann::json& b = result["points"][best]["scores"]["log_loss"];
  const double bound = b["mean"].get<double>() + b["std"].get<double>() / std::sqrt(5.0);
  std::size_t one_se = best;
  for (std::size_t i = 0; i < best; ++i) {
    if (result["points"][i]["scores"]["log_loss"]["mean"].get<double>() <= bound) {
      one_se = i;
      break;
    }
  }
  EXPECT_EQ(result["one_se"]["point"].get<std::size_t>(), one_se + 1);
  // model.json is the all-data model at the one-SE lambda: liblinear's there.
  const double lambda = result["one_se"]["lambda"].get<double>();
  const std::string reference = TrainLiblinear(6, 1.0 / (270 * lambda), 1e-8, HeartScalePath(), run.File("ll"));
  const double theirs = ObjectiveOf(reference, HeartScalePath(), lambda, 0);
  const double ours = ObjectiveOf(run.File("cv/model.json"), HeartScalePath(), lambda, 0);
  EXPECT_NEAR(ours, theirs, 1e-6 * theirs);
  EXPECT_NEAR(result["points"][one_se]["objective"].get<double>(), ours, 1e-9 * ours);
  for (const char* file : {"cv.txt", "cv.json", "cv.dat", "cv.gp", "model.json"}) {
    EXPECT_TRUE(FileExists(run.File(std::string("cv/") + file))) << file;
  }
  EXPECT_FALSE(FileExists(run.File("cv/folds.txt")));  // only with --write-folds
}

INSTANTIATE_TEST_SUITE_P(Algorithms, CvGrid, ::testing::Values("newton", "columns"));

// auto: an l1 grid on threads is the column method's (docs/benchmarks.md, "Cross-validation by
// columns"); an l2 grid, another runtime, or a multiclass data set (after a second reading of
// it) Newton's.
TEST(CvCli, AutoCrossValidatesAnL1GridOnThreadsByColumns) {
  TempDir run;
  const auto solved_by = [&](const std::vector<std::string>& args) {
    std::vector<std::string> all{"cv", "--path-length", "3", "--no-plots", "--out", run.File("cv")};
    all.insert(all.end(), args.begin(), args.end());
    const CommandResult result = RunNimbus(all);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    const std::size_t at = result.out.find("solved by ");
    return at == std::string::npos ? result.out : result.out.substr(at + 10, result.out.find(' ', at + 10) - at - 10);
  };
  EXPECT_EQ(solved_by({"--data", HeartScalePath()}), "columns");
  EXPECT_EQ(solved_by({"--data", HeartScalePath(), "--penalty", "l2"}), "newton");
  EXPECT_EQ(solved_by({"--data", HeartScalePath(), "--runtime", "process", "--workers", "2"}), "newton");
  EXPECT_EQ(solved_by({"--data", ThreeClassHeart(run)}), "newton");
  const nlohmann::json three = RunCv({"--data", ThreeClassHeart(run), "--path-length", "3", "--out", run.File("three")});
  EXPECT_EQ(three["points"].size(), 3u);
  EXPECT_EQ(three["algorithm"], "newton");
  const nlohmann::json binary = RunCv({"--data", HeartScalePath(), "--path-length", "3", "--out", run.File("binary")});
  EXPECT_EQ(binary["algorithm"], "columns");
  EXPECT_NE(binary["algorithm_reason"].get<std::string>().find("auto: cross-validation along an l1 grid"),
            std::string::npos);
}

TEST(CvCli, BadInputIsNamed) {
  TempDir run;
  const std::string three = ThreeClassHeart(run);
  // (A directory of LIBSVM files is text to read; one with a manifest, a store of shards.)
  const std::string store = run.File("store");
  ASSERT_EQ(RunNimbus({"split", "--data", HeartScalePath(), "--shards", "2", "--out", store}).exit_code, 0);
  ExpectRefused({"cv", "--out", run.File("out")}, {
      {{"--data", HeartScalePath(), "--folds", "1"}, "--folds: must be in [2, 100]"},
      {{"--data", HeartScalePath(), "--folds", "300"}, "--folds: must be in [2, 100]"},
      {{"--data", three, "--metric", "auc"}, "--metric auc: for two classes only"},
      {{"--data", HeartScalePath(), "--metric", "mse"}, "--metric mse: the data is a classifier's"},
      {{"--data", HeartScalePath(), "--metric", "f1"}, "--metric: 'f1' is not log_loss, accuracy, auc or mse"},
      {{"--data", HeartScalePath(), "--refit", "worst"}, "--refit: 'worst' is not best or 1se"},
      {{"--data", store}, "not the store"},
                });
}

}  // namespace
}  // namespace nimbus::testing
