// End to end: class weights and the rows' own weights. F = (1/N) sum_r W_class s_r loss_r + g(x)
// is checked against liblinear, the independent reference: its -wi class weights directly, and
// rows' own integer weights as the same rows repeated (a row of weight 3 written three times,
// which liblinear solves with no notion of weights). Bad weights are named by file and line.
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "e2e_support.h"

namespace nimbus::testing {
namespace {

constexpr double kRows = 270;  // heart_scale

// F with class and row weights of a model file (either format) on heart_scale, computed here.
double WeightedObjective(const std::string& model_path, double l1, double l2, std::vector<double> class_weights,
                         std::span<const double> sample_weights = {}) {
  Result<Model> model = ReadModel(model_path);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  Result<Dataset> data = ReadLibsvmFile(HeartScalePath());
  EXPECT_TRUE(data.ok()) << data.status().ToString();
  if (!model.ok() || !data.ok()) return 0;
  model->regularizer = Regularizer(l1, l2);
  ProblemSpec spec = model->Spec(data->rows(), data->cols());
  spec.class_weights = std::move(class_weights);
  return EvaluateObjective(spec, data->matrix, data->labels, model->WeightsFor(data->cols()), sample_weights);
}

TEST(ClassWeights, ReachLiblinearsOptimumWithItsWi) {
  for (const auto& [solver, algorithm] : std::vector<std::pair<int, std::string>>{
                                          {6, "auto"}, {0, "auto"}, {6, "columns"}, {0, "columns"}}) {
    SCOPED_TRACE("liblinear -s " + std::to_string(solver) + ", --algorithm " + algorithm);
    TempDir dir;
    const double c = 1.0;
    const CommandResult liblinear = RunCommand({"liblinear-train", "-s", std::to_string(solver), "-c", Number(c), "-e",
                                                "1e-10", "-w1", "3", "-w-1", "0.5", "-q", HeartScalePath(),
                                                dir.File("liblinear.model")});
    ASSERT_EQ(liblinear.exit_code, 0) << liblinear.err;
    const double lambda = 1.0 / (c * kRows);
    const bool l1 = solver == 6;
    Train({"--data", HeartScalePath(), l1 ? "--l1" : "--l2", Number(lambda), "--class-weight", "1=3,-1=0.5",
           "--gradient-tolerance", "1e-10", "--workers", "2", "--algorithm", algorithm, "--out",
           dir.File("nimbus.json")});
    const std::vector<double> weights = {0.5, 3};  // the -1 class, the +1 class
    const double ours = WeightedObjective(dir.File("nimbus.json"), l1 ? lambda : 0, l1 ? 0 : lambda, weights);
    const double theirs = WeightedObjective(dir.File("liblinear.model"), l1 ? lambda : 0, l1 ? 0 : lambda, weights);
    EXPECT_NEAR(ours, theirs, 1e-5 * theirs);
    // The weights matter here: the unweighted optimum is measurably worse under the weights.
    Train({"--data", HeartScalePath(), l1 ? "--l1" : "--l2", Number(lambda), "--out", dir.File("unweighted.json")});
    EXPECT_GT(WeightedObjective(dir.File("unweighted.json"), l1 ? lambda : 0, l1 ? 0 : lambda, weights),
              theirs * (1 + 1e-3));
  }
}

// heart_scale's rows with weights 0, 1, 2 or 3, as a weights file and as a LIBSVM file with each
// row written that many times.
struct RepeatedRows {
  std::vector<double> weights;
  std::string weights_file, repeated_file;
};
RepeatedRows WriteRepeatedRows(const TempDir& dir) {
  RepeatedRows out{{}, dir.File("weights.txt"), dir.File("repeated.svm")};
  std::ifstream in(HeartScalePath());
  std::ofstream weights(out.weights_file), repeated(out.repeated_file);
  int row = 0;
  for (std::string line; std::getline(in, line); ++row) {
    const int weight = (row * 7 + 3) % 4;
    out.weights.push_back(weight);
    weights << weight << "\n";
    for (int copy = 0; copy < weight; ++copy) repeated << line << "\n";
  }
  return out;
}

TEST(SampleWeights, EqualRowsRepeatedAsLiblinearSolvesThem) {
  TempDir dir;
  const RepeatedRows rows = WriteRepeatedRows(dir);
  // liblinear on the repeated rows minimizes ||w||_1 + C sum over copies = C N (F_weighted) with
  // l1 = 1/(C N), N the rows of heart_scale.
  const double c = 0.5;
  const double lambda = 1.0 / (c * kRows);
  const CommandResult liblinear = RunCommand({"liblinear-train", "-s", "6", "-c", Number(c), "-e", "1e-10", "-q",
                                              rows.repeated_file, dir.File("liblinear.model")});
  ASSERT_EQ(liblinear.exit_code, 0) << liblinear.err;
  const double theirs = WeightedObjective(dir.File("liblinear.model"), lambda, 0, {}, rows.weights);
  for (const auto& [runtime, algorithm] : std::vector<std::pair<std::string, std::string>>{
                                            {"threads", "auto"}, {"process", "auto"}, {"threads", "columns"}}) {
    SCOPED_TRACE(runtime + ", --algorithm " + algorithm);
    Train({"--data", HeartScalePath(), "--sample-weights", rows.weights_file, "--l1", Number(lambda), "--runtime",
           runtime, "--workers", "3", "--algorithm", algorithm, "--gradient-tolerance", "1e-10", "--out",
           dir.File("nimbus.json")});
    const double ours = WeightedObjective(dir.File("nimbus.json"), lambda, 0, {}, rows.weights);
    EXPECT_NEAR(ours, theirs, 1e-5 * theirs);
  }
}

TEST(SampleWeights, TravelInTheShardsOfAStore) {
  TempDir dir;
  const RepeatedRows rows = WriteRepeatedRows(dir);
  const CommandResult split = RunNimbus({"split", "--data", HeartScalePath(), "--sample-weights", rows.weights_file,
                                         "--shards", "2", "--out", dir.File("store")});
  ASSERT_EQ(split.exit_code, 0) << split.err;
  const double lambda = 0.01;
  Train({"--data", HeartScalePath(), "--sample-weights", rows.weights_file, "--class-weight", "-1=2", "--l1",
         Number(lambda), "--workers", "2", "--gradient-tolerance", "1e-10", "--out", dir.File("file.json")});
  Train({"--data", dir.File("store"), "--class-weight", "-1=2", "--l1", Number(lambda), "--runtime", "process",
         "--gradient-tolerance", "1e-10", "--out", dir.File("store.json")});
  const std::vector<double> weights = {2, 1};
  const double from_file = WeightedObjective(dir.File("file.json"), lambda, 0, weights, rows.weights);
  const double from_store = WeightedObjective(dir.File("store.json"), lambda, 0, weights, rows.weights);
  EXPECT_NEAR(from_store, from_file, 1e-9 * from_file);
  // Without its weights the store's answer would differ.
  Train({"--data", HeartScalePath(), "--l1", Number(lambda), "--out", dir.File("plain.json")});
  EXPECT_GT(WeightedObjective(dir.File("plain.json"), lambda, 0, weights, rows.weights), from_file * (1 + 1e-3));
}

// nimbus train on heart_scale with these extra arguments: it must fail, and say `message`.
void ExpectRefused(std::vector<std::string> args, const std::string& message) {
  std::vector<std::string> all = {"train", "--data", HeartScalePath(), "--quiet"};
  all.insert(all.end(), args.begin(), args.end());
  const CommandResult result = RunNimbus(all);
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.err.find(message), std::string::npos) << "expected '" << message << "' in: " << result.err;
}

TEST(Weights, BadWeightsAreNamed) {
  TempDir dir;
  auto file = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir.File(name)) << text;
    return dir.File(name);
  };
  std::string ones;
  for (int r = 0; r < 270; ++r) ones += "1\n";
  ExpectRefused({"--class-weight", "2=5"}, "--class-weight: label 2 does not occur in");
  ExpectRefused({"--class-weight", "1=-3"}, "--class-weight: the weight of label 1 must be a finite number >= 0");
  ExpectRefused({"--class-weight", "1:3"}, "--class-weight: '1:3' is not LABEL=WEIGHT");
  ExpectRefused({"--sample-weights", file("short.txt", "1\n2\n")}, "short.txt: 2 weights for the data's 270 rows");
  ExpectRefused({"--sample-weights", file("long.txt", ones + "1\n")}, "long.txt:271: more weights than the data's 270");
  ExpectRefused({"--sample-weights", file("negative.txt", "1\n-2\n" + ones)}, "negative.txt:2: the weight must be");
  ExpectRefused({"--sample-weights", file("nan.txt", "nan\n" + ones)}, "nan.txt:1: the weight must be");
  ExpectRefused({"--sample-weights", file("text.txt", "1\nheavy\n" + ones)}, "text.txt:2: 'heavy' is not a number");
  ExpectRefused({"--sample-weights", dir.File("missing.txt")}, "missing.txt: cannot open");
  std::string zeros;
  for (int r = 0; r < 270; ++r) zeros += "0\n";
  ExpectRefused({"--sample-weights", file("zeros.txt", zeros)}, "zeros.txt: every weight is 0, so no row counts");
  // And when split writes them into shards.
  const CommandResult split_zeros = RunNimbus({"split", "--data", HeartScalePath(), "--shards", "2", "--sample-weights",
                                               dir.File("zeros.txt"), "--out", dir.File("zero-store")});
  EXPECT_EQ(split_zeros.exit_code, 2) << split_zeros.err;
  EXPECT_NE(split_zeros.err.find("zeros.txt: every weight is 0"), std::string::npos) << split_zeros.err;
  // nimbus eval's weighted objective takes the same weights, and names the same errors.
  Train({"--data", HeartScalePath(), "--out", dir.File("model.json")});
  const CommandResult eval = RunNimbus({"eval", "--model", dir.File("model.json"), "--data", HeartScalePath(),
                                        "--class-weight", "2=5", "--sample-weights", file("ones.txt", ones)});
  EXPECT_NE(eval.exit_code, 0);
  EXPECT_NE(eval.err.find("--class-weight: label 2 does not occur in"), std::string::npos) << eval.err;
  const CommandResult split =
      RunNimbus({"split", "--data", HeartScalePath(), "--shards", "2", "--out", dir.File("store")});
  ASSERT_EQ(split.exit_code, 0) << split.err;
  const CommandResult balanced =
      RunNimbus({"train", "--data", dir.File("store"), "--class-weight", "balanced", "--quiet"});
  EXPECT_NE(balanced.err.find("--class-weight balanced: needs the rows of each class"), std::string::npos)
      << balanced.err;
}

}  // namespace
}  // namespace nimbus::testing
