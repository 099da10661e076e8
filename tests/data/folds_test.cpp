// Stratified folds: every class's rows spread over the folds to within one, the same seed the
// same folds, another seed others; a regression's rows one stratum; bad fold counts refused;
// the folds of any part of the rows dealt from that part alone (its class offsets), and the
// folds' sizes from the class totals alone. And a data set's selected rows.
#include "nimbus/data/folds.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

namespace nimbus {
namespace {

// 3 classes of 50, 31 and 7 rows, interleaved.
std::vector<double> Labels() {
  std::vector<double> labels;
  for (int i = 0; i < 50; ++i) {
    labels.push_back(0);
    if (i < 31) labels.push_back(1);
    if (i < 7) labels.push_back(2);
  }
  return labels;
}

TEST(FoldsTest, EveryClassSpreadsEvenlyAndTheFoldsBalance) {
  const std::vector<double> labels = Labels();
  const std::vector<uint8_t> folds = StratifiedFolds(labels, true, 5, 3).value();
  ASSERT_EQ(folds.size(), labels.size());
  std::map<double, std::map<int, int>> per_class;
  std::map<int, int> per_fold;
  for (std::size_t r = 0; r < labels.size(); ++r) {
    ASSERT_LT(folds[r], 5);
    ++per_class[labels[r]][folds[r]];
    ++per_fold[folds[r]];
  }
  for (const auto& [label, counts] : per_class) {
    const int n = label == 0 ? 50 : label == 1 ? 31 : 7;
    for (int k = 0; k < 5; ++k) {
      const int c = counts.count(k) ? counts.at(k) : 0;
      EXPECT_TRUE(c == n / 5 || c == n / 5 + 1) << "class " << label << " fold " << k << ": " << c;
    }
  }
  for (int k = 0; k < 5; ++k) EXPECT_TRUE(per_fold[k] == 17 || per_fold[k] == 18) << per_fold[k];  // 88 rows
}

TEST(FoldsTest, TheSeedDecides) {
  const std::vector<double> labels = Labels();
  EXPECT_EQ(StratifiedFolds(labels, true, 4, 9).value(), StratifiedFolds(labels, true, 4, 9).value());
  EXPECT_NE(StratifiedFolds(labels, true, 4, 9).value(), StratifiedFolds(labels, true, 4, 10).value());
}

TEST(FoldsTest, RegressionTargetsAreOneStratum) {
  const std::vector<double> targets = {0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5};
  const std::vector<uint8_t> folds = StratifiedFolds(targets, false, 3, 1).value();
  const std::vector<std::vector<int64_t>> rows = RowsOfFolds(folds, 3);
  std::size_t total = 0;
  for (const auto& fold : rows) {
    EXPECT_TRUE(fold.size() == 2 || fold.size() == 3);
    EXPECT_TRUE(std::is_sorted(fold.begin(), fold.end()));
    total += fold.size();
  }
  EXPECT_EQ(total, targets.size());
}

// A worker knows its own rows and how many of each class come before them: the folds it deals
// are the whole's, wherever the rows are cut.
TEST(FoldsTest, APartDealsTheWholesFoldsFromItsClassOffsets) {
  const std::vector<double> labels = Labels();
  for (const int64_t folds : {2, 5, 7}) {
    const std::vector<uint8_t> whole = StratifiedFolds(labels, true, folds, 11).value();
    const std::vector<int64_t> totals = {50, 31, 7};
    for (const std::size_t cut : {std::size_t{0}, std::size_t{1}, std::size_t{13}, std::size_t{40}, labels.size()}) {
      std::vector<int64_t> offsets(3, 0);
      for (std::size_t r = 0; r < cut; ++r) ++offsets[static_cast<std::size_t>(labels[r])];
      FoldDealer part(folds, 11, totals, offsets);
      for (std::size_t r = cut; r < labels.size(); ++r) {
        ASSERT_EQ(part.Next(static_cast<std::size_t>(labels[r])), whole[r]) << "K " << folds << " cut " << cut << " row " << r;
      }
    }
  }
}

TEST(FoldsTest, TheFoldsSizesFollowFromTheClassTotals) {
  const std::vector<double> labels = Labels();
  for (const int64_t folds : {2, 4, 9}) {
    const std::vector<uint8_t> whole = StratifiedFolds(labels, true, folds, 5).value();
    std::vector<int64_t> counted(static_cast<std::size_t>(folds), 0);
    for (const uint8_t fold : whole) ++counted[fold];
    EXPECT_EQ(FoldDealer(folds, 5, {50, 31, 7}, {}).FoldRows(), counted) << folds;
    const auto [least, most] = std::minmax_element(counted.begin(), counted.end());
    EXPECT_LE(*most - *least, 1) << folds;
  }
}

// Two-class labels are -1 and +1: the -1 class is stratum 0, the +1 class stratum 1.
TEST(FoldsTest, TwoClassesAreTwoStrata) {
  std::vector<double> labels;
  for (int i = 0; i < 30; ++i) labels.push_back(i % 3 == 0 ? 1.0 : -1.0);
  const std::vector<uint8_t> folds = StratifiedFolds(labels, true, 5, 2).value();
  std::map<double, std::map<int, int>> counts;
  for (std::size_t r = 0; r < labels.size(); ++r) ++counts[labels[r]][folds[r]];
  for (int k = 0; k < 5; ++k) {
    EXPECT_EQ(counts[1.0][k], 2);
    EXPECT_EQ(counts[-1.0][k], 4);
  }
}

TEST(FoldsTest, BadCountsAreRefused) {
  const std::vector<double> labels = {1, -1, 1};
  EXPECT_EQ(StratifiedFolds(labels, true, 1, 1).status().message(), "--folds: must be in [2, 100]");
  EXPECT_EQ(StratifiedFolds(labels, true, 101, 1).status().message(), "--folds: must be in [2, 100]");
  EXPECT_EQ(StratifiedFolds(labels, true, 4, 1).status().message(), "--folds: 4 folds of 3 rows");
}

TEST(DatasetTest, SelectRowsCopiesTheRowsAndTheirArrays) {
  const int64_t row_ptr[] = {0, 2, 3, 5};
  const uint32_t col_idx[] = {0, 2, 1, 0, 1};
  const double values[] = {1, 2, 3, 4, 5};
  const double labels[] = {1, -1, 1};
  const double weights[] = {0.5, 1.5, 2.5};
  const uint8_t folds[] = {0, 1, 0};
  Dataset data;
  data.matrix = {3, 3, row_ptr, col_idx, values};
  data.labels = labels;
  data.weights = weights;
  data.folds = folds;
  const int64_t picked[] = {0, 2};
  const Dataset part = data.SelectRows(picked);
  ASSERT_EQ(part.rows(), 2);
  EXPECT_EQ(part.cols(), 3);
  EXPECT_EQ(std::vector<int64_t>(part.matrix.row_ptr, part.matrix.row_ptr + 3), (std::vector<int64_t>{0, 2, 4}));
  EXPECT_EQ(std::vector<uint32_t>(part.matrix.col_idx, part.matrix.col_idx + 4), (std::vector<uint32_t>{0, 2, 0, 1}));
  EXPECT_EQ(std::vector<double>(part.matrix.values, part.matrix.values + 4), (std::vector<double>{1, 2, 4, 5}));
  EXPECT_EQ(std::vector<double>(part.labels.begin(), part.labels.end()), (std::vector<double>{1, 1}));
  EXPECT_EQ(std::vector<double>(part.weights.begin(), part.weights.end()), (std::vector<double>{0.5, 2.5}));
  EXPECT_EQ(std::vector<uint8_t>(part.folds.begin(), part.folds.end()), (std::vector<uint8_t>{0, 0}));
}

}  // namespace
}  // namespace nimbus
