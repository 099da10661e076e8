// End to end: multiclass data. One-vs-rest is checked against liblinear, which trains it on
// multiclass files without a flag: every class's own binary objective, computed here from the
// data and each model's weights, and the predictions liblinear-predict makes with either
// model. The labels are unsorted values in an order liblinear keeps (first appearance), so a
// mixed-up class is caught. Softmax is checked against scikit-learn (tests/weights).
#include <cmath>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "e2e_support.h"

namespace nimbus::testing {
namespace {

constexpr int kRows = 600, kTestRows = 300, kCols = 30, kClasses = 4;
const double kLabels[kClasses] = {3, -2, 7, 1};  // the first row is class 3, not the smallest

struct Rows {
  std::vector<std::vector<std::pair<int, double>>> features;  // 0-based
  std::vector<int> classes;                                   // index into kLabels
};

// Sparse rows whose class is the argmax of a planted linear model plus noise.
Rows WriteMulticlass(const std::string& path, int rows, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::mt19937_64 planted_rng(99);  // the same classes for the training and the test file
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<double> planted(kCols * kClasses);
  for (double& w : planted) w = 2 * normal(planted_rng);
  Rows out;
  std::ofstream file(path);
  for (int r = 0; r < rows; ++r) {
    std::vector<std::pair<int, double>> row;
    for (int j = 0; j < kCols; ++j) {
      if (uniform(rng) < 0.3) row.emplace_back(j, std::round(uniform(rng) * 1000) / 1000 + 0.001);
    }
    int best = 0;
    double best_score = -1e300;
    for (int c = 0; c < kClasses; ++c) {
      double score = normal(rng);
      for (const auto& [j, v] : row) score += v * planted[j * kClasses + c];
      if (score > best_score) best_score = score, best = c;
    }
    if (r == 0) best = 0;
    file << kLabels[best];
    for (const auto& [j, v] : row) file << " " << j + 1 << ":" << v;
    file << "\n";
    out.features.push_back(row);
    out.classes.push_back(best);
  }
  return out;
}

// Class c's binary problem at the model's weights, computed here: (1/N) sum_r W log(1 +
// exp(-y m)) + l1 |w_c|_1 + l2/2 |w_c|^2, y = +1 on class c's rows (weighing W = the class's
// weight) and -1 elsewhere (weighing 1), as liblinear's -wi defines it.
double ClassObjective(const Model& model, const Rows& rows, int c, double l1, double l2, double class_weight = 1) {
  const auto column = static_cast<int64_t>(std::find(model.labels.classes.begin(), model.labels.classes.end(), kLabels[c]) -
                                           model.labels.classes.begin());
  double loss = 0;
  for (std::size_t r = 0; r < rows.classes.size(); ++r) {
    double m = model.bias(column);
    for (const auto& [j, v] : rows.features[r]) m += v * model.Weight(j, column);
    const double y = rows.classes[r] == c ? 1.0 : -1.0;
    loss += (y > 0 ? class_weight : 1.0) * std::log1p(std::exp(-y * m));
  }
  double penalty = 0;
  for (int j = 0; j < kCols; ++j) {
    const double w = model.Weight(j, column);
    penalty += l1 * std::abs(w) + 0.5 * l2 * w * w;
  }
  return loss / static_cast<double>(rows.classes.size()) + penalty;
}

Model ReadOk(const std::string& path) {
  Result<Model> model = ReadModel(path);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return model.ok() ? std::move(model).value() : Model{};
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The rows of `rows` where the two largest decision values of `model` differ by 1e-6 or less.
std::vector<bool> NearTies(const Model& model, const Rows& rows) {
  std::vector<bool> ties;
  for (std::size_t r = 0; r < rows.classes.size(); ++r) {
    std::vector<double> m(kClasses);
    for (int c = 0; c < kClasses; ++c) {
      m[c] = model.bias(c);
      for (const auto& [j, v] : rows.features[r]) m[c] += v * model.Weight(j, c);
    }
    std::sort(m.rbegin(), m.rend());
    ties.push_back(m[0] - m[1] <= 1e-6);
  }
  return ties;
}

struct OvrCase {
  const char* name;
  int solver;  // liblinear -s: 6 (L1) or 0 (L2)
  std::vector<std::string> nimbus_args;
};

class OneVsRest : public ::testing::TestWithParam<OvrCase> {};

TEST_P(OneVsRest, EveryClassReachesLiblinearsObjectiveAndPredictsAsLiblinear) {
  const OvrCase& param = GetParam();
  TempDir dir;
  const Rows train = WriteMulticlass(dir.File("train.svm"), kRows, 1);
  const Rows test = WriteMulticlass(dir.File("test.svm"), kTestRows, 2);
  const double c = 2.0, lambda = 1.0 / (c * kRows);
  const bool l1 = param.solver == 6;
  const CommandResult liblinear = RunCommand({"liblinear-train", "-s", std::to_string(param.solver), "-c", Number(c),
                                              "-e", "1e-10", "-q", dir.File("train.svm"), dir.File("liblinear.model")});
  ASSERT_EQ(liblinear.exit_code, 0) << liblinear.err;
  std::vector<std::string> args = {"--data", dir.File("train.svm"), l1 ? "--l1" : "--l2", Number(lambda),
                                   "--model-format", "liblinear", "--out", dir.File("nimbus.model")};
  args.insert(args.end(), param.nimbus_args.begin(), param.nimbus_args.end());
  Train(args);
  const Model ours = ReadOk(dir.File("nimbus.model")), theirs = ReadOk(dir.File("liblinear.model"));
  ASSERT_EQ(ours.classes, kClasses);
  // nimbus eval reports each class's objective, in ascending order of label.
  const CommandResult eval = RunNimbus({"eval", "--model", dir.File("nimbus.model"), "--data", dir.File("train.svm"),
                                        l1 ? "--l1" : "--l2", Number(lambda), "--json"});
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  const std::string reported = eval.out.substr(eval.out.find("\"class_objectives\":[") + 20);
  const int sorted_class[kClasses] = {1, 3, 0, 2};  // kLabels' positions of -2, 1, 3, 7
  std::istringstream values(reported);
  for (int k = 0; k < kClasses; ++k) {
    SCOPED_TRACE("class " + Number(kLabels[sorted_class[k]]));
    const double f_ours = ClassObjective(ours, train, sorted_class[k], l1 ? lambda : 0, l1 ? 0 : lambda);
    const double f_theirs = ClassObjective(theirs, train, sorted_class[k], l1 ? lambda : 0, l1 ? 0 : lambda);
    EXPECT_NEAR(f_ours, f_theirs, 1e-5 * f_theirs);
    double f_reported = 0;
    char separator = 0;
    values >> f_reported >> separator;
    EXPECT_NEAR(f_reported, f_ours, 1e-12 * f_ours);
  }
  // liblinear-predict reads nimbus's model and predicts what it predicts with its own.
  const CommandResult with_ours = RunCommand({"liblinear-predict", "-q", dir.File("test.svm"), dir.File("nimbus.model"),
                                              dir.File("ours.out")});
  const CommandResult with_theirs = RunCommand({"liblinear-predict", "-q", dir.File("test.svm"),
                                                dir.File("liblinear.model"), dir.File("theirs.out")});
  ASSERT_EQ(with_ours.exit_code, 0) << with_ours.err;
  ASSERT_EQ(with_theirs.exit_code, 0) << with_theirs.err;
  const std::vector<std::string> a = Lines(ReadTextFile(dir.File("ours.out")));
  const std::vector<std::string> b = Lines(ReadTextFile(dir.File("theirs.out")));
  const CommandResult predicted = RunNimbus({"predict", "--model", dir.File("nimbus.model"), "--data", dir.File("test.svm")});
  ASSERT_EQ(predicted.exit_code, 0) << predicted.err;
  const std::vector<std::string> nimbus_predict = Lines(predicted.out);
  ASSERT_EQ(a.size(), static_cast<std::size_t>(kTestRows));
  ASSERT_EQ(b.size(), a.size());
  ASSERT_EQ(nimbus_predict.size(), a.size());
  const std::vector<bool> ties = NearTies(theirs, test);
  int compared = 0;
  for (std::size_t r = 0; r < a.size(); ++r) {
    EXPECT_EQ(nimbus_predict[r], a[r]) << "row " << r;
    if (ties[r]) continue;
    EXPECT_EQ(a[r], b[r]) << "row " << r;
    ++compared;
  }
  EXPECT_GT(compared, kTestRows * 9 / 10);
}

INSTANTIATE_TEST_SUITE_P(
    Runtimes, OneVsRest,
    ::testing::Values(OvrCase{"l1_newton_threads", 6, {"--gradient-tolerance", "1e-10", "--workers", "2"}},
                      OvrCase{"l2_newton_process", 0, {"--gradient-tolerance", "1e-10", "--workers", "3", "--runtime",
                                                      "process"}},
                      OvrCase{"l1_admm_process", 6, {"--algorithm", "admm", "--eps-rel", "1e-6", "--eps-abs", "1e-9",
                                                     "--workers", "2", "--runtime", "process"}},
                      OvrCase{"l1_columns", 6, {"--algorithm", "columns", "--gradient-tolerance", "1e-10", "--workers",
                                                "2"}},
                      OvrCase{"l2_columns", 0, {"--algorithm", "columns", "--gradient-tolerance", "1e-10"}}),
    [](const ::testing::TestParamInfo<OvrCase>& info) { return info.param.name; });

// liblinear's -wi on multiclass data: class i's rows count W_i in class i's own problem.
TEST(MulticlassWeights, ClassWeightsMatchLiblinearsWi) {
  TempDir dir;
  const Rows train = WriteMulticlass(dir.File("train.svm"), kRows, 3);
  const double c = 1.0, lambda = 1.0 / (c * kRows);
  const CommandResult liblinear = RunCommand({"liblinear-train", "-s", "6", "-c", Number(c), "-e", "1e-10", "-w7", "4",
                                              "-w-2", "0.25", "-q", dir.File("train.svm"), dir.File("liblinear.model")});
  ASSERT_EQ(liblinear.exit_code, 0) << liblinear.err;
  Train({"--data", dir.File("train.svm"), "--l1", Number(lambda), "--class-weight", "7=4,-2=0.25",
         "--gradient-tolerance", "1e-10", "--out", dir.File("nimbus.json")});
  const Model ours = ReadOk(dir.File("nimbus.json")), theirs = ReadOk(dir.File("liblinear.model"));
  const double weights[kClasses] = {1, 0.25, 4, 1};
  for (int k = 0; k < kClasses; ++k) {
    SCOPED_TRACE("class " + Number(kLabels[k]));
    const double f_theirs = ClassObjective(theirs, train, k, lambda, 0, weights[k]);
    EXPECT_NEAR(ClassObjective(ours, train, k, lambda, 0, weights[k]), f_theirs, 1e-5 * f_theirs);
  }
}

// Softmax on two classes is logistic regression: with L2 l on both vectors the optimum has
// w_0 = -w_1, and w = w_1 - w_0 minimizes the logistic loss with L2 l / 2. The liblinear file
// of a two-class softmax model holds that w.
TEST(MulticlassSoftmax, TwoClassesAreLogisticRegressionAtHalfTheL2) {
  TempDir dir;
  Train({"--data", HeartScalePath(), "--l2", "0.02", "--multiclass", "multinomial", "--gradient-tolerance", "1e-11",
         "--model-format", "liblinear", "--out", dir.File("softmax.model")});
  Train({"--data", HeartScalePath(), "--l2", "0.01", "--gradient-tolerance", "1e-11", "--model-format", "liblinear",
         "--out", dir.File("logistic.model")});
  const Model softmax = ReadOk(dir.File("softmax.model")), logistic = ReadOk(dir.File("logistic.model"));
  ASSERT_EQ(softmax.classes, 1);  // written as liblinear's one vector
  ASSERT_EQ(softmax.cols, logistic.cols);
  for (int64_t j = 0; j < logistic.cols; ++j) EXPECT_NEAR(softmax.Weight(j), logistic.Weight(j), 1e-6) << j;
}

// A multiclass store: nimbus split keeps the classes (the shards hold class indices, the
// manifest their values), and process workers that load the shards themselves give the
// model trained from the file, softmax and one-vs-rest alike.
TEST(MulticlassStore, TrainsAsTheFileDoes) {
  TempDir dir;
  WriteMulticlass(dir.File("train.svm"), kRows, 6);
  const CommandResult split = RunNimbus({"split", "--data", dir.File("train.svm"), "--shards", "3", "--out", dir.File("store")});
  ASSERT_EQ(split.exit_code, 0) << split.err;
  EXPECT_NE(split.out.find("4 classes -2 .. 7"), std::string::npos) << split.out;
  for (const char* method : {"ovr", "multinomial"}) {
    SCOPED_TRACE(method);
    const std::vector<std::string> common = {"--l2", "0.003", "--multiclass", method, "--gradient-tolerance", "1e-10"};
    std::vector<std::string> from_file = {"--data", dir.File("train.svm"), "--workers", "3", "--out", dir.File("file.json")};
    std::vector<std::string> from_store = {"--data", dir.File("store"), "--runtime", "process", "--out", dir.File("store.json")};
    from_file.insert(from_file.end(), common.begin(), common.end());
    from_store.insert(from_store.end(), common.begin(), common.end());
    Train(from_file);
    Train(from_store);
    const Model a = ReadOk(dir.File("file.json")), b = ReadOk(dir.File("store.json"));
    ASSERT_EQ(a.classes, kClasses);
    ASSERT_EQ(b.classes, kClasses);
    EXPECT_EQ(b.labels.classes, (std::vector<double>{-2, 1, 3, 7}));
    for (int j = 0; j < kCols; ++j) {
      for (int c = 0; c < kClasses; ++c) EXPECT_NEAR(a.Weight(j, c), b.Weight(j, c), 1e-6) << j << " " << c;
    }
  }
}

// eval on a multiclass model: the confusion matrix and per-class figures, counted here from
// nimbus predict's labels; a test file may hold some of the classes, and no other.
TEST(MulticlassEval, CountsTheConfusionMatrix) {
  TempDir dir;
  WriteMulticlass(dir.File("train.svm"), kRows, 4);
  const Rows test = WriteMulticlass(dir.File("test.svm"), kTestRows, 5);
  Train({"--data", dir.File("train.svm"), "--l2", "0.01", "--multiclass", "multinomial", "--out", dir.File("m.json")});
  const CommandResult predicted = RunNimbus({"predict", "--model", dir.File("m.json"), "--data", dir.File("test.svm")});
  ASSERT_EQ(predicted.exit_code, 0) << predicted.err;
  const std::vector<std::string> labels = Lines(predicted.out);
  ASSERT_EQ(labels.size(), static_cast<std::size_t>(kTestRows));
  std::map<double, std::map<double, int>> confusion;
  int correct = 0;
  for (std::size_t r = 0; r < labels.size(); ++r) {
    const double truth = kLabels[test.classes[r]], guess = std::stod(labels[r]);
    ++confusion[truth][guess];
    correct += truth == guess;
  }
  const CommandResult eval = RunNimbus({"eval", "--model", dir.File("m.json"), "--data", dir.File("test.svm"), "--json"});
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  EXPECT_NEAR(std::stod(JsonField(eval.out, "accuracy")), static_cast<double>(correct) / kTestRows, 1e-12);
  std::string expected = "[";
  const double sorted[kClasses] = {-2, 1, 3, 7};
  for (int t = 0; t < kClasses; ++t) {
    expected += t > 0 ? ",[" : "[";
    for (int p = 0; p < kClasses; ++p) expected += (p > 0 ? "," : "") + std::to_string(confusion[sorted[t]][sorted[p]]);
    expected += "]";
  }
  EXPECT_NE(eval.out.find("\"confusion\":" + expected + "]"), std::string::npos) << eval.out << "\nexpected " << expected;
  // A label the model does not know is named with its line.
  WriteTextFile(dir.File("other.svm"), "3 1:1\n5 1:1\n");
  const CommandResult other = RunNimbus({"eval", "--model", dir.File("m.json"), "--data", dir.File("other.svm")});
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.err.find("other.svm:2: label '5' is not one of the model's 4 classes -2 .. 7"), std::string::npos)
      << other.err;
}

}  // namespace
}  // namespace nimbus::testing
