#include "nimbus/columns/column_descent.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "local/sparse_test_problem.h"
#include "nimbus/data/libsvm_reader.h"
#include "nimbus/model/model.h"
#include "support/test_support.h"

namespace nimbus {
namespace {

using testing::HeartScalePath;
using testing::MakeRandomProblem;
using testing::RefDataGradient;
using testing::SparseProblem;
using testing::TempDir;
using testing::TrainLiblinear;

Dataset ReadHeartScale() {
  Result<Dataset> data = ReadLibsvmFile(HeartScalePath(), LibsvmReadOptions{});
  EXPECT_TRUE(data.ok()) << data.status().ToString();
  return std::move(data).value();
}

ProblemSpec SpecOf(const Dataset& data, double l1, double l2, bool intercept = false) {
  ProblemSpec spec;
  spec.rows = data.rows();
  spec.cols = data.cols();
  spec.regularizer = Regularizer(l1, l2);
  spec.intercept = intercept;
  return spec;
}

// liblinear's optimum F* on heart_scale (-s 6: L1 logistic; -s 0: L2 logistic), to 1e-8.
double LiblinearOptimum(int solver, const ProblemSpec& spec, const Dataset& data) {
  TempDir dir;
  const double lambda = solver == 6 ? spec.regularizer.l1 : spec.regularizer.l2;
  const std::string path =
      TrainLiblinear(solver, 1.0 / (static_cast<double>(data.rows()) * lambda), 1e-8, HeartScalePath(), dir.File("m"));
  Result<Model> model = ReadModel(path);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return EvaluateObjective(spec, data.matrix, data.labels, model->WeightsFor(data.cols()));
}

ColumnDescentOptions Tight(int blocks) {
  ColumnDescentOptions options;
  options.blocks = blocks;
  options.gradient_tolerance = 1e-8;
  options.threads = 2;  // blocks stepped at once (one block: one thread)
  return options;
}

TEST(ColumnDescent, ReachesLiblinearsL1OptimumWithAnyNumberOfBlocks) {
  const Dataset data = ReadHeartScale();
  const ProblemSpec spec = SpecOf(data, 0.01, 0.0);
  const double optimum = LiblinearOptimum(6, spec, data);
  for (const int blocks : {1, 2, 5, 13}) {
    // The blocks' steps weighed (sigma 1), summed with sigma adapted (d-GLMNET), or summed with
    // CoCoA+'s sigma = K; the blocks contiguous or clustered by their rows (the answer in the
    // matrix's column order either way).
    for (const double sigma : {1.0, 0.0, static_cast<double>(blocks)}) {
      for (const bool clustered : {false, true}) {
        ColumnDescentOptions options = Tight(blocks);
        options.curvature_scale = sigma;
        if (sigma != 1) options.combination = BlockCombination::kSum;
        if (clustered) options.layout = ClusterColumns(data.matrix, blocks);
        Result<ColumnDescentResult> result = SolveByColumns(spec, data.matrix, data.labels, {}, options);
        ASSERT_TRUE(result.ok()) << result.status().ToString();
        EXPECT_TRUE(result->summary.converged) << result->summary.message;
        const double objective = EvaluateObjective(spec, data.matrix, data.labels, result->x);
        EXPECT_NEAR(objective, optimum, 1e-7 * optimum) << blocks << " blocks, sigma " << sigma << ", " << clustered;
        EXPECT_NEAR(result->summary.objective, objective, 1e-12);
      }
    }
  }
}

// With no stop test (tolerance 0) the loop runs until no step along the blocks' direction
// decreases F: Tseng and Yun's D is then below F's rounding, x stationary to rounding, and the
// run has converged (at liblinear's optimum), not stopped at the cap or failed.
TEST(ColumnDescent, ConvergesWhereNoStepDecreasesFAnyMore) {
  const Dataset data = ReadHeartScale();
  const ProblemSpec spec = SpecOf(data, 0.01, 0.0);
  ColumnDescentOptions options = Tight(3);
  options.gradient_tolerance = 0;
  Result<ColumnDescentResult> result = SolveByColumns(spec, data.matrix, data.labels, {}, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(result->summary.converged) << result->summary.message;
  EXPECT_LT(result->summary.iterations, options.max_iterations);
  const double optimum = LiblinearOptimum(6, spec, data);
  EXPECT_NEAR(EvaluateObjective(spec, data.matrix, data.labels, result->x), optimum, 1e-9 * optimum);
}

TEST(ColumnDescent, ReachesLiblinearsL2Optimum) {
  const Dataset data = ReadHeartScale();
  const ProblemSpec spec = SpecOf(data, 0.0, 0.02);
  const double optimum = LiblinearOptimum(0, spec, data);
  for (const int blocks : {1, 4}) {
    Result<ColumnDescentResult> result = SolveByColumns(spec, data.matrix, data.labels, {}, Tight(blocks));
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_NEAR(EvaluateObjective(spec, data.matrix, data.labels, result->x), optimum, 1e-7 * optimum);
  }
}

// One-vs-rest with class weights is liblinear's: C binary problems, class c's rows +1 weighing
// W_c (-w1 W_c), the others -1 weighing 1. Three classes from heart_scale's rows (+1 rows class
// 0, -1 rows class 1 or 2 by the row's parity); the whole model's F (the model's layout: feature
// j's weight in class c at j C + c) against the sum of liblinear's optima.
TEST(ColumnDescent, OneVsRestWithClassWeightsSolvesLiblinearsBinaryProblems) {
  const Dataset data = ReadHeartScale();
  std::vector<double> classes;
  for (int64_t r = 0; r < data.rows(); ++r) classes.push_back(data.labels[r] > 0 ? 0.0 : 1.0 + static_cast<double>(r % 2));
  ProblemSpec spec = SpecOf(data, 0.01, 0.0, /*intercept=*/false);
  spec.classes = 3;
  spec.class_weights = {1.0, 2.0, 0.5};
  // The blocks clustered: each class's weights come back in the matrix's column order.
  ColumnDescentOptions options = Tight(2);
  options.layout = ClusterColumns(data.matrix, 2);
  ASSERT_FALSE(std::is_sorted(options.layout.order.begin(), options.layout.order.end()));
  Result<ColumnDescentResult> result = SolveByColumns(spec, data.matrix, classes, {}, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(result->summary.converged) << result->summary.message;
  TempDir dir;
  std::istringstream lines(testing::ReadTextFile(HeartScalePath()));
  std::vector<std::string> features;  // each line without its label
  for (std::string line; std::getline(lines, line);) features.push_back(line.substr(line.find(' ')));
  double liblinear_sum = 0;
  for (int c = 0; c < 3; ++c) {
    std::string text;
    std::vector<double> labels;
    for (std::size_t r = 0; r < features.size(); ++r) {
      labels.push_back(classes[r] == c ? 1.0 : -1.0);
      text += (classes[r] == c ? "+1" : "-1") + features[r] + "\n";
    }
    testing::WriteTextFile(dir.File("class.svm"), text);
    const double weight = spec.class_weights[static_cast<std::size_t>(c)];
    const testing::CommandResult trained =
        testing::RunCommand({"liblinear-train", "-s", "6", "-c", std::to_string(1.0 / (270 * 0.01)), "-w1",
                             std::to_string(weight), "-e", "1e-10", "-q", dir.File("class.svm"), dir.File("class.model")});
    ASSERT_EQ(trained.exit_code, 0) << trained.err;
    Result<Model> model = ReadModel(dir.File("class.model"));
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    ProblemSpec binary = SpecOf(data, 0.01, 0.0);
    binary.class_weights = {1.0, weight};
    liblinear_sum += EvaluateObjective(binary, data.matrix, labels, model->WeightsFor(data.cols()));
  }
  const double ours = EvaluateObjective(spec, data.matrix, classes, result->x);
  EXPECT_NEAR(ours, liblinear_sum, 1e-7 * liblinear_sum);
  EXPECT_NEAR(result->summary.objective, ours, 1e-12);
}

// A binary problem's class weights are liblinear's -w-1 and -w1.
TEST(ColumnDescent, BinaryClassWeightsAreLiblinears) {
  const Dataset data = ReadHeartScale();
  ProblemSpec spec = SpecOf(data, 0.01, 0.0);
  spec.class_weights = {0.5, 2.0};  // the -1 class's, the +1 class's
  Result<ColumnDescentResult> result = SolveByColumns(spec, data.matrix, data.labels, {}, Tight(3));
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  TempDir dir;
  const testing::CommandResult trained =
      testing::RunCommand({"liblinear-train", "-s", "6", "-c", std::to_string(1.0 / (270 * 0.01)), "-w-1", "0.5", "-w1",
                           "2", "-e", "1e-10", "-q", HeartScalePath(), dir.File("weighted.model")});
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  Result<Model> model = ReadModel(dir.File("weighted.model"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const double optimum = EvaluateObjective(spec, data.matrix, data.labels, model->WeightsFor(data.cols()));
  EXPECT_NEAR(EvaluateObjective(spec, data.matrix, data.labels, result->x), optimum, 1e-7 * optimum);
}

// F's minimum-norm subgradient at x (the intercept's entry: its derivative), from the test's own
// formulas, with row weights c_r.
std::vector<double> SubgradientAt(const SparseProblem& p, Loss loss, const std::vector<double>& weights, double l1,
                                  double l2, const std::vector<double>& x) {
  const std::size_t width = p.Width(true);
  const std::vector<double> margins = testing::RefMargins(p, true, x);
  const std::vector<double> dense = p.Dense(true);
  std::vector<double> gradient(width, 0.0);
  for (std::size_t r = 0; r < margins.size(); ++r) {
    const double d = weights[r] * testing::RefLossFirst(loss, p.labels[r], margins[r]) / static_cast<double>(p.rows);
    for (std::size_t j = 0; j < width; ++j) gradient[j] += dense[r * width + j] * d;
  }
  for (std::size_t j = 0; j + 1 < width; ++j) gradient[j] = MinimumNormSubgradient(x[j], gradient[j] + l2 * x[j], l1);
  return gradient;
}

// With an intercept and row weights (liblinear has neither as nimbus has them): the optimality
// conditions, from the test's own gradient: ||v(x)|| at most the stop test's 1e-8 ||v(0)||.
TEST(ColumnDescent, WithAnInterceptAndRowWeightsMeetsTheOptimalityConditions) {
  for (const Loss& loss : {Loss::kLogistic, Loss::kSquared}) {
    SparseProblem p = MakeRandomProblem(200, 12, 4, 7, loss);
    std::vector<double> weights(200);
    for (std::size_t r = 0; r < weights.size(); ++r) weights[r] = 0.5 + static_cast<double>(r % 3);
    ProblemSpec spec;
    spec.loss = loss;
    spec.rows = 200;
    spec.cols = 12;
    spec.intercept = true;
    spec.regularizer = Regularizer(0.01, 0.001);
    ColumnDescentOptions options = Tight(3);
    options.layout = ClusterColumns(p.View(), 3);  // the intercept stays last, in the last block
    Result<ColumnDescentResult> result = SolveByColumns(spec, p.View(), p.labels, weights, options);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    ASSERT_TRUE(result->summary.converged) << result->summary.message;
    const double at_zero = testing::RefNorm(SubgradientAt(p, loss, weights, 0.01, 0.001, std::vector<double>(13, 0.0)));
    const double at_end = testing::RefNorm(SubgradientAt(p, loss, weights, 0.01, 0.001, result->x));
    EXPECT_GT(at_zero, 0.01) << LossName(loss);
    EXPECT_LE(at_end, 1.01e-8 * at_zero) << LossName(loss);
    // Without the weights the answer is another one: they count.
    const double unweighted =
        testing::RefNorm(SubgradientAt(p, loss, std::vector<double>(200, 1.0), 0.01, 0.001, result->x));
    EXPECT_GT(unweighted, 1e-4) << LossName(loss);
  }
}

// Columns of one sign (pixels, counts) share an offset with the intercept. Every block centres
// its columns against it, so blocks no longer undo each other's share of the offset: 3 blocks
// take a few times the rounds of 1 (9 against 4; with only the intercept's block centred, 3
// blocks ran to the cap of 1000).
TEST(ColumnDescent, BlocksOfColumnsOfOneSignWithAnInterceptTakeAFewTimesOneBlocksRounds) {
  SparseProblem p = MakeRandomProblem(300, 12, 12, 5, Loss::kLogistic);  // every row has every column
  for (double& v : p.values) v = 2.0 + std::abs(v);
  ProblemSpec spec;
  spec.rows = 300;
  spec.cols = 12;
  spec.intercept = true;
  spec.regularizer = Regularizer(0.001, 0.0);
  std::vector<int> rounds;
  std::vector<double> objectives;
  for (const int blocks : {1, 3}) {
    Result<ColumnDescentResult> result = SolveByColumns(spec, p.View(), p.labels, {}, Tight(blocks));
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    ASSERT_TRUE(result->summary.converged) << blocks << " blocks: " << result->summary.message;
    rounds.push_back(result->summary.iterations);
    objectives.push_back(result->summary.objective);
  }
  EXPECT_NEAR(objectives[1], objectives[0], 1e-9 * objectives[0]);
  EXPECT_LE(rounds[1], 4 * rounds[0]) << "1 block: " << rounds[0] << " rounds, 3 blocks: " << rounds[1];
}

// A run resumed from any of its checkpoints goes on as the run that was not stopped: the same
// iterations and the same answer, bit for bit (to rounding when its margins are made anew).
// The same with the blocks clustered: the checkpoints follow the matrix's columns.
TEST(ColumnDescent, ARunResumedFromACheckpointGoesOnAsIfNotStopped) {
  const Dataset data = ReadHeartScale();
  const ProblemSpec spec = SpecOf(data, 0.003, 0.001, true);
  std::vector<ColumnDescentCheckpoint> kept;
  for (const bool clustered : {false, true}) {
    ColumnDescentOptions options = Tight(3);
    if (clustered) options.layout = ClusterColumns(data.matrix, 3);
    options.checkpoint_every = 2;
    kept.clear();
    options.on_checkpoint = [&](const ColumnDescentCheckpoint& state) { kept.push_back(state); };
    Result<ColumnDescentResult> whole = SolveByColumns(spec, data.matrix, data.labels, {}, options);
    ASSERT_TRUE(whole.ok()) << whole.status().ToString();
    ASSERT_GE(kept.size(), 3u);
    for (std::size_t k = 0; k < kept.size(); ++k) {
      EXPECT_EQ(kept[k].iterations, 2 * static_cast<int>(k + 1));
      ColumnDescentOptions resumed = Tight(3);
      resumed.layout = options.layout;
      resumed.resume = std::make_shared<const ColumnDescentCheckpoint>(kept[k]);
      Result<ColumnDescentResult> rest = SolveByColumns(spec, data.matrix, data.labels, {}, resumed);
      ASSERT_TRUE(rest.ok()) << rest.status().ToString();
      EXPECT_EQ(rest->summary.iterations, whole->summary.iterations) << "from " << kept[k].iterations;
      EXPECT_EQ(rest->x, whole->x) << "from " << kept[k].iterations;  // the margins kept: bit for bit
      // Without its margins (a checkpoint written before they were kept), to rounding.
      ColumnDescentCheckpoint bare = kept[k];
      bare.margins.clear();
      bare.last_margin_step.clear();
      resumed.resume = std::make_shared<const ColumnDescentCheckpoint>(bare);
      rest = SolveByColumns(spec, data.matrix, data.labels, {}, resumed);
      ASSERT_TRUE(rest.ok()) << rest.status().ToString();
      for (std::size_t j = 0; j < whole->x.size(); ++j) EXPECT_NEAR(rest->x[j], whole->x[j], 1e-12) << j;
    }
  }
  // A state that is not one is refused, as are one-vs-rest's checkpoints.
  ColumnDescentCheckpoint wrong = kept[0];
  wrong.x.pop_back();
  wrong.last_step.pop_back();
  ColumnDescentOptions resumed = Tight(3);
  resumed.resume = std::make_shared<const ColumnDescentCheckpoint>(wrong);
  EXPECT_FALSE(SolveByColumns(spec, data.matrix, data.labels, {}, resumed).ok());
  wrong = kept[0];
  wrong.subgradient_reference = 0;
  resumed.resume = std::make_shared<const ColumnDescentCheckpoint>(wrong);
  EXPECT_FALSE(resumed.Validate().ok());
}

TEST(ColumnDescent, CutsColumnsIntoBlocksOfAboutEqualEntries) {
  const Dataset data = ReadHeartScale();
  const std::vector<uint32_t> cuts = CutColumns(data.matrix, 3);
  ASSERT_EQ(cuts.size(), 4u);
  EXPECT_EQ(cuts.front(), 0u);
  EXPECT_EQ(cuts.back(), static_cast<uint32_t>(data.cols()));
  for (std::size_t b = 0; b + 1 < cuts.size(); ++b) EXPECT_LT(cuts[b], cuts[b + 1]);
  // More blocks than columns: the rest are empty, and the solve still works.
  const std::vector<uint32_t> many = CutColumns(data.matrix, 20);
  ASSERT_EQ(many.size(), 21u);
  EXPECT_EQ(many.back(), static_cast<uint32_t>(data.cols()));
  Result<ColumnDescentResult> result = SolveByColumns(SpecOf(data, 0.01, 0.0), data.matrix, data.labels, {}, Tight(20));
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(result->summary.converged);
}

// Two groups of columns, each group's rows its own (columns 0, 2, 4 in rows 0-9; 1, 3, 5 in rows
// 10-19): clustered into two blocks, each group is a block, in the matrix's order within it.
TEST(ColumnDescent, ClustersColumnsThatShareRowsIntoOneBlock) {
  SparseProblem p;
  p.cols = 6;
  for (int r = 0; r < 20; ++r) {
    const uint32_t first = r < 10 ? 0 : 1;
    p.AddRow({{first, 1.0}, {first + 2, 0.5}, {first + 4, -1.0}}, r % 2 == 0 ? 1.0 : -1.0);
  }
  const ColumnLayout layout = ClusterColumns(p.View(), 2);
  EXPECT_EQ(layout.order, (std::vector<uint32_t>{0, 2, 4, 1, 3, 5}));
  EXPECT_EQ(layout.cuts, (std::vector<uint32_t>{0, 3, 6}));
  EXPECT_EQ(layout.PositionOf(), (std::vector<uint32_t>{0, 3, 1, 4, 2, 5}));
  // Contiguous blocks would cut the groups in halves.
  EXPECT_EQ(CutColumns(p.View(), 2), (std::vector<uint32_t>{0, 3, 6}));
}

// On text-like data (a few columns in most rows): every column once, and the blocks' entries
// within 1.02 of an equal share, or over it by no more than their last column's.
TEST(ColumnDescent, ClusteredBlocksHoldEveryColumnOnceInAboutEqualEntries) {
  const SparseProblem p = MakeRandomProblem(400, 60, 8, 11, Loss::kLogistic);
  const std::vector<int64_t> entries = ColumnNonzeros(p.View());
  for (const int blocks : {2, 3, 8}) {
    const ColumnLayout layout = ClusterColumns(p.View(), blocks);
    ASSERT_EQ(layout.blocks(), blocks);
    std::vector<uint32_t> sorted = layout.order;
    std::sort(sorted.begin(), sorted.end());
    std::vector<uint32_t> every(60);
    std::iota(every.begin(), every.end(), 0u);
    EXPECT_EQ(sorted, every) << blocks;
    const double share = 1.02 * static_cast<double>(p.View().nnz()) / blocks;
    const int64_t largest = *std::max_element(entries.begin(), entries.end());
    for (int b = 0; b < blocks; ++b) {
      int64_t filled = 0;
      for (uint32_t at = layout.cuts[b]; at < layout.cuts[b + 1]; ++at) filled += entries[layout.order[at]];
      EXPECT_LE(static_cast<double>(filled), share + static_cast<double>(largest)) << blocks << " blocks, block " << b;
    }
  }
  // The measured rule: clustered for 2 to 64 blocks of a sparse matrix, contiguous otherwise.
  const SparseProblem sparse = MakeRandomProblem(400, 200, 4, 11, Loss::kLogistic);  // 2% filled
  EXPECT_TRUE(LayOutColumns(sparse.View(), 1).order.empty());
  EXPECT_EQ(LayOutColumns(sparse.View(), 4).order, ClusterColumns(sparse.View(), 4).order);
  EXPECT_FALSE(LayOutColumns(sparse.View(), 64).order.empty());
  EXPECT_EQ(LayOutColumns(sparse.View(), 64).cuts, ClusterColumns(sparse.View(), 64).cuts);
  EXPECT_TRUE(LayOutColumns(sparse.View(), 65).order.empty());
  EXPECT_EQ(LayOutColumns(sparse.View(), 65).cuts, CutColumns(sparse.View(), 65));
  EXPECT_TRUE(LayOutColumns(p.View(), 4).order.empty());  // 13% filled
  EXPECT_EQ(LayOutColumns(p.View(), 4).cuts, CutColumns(p.View(), 4));
}

// A layout that is not one of the matrix's columns is refused before any work.
TEST(ColumnDescent, RefusesALayoutThatIsNotAnOrderOfTheColumns) {
  const Dataset data = ReadHeartScale();
  const ProblemSpec spec = SpecOf(data, 0.01, 0.0);
  ColumnDescentOptions options = Tight(2);
  options.layout = ClusterColumns(data.matrix, 2);
  options.layout.order[1] = options.layout.order[0];  // a column twice, another never
  EXPECT_FALSE(SolveByColumns(spec, data.matrix, data.labels, {}, options).ok());
  options.layout = ClusterColumns(data.matrix, 2);
  options.layout.cuts.back() = 12;  // short of the 13 columns
  EXPECT_FALSE(SolveByColumns(spec, data.matrix, data.labels, {}, options).ok());
  options.layout = ClusterColumns(data.matrix, 3);  // three blocks for two
  EXPECT_FALSE(options.Validate().ok());
  ColumnPathOptions path{Tight(2), true, {}};
  path.descent.layout = ClusterColumns(data.matrix, 2);
  EXPECT_FALSE(ColumnPath::Start(spec, data.matrix, data.labels, {}, path).ok());
}

// l1_max = max_j |grad_j f(0)| on heart_scale's logistic loss (labels +-1): the least l1
// where x = 0 is optimal.
double HeartScaleL1Max(const Dataset& data) {
  std::vector<double> gradient(static_cast<std::size_t>(data.cols()), 0.0);
  for (int64_t r = 0; r < data.rows(); ++r) {
    for (int64_t k = data.matrix.row_ptr[r]; k < data.matrix.RowEnd(r); ++k) {
      gradient[data.matrix.col_idx[k]] += data.matrix.Value(k) * -data.labels[r] / 2 / static_cast<double>(data.rows());
    }
  }
  double most = 0;
  for (const double g : gradient) most = std::max(most, std::abs(g));
  return most;
}

// `points` l1 values from `top` down to ratio x top, evenly on a log scale.
std::vector<double> Grid(double top, double ratio, int points) {
  std::vector<double> l1_values;
  for (int k = 0; k < points; ++k) l1_values.push_back(top * std::pow(ratio, static_cast<double>(k) / (points - 1)));
  return l1_values;
}

TEST(ColumnPath, EachPointReachesLiblinearsOptimumAndTheStrongRulesLeaveColumnsOut) {
  const Dataset data = ReadHeartScale();
  const std::vector<double> l1_values = Grid(HeartScaleL1Max(data), 0.01, 8);
  for (const int blocks : {1, 3}) {
    ColumnPathOptions options;
    options.descent = Tight(blocks);
    Result<std::vector<ColumnPathPoint>> path =
        SolvePathByColumns(SpecOf(data, 0.0, 0.0), data.matrix, data.labels, {}, l1_values, options);
    ASSERT_TRUE(path.ok()) << path.status().ToString();
    ASSERT_EQ(path->size(), l1_values.size());
    for (const ColumnPathPoint& point : *path) {
      const ProblemSpec spec = SpecOf(data, point.l1, 0.0);
      const double optimum = LiblinearOptimum(6, spec, data);
      EXPECT_TRUE(point.summary.converged) << point.summary.message;
      EXPECT_NEAR(EvaluateObjective(spec, data.matrix, data.labels, point.x), optimum, 1e-7 * optimum)
          << "l1 " << point.l1 << ", " << blocks << " blocks";
    }
    // Near l1_max few columns can enter: the first point's solves read only those.
    EXPECT_LT(path->front().eligible, data.cols() / 2);
  }
}

// Random problems where a column's gradient grows faster than l1 falls between points: the
// strong rule leaves it out, the KKT check puts it back, and every point meets the optimality
// conditions (the test's own gradient, with an intercept).
TEST(ColumnPath, TheKktCheckPutsBackColumnsTheStrongRuleMisjudged) {
  int violations = 0;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    const SparseProblem p = MakeRandomProblem(80, 30, 4, seed, Loss::kLogistic);
    ProblemSpec spec;
    spec.rows = 80;
    spec.cols = 30;
    spec.intercept = true;
    std::vector<double> at_zero = RefDataGradient(p, Loss::kLogistic, true, 80.0, std::vector<double>(31, 0.0));
    at_zero.pop_back();  // the intercept's
    double top = 0;
    for (const double g : at_zero) top = std::max(top, std::abs(g));
    ColumnPathOptions options;
    options.descent = Tight(2);
    Result<std::vector<ColumnPathPoint>> path =
        SolvePathByColumns(spec, p.View(), p.labels, {}, Grid(top, 0.01, 10), options);
    ASSERT_TRUE(path.ok()) << path.status().ToString();
    for (const ColumnPathPoint& point : *path) {
      violations += point.strong_rule_violations;
      const std::vector<double> ones(80, 1.0);
      const double norm = testing::RefNorm(SubgradientAt(p, Loss::kLogistic, ones, point.l1, 0.0, point.x));
      const double at_start = testing::RefNorm(SubgradientAt(p, Loss::kLogistic, ones, point.l1, 0.0, std::vector<double>(31, 0.0)));
      EXPECT_LE(norm, 1.01e-8 * at_start) << "seed " << seed << ", l1 " << point.l1;
    }
  }
  EXPECT_GT(violations, 0);
}

TEST(ColumnPath, RefusesAGridThatDoesNotDescend) {
  const Dataset data = ReadHeartScale();
  const std::vector<double> rising{0.01, 0.02};
  Result<std::vector<ColumnPathPoint>> path =
      SolvePathByColumns(SpecOf(data, 0.0, 0.0), data.matrix, data.labels, {}, rising, ColumnPathOptions{});
  ASSERT_FALSE(path.ok());
  EXPECT_NE(path.status().message().find("value 2"), std::string::npos) << path.status().message();
}

// A path stepped a point at a time (cross-validation's folds): its l1_max is where no weight
// moves, max_j |grad_j f| at the intercept's own optimum (sigma(b) = the share of +1 rows, so
// grad_j = (1/N) sum_r a_rj (p - [y_r = +1])); each point converges; its points must descend.
TEST(ColumnPath, SteppedAPointAtATimeStartsAtL1MaxAndRefusesToClimb) {
  const Dataset data = ReadHeartScale();
  const ProblemSpec spec = SpecOf(data, 0.0, 0.001, true);
  Result<ColumnPath> stepped = ColumnPath::Start(spec, data.matrix, data.labels, {}, ColumnPathOptions{});
  ASSERT_TRUE(stepped.ok()) << stepped.status().ToString();
  const auto rows = static_cast<double>(data.rows());
  double positive = 0;
  for (const double y : data.labels) positive += y > 0 ? 1.0 / rows : 0.0;
  std::vector<double> gradient(static_cast<std::size_t>(data.cols()), 0.0);
  for (int64_t r = 0; r < data.rows(); ++r) {
    const double residual = positive - (data.labels[r] > 0 ? 1.0 : 0.0);
    for (int64_t k = data.matrix.row_ptr[r]; k < data.matrix.RowEnd(r); ++k) {
      gradient[data.matrix.col_idx[k]] += data.matrix.values[k] * residual / rows;
    }
  }
  double l1_max = 0;
  for (const double g : gradient) l1_max = std::max(l1_max, std::abs(g));
  EXPECT_NEAR(stepped->l1_max(), l1_max, 1e-4 * l1_max);
  for (const double l1 : {0.5 * l1_max, 0.1 * l1_max, 0.01 * l1_max}) {
    Result<ColumnPathPoint> point = stepped->Next(l1);
    ASSERT_TRUE(point.ok()) << point.status().ToString();
    EXPECT_TRUE(point->summary.converged) << l1 << ": " << point->summary.message;
  }
  Result<ColumnPathPoint> climbing = stepped->Next(0.1 * l1_max);
  ASSERT_FALSE(climbing.ok());
  EXPECT_NE(climbing.status().message().find("positive and descending"), std::string::npos);
}

// Three fold-like paths (heart_scale without each third of its rows) stepped along one grid on
// two threads: every lambda's points reach the caller in the grid's order, each the very point
// the path gives stepped alone, lambda by lambda. An error of the caller's, or a point's (a grid
// that climbs), ends the grid with it.
TEST(ColumnPath, PathsAlongAGridOnThreadsGiveEachPathsOwnPointsInOrder) {
  const Dataset data = ReadHeartScale();
  auto start_paths = [&] {
    std::vector<ColumnPath> paths;
    for (int64_t k = 0; k < 3; ++k) {
      std::vector<int64_t> rows;
      for (int64_t r = 0; r < data.rows(); ++r) {
        if (r % 3 != k) rows.push_back(r);
      }
      const Dataset fold = data.SelectRows(rows);
      ProblemSpec spec = SpecOf(fold, 0.0, 0.001, true);
      spec.cols = data.cols();
      Result<ColumnPath> path = ColumnPath::Start(spec, fold.matrix, fold.labels, {}, ColumnPathOptions{});
      EXPECT_TRUE(path.ok()) << path.status().ToString();
      paths.push_back(std::move(path).value());
    }
    return paths;
  };
  std::vector<ColumnPath> alone = start_paths();
  double top = 0;
  for (const ColumnPath& path : alone) top = std::max(top, path.l1_max());
  const std::vector<double> grid = {0.5 * top, 0.2 * top, 0.1 * top, 0.05 * top, 0.02 * top, 0.01 * top};
  std::vector<std::vector<std::vector<double>>> expected(grid.size());  // [point][path]
  for (std::size_t i = 0; i < grid.size(); ++i) {
    for (ColumnPath& path : alone) {
      Result<ColumnPathPoint> point = path.Next(grid[i]);
      ASSERT_TRUE(point.ok()) << point.status().ToString();
      expected[i].push_back(point->x);
    }
  }
  std::vector<ColumnPath> paths = start_paths();
  std::vector<double> emitted;
  const Status stepped = StepPathsAlongGrid(paths, grid, 2, [&](double l1, std::vector<ColumnPathPoint> points) {
    const std::size_t i = emitted.size();
    emitted.push_back(l1);
    EXPECT_EQ(points.size(), 3u);
    for (std::size_t k = 0; k < points.size() && i < grid.size(); ++k) {
      EXPECT_EQ(points[k].l1, l1);
      EXPECT_EQ(points[k].x, expected[i][k]) << "lambda " << i << ", path " << k;
    }
    return Status::Ok();
  });
  ASSERT_TRUE(stepped.ok()) << stepped.ToString();
  EXPECT_EQ(emitted, grid);

  paths = start_paths();
  int calls = 0;
  const Status refused = StepPathsAlongGrid(paths, grid, 2, [&](double, std::vector<ColumnPathPoint>) {
    return ++calls == 2 ? InvalidArgument("the caller's own error") : Status::Ok();
  });
  EXPECT_EQ(refused.message(), "the caller's own error");
  EXPECT_EQ(calls, 2);

  paths = start_paths();
  calls = 0;
  const std::vector<double> climbing = {0.5 * top, 0.6 * top};
  const Status climbed = StepPathsAlongGrid(paths, climbing, 2, [&](double, std::vector<ColumnPathPoint>) {
    ++calls;
    return Status::Ok();
  });
  EXPECT_NE(climbed.message().find("positive and descending"), std::string::npos) << climbed.ToString();
  EXPECT_EQ(calls, 1);
}

// Cross-validation's paths started together, each fold's blocks taken from the whole's: every
// fold's points are those of the path started alone on a copy of its training rows (their own
// rows, row weights and class weights), bit for bit, and the last path is the whole data's. A
// fold that holds every row leaves the others none: the error names it.
TEST(ColumnPath, FoldsStartedFromTheWholesBlocksAreThePathsOfTheirOwnRows) {
  const Dataset data = ReadHeartScale();
  ProblemSpec spec = SpecOf(data, 0.0, 0.001, true);
  spec.class_weights = {1.0, 2.5};
  std::vector<double> row_weights;
  std::vector<uint8_t> fold_of_rows;
  for (int64_t r = 0; r < data.rows(); ++r) {
    row_weights.push_back(1.0 + static_cast<double>(r % 4) / 4);
    fold_of_rows.push_back(static_cast<uint8_t>((r * 7) % 3));
  }
  Result<std::vector<ColumnPath>> started =
      ColumnPath::StartFolds(spec, data.matrix, data.labels, row_weights, fold_of_rows, 3, ColumnPathOptions{}, 2);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  ASSERT_EQ(started->size(), 4u);
  for (std::size_t k = 0; k < 4; ++k) {
    std::vector<int64_t> rows;
    std::vector<double> weights;
    for (int64_t r = 0; r < data.rows(); ++r) {
      if (fold_of_rows[r] == k) continue;
      rows.push_back(r);
      weights.push_back(row_weights[r]);
    }
    const Dataset own = data.SelectRows(rows);
    ProblemSpec own_spec = spec;
    own_spec.rows = own.rows();
    Result<ColumnPath> alone = ColumnPath::Start(own_spec, own.matrix, own.labels, weights, ColumnPathOptions{});
    ASSERT_TRUE(alone.ok()) << alone.status().ToString();
    ColumnPath& together = (*started)[k];
    EXPECT_EQ(together.l1_max(), alone->l1_max()) << "path " << k;
    for (const double share : {0.5, 0.1, 0.02}) {
      Result<ColumnPathPoint> expected = alone->Next(share * alone->l1_max());
      Result<ColumnPathPoint> point = together.Next(share * alone->l1_max());
      ASSERT_TRUE(expected.ok() && point.ok());
      EXPECT_TRUE(point->summary.converged) << point->summary.message;
      EXPECT_EQ(point->x, expected->x) << "path " << k << ", l1 " << share << " l1_max";
    }
  }
  const std::vector<uint8_t> one_fold(static_cast<std::size_t>(data.rows()), 0);
  Result<std::vector<ColumnPath>> empty =
      ColumnPath::StartFolds(spec, data.matrix, data.labels, {}, one_fold, 1, ColumnPathOptions{}, 2);
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("fold 0: rows"), std::string::npos) << empty.status().ToString();
}

TEST(ColumnDescent, RefusesWhatItCannotSolveYet) {
  const Dataset data = ReadHeartScale();
  ProblemSpec spec = SpecOf(data, 0.01, 0.0);
  ColumnDescentOptions options;
  options.blocks = 0;
  EXPECT_FALSE(SolveByColumns(spec, data.matrix, data.labels, {}, options).ok());
  spec.copies = 2;
  spec.copy_scales = {1.0, 1.0};
  Result<ColumnDescentResult> copies = SolveByColumns(spec, data.matrix, data.labels, {}, ColumnDescentOptions{});
  ASSERT_FALSE(copies.ok());
  EXPECT_NE(copies.status().message().find("column method"), std::string::npos) << copies.status().message();
}

}  // namespace
}  // namespace nimbus
