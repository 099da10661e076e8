// Score rounds (RoundKind::kScore) on a worker: each fold's figures on the rows it holds out,
// scored by that fold's copy of the model, checked against sums and a pairwise AUC computed
// here from dense dot products; the AUC's later rounds; a replacement that never saw the
// first round; and questions that cannot be answered.
#include "nimbus/worker/held_out_scores.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "local/sparse_test_problem.h"
#include "nimbus/worker/shard_worker.h"

namespace nimbus {
namespace {

using testing::MakeRandomProblem;
using testing::SparseProblem;

constexpr int64_t kFolds = 3;

// 60 rows, 8 features; the worker holds rows [10, 50), row r held out in fold r % 3. The
// problem has the 3 folds' copies and the whole's.
struct Folded {
  explicit Folded(Loss loss_of) : loss(loss_of) {
    full = std::make_shared<SparseProblem>(MakeRandomProblem(60, 8, 3, 5, loss));
    spec.loss = loss;
    spec.intercept = true;
    spec.rows = 60;
    spec.cols = 8;
    spec.copies = kFolds + 1;
    spec.copy_scales = {1.5, 1.5, 1.5, 1.0};
    std::mt19937_64 random(9);
    std::normal_distribution<double> normal;
    model.resize(spec.model_size());
    for (double& w : model) w = normal(random);
  }

  Dataset Shard() const {
    Dataset all;
    all.matrix = full->View();
    all.labels = full->labels;
    all.encoding.classification = IsClassification(loss);
    all.storage = full;
    Dataset shard = all.Rows(10, 50);
    std::vector<uint8_t> folds;
    for (int r = 10; r < 50; ++r) folds.push_back(static_cast<uint8_t>(r % kFolds));
    shard.AdoptFolds(std::move(folds));
    return shard;
  }

  // Row r's decision value by fold k's model: model entry j B + k for feature j (B = copies),
  // the intercepts after the features.
  double Margin(int64_t r, int64_t k) const {
    const auto b = static_cast<std::size_t>(spec.copies);
    double m = model[static_cast<std::size_t>(spec.cols) * b + static_cast<std::size_t>(k)];
    for (int64_t e = full->row_ptr[static_cast<std::size_t>(r)]; e < full->row_ptr[static_cast<std::size_t>(r) + 1]; ++e) {
      m += full->values[static_cast<std::size_t>(e)] * model[full->col_idx[static_cast<std::size_t>(e)] * b + static_cast<std::size_t>(k)];
    }
    return m;
  }

  WorkerReply Ask(ShardWorker& worker, int64_t round, const ScoreQuery& query) const {
    RoundRequest request;
    request.round = round;
    request.kind = RoundKind::kScore;
    request.z = SharedVector(model);
    request.query = SharedVector(query.Pack());
    return worker.Serve(request);
  }

  Loss loss;
  std::shared_ptr<SparseProblem> full;
  ProblemSpec spec;
  std::vector<double> model;
};

ScoreQuery FirstQuery(int64_t model_round, bool auc) {
  ScoreQuery query{model_round, 0, {}};
  for (int64_t k = 0; auc && k < kFolds; ++k) query.prefixes.emplace_back(k, 0);
  return query;
}

TEST(HeldOutScoresTest, EachFoldsSumsAreItsHeldOutRowsScoredByItsModel) {
  for (const Loss& loss : {Loss::kLogistic, Loss::kSquared}) {
    const Folded f(loss);
    ShardWorker worker(0, f.Shard(), f.spec, WorkerOptions{});
    const WorkerReply reply = f.Ask(worker, 7, FirstQuery(7, false));
    ASSERT_EQ(reply.status, ReplyStatus::kOk) << reply.error;
    EXPECT_EQ(reply.w_vectors, 0);
    EXPECT_EQ(reply.timings.data_passes, 1);
    std::span<const double> in = reply.w.span();
    for (int64_t k = 0; k < kFolds; ++k) {
      EvaluationSums sums(loss, 1, false);
      ASSERT_TRUE(sums.ReadFrom(in).ok());
      int64_t rows = 0;
      double correct = 0, loss_sum = 0, squared_error = 0;
      for (int64_t r = 10; r < 50; ++r) {
        if (r % kFolds != k) continue;
        const double m = f.Margin(r, k), y = f.full->labels[static_cast<std::size_t>(r)];
        ++rows;
        correct += (m > 0 ? 1.0 : -1.0) == y ? 1 : 0;
        loss_sum += loss == Loss::kLogistic ? std::log1p(std::exp(-y * m)) : 0.5 * (m - y) * (m - y);
        squared_error += (m - y) * (m - y);
      }
      EXPECT_EQ(sums.rows, rows) << k;
      EXPECT_NEAR(sums.loss_sum, loss_sum, 1e-12 * loss_sum) << k;
      if (loss == Loss::kLogistic) {
        EXPECT_EQ(sums.correct, correct) << k;
        EXPECT_NEAR(sums.log_loss, loss_sum, 1e-12 * loss_sum) << k;
      } else {
        EXPECT_NEAR(sums.squared_error, squared_error, 1e-12 * squared_error) << k;
      }
    }
    // The whole's: every row by the copy on all the data.
    EvaluationSums whole(loss, 1, false);
    ASSERT_TRUE(whole.ReadFrom(in).ok());
    EXPECT_EQ(whole.rows, 40);
    double loss_sum = 0;
    for (int64_t r = 10; r < 50; ++r) {
      const double m = f.Margin(r, kFolds), y = f.full->labels[static_cast<std::size_t>(r)];
      loss_sum += loss == Loss::kLogistic ? std::log1p(std::exp(-y * m)) : 0.5 * (m - y) * (m - y);
    }
    EXPECT_NEAR(whole.loss_sum, loss_sum, 1e-12 * loss_sum);
    EXPECT_TRUE(in.empty());
  }
}

// The AUC of each fold, every pair of its held-out rows compared here.
double PairwiseAuc(const Folded& f, int64_t k) {
  double higher = 0, pairs = 0;
  for (int64_t p = 10; p < 50; ++p) {
    if (p % kFolds != k || f.full->labels[static_cast<std::size_t>(p)] < 0) continue;
    for (int64_t n = 10; n < 50; ++n) {
      if (n % kFolds != k || f.full->labels[static_cast<std::size_t>(n)] > 0) continue;
      const double mp = f.Margin(p, k), mn = f.Margin(n, k);
      higher += mp > mn ? 1.0 : mp == mn ? 0.5 : 0.0;
      pairs += 1;
    }
  }
  return higher / pairs;
}

TEST(HeldOutScoresTest, TheAucsRefinementRoundsGiveThePairwiseAuc) {
  const Folded f(Loss::kLogistic);
  ShardWorker worker(0, f.Shard(), f.spec, WorkerOptions{});
  // A second worker that missed the model's first round, as a replacement would.
  ShardWorker replacement(0, f.Shard(), f.spec, WorkerOptions{});
  std::vector<AucRefinement> aucs(kFolds);
  ScoreQuery query = FirstQuery(3, true);
  int64_t round = 3;
  while (!query.prefixes.empty()) {
    const WorkerReply reply = f.Ask(worker, round, query);
    ASSERT_EQ(reply.status, ReplyStatus::kOk) << reply.error;
    EXPECT_EQ(reply.timings.data_passes, query.level == 0 ? 1 : 0);  // scored once, then kept
    if (query.level > 0) {
      EXPECT_EQ(f.Ask(replacement, round, query).w, reply.w);
    }
    std::span<const double> in = reply.w.span();
    if (query.level == 0) {
      for (int64_t k = 0; k <= kFolds; ++k) ASSERT_TRUE(EvaluationSums(Loss::kLogistic, 1, false).ReadFrom(in).ok());
    }
    ScoreQuery next{3, query.level + 1, {}};
    for (int64_t k = 0; k < kFolds; ++k) {
      ASSERT_TRUE(aucs[static_cast<std::size_t>(k)].Add(in).ok());
      aucs[static_cast<std::size_t>(k)].Advance();
      for (const uint64_t prefix : aucs[static_cast<std::size_t>(k)].open()) next.prefixes.emplace_back(k, prefix);
    }
    EXPECT_TRUE(in.empty());
    query = next;
    ++round;
  }
  for (int64_t k = 0; k < kFolds; ++k) {
    EXPECT_NEAR(aucs[static_cast<std::size_t>(k)].Auc(), PairwiseAuc(f, k), 1e-15) << k;
  }
}

TEST(HeldOutScoresTest, QuestionsThatCannotBeAnsweredFailTheRound) {
  const Folded f(Loss::kLogistic);
  ShardWorker worker(0, f.Shard(), f.spec, WorkerOptions{});
  RoundRequest request;
  request.kind = RoundKind::kScore;
  request.z = SharedVector(f.model);
  for (const std::vector<double>& query : std::vector<std::vector<double>>{
           {1},                // no level
           {1, 4},             // past the last level
           {1, 0, 3, 0},       // a fold past the folds
           {1, 1, 0, 70000},   // a prefix longer than its level
           {1, 1, 2, 5, 1, 5}  // folds out of order
       }) {
    request.query = SharedVector(query);
    const WorkerReply reply = worker.Serve(request);
    EXPECT_EQ(reply.status, ReplyStatus::kFailed) << query.size();
  }
  // Rows without folds cannot be scored by fold.
  Dataset unfolded = f.Shard();
  unfolded.folds = {};
  ShardWorker plain(0, unfolded, f.spec, WorkerOptions{});
  request.query = SharedVector(FirstQuery(1, false).Pack());
  EXPECT_EQ(plain.Serve(request).status, ReplyStatus::kFailed);
}

}  // namespace
}  // namespace nimbus
