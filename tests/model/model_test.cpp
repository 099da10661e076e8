// Models over feature spaces of any size: a model holding a few features of 2^31 - 1 writes
// them by their own numbers and reads back; old model files read as before; predictions and
// the objective on a test file with features the model never saw, against hand computations;
// liblinear's dense format written in full when that is reasonable and refused, naming the
// size, when it is not.
#include "nimbus/model/model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nimbus/data/libsvm_reader.h"
#include "nimbus/model/evaluation.h"
#include "support/test_support.h"

namespace nimbus {
namespace {

using Json = nlohmann::json;
using testing::FileExists;
using testing::ReadTextFile;
using testing::TempDir;
using testing::WriteTextFile;

constexpr int64_t kLargestIndex = 2147483647;

// Features 5, 100 and 2^31 - 1 (1-based) of a hashed space, weight 0 on the second.
Model HashedModel() {
  Model model;
  model.regularizer = {0.01, 0.1};
  model.intercept = true;
  model.cols = kLargestIndex;
  model.features = {4, 99, 2147483646};
  model.weights = {0.5, 0.0, -2.0, 0.25};
  return model;
}

TEST(ModelFeaturesTest, WeightsAreLookedUpByFeature) {
  const Model model = HashedModel();
  EXPECT_EQ(model.held(), 3);
  EXPECT_EQ(model.Weight(4), 0.5);
  EXPECT_EQ(model.Weight(2147483646), -2.0);
  EXPECT_EQ(model.Weight(5), 0.0);
  EXPECT_EQ(model.Weight(0), 0.0);
  EXPECT_EQ(model.bias(), 0.25);
  // l1 (0.5 + 2) + l2/2 (0.25 + 4); the intercept is not penalized.
  EXPECT_DOUBLE_EQ(model.Penalty(), 0.01 * 2.5 + 0.05 * 4.25);
}

// A warm start's weights: the columns' features looked up in the model (columns renumbered
// to features 4, 50 and 2^31 - 2; or not renumbered), with the intercept where both have one.
TEST(ModelFeaturesTest, ColumnWeightsFollowTheColumnsFeatures) {
  const Model model = HashedModel();
  ColumnMap renumbered;
  renumbered.features = std::make_shared<const std::vector<uint32_t>>(std::vector<uint32_t>{4, 50, 2147483646});
  renumbered.source_cols = kLargestIndex;
  EXPECT_EQ(model.ColumnWeights(renumbered, 3, true), (std::vector<double>{0.5, 0.0, -2.0, 0.25}));
  EXPECT_EQ(model.ColumnWeights(renumbered, 3, false), (std::vector<double>{0.5, 0.0, -2.0}));
  EXPECT_EQ(model.ColumnWeights(ColumnMap{}, 6, false), (std::vector<double>{0, 0, 0, 0, 0.5, 0}));
  Model dense;  // two classes of weights per feature, no intercept
  dense.classes = 2;
  dense.cols = 2;
  dense.weights = {1, 2, 3, 4};
  EXPECT_EQ(dense.ColumnWeights(renumbered, 3, true), (std::vector<double>(8, 0.0)));
  EXPECT_EQ(dense.ColumnWeights(ColumnMap{}, 3, true), (std::vector<double>{1, 2, 3, 4, 0, 0, 0, 0}));
}

TEST(ModelFeaturesTest, JsonListsTheFeaturesByTheirOwnNumbersAndReadsBack) {
  const Model model = HashedModel();
  const Json json = Json::parse(ModelToJson(model));
  EXPECT_EQ(json["cols"], kLargestIndex);
  EXPECT_EQ(json["weights"]["indices"], Json::parse("[5, 2147483647]"));  // the zero weight is left out
  EXPECT_EQ(json["weights"]["values"], Json::parse("[0.5, -2]"));
  EXPECT_EQ(json["bias"], 0.25);

  TempDir dir;
  ASSERT_TRUE(WriteModel(model, ModelFormat::kJson, dir.File("m.json")).ok());
  Result<Model> read = ReadModel(dir.File("m.json"));
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->cols, kLargestIndex);
  EXPECT_EQ(read->features, (std::vector<uint32_t>{4, 2147483646}));  // no vector of 2^31 weights
  EXPECT_EQ(read->weights, (std::vector<double>{0.5, -2.0, 0.25}));
  EXPECT_EQ(read->Weight(99), 0.0);
  EXPECT_EQ(ModelToJson(*read), ModelToJson(model));
}

TEST(ModelFeaturesTest, OldModelFilesStillRead) {
  TempDir dir;
  const std::string head = R"({"format": "nimbus-model", "version": 1, "loss": "logistic", "l1": 0, "l2": 0.5,
      "intercept": false, "labels": {"binary": true, "negative": -1, "positive": 1}, )";
  // Half the features listed or more: dense, as every model was read before.
  WriteTextFile(dir.File("dense.json"), head + R"("cols": 4, "weights": {"indices": [1, 3], "values": [0.5, -1]}})");
  Result<Model> dense = ReadModel(dir.File("dense.json"));
  ASSERT_TRUE(dense.ok()) << dense.status().ToString();
  EXPECT_TRUE(dense->features.empty());
  EXPECT_EQ(dense->weights, (std::vector<double>{0.5, 0, -1, 0}));

  // Fewer: the features listed alone, in any order.
  WriteTextFile(dir.File("few.json"), head + R"("cols": 10, "weights": {"indices": [9, 2], "values": [3, -1]}})");
  Result<Model> few = ReadModel(dir.File("few.json"));
  ASSERT_TRUE(few.ok()) << few.status().ToString();
  EXPECT_EQ(few->features, (std::vector<uint32_t>{1, 8}));
  EXPECT_EQ(few->weights, (std::vector<double>{-1, 3}));
  EXPECT_EQ(few->WeightsFor(0), (std::vector<double>{0, -1, 0, 0, 0, 0, 0, 0, 3, 0}));

  // No weight at all in a space of 2^31 - 1 features.
  WriteTextFile(dir.File("zero.json"), head + R"("cols": 2147483647, "weights": {"indices": [], "values": []}})");
  Result<Model> zero = ReadModel(dir.File("zero.json"));
  ASSERT_TRUE(zero.ok()) << zero.status().ToString();
  EXPECT_EQ(zero->held(), 1);
  EXPECT_EQ(zero->Weight(2147483646), 0.0);

  WriteTextFile(dir.File("twice.json"), head + R"("cols": 10, "weights": {"indices": [9, 9], "values": [3, 1]}})");
  Result<Model> twice = ReadModel(dir.File("twice.json"));
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("twice.json: weights.indices lists feature 9 twice"), std::string::npos)
      << twice.status().message();
}

// A test file numbering its features as the training file did, with features the model never
// saw (7 and 2000000000) and without one it holds (100).
class PredictionTest : public ::testing::Test {
 protected:
  PredictionTest() {
    WriteTextFile(dir_.File("t.svm"), "1 5:1 7:10 2147483647:2\n-1 7:-1 2000000000:4\n1 3:1\n");
    model_ = HashedModel();
    model_.weights = {1.0, 2.0, 3.0, 0.5};
  }
  TempDir dir_;
  Model model_;
};

TEST_F(PredictionTest, UnseenFeaturesWeighZero) {
  LibsvmReadOptions options;
  options.renumber_columns = true;
  Result<Dataset> data = ReadLibsvmFile(dir_.File("t.svm"), options);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  ASSERT_TRUE(data->columns.renumbered());
  // Row 1: 1 x 1 (feature 5) + 2 x 3 (feature 2^31 - 1) + 0.5; row 2: nothing the model holds.
  EXPECT_EQ(DecisionValues(model_, *data), (std::vector<double>{7.5, 0.5, 0.5}));

  // The same model held densely (a small space) on a file read as written.
  WriteTextFile(dir_.File("small.svm"), "1 5:1 7:10 9:2\n-1 7:-1\n");
  Model dense;
  dense.intercept = true;
  dense.cols = 9;
  dense.weights = {0, 0, 0, 0, 1, 0, 0, 0, 3, 0.5};
  Result<Dataset> small = ReadLibsvmFile(dir_.File("small.svm"));
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(DecisionValues(dense, *small), (std::vector<double>{7.5, 0.5}));
}

TEST_F(PredictionTest, TheObjectivePenalizesEveryWeightTheModelHolds) {
  LibsvmReadOptions options;
  options.renumber_columns = true;
  options.expected_labels = model_.labels;
  Result<Dataset> data = ReadLibsvmFile(dir_.File("t.svm"), options);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  const Evaluation e = Evaluate(model_, *data);
  // Margins y * score: 7.5, -0.5, 0.5; the weight of feature 100, absent here, is penalized too.
  const double loss = (std::log1p(std::exp(-7.5)) + std::log1p(std::exp(0.5)) + std::log1p(std::exp(-0.5))) / 3;
  EXPECT_NEAR(e.objective, loss + 0.01 * 6 + 0.05 * 14, 1e-13);
  EXPECT_NEAR(e.accuracy, 2.0 / 3, 1e-15);
}

TEST(LiblinearFormatTest, AModelHoldingFewFeaturesIsWrittenDense) {
  Model model;
  model.regularizer.l2 = 1;
  model.cols = 6;
  model.features = {1, 4};
  model.weights = {0.5, -1.0};
  Result<std::string> text = ModelToLiblinear(model);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, "solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 6\nbias -1\nw\n0 \n0.5 \n0 \n0 \n-1 \n0 \n");
  TempDir dir;
  ASSERT_TRUE(WriteModel(model, ModelFormat::kLiblinear, dir.File("m.txt")).ok());
  EXPECT_EQ(ReadTextFile(dir.File("m.txt")), *text);
  Result<Model> read = ReadModel(dir.File("m.txt"));
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->weights, (std::vector<double>{0, 0.5, 0, 0, -1, 0}));
}

TEST(LiblinearFormatTest, AFeatureSpaceTooLargeIsRefusedNamingItsSize) {
  EXPECT_TRUE(CheckLiblinearSize(int64_t{1} << 27).ok());
  EXPECT_FALSE(CheckLiblinearSize((int64_t{1} << 27) + 1).ok());
  TempDir dir;
  const Status written = WriteModel(HashedModel(), ModelFormat::kLiblinear, dir.File("m.txt"));
  ASSERT_FALSE(written.ok());
  EXPECT_NE(written.message().find("this model has 2147483647 features (liblinear-predict would need 16 GiB"),
            std::string::npos)
      << written.message();
  EXPECT_NE(written.message().find("--model-format json"), std::string::npos) << written.message();
  EXPECT_FALSE(FileExists(dir.File("m.txt")));
}

TEST(LiblinearFormatTest, ReadingTakesTheWeightsTheFileHoldsNotWhatItClaims) {
  TempDir dir;
  WriteTextFile(dir.File("m.txt"), "solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 2147483647\nbias -1\nw\n1 \n2 \n");
  Result<Model> read = ReadModel(dir.File("m.txt"));
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("m.txt:9: expected 2147483647 weights"), std::string::npos)
      << read.status().message();
}

}  // namespace
}  // namespace nimbus

namespace nimbus {
namespace {

// Three classes over features 2 and 7 of 10 (1-based), with intercepts; class values 5, 2, 9
// as liblinear would list them (first appearance), nimbus's in ascending order -> 2, 5, 9.
Model ThreeClassModel() {
  Model model;
  model.regularizer = {0.0, 0.1};
  model.intercept = true;
  model.cols = 10;
  model.classes = 3;
  model.labels.classes = {2, 5, 9};
  model.features = {1, 6};
  model.weights = {1, 2, 3, 0, -4, 0, 0.5, 0.25, -0.75};  // feature 2, feature 7, the intercepts
  return model;
}

TEST(MulticlassModelTest, JsonHoldsEveryClassAndReadsBack) {
  const Model model = ThreeClassModel();
  EXPECT_EQ(model.Weight(6, 1), -4);
  EXPECT_EQ(model.Weight(3, 2), 0);
  EXPECT_EQ(model.bias(2), -0.75);
  const Json json = Json::parse(ModelToJson(model));
  EXPECT_EQ(json["version"], 2);
  EXPECT_EQ(json["classes"], 3);
  EXPECT_EQ(json["weights"]["indices"], Json::parse("[2, 7]"));
  EXPECT_EQ(json["weights"]["values"], Json::parse("[[1, 2, 3], [0, -4, 0]]"));
  EXPECT_EQ(json["bias"], Json::parse("[0.5, 0.25, -0.75]"));
  EXPECT_EQ(json["labels"]["classes"], Json::parse("[2, 5, 9]"));
  TempDir dir;
  ASSERT_TRUE(WriteModel(model, ModelFormat::kJson, dir.File("m.json")).ok());
  Result<Model> back = ReadModel(dir.File("m.json"));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->classes, 3);
  EXPECT_EQ(back->labels.classes, model.labels.classes);
  for (int64_t j = 0; j < 10; ++j) {
    for (int64_t c = 0; c < 3; ++c) EXPECT_EQ(back->Weight(j, c), model.Weight(j, c)) << j << " " << c;
  }
  for (int64_t c = 0; c < 3; ++c) EXPECT_EQ(back->bias(c), model.bias(c));
  // An entry without a weight per class is named.
  Json bad = json;
  bad["weights"]["values"][1] = Json::parse("[0, -4]");
  WriteTextFile(dir.File("bad.json"), bad.dump());
  Result<Model> refused = ReadModel(dir.File("bad.json"));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("one weight per class"), std::string::npos) << refused.status().message();
}

TEST(MulticlassModelTest, LiblinearFormatHasAColumnPerClassInItsOwnLabelOrder) {
  // liblinear's file lists the classes 5, 2, 9: its columns are read into ascending order.
  const std::string file =
      "solver_type L2R_LR\nnr_class 3\nlabel 5 2 9\nnr_feature 2\nbias 1\nw\n1 2 3 \n4 5 6 \n7 8 9 \n";
  TempDir dir;
  WriteTextFile(dir.File("m.txt"), file);
  Result<Model> model = ReadModel(dir.File("m.txt"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ(model->labels.classes, (std::vector<double>{2, 5, 9}));
  EXPECT_EQ(model->Weight(0, 0), 2);  // class 2: liblinear's second column
  EXPECT_EQ(model->Weight(1, 1), 4);  // class 5: its first
  EXPECT_EQ(model->bias(2), 9);
  // Written back, in nimbus's class order, and read again to the same weights.
  ASSERT_TRUE(WriteModel(*model, ModelFormat::kLiblinear, dir.File("again.txt")).ok());
  EXPECT_EQ(ReadTextFile(dir.File("again.txt")),
            "solver_type L2R_LR\nnr_class 3\nlabel 2 5 9\nnr_feature 2\nbias 1\nw\n2 1 3 \n5 4 6 \n8 7 9 \n");
}

TEST(MulticlassModelTest, ATwoClassSoftmaxModelIsOneLiblinearVector) {
  // p(+1) = sigmoid(m_1 - m_0): liblinear's w is w_1 - w_0.
  Model model;
  model.cols = 2;
  model.classes = 2;
  model.multinomial = true;
  model.labels = {true, 0.0, 1.0, {}};
  model.weights = {1.0, 3.0, 2.0, -1.0};
  Result<std::string> text = ModelToLiblinear(model);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "solver_type L2R_LR\nnr_class 2\nlabel 1 0\nnr_feature 2\nbias -1\nw\n2 \n-3 \n");
}

}  // namespace
}  // namespace nimbus
