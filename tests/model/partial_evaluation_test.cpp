// Figures of rows held in parts: the AUC refined from the parts' digit counts equals the AUC of
// all the scores in one place (AreaUnderRoc, the Mann-Whitney rank sum), ties and near-ties
// included; sums over parts, merged, equal the sums over the whole; sums survive packing.
#include "nimbus/model/partial_evaluation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "nimbus/model/evaluation.h"

namespace nimbus {
namespace {

struct Scored {
  std::vector<double> scores, labels;  // labels -1/+1
};

// The AUC by refinement, the scores cut into parts at `cuts`; `rounds` counts its rounds.
double RefinedAuc(const Scored& all, const std::vector<std::size_t>& cuts, int* rounds) {
  std::vector<std::vector<uint64_t>> positives, negatives;
  std::size_t begin = 0;
  for (std::size_t p = 0; p <= cuts.size(); ++p) {
    const std::size_t end = p < cuts.size() ? cuts[p] : all.scores.size();
    positives.emplace_back();
    negatives.emplace_back();
    for (std::size_t r = begin; r < end; ++r) {
      (all.labels[r] > 0 ? positives : negatives).back().push_back(OrderKey(all.scores[r]));
    }
    std::sort(positives.back().begin(), positives.back().end());
    std::sort(negatives.back().begin(), negatives.back().end());
    begin = end;
  }
  AucRefinement auc;
  *rounds = 0;
  while (!auc.done()) {
    for (std::size_t p = 0; p < positives.size(); ++p) {
      std::vector<double> answer;
      AppendDigitCounts(positives[p], negatives[p], auc.level(), auc.open(), answer);
      std::span<const double> in(answer);
      EXPECT_TRUE(auc.Add(in).ok());
      EXPECT_TRUE(in.empty());
    }
    auc.Advance();
    ++*rounds;
  }
  return auc.Auc();
}

TEST(OrderKeyTest, KeysOrderAsTheDoubles) {
  const std::vector<double> ascending = {-1e300, -2.5, -1.0, -std::nextafter(1.0, 0.0), -1e-300, 0.0, 1e-310,
                                         1e-300, std::nextafter(1.0, 0.0), 1.0, std::nextafter(1.0, 2.0), 7.0, 1e300};
  for (std::size_t i = 1; i < ascending.size(); ++i) EXPECT_LT(OrderKey(ascending[i - 1]), OrderKey(ascending[i])) << i;
  EXPECT_EQ(OrderKey(-0.0), OrderKey(0.0));
}

TEST(AucRefinementTest, EqualsTheRankSumOfAllTheScores) {
  std::mt19937_64 random(7);
  std::normal_distribution<double> normal;
  Scored all;
  for (int r = 0; r < 3000; ++r) {
    const bool positive = random() % 3 == 0;
    double score = normal(random) + (positive ? 0.8 : 0.0);
    if (r % 5 == 0) score = std::round(score * 4) / 4;            // exact ties, across classes too
    if (r % 7 == 0) score = std::nextafter(std::round(score), 9);  // keys a last bit apart
    if (r % 11 == 0) score = r % 2 == 0 ? 0.0 : -0.0;              // one tie of two zeros
    all.scores.push_back(score);
    all.labels.push_back(positive ? 1.0 : -1.0);
  }
  const double expected = AreaUnderRoc(all.scores, all.labels);
  int rounds = 0;
  EXPECT_NEAR(RefinedAuc(all, {}, &rounds), expected, 1e-15);
  EXPECT_LE(rounds, kAucLevels);
  // Cut anywhere, an empty part and a part of one row among them.
  EXPECT_NEAR(RefinedAuc(all, {0, 1, 1000, 1000, 2999}, &rounds), expected, 1e-15);
  EXPECT_EQ(rounds, kAucLevels);  // the keys a last bit apart take every digit
}

TEST(AucRefinementTest, SeparatedScoresAreDecidedInTheFirstRound) {
  Scored all;
  for (int r = 0; r < 100; ++r) {
    all.scores.push_back(r < 50 ? -1.0 - r : 1.0 + r);
    all.labels.push_back(r < 50 ? -1.0 : 1.0);
  }
  int rounds = 0;
  EXPECT_EQ(RefinedAuc(all, {30, 70}, &rounds), 1.0);
  EXPECT_EQ(rounds, 1);
}

TEST(AucRefinementTest, OneClassHasNoAuc) {
  Scored all{{0.1, 0.2, 0.3}, {1, 1, 1}};
  int rounds = 0;
  EXPECT_TRUE(std::isnan(RefinedAuc(all, {1}, &rounds)));
}

TEST(AucRefinementTest, MalformedCountsAreRefused) {
  AucRefinement auc;
  std::vector<double> short_answer = {2, 5, 1, 0};  // two digits promised, one given
  std::span<const double> in(short_answer);
  EXPECT_FALSE(auc.Add(in).ok());
  std::vector<double> bad_digit = {1, 70000, 1, 0};
  in = bad_digit;
  EXPECT_FALSE(auc.Add(in).ok());
}

// Rows of a kind of model, scored: labels and C decision values each.
struct Rows {
  std::vector<double> labels, scores;
};

Rows RowsOf(const Loss& loss, int64_t classes, int count, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::normal_distribution<double> normal;
  Rows rows;
  for (int r = 0; r < count; ++r) {
    if (!IsClassification(loss)) {
      rows.labels.push_back(3 * normal(random));
    } else {
      rows.labels.push_back(classes == 1 ? (random() % 2 == 0 ? 1.0 : -1.0) : static_cast<double>(random() % classes));
    }
    for (int64_t c = 0; c < classes; ++c) rows.scores.push_back(normal(random));
  }
  return rows;
}

EvaluationSums SumsOf(const Loss& loss, int64_t classes, bool multinomial, const Rows& rows, std::size_t begin,
                      std::size_t end) {
  EvaluationSums sums(loss, classes, multinomial);
  const auto c = static_cast<std::size_t>(classes);
  for (std::size_t r = begin; r < end; ++r) {
    sums.AddRow(rows.labels[r], std::span<const double>(rows.scores).subspan(r * c, c));
    sums.loss_sum += 0.25 * static_cast<double>(r);
  }
  return sums;
}

struct SumsCase {
  const char* name;
  Loss loss;
  int64_t classes;
  bool multinomial;
};

class EvaluationSumsTest : public ::testing::TestWithParam<SumsCase> {};

TEST_P(EvaluationSumsTest, PartsMergedAreTheWhole) {
  const SumsCase& c = GetParam();
  const Rows rows = RowsOf(c.loss, c.classes, 500, 3);
  const EvaluationSums whole = SumsOf(c.loss, c.classes, c.multinomial, rows, 0, 500);
  EvaluationSums merged(c.loss, c.classes, c.multinomial);
  for (const auto& [begin, end] : {std::pair<std::size_t, std::size_t>{0, 0}, {0, 1}, {1, 220}, {220, 220}, {220, 500}}) {
    // Each part travels as doubles, as from a worker.
    std::vector<double> packed;
    SumsOf(c.loss, c.classes, c.multinomial, rows, begin, end).AppendTo(packed);
    EvaluationSums part(c.loss, c.classes, c.multinomial);
    std::span<const double> in(packed);
    ASSERT_TRUE(part.ReadFrom(in).ok());
    EXPECT_TRUE(in.empty());
    merged.Merge(part);
  }
  EXPECT_EQ(merged.rows, whole.rows);
  EXPECT_EQ(merged.correct, whole.correct);
  EXPECT_EQ(merged.confusion, whole.confusion);
  EXPECT_NEAR(merged.log_loss, whole.log_loss, 1e-9 * std::abs(whole.log_loss) + 1e-12);
  EXPECT_NEAR(merged.squared_error, whole.squared_error, 1e-9 * whole.squared_error + 1e-12);
  EXPECT_NEAR(merged.label_mean, whole.label_mean, 1e-12);
  EXPECT_NEAR(merged.label_m2, whole.label_m2, 1e-9 * whole.label_m2 + 1e-12);
  EXPECT_NEAR(merged.loss_sum, whole.loss_sum, 1e-9 * whole.loss_sum);
  if (!IsClassification(c.loss)) {
    // The labels' squared deviations from their mean, computed directly.
    double mean = 0, m2 = 0;
    for (const double y : rows.labels) mean += y / 500;
    for (const double y : rows.labels) m2 += (y - mean) * (y - mean);
    EXPECT_NEAR(merged.label_m2, m2, 1e-9 * m2);
  }
}

TEST_P(EvaluationSumsTest, ACutShortPackIsRefused) {
  const SumsCase& c = GetParam();
  std::vector<double> packed;
  SumsOf(c.loss, c.classes, c.multinomial, RowsOf(c.loss, c.classes, 20, 1), 0, 20).AppendTo(packed);
  packed.pop_back();
  EvaluationSums sums(c.loss, c.classes, c.multinomial);
  std::span<const double> in(packed);
  EXPECT_FALSE(sums.ReadFrom(in).ok());
}

INSTANTIATE_TEST_SUITE_P(Kinds, EvaluationSumsTest,
                         ::testing::Values(SumsCase{"binary", Loss::kLogistic, 1, false},
                                           SumsCase{"softmax", Loss::kLogistic, 3, true},
                                           SumsCase{"one_vs_rest", Loss::kLogistic, 4, false},
                                           SumsCase{"regression", Loss::kSquared, 1, false}),
                         [](const ::testing::TestParamInfo<SumsCase>& info) { return info.param.name; });

}  // namespace
}  // namespace nimbus
