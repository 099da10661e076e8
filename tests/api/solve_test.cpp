// The facade, nimbus::Solve, as a program that links the library calls it: data from a file,
// from the caller's own arrays, on threads and on worker processes; checked against
// liblinear's optimum, with every option error named.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "nimbus/data/libsvm_reader.h"
#include "nimbus/nimbus.h"
#include "nimbus/solve/master.h"
#include "support/test_support.h"

namespace nimbus {
namespace {

using testing::HeartScalePath;
using testing::TempDir;
using testing::TrainLiblinear;

constexpr double kL1 = 0.01;

Dataset ReadHeartScale() {
  Result<Dataset> data = ReadLibsvmFile(HeartScalePath(), LibsvmReadOptions{});
  EXPECT_TRUE(data.ok()) << data.status().ToString();
  return std::move(data).value();
}

// F of `model` on heart_scale with l1 = kL1, computed here from the file.
double ObjectiveOnHeartScale(const Model& model) {
  const Dataset data = ReadHeartScale();
  return EvaluateObjective(model.Spec(data.rows(), data.cols()), data.matrix, data.labels, model.WeightsFor(data.cols()));
}

// liblinear's L1-regularized logistic regression (-s 6) to a tight tolerance: F*.
double LiblinearObjective() {
  static const double objective = [] {
    TempDir dir;
    const Dataset data = ReadHeartScale();
    const std::string path = TrainLiblinear(6, 1.0 / (static_cast<double>(data.rows()) * kL1), 1e-8, HeartScalePath(),
                                            dir.File("liblinear.model"));
    Result<Model> model = ReadModel(path);
    EXPECT_TRUE(model.ok()) << model.status().ToString();
    model->regularizer.l1 = kL1;
    return ObjectiveOnHeartScale(*model);
  }();
  return objective;
}

SolveOptions L1Options() {
  SolveOptions options;
  options.l1 = kL1;
  options.runtime.workers = 2;
  options.admm.eps_abs = 1e-9;
  options.admm.eps_rel = 1e-7;
  options.gradient_tolerance = 1e-8;
  return options;
}

void ExpectLiblinearOptimum(const Result<SolveResult>& result) {
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_TRUE(result->summary.ok()) << result->summary.message;
  const double objective = ObjectiveOnHeartScale(result->model);
  EXPECT_LE(objective, LiblinearObjective() * (1 + 1e-6));
  EXPECT_NEAR(result->summary.objective, objective, 1e-9 * objective);
}

TEST(Solve, ALibsvmFileOnThreadsReachesLiblinearsOptimum) {
  ExpectLiblinearOptimum(Solve(TrainingData::LibsvmFile(HeartScalePath()), L1Options()));
}

TEST(Solve, ADMMReachesTheSameOptimum) {
  SolveOptions options = L1Options();
  options.algorithm = Algorithm::kAdmm;
  Result<SolveResult> result = Solve(TrainingData::LibsvmFile(HeartScalePath()), options);
  ExpectLiblinearOptimum(result);
  EXPECT_EQ(result->summary.algorithm, Algorithm::kAdmm);
}

TEST(Solve, TheCallersArraysWithLabelsZeroAndOneReachTheOptimum) {
  const Dataset file = ReadHeartScale();
  // The caller's own arrays, labels 0 and 1 where the file has -1 and +1.
  std::vector<int64_t> row_ptr(file.matrix.row_ptr, file.matrix.row_ptr + file.rows() + 1);
  std::vector<uint32_t> col_idx(file.matrix.col_idx, file.matrix.col_idx + file.nnz());
  std::vector<double> values(file.matrix.values, file.matrix.values + file.nnz());
  std::vector<double> labels;
  for (const double y : file.labels) labels.push_back(y > 0 ? 1.0 : 0.0);
  const CsrView matrix{file.rows(), file.cols(), row_ptr.data(), col_idx.data(), values.data()};
  Result<SolveResult> result = Solve(TrainingData::Csr(matrix, labels), L1Options());
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->model.labels.negative, 0.0);
  EXPECT_EQ(result->model.labels.positive, 1.0);
  result->model.labels = file.encoding;  // the file's encoding, for the objective on the file
  ExpectLiblinearOptimum(result);
}

// The caller's rows with integer weights are the rows repeated that many times: heart_scale
// written out with row r repeated w_r times (an unweighted solve, liblinear's optimum there
// at l1 scaled by N / N') and the weighted solve have the same argmin.
TEST(Solve, TheCallersRowWeightsCountAsRepeatedRows) {
  const Dataset file = ReadHeartScale();
  std::vector<double> weights;
  std::vector<int64_t> row_ptr = {0};
  std::vector<uint32_t> col_idx;
  std::vector<double> values, labels;
  for (int64_t r = 0; r < file.rows(); ++r) {
    weights.push_back(static_cast<double>((r * 5 + 1) % 4));
    for (int copy = 0; copy < static_cast<int>(weights.back()); ++copy) {
      for (int64_t k = file.matrix.row_ptr[r]; k < file.matrix.row_ptr[r + 1]; ++k) {
        col_idx.push_back(file.matrix.col_idx[k]);
        values.push_back(file.matrix.values[k]);
      }
      row_ptr.push_back(static_cast<int64_t>(col_idx.size()));
      labels.push_back(file.labels[static_cast<std::size_t>(r)]);
    }
  }
  const CsrView original{file.rows(), file.cols(), file.matrix.row_ptr, file.matrix.col_idx, file.matrix.values};
  Result<SolveResult> weighted = Solve(TrainingData::Csr(original, file.labels).WithSampleWeights(weights), L1Options());
  ASSERT_TRUE(weighted.ok()) << weighted.status().ToString();
  const auto repeated_rows = static_cast<int64_t>(labels.size());
  const CsrView repeated{repeated_rows, file.cols(), row_ptr.data(), col_idx.data(), values.data()};
  SolveOptions options = L1Options();
  options.l1 = kL1 * static_cast<double>(file.rows()) / static_cast<double>(repeated_rows);
  Result<SolveResult> plain = Solve(TrainingData::Csr(repeated, labels), options);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  ASSERT_EQ(weighted->model.weights.size(), plain->model.weights.size());
  for (std::size_t j = 0; j < plain->model.weights.size(); ++j) {
    EXPECT_NEAR(weighted->model.weights[j], plain->model.weights[j], 1e-6) << "feature " << j + 1;
  }
  // F_weighted = (N' / N) F_repeated at the same point.
  EXPECT_NEAR(weighted->summary.objective,
              plain->summary.objective * static_cast<double>(repeated_rows) / static_cast<double>(file.rows()),
              1e-9 * weighted->summary.objective);

  const std::vector<double> short_weights(3, 1.0), negative(static_cast<std::size_t>(file.rows()), -1.0);
  Result<SolveResult> bad = Solve(TrainingData::Csr(original, file.labels).WithSampleWeights(short_weights), L1Options());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("sample weights: 3 weights for 270 rows"), std::string::npos)
      << bad.status().message();
  bad = Solve(TrainingData::Csr(original, file.labels).WithSampleWeights(negative), L1Options());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("sample weights[0]: the weight must be a finite number >= 0"),
            std::string::npos)
      << bad.status().message();
}

// heart_scale's 13 features spread over a space of 2^32 (feature c at c * 330382099 + 7): the
// solve runs over the 13 that occur and the model holds them by the caller's numbers; put
// back in heart_scale's numbering by hand it is liblinear's optimum there.
TEST(Solve, TheCallersArraysInASpaceOf2To32FeaturesAreSolvedOverTheFeaturesThatOccur) {
  constexpr int64_t kSpace = int64_t{1} << 32;
  auto spread = [](int64_t c) { return c * 330382099 + 7; };
  const Dataset file = ReadHeartScale();
  std::vector<int64_t> row_ptr(file.matrix.row_ptr, file.matrix.row_ptr + file.rows() + 1);
  std::vector<uint32_t> col_idx;
  for (int64_t k = 0; k < file.nnz(); ++k) col_idx.push_back(static_cast<uint32_t>(spread(file.matrix.col_idx[k])));
  const std::vector<uint32_t> given = col_idx;
  std::vector<double> values(file.matrix.values, file.matrix.values + file.nnz());
  const CsrView matrix{file.rows(), kSpace, row_ptr.data(), col_idx.data(), values.data()};
  Result<SolveResult> result = Solve(TrainingData::Csr(matrix, file.labels), L1Options());
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(col_idx, given);  // the caller's arrays are not renumbered in place
  EXPECT_EQ(result->summary.cols, kSpace);
  EXPECT_EQ(result->summary.solved_cols, 13);
  const Model& hashed = result->model;
  EXPECT_EQ(hashed.cols, kSpace);
  ASSERT_EQ(hashed.features.size(), 13u);
  EXPECT_EQ(hashed.features[12], spread(12));

  Model renumbered = hashed;
  renumbered.cols = 13;
  renumbered.features.clear();
  renumbered.weights.clear();
  for (int64_t c = 0; c < 13; ++c) renumbered.weights.push_back(hashed.Weight(spread(c)));
  result->model = renumbered;
  ExpectLiblinearOptimum(result);
}

TEST(Solve, WorkerProcessesReachTheOptimum) {
  SolveOptions options = L1Options();
  options.runtime.kind = RuntimeKind::kProcess;
  options.runtime.worker_program = NIMBUS_BINARY;
  Result<SolveResult> result = Solve(TrainingData::LibsvmFile(HeartScalePath()), options);
  ExpectLiblinearOptimum(result);
  EXPECT_EQ(result->summary.runtime, "process");
}

// ---- Warm starts ---------------------------------------------------------------------------

Result<SolveResult> SolveHeartScale(const SolveOptions& options) {
  return Solve(TrainingData::LibsvmFile(HeartScalePath()), options);
}

// The master is chosen once, and the summary (and on_start) say which and why: auto's default,
// an ADMM-only option, or the caller's own choice.
TEST(Solve, TheSummarySaysWhichAlgorithmRanAndWhy) {
  struct Case {
    void (*mutate)(SolveOptions&);
    Algorithm ran;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {[](SolveOptions&) {}, Algorithm::kNewton, "auto: the default"},
      {[](SolveOptions& o) { o.admm.barrier = 1; }, Algorithm::kAdmm, "auto: --barrier"},
      {[](SolveOptions& o) { o.algorithm = Algorithm::kAdmm; }, Algorithm::kAdmm, "--algorithm admm"},
      {[](SolveOptions& o) { o.algorithm = Algorithm::kNewton; }, Algorithm::kNewton, "--algorithm newton"},
  };
  for (const Case& c : cases) {
    SolveOptions options = L1Options();
    c.mutate(options);
    std::optional<SolveStart> started;
    options.on_start = [&started](const SolveStart& start) {
      started = start;
      return Status::Ok();
    };
    Result<SolveResult> result = SolveHeartScale(options);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    SCOPED_TRACE(c.reason);
    EXPECT_EQ(result->summary.algorithm, c.ran);
    EXPECT_EQ(result->summary.algorithm_reason.rfind(c.reason, 0), 0u) << result->summary.algorithm_reason;
    ASSERT_TRUE(started.has_value());
    EXPECT_EQ(started->algorithm, c.ran);
    EXPECT_EQ(started->algorithm_reason, result->summary.algorithm_reason);
    EXPECT_NE(result->summary.FullReport().find("algorithm        " + std::string(NameOf(c.ran)) + " (" + c.reason),
              std::string::npos) << result->summary.FullReport();
    EXPECT_NE(result->summary.ToJson().find("\"algorithm_reason\":\"" + c.reason), std::string::npos)
        << result->summary.ToJson();
  }
}

// From the model at 2 lambda, both algorithms reach liblinear's optimum at lambda; Newton in
// fewer steps than from zero. (ADMM's duals still start at zero, and rebuilding them takes
// about as many rounds as a cold start: 81 against 76 here.)
TEST(Solve, AWarmStartFromAnotherLambdasModelReachesTheOptimumNewtonInFewerSteps) {
  for (const Algorithm algorithm : {Algorithm::kNewton, Algorithm::kAdmm}) {
    SolveOptions options = L1Options();
    options.algorithm = algorithm;
    SolveOptions elsewhere = options;
    elsewhere.l1 = 2 * kL1;
    Result<SolveResult> near = SolveHeartScale(elsewhere);
    Result<SolveResult> cold = SolveHeartScale(options);
    ASSERT_TRUE(near.ok() && cold.ok());
    options.warm_start = std::make_shared<const Model>(near->model);
    Result<SolveResult> warm = SolveHeartScale(options);
    ExpectLiblinearOptimum(warm);
    if (algorithm == Algorithm::kNewton) {
      EXPECT_LT(warm->summary.iterations, cold->summary.iterations);
    }
  }
}

// Newton's stop test scales the residual at zero, as a cold start's does: started at the
// optimum it passes at once (a round at zero, one at the start, no step). Scaled at the start
// instead, it would ask for 1e-8 of a residual already near 0.
TEST(Solve, ANewtonWarmStartAtTheOptimumTakesNoStep) {
  Result<SolveResult> cold = SolveHeartScale(L1Options());
  ASSERT_TRUE(cold.ok());
  SolveOptions options = L1Options();
  options.warm_start = std::make_shared<const Model>(cold->model);
  Result<SolveResult> warm = SolveHeartScale(options);
  ExpectLiblinearOptimum(warm);
  EXPECT_EQ(warm->summary.iterations, 0);
  EXPECT_EQ(warm->summary.rounds, 2);
}

// A model of other classes is refused, naming both; so is a path (which starts from x0).
TEST(Solve, AWarmStartModelOfOtherClassesIsRefused) {
  Model three_classes;
  three_classes.classes = 3;
  three_classes.cols = 13;
  three_classes.labels.classes = {1, 2, 3};
  three_classes.weights.assign(39, 0.0);
  SolveOptions options = L1Options();
  options.warm_start = std::make_shared<const Model>(three_classes);
  Result<SolveResult> result = SolveHeartScale(options);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("--warm-start: the model is of 3 classes 1 .. 3 (3 weight vectors), the "
                                           "data of labels 1 (+1) and -1 (-1) (1)"),
            std::string::npos)
      << result.status().message();
  options.l1.reset();
  Result<PathResult> path = SolvePath(TrainingData::LibsvmFile(HeartScalePath()), options, PathOptions{});
  ASSERT_FALSE(path.ok());
  EXPECT_NE(path.status().message().find("--warm-start: a path starts"), std::string::npos);
}

TEST(Solve, CallbacksSeeEveryIterationAndTraceEventAndMayStop) {
  SolveOptions options = L1Options();
  int iterations = 0;
  std::vector<std::string> events;
  std::string started;
  options.on_start = [&](const SolveStart& start) {
    started = std::string(NameOf(start.algorithm)) + " " + std::to_string(start.workers) + " " + std::to_string(start.spec.rows);
    return Status::Ok();
  };
  options.on_iteration = [&](const IterationInfo&) { return ++iterations < 2; };
  options.on_trace = [&](std::string_view event) { events.emplace_back(event); };
  Result<SolveResult> result = Solve(TrainingData::LibsvmFile(HeartScalePath()), options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(started, "newton 2 270");
  EXPECT_EQ(iterations, 2);
  EXPECT_EQ(result->summary.termination, Termination::kUserStopped);
  ASSERT_FALSE(events.empty());
  for (const std::string& event : events) EXPECT_EQ(event.front(), '{') << event;
}

TEST(Solve, AnErrorFromOnStartEndsTheSolveBeforeAnyWorkerStarts) {
  SolveOptions options = L1Options();
  options.on_start = [](const SolveStart&) { return InvalidArgument("not today"); };
  Result<SolveResult> result = Solve(TrainingData::LibsvmFile(HeartScalePath()), options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(), "not today");
}

TEST(Solve, EveryBadOptionIsNamed) {
  struct Case {
    void (*mutate)(SolveOptions&);
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](SolveOptions& o) { o.runtime.workers = -1; }, "--workers"},
      {[](SolveOptions& o) { o.runtime.kind = RuntimeKind::kCommand; }, "--runtime command: needs --launch"},
      {[](SolveOptions& o) { o.algorithm = Algorithm::kNewton, o.admm.barrier = 1; }, "--algorithm newton: not with --barrier"},
      {[](SolveOptions& o) { o.admm.message_precision = MessagePrecision::kFloat32; }, "--message-precision float32: only where"},
      {[](SolveOptions& o) { o.checkpoint.location = "/tmp/x", o.checkpoint.every = 0; }, "--checkpoint-every"},
      {[](SolveOptions& o) { o.checkpoint.resume = std::make_shared<const MasterState>(); }, "--resume: needs --checkpoint"},
      {[](SolveOptions& o) { o.checkpoint.location = "/tmp/x", o.admm.barrier = 1; }, "--checkpoint: needs synchronous rounds"},
      {[](SolveOptions& o) { o.runtime.kind = RuntimeKind::kMpi, o.checkpoint.location = "/tmp/x"; },
       RuntimeAvailable(RuntimeKind::kMpi) ? "--checkpoint: not with --runtime mpi" : "--runtime: 'mpi' is not available"},
      {[](SolveOptions& o) { o.runtime.kind = RuntimeKind::kMpi, o.runtime.topology = Topology::kAllreduce, o.admm.barrier = 1; },
       RuntimeAvailable(RuntimeKind::kMpi) ? "--barrier: with --topology allreduce" : "--runtime: 'mpi' is not available"},
      {[](SolveOptions& o) { o.runtime.topology = Topology::kAllreduce; }, "--topology allreduce: only for --runtime mpi"},
      {[](SolveOptions& o) { o.gradient_tolerance = 2; }, "gradient_tolerance: must be in (0, 1)"},
      {[](SolveOptions& o) { o.admm.relaxation = 3; }, "relaxation: must be in [1, 1.8]"},
      {[](SolveOptions& o) { o.l1 = -1; }, "l1: must be a finite number >= 0"},
      {[](SolveOptions& o) { o.admm.barrier = 3; }, "--barrier: 3 of 2 workers"},
  };
  for (const Case& c : cases) {
    SolveOptions options = L1Options();
    c.mutate(options);
    Result<SolveResult> result = Solve(TrainingData::LibsvmFile(HeartScalePath()), options);
    ASSERT_FALSE(result.ok()) << c.message;
    EXPECT_NE(result.status().message().find(c.message), std::string::npos)
        << "expected '" << c.message << "' in: " << result.status().message();
  }
}

// ---- A program's own loss and regularizer --------------------------------------------------

// The logistic loss written from its formula, as a user would: log(1 + e^{-y m}).
class FormulaLogistic final : public CustomLoss {
 public:
  FormulaLogistic() : CustomLoss("formula_logistic", /*classification=*/true) {}
  double Value(double y, double m) const override { return std::log1p(std::exp(-y * m)); }
  void Derivatives(double y, double m, double* first, double* second) const override {
    const double p = 1.0 / (1.0 + std::exp(y * m));  // sigmoid(-y m)
    *first = -y * p;
    *second = p * (1.0 - p);
  }
};

// lambda |x|: non-smooth, a prox only.
class FormulaL1 final : public CustomRegularizer {
 public:
  explicit FormulaL1(double lambda) : CustomRegularizer("formula_l1"), lambda_(lambda) {}
  double Value(double x) const override { return lambda_ * std::abs(x); }
  double Prox(double t, double x) const override { return std::copysign(std::max(std::abs(x) - t * lambda_, 0.0), x); }

 private:
  double lambda_;
};

// (lambda/2) x^2: smooth.
class FormulaL2 final : public CustomRegularizer {
 public:
  explicit FormulaL2(double lambda) : CustomRegularizer("formula_l2"), lambda_(lambda) {}
  double Value(double x) const override { return 0.5 * lambda_ * x * x; }
  double Prox(double t, double x) const override { return x / (1.0 + t * lambda_); }
  bool smooth() const override { return true; }
  void Derivatives(double x, double* first, double* second) const override {
    *first = lambda_ * x;
    *second = lambda_;
  }

 private:
  double lambda_;
};

TEST(Solve, EveryAlgorithmSolvesWithTheProgramsOwnLoss) {
  for (const Algorithm algorithm : {Algorithm::kNewton, Algorithm::kAdmm}) {
    SolveOptions options = L1Options();
    options.loss = Loss(std::make_shared<FormulaLogistic>());
    options.algorithm = algorithm;
    Result<SolveResult> result = Solve(TrainingData::LibsvmFile(HeartScalePath()), options);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(result->summary.algorithm, algorithm);
    result->model.loss = Loss::kLogistic;  // the same function, for the objective on the file
    ExpectLiblinearOptimum(result);
  }
}

TEST(Solve, ANonSmoothRegularizerOfTheProgramsOwnIsSolvedByEveryAlgorithm) {
  for (const Algorithm algorithm : {Algorithm::kAuto, Algorithm::kNewton, Algorithm::kAdmm}) {
    SolveOptions options = L1Options();
    options.l1.reset();
    options.regularizer = std::make_shared<FormulaL1>(kL1);
    options.algorithm = algorithm;
    Result<SolveResult> result = Solve(TrainingData::LibsvmFile(HeartScalePath()), options);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    result->model.regularizer = Regularizer(kL1, 0);
    SCOPED_TRACE(algorithm);
    ExpectLiblinearOptimum(result);
  }
}

// lambda x for x >= 0, and +infinity below: a constraint, whose prox is a projection. Its kink
// is not at 0 alone (the value jumps), and Newton's l1 machinery knows nothing of it.
class NonNegativeL1 final : public CustomRegularizer {
 public:
  explicit NonNegativeL1(double lambda) : CustomRegularizer("nonnegative_l1"), lambda_(lambda) {}
  double Value(double x) const override { return x < 0 ? std::numeric_limits<double>::infinity() : lambda_ * x; }
  double Prox(double t, double x) const override { return std::max(x - t * lambda_, 0.0); }

 private:
  double lambda_;
};

// The gradient of heart_scale's loss term (no regularizer) at w, by central differences.
std::vector<double> LossGradientOnHeartScale(Model model) {
  const Dataset data = ReadHeartScale();
  model.regularizer = Regularizer(0, 0);
  const ProblemSpec spec = model.Spec(data.rows(), data.cols());
  std::vector<double> w = model.WeightsFor(data.cols()), gradient(w.size());
  constexpr double kStep = 1e-6;
  for (std::size_t j = 0; j < w.size(); ++j) {
    const double at = w[j];
    w[j] = at + kStep;
    const double above = EvaluateObjective(spec, data.matrix, data.labels, w);
    w[j] = at - kStep;
    const double below = EvaluateObjective(spec, data.matrix, data.labels, w);
    w[j] = at;
    gradient[j] = (above - below) / (2 * kStep);
  }
  return gradient;
}

// The optimum of f(w) + lambda sum w_j subject to w >= 0 satisfies, with g = grad f:
// g_j + lambda = 0 where w_j > 0, and g_j + lambda >= 0 where w_j = 0.
TEST(Solve, AConstraintOfTheProgramsOwnMeetsItsOptimalityConditionsWithEveryAlgorithm) {
  constexpr double kLambda = 0.005;
  for (const Algorithm algorithm : {Algorithm::kNewton, Algorithm::kAdmm}) {
    SCOPED_TRACE(algorithm);
    SolveOptions options = L1Options();
    options.l1.reset();
    options.intercept = true;
    options.regularizer = std::make_shared<NonNegativeL1>(kLambda);
    options.algorithm = algorithm;
    Result<SolveResult> result = Solve(TrainingData::LibsvmFile(HeartScalePath()), options);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    ASSERT_TRUE(result->summary.ok()) << result->summary.message;
    const std::vector<double> gradient = LossGradientOnHeartScale(result->model);
    const std::vector<double>& w = result->model.weights;
    ASSERT_EQ(gradient.size(), w.size());
    int positive = 0;
    for (std::size_t j = 0; j + 1 < w.size(); ++j) {
      EXPECT_GE(w[j], 0.0) << "feature " << j + 1;
      if (w[j] > 0) {
        ++positive;
        EXPECT_NEAR(gradient[j] + kLambda, 0.0, 1e-6) << "feature " << j + 1;
      } else {
        EXPECT_GE(gradient[j] + kLambda, -1e-6) << "feature " << j + 1;
      }
    }
    EXPECT_NEAR(gradient.back(), 0.0, 1e-6) << "the intercept, which has no penalty";
    // Both kinds of coordinate occur, or the test would not test the constraint.
    EXPECT_GT(positive, 0);
    EXPECT_LT(positive, static_cast<int>(w.size()) - 1);
  }
}

TEST(Solve, ASmoothRegularizerOfTheProgramsOwnIsSolvedByBothAlgorithms) {
  constexpr double kL2 = 0.05;
  TempDir dir;
  const Dataset data = ReadHeartScale();
  Result<Model> reference = ReadModel(TrainLiblinear(0, 1.0 / (static_cast<double>(data.rows()) * kL2), 1e-10,
                                                     HeartScalePath(), dir.File("l2.model")));
  ASSERT_TRUE(reference.ok());
  reference->regularizer = Regularizer(0, kL2);
  const double optimum = EvaluateObjective(reference->Spec(data.rows(), data.cols()), data.matrix, data.labels,
                                           reference->WeightsFor(data.cols()));
  for (const Algorithm algorithm : {Algorithm::kNewton, Algorithm::kAdmm}) {
    SolveOptions options = L1Options();
    options.l1.reset();
    options.regularizer = std::make_shared<FormulaL2>(kL2);
    options.algorithm = algorithm;
    Result<SolveResult> result = Solve(TrainingData::LibsvmFile(HeartScalePath()), options);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    result->model.regularizer = Regularizer(0, kL2);
    const double objective = EvaluateObjective(result->model.Spec(data.rows(), data.cols()), data.matrix, data.labels,
                                               result->model.WeightsFor(data.cols()));
    EXPECT_LE(objective, optimum * (1 + 1e-7)) << algorithm;
    EXPECT_NEAR(result->summary.objective, objective, 1e-9 * objective) << algorithm;
  }
}

TEST(Solve, WorkersThatDoNotKnowTheLossSayWhichLoss) {
  SolveOptions options = L1Options();
  options.loss = Loss(std::make_shared<FormulaLogistic>());
  options.runtime.kind = RuntimeKind::kProcess;
  options.runtime.worker_program = NIMBUS_BINARY;  // the nimbus binary never registered it
  options.runtime.max_restarts = 0;
  Result<SolveResult> result = Solve(TrainingData::LibsvmFile(HeartScalePath()), options);
  const std::string message = result.ok() ? result->summary.message : result.status().message();
  EXPECT_FALSE(result.ok() && result->summary.ok());
  EXPECT_NE(message.find("formula_logistic"), std::string::npos) << message;
}

TEST(Solve, ARuntimeThisBuildLacksIsNamedWithTheOnesItHas) {
  for (const RuntimeKind kind : {RuntimeKind::kLambda, RuntimeKind::kMpi}) {
    if (RuntimeAvailable(kind)) continue;  // -DNIMBUS_WITH_AWS=OFF, -DNIMBUS_WITH_MPI=OFF
    SolveOptions options = L1Options();
    options.runtime.kind = kind;
    Result<SolveResult> result = Solve(TrainingData::LibsvmFile(HeartScalePath()), options);
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.status().message().find(std::string("--runtime: '") + NameOf(kind).data() + "' is not available"),
              std::string::npos) << result.status().message();
    EXPECT_NE(result.status().message().find("threads, process, command"), std::string::npos);
  }
  EXPECT_TRUE(RuntimeAvailable(RuntimeKind::kThreads) && RuntimeAvailable(RuntimeKind::kProcess) &&
              RuntimeAvailable(RuntimeKind::kCommand));
}

// The workers' reading of text, as a solve tells it (on_load): never more than the text, never
// backwards, and at the end every byte and every worker, on threads and on worker processes.
TEST(Solve, TheWorkersReadingOfTextIsToldAsItGoes) {
  const uint64_t file_bytes = std::filesystem::file_size(HeartScalePath());
  for (const RuntimeKind runtime : {RuntimeKind::kThreads, RuntimeKind::kProcess}) {
    SCOPED_TRACE(NameOf(runtime));
    SolveOptions options;
    options.l1 = kL1;
    options.runtime.kind = runtime;
    options.runtime.worker_program = NIMBUS_BINARY;
    options.runtime.workers = 3;
    std::vector<LoadProgress> told;
    options.on_load = [&told](const LoadProgress& progress) { told.push_back(progress); };
    Result<SolveResult> result = Solve(TrainingData::LibsvmFile(HeartScalePath()), options);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    ASSERT_FALSE(told.empty());
    for (std::size_t i = 0; i < told.size(); ++i) {
      EXPECT_EQ(told[i].bytes_total, file_bytes);
      EXPECT_LE(told[i].bytes_read, told[i].bytes_total);
      EXPECT_EQ(told[i].workers, 3);
      if (i > 0) {
        EXPECT_GE(told[i].bytes_read, told[i - 1].bytes_read);
      }
    }
    EXPECT_EQ(told.back().bytes_read, file_bytes);
    EXPECT_EQ(told.back().workers_done, 3);
  }
}

TEST(Solve, BadDataIsNamed) {
  Result<SolveResult> missing = Solve(TrainingData::LibsvmFile("/nonexistent/train.svm"), SolveOptions{});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/train.svm"), std::string::npos);

  const std::vector<int64_t> row_ptr = {0, 1, 2, 3};
  const std::vector<uint32_t> col_idx = {0, 0, 0};
  const std::vector<double> values = {1, 2, 3};
  const std::vector<double> three_labels = {1, 2, 3};
  const CsrView matrix{3, 1, row_ptr.data(), col_idx.data(), values.data()};
  std::vector<double> many_labels(kMaxClasses + 1);
  std::vector<int64_t> many_ptr(many_labels.size() + 1);
  for (std::size_t r = 0; r < many_labels.size(); ++r) many_labels[r] = static_cast<double>(r), many_ptr[r + 1] = 0;
  const CsrView many{static_cast<int64_t>(many_labels.size()), 1, many_ptr.data(), col_idx.data(), values.data()};
  Result<SolveResult> too_many = Solve(TrainingData::Csr(many, many_labels), SolveOptions{});
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.status().message().find("the most classes a classifier takes"), std::string::npos)
      << too_many.status().message();
  Result<SolveResult> short_labels = Solve(TrainingData::Csr(matrix, std::span(three_labels).first(2)), SolveOptions{});
  ASSERT_FALSE(short_labels.ok());
  EXPECT_NE(short_labels.status().message().find("2 labels for 3 rows"), std::string::npos);
  const std::vector<uint32_t> wide_col_idx = {0, 5, 0};
  const CsrView wide{3, 2, row_ptr.data(), wide_col_idx.data(), values.data()};
  const std::vector<double> two_labels = {1, -1, 1};
  Result<SolveResult> wild = Solve(TrainingData::Csr(wide, two_labels), SolveOptions{});
  ASSERT_FALSE(wild.ok());
  EXPECT_NE(wild.status().message().find("col_idx[1] = 5 is not below cols = 2"), std::string::npos)
      << wild.status().message();
  // Rows whose indices do not ascend are refused up front, on every runtime (a remote worker's
  // shard could not hold them).
  const std::vector<int64_t> one_row = {0, 2};
  const std::vector<uint32_t> descending = {1, 0};
  const std::vector<double> two_values = {1, 2}, one_label = {1};
  const CsrView unsorted{1, 2, one_row.data(), descending.data(), two_values.data()};
  Result<SolveResult> refused = Solve(TrainingData::Csr(unsorted, one_label), SolveOptions{});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("data: the column indices do not ascend in row 0"), std::string::npos)
      << refused.status().message();
}

}  // namespace
}  // namespace nimbus
