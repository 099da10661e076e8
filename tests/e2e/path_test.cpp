// End to end: `nimbus path` on liblinear's example. lambda_max is checked against the gradient
// computed here from the data (at zero, and at the intercept's own optimum), every point's
// model against liblinear at that lambda (C = 1/(N lambda)), the grid against its formula,
// and the validation scores against predictions made here from the point's model file.
#include <cmath>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "e2e_support.h"
#include "nimbus/core/format.h"

namespace nimbus::testing {
namespace {

struct Rows {
  std::vector<double> labels;
  std::vector<std::vector<std::pair<int, double>>> features;  // 0-based
  int cols = 0;
};

// heart_scale read here, independently of nimbus's reader.
Rows ReadHeart() {
  Rows rows;
  std::ifstream in(HeartScalePath());
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    double label = 0;
    fields >> label;
    rows.labels.push_back(label);
    rows.features.emplace_back();
    std::string item;
    while (fields >> item) {
      const int index = std::stoi(item.substr(0, item.find(':'))) - 1;
      rows.features.back().emplace_back(index, std::stod(item.substr(item.find(':') + 1)));
      rows.cols = std::max(rows.cols, index + 1);
    }
  }
  return rows;
}

// The smallest l1 whose logistic model is zero: max_j |(1/N) sum_r a_rj (p - [y_r = +1])|, where
// p = sigma(b) is the model's probability of +1 at the weights' zero: 1/2 without an intercept,
// the share of +1 rows with the intercept at its optimum b = log(n+ / n-).
double LambdaMaxOf(const Rows& rows, bool intercept) {
  const double n = static_cast<double>(rows.labels.size());
  double positives = 0;
  for (const double y : rows.labels) positives += y > 0 ? 1 : 0;
  const double p = intercept ? positives / n : 0.5;
  std::vector<double> g(static_cast<std::size_t>(rows.cols), 0.0);
  for (std::size_t r = 0; r < rows.labels.size(); ++r) {
    for (const auto& [j, a] : rows.features[r]) g[j] += a * (p - (rows.labels[r] > 0 ? 1.0 : 0.0)) / n;
  }
  double largest = 0;
  for (const double v : g) largest = std::max(largest, std::abs(v));
  return largest;
}

nlohmann::json RunPath(const std::vector<std::string>& args) {
  std::vector<std::string> all{"path", "--data", HeartScalePath(), "--json", "--no-plots"};
  all.insert(all.end(), args.begin(), args.end());
  return RunNimbusJson(all);
}

// Distributed Newton (the default) and the column method (its strong rules and KKT check).
class L1Path : public ::testing::TestWithParam<const char*> {};

TEST_P(L1Path, MatchesLiblinearAtEveryPoint) {
  TempDir run;
  const nlohmann::json path = RunPath({"--path-length", "6", "--workers", "2", "--algorithm", GetParam(), "--models",
                                       "--validation", HeartScalePath(), "--out", run.path()});
  const Rows rows = ReadHeart();
  const double lambda_max = LambdaMaxOf(rows, false);
  EXPECT_NEAR(path["lambda_max"].get<double>(), lambda_max, 1e-12 * lambda_max);
  ASSERT_EQ(path["points"].size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) {
    const nlohmann::json& point = path["points"][i];
    const double lambda = point["lambda"].get<double>();
    EXPECT_NEAR(lambda, lambda_max * std::pow(1e-3, static_cast<double>(i) / 5), 1e-12 * lambda_max);
    const std::string model = Format("%s/models/point-%02zu.json", run.path().c_str(), i + 1);
    const std::string reference = TrainLiblinear(6, 1.0 / (270 * lambda), 1e-8, HeartScalePath(),
                                                 run.File("liblinear-" + std::to_string(i)));
    const double ours = ObjectiveOf(model, HeartScalePath(), lambda, 0);
    const double theirs = ObjectiveOf(reference, HeartScalePath(), lambda, 0);
    EXPECT_NEAR(ours, theirs, 1e-6 * theirs) << "point " << i << ": lambda " << lambda;
    EXPECT_NEAR(point["objective"].get<double>(), ours, 1e-9 * ours);

    // The validation accuracy: the share of rows whose sign(a . w) is the label's.
    Result<Model> read = ReadModel(model);
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    int64_t correct = 0, nonzeros = 0;
    for (int j = 0; j < rows.cols; ++j) nonzeros += read->Weight(j) != 0 ? 1 : 0;
    for (std::size_t r = 0; r < rows.labels.size(); ++r) {
      double margin = 0;
      for (const auto& [j, a] : rows.features[r]) margin += a * read->Weight(j);
      correct += (margin > 0 ? 1.0 : -1.0) == rows.labels[r] ? 1 : 0;
    }
    EXPECT_EQ(point["nonzeros"].get<int64_t>(), nonzeros) << "point " << i;
    EXPECT_NEAR(point["validation"]["accuracy"].get<double>(), static_cast<double>(correct) / 270, 1e-12);
  }
  EXPECT_EQ(path["points"][0]["nonzeros"].get<int64_t>(), 0);  // lambda_max's model is zero
  EXPECT_GT(path["points"][1]["nonzeros"].get<int64_t>(), 0);
  for (const char* file : {"path.txt", "path.json", "path.dat", "path.gp"}) {
    EXPECT_TRUE(FileExists(run.File(file))) << file;
  }
}

INSTANTIATE_TEST_SUITE_P(Algorithms, L1Path, ::testing::Values("auto", "columns"));

// With an intercept the path starts at the intercept's own optimum; each point equals a cold
// `nimbus train` at its lambda, on worker processes (whose shards stay loaded from point to point)
// and by the column method.
// The column method's path starts there too, on one block or three.
class InterceptPath : public ::testing::TestWithParam<std::vector<std::string>> {};

TEST_P(InterceptPath, StartsAtTheInterceptOptimum) {
  TempDir run;
  std::vector<std::string> args = {"--intercept", "--path-length", "4", "--path-min-ratio", "0.01", "--out",
                                   run.path()};
  args.insert(args.end(), GetParam().begin(), GetParam().end());
  const nlohmann::json path = RunPath(args);
  const double lambda_max = LambdaMaxOf(ReadHeart(), true);
  EXPECT_NEAR(path["lambda_max"].get<double>(), lambda_max, 1e-7 * lambda_max);
  ASSERT_EQ(path["points"].size(), 4u);
  EXPECT_EQ(path["points"][0]["nonzeros"].get<int64_t>(), 0);
  for (std::size_t i = 1; i < 4; ++i) {
    const double lambda = path["points"][i]["lambda"].get<double>();
    const std::string model = run.File("cold-" + std::to_string(i) + ".json");
    Train({"--data", HeartScalePath(), "--intercept", "--l1", Number(lambda), "--gradient-tolerance", "1e-8",
           "--out", model});
    const double cold = ObjectiveOf(model, HeartScalePath(), lambda, 0);
    EXPECT_NEAR(path["points"][i]["objective"].get<double>(), cold, 1e-7 * cold) << "point " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Algorithms, InterceptPath,
    ::testing::Values(std::vector<std::string>{"--runtime", "process", "--workers", "3"},
                      std::vector<std::string>{"--algorithm", "columns"},
                      std::vector<std::string>{"--algorithm", "columns", "--workers", "3"}));

// A ridge path over a grid of the caller's, with ADMM: each point against liblinear -s 0.
TEST(PathCli, L2GridWithAdmmMatchesLiblinear) {
  TempDir run;
  const nlohmann::json path = RunPath({"--penalty", "l2", "--lambdas", "1e-3,0.1,1e-2", "--algorithm", "admm",
                                       "--eps-rel", "1e-5", "--models", "--out", run.path()});
  ASSERT_EQ(path["points"].size(), 3u);
  const double expected[] = {0.1, 1e-2, 1e-3};  // largest first
  for (std::size_t i = 0; i < 3; ++i) {
    const double lambda = path["points"][i]["lambda"].get<double>();
    EXPECT_EQ(lambda, expected[i]);
    const std::string reference = TrainLiblinear(0, 1.0 / (270 * lambda), 1e-8, HeartScalePath(),
                                                 run.File("liblinear-" + std::to_string(i)));
    const std::string model = Format("%s/models/point-%02zu.json", run.path().c_str(), i + 1);
    const double ours = ObjectiveOf(model, HeartScalePath(), 0, lambda);
    const double theirs = ObjectiveOf(reference, HeartScalePath(), 0, lambda);
    EXPECT_NEAR(ours, theirs, 1e-6 * theirs) << "lambda " << lambda;
  }
}

TEST(PathCli, BadInputIsNamed) {
  TempDir run;
  const std::string odd = run.File("odd.svm");
  WriteTextFile(odd, "1 1:0.5\n-1 2:0.5\n3 1:0.1\n");
  ExpectRefused({"path", "--data", HeartScalePath(), "--out", run.File("out")}, {
      {{"--l1", "0.1"}, "--l1: the path varies it"},
      {{"--penalty", "l3"}, "--penalty: 'l3' is not l1 or l2"},
      {{"--lambdas", "0.1,-2"}, "--lambdas: -2 is not a finite number > 0"},
      {{"--lambdas", "0.1,x"}, "--lambdas: 'x' is not a number"},
      {{"--path-min-ratio", "2"}, "--path-min-ratio: must be in (0, 1)"},
      {{"--validation", odd}, odd + ":3"},
                });
}

}  // namespace
}  // namespace nimbus::testing
