// Evaluation over rows that come a block at a time, against Evaluate on all of them at once
// (whose figures the end-to-end tests check against liblinear and by hand): two classes with
// the AUC's scores spilled to sorted runs and merged (ties across runs included), many
// classes, regression, weights; and the scorer of rows numbered by their source's features
// against the model's decision values.
#include "nimbus/model/evaluation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "data/test_datasets.h"

namespace nimbus {
namespace {

using testing::PlainRow;

// Rows with few distinct values, so that scores tie, within runs and across them.
std::vector<PlainRow> Rows(int count, uint32_t cols, double label_a, double label_b, uint64_t seed, int classes = 2) {
  std::mt19937_64 random(seed);
  std::vector<PlainRow> rows;
  for (int r = 0; r < count; ++r) {
    PlainRow row;
    row.label = classes > 2 ? static_cast<double>(random() % static_cast<uint64_t>(classes))
                            : (random() % 3 == 0 ? label_a : label_b);
    for (uint32_t c = 0; c < cols; ++c) {
      if (random() % 3 == 0) row.entries.emplace_back(c, static_cast<double>(random() % 3));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

Model BinaryModel(uint32_t cols) {
  Model model;
  model.cols = cols;
  model.labels.negative = -1;
  model.labels.positive = 1;
  for (uint32_t c = 0; c < cols; ++c) model.weights.push_back(c % 2 == 0 ? 0.5 : -0.25);
  model.regularizer.l1 = 0.01;
  return model;
}

// The streaming figures over blocks of `block` rows.
Evaluation Streamed(const Model& model, const Dataset& data, std::size_t block, std::size_t budget,
                    std::span<const double> class_weights = {}) {
  StreamingEvaluation evaluation(model, std::vector<double>(class_weights.begin(), class_weights.end()), budget);
  for (int64_t begin = 0; begin < data.rows(); begin += static_cast<int64_t>(block)) {
    const int64_t end = std::min<int64_t>(data.rows(), begin + static_cast<int64_t>(block));
    const Dataset rows = data.Rows(begin, end);
    // The block as text numbers it: offsets from 0.
    std::vector<int64_t> offsets;
    for (int64_t r = begin; r <= end; ++r) offsets.push_back(data.matrix.row_ptr[r] - data.matrix.row_ptr[begin]);
    CsrView view = rows.matrix;
    view.row_ptr = offsets.data();
    view.col_idx = data.matrix.col_idx + data.matrix.row_ptr[begin];
    view.values = data.matrix.values + data.matrix.row_ptr[begin];
    EXPECT_TRUE(evaluation.Add(view, rows.labels, rows.weights).ok());
  }
  Result<Evaluation> finished = evaluation.Finish();
  EXPECT_TRUE(finished.ok()) << finished.status().ToString();
  return finished.ok() ? *finished : Evaluation{};
}

TEST(StreamingEvaluation, TwoClassesAsEvaluateWithTheAucsScoresSpilled) {
  const Model model = BinaryModel(6);
  Dataset data = testing::MakeDataset(Rows(3000, 6, 1, -1, 1), 6);
  const Evaluation whole = Evaluate(model, data);
  for (const std::size_t budget : {std::size_t{1} << 20, std::size_t{7}, std::size_t{1000}}) {
    const Evaluation streamed = Streamed(model, data, 97, budget);
    EXPECT_EQ(streamed.rows, whole.rows);
    EXPECT_DOUBLE_EQ(streamed.accuracy, whole.accuracy);
    EXPECT_NEAR(streamed.log_loss, whole.log_loss, 1e-12);
    EXPECT_NEAR(streamed.auc, whole.auc, 1e-12) << "budget " << budget;
    EXPECT_NEAR(streamed.objective, whole.objective, 1e-12);
  }
  // With the rows' weights and a class weight in the objective.
  std::vector<double> weights;
  for (int r = 0; r < 3000; ++r) weights.push_back(0.5 + r % 4);
  data.AdoptWeights(weights);
  const std::vector<double> class_weights = {1.0, 3.0};
  EXPECT_NEAR(Streamed(model, data, 500, 100, class_weights).objective, Evaluate(model, data, class_weights).objective,
              1e-12);
}

TEST(StreamingEvaluation, ManyClassesAndRegressionAsEvaluate) {
  Model multi;
  multi.cols = 4;
  multi.classes = 3;
  multi.labels.classes = {2, 5, 9};
  for (int k = 0; k < 12; ++k) multi.weights.push_back(std::sin(k));
  const Dataset data = testing::MakeDataset(Rows(600, 4, 0, 0, 2, 3), 4);
  const Evaluation whole = Evaluate(multi, data), streamed = Streamed(multi, data, 50, 10);
  EXPECT_EQ(streamed.confusion, whole.confusion);
  EXPECT_NEAR(streamed.log_loss, whole.log_loss, 1e-12);
  EXPECT_NEAR(streamed.objective, whole.objective, 1e-12);
  ASSERT_EQ(streamed.class_objectives.size(), 3u);
  for (std::size_t c = 0; c < 3; ++c) EXPECT_NEAR(streamed.class_objectives[c], whole.class_objectives[c], 1e-12);

  Model regression = BinaryModel(5);
  regression.loss = Loss::kSquared;
  regression.labels = LabelEncoding{};
  regression.labels.classification = false;
  const Dataset targets = testing::MakeDataset(Rows(400, 5, 2.5, -1.5, 3), 5);
  const Evaluation fit = Evaluate(regression, targets), streamed_fit = Streamed(regression, targets, 33, 10);
  EXPECT_NEAR(streamed_fit.mean_squared_error, fit.mean_squared_error, 1e-12);
  EXPECT_NEAR(streamed_fit.r_squared, fit.r_squared, 1e-12);
  EXPECT_NEAR(streamed_fit.objective, fit.objective, 1e-12);
}

// A model that holds a few features of a hashed space: rows by their source's numbers score as
// DecisionValues scores the same rows renumbered; features the model never saw weigh 0.
TEST(RowScorer, ScoresRowsBySourceFeatureAsDecisionValues) {
  Model model;
  model.cols = 2000000000;
  model.features = {7, 123456, 1999999999};
  model.weights = {1.5, -2, 0.25};
  model.intercept = true;
  model.weights.push_back(0.75);
  const std::vector<PlainRow> rows = {{1, {{7, 2}, {1000, 1}}}, {-1, {{123456, 1}, {1999999999, 4}}}, {1, {}}};
  std::vector<int64_t> offsets = {0};
  std::vector<uint32_t> columns;
  std::vector<double> values;
  for (const PlainRow& row : rows) {
    for (const auto& [c, v] : row.entries) columns.push_back(c), values.push_back(v);
    offsets.push_back(static_cast<int64_t>(values.size()));
  }
  const CsrView view{3, 2000000000, offsets.data(), columns.data(), values.data()};
  std::vector<double> scores;
  RowScorer(model).Score(view, scores);
  EXPECT_EQ(scores, (std::vector<double>{1.5 * 2 + 0.75, -2 + 0.25 * 4 + 0.75, 0.75}));
}

}  // namespace
}  // namespace nimbus
