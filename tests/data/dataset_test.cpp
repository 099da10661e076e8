// Datasets: label encodings, label formatting, row views and memory accounting.
#include "nimbus/data/dataset.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>

#include "data/test_datasets.h"

namespace nimbus {
namespace {

using testing::MakeDataset;
using testing::PlainRow;
using testing::RowsOf;

TEST(LabelEncodingTest, BinaryEncodeDecode) {
  const LabelEncoding encoding{true, 0.0, 1.0, {}};
  EXPECT_EQ(encoding.Encode(1.0), 1.0);
  EXPECT_EQ(encoding.Encode(0.0), -1.0);
  EXPECT_EQ(encoding.Decode(1.0), 1.0);
  EXPECT_EQ(encoding.Decode(-1.0), 0.0);
  EXPECT_EQ(encoding.Decode(0.3), 1.0);   // any positive score is the positive class
  EXPECT_EQ(encoding.Decode(-2.0), 0.0);

  const LabelEncoding two_one{true, 2.0, 1.0, {}};
  EXPECT_EQ(two_one.Encode(1.0), 1.0);
  EXPECT_EQ(two_one.Encode(2.0), -1.0);
  EXPECT_EQ(two_one.Decode(5.0), 1.0);
  EXPECT_EQ(two_one.Decode(-5.0), 2.0);
}

TEST(LabelEncodingTest, RegressionIsIdentity) {
  const LabelEncoding encoding{false, -1.0, 1.0, {}};
  for (const double v : {-3.5, 0.0, 2.0, 1e10}) {
    EXPECT_EQ(encoding.Encode(v), v);
    EXPECT_EQ(encoding.Decode(v), v);
  }
}

TEST(LabelEncodingTest, Describe) {
  EXPECT_EQ(LabelEncoding{}.Describe(), "labels 1 (+1) and -1 (-1)");
  EXPECT_EQ((LabelEncoding{true, 0.0, 1.0, {}}.Describe()), "labels 1 (+1) and 0 (-1)");
  EXPECT_EQ((LabelEncoding{true, 1.0, 2.0, {}}.Describe()), "labels 2 (+1) and 1 (-1)");
  EXPECT_EQ((LabelEncoding{false, -1.0, 1.0, {}}.Describe()), "real-valued targets");
}

TEST(LabelEncodingTest, MulticlassIsClassIndex) {
  const LabelEncoding encoding{true, -1.0, 1.0, {-2.0, 0.5, 3.0, 7.0}};
  EXPECT_TRUE(encoding.multiclass());
  EXPECT_EQ(encoding.Encode(-2.0), 0.0);
  EXPECT_EQ(encoding.Encode(3.0), 2.0);
  EXPECT_EQ(encoding.Encode(7.0), 3.0);
  EXPECT_EQ(encoding.Decode(1.0), 0.5);
  EXPECT_EQ(encoding.Decode(3.0), 7.0);
  EXPECT_EQ(encoding.ClassValues(), (std::vector<double>{-2.0, 0.5, 3.0, 7.0}));
  EXPECT_EQ(encoding.Describe(), "4 classes -2 .. 7");
  EXPECT_EQ((LabelEncoding{true, 0.0, 1.0, {}}.ClassValues()), (std::vector<double>{0.0, 1.0}));
  EXPECT_TRUE((LabelEncoding{false, -1.0, 1.0, {}}.ClassValues()).empty());
}

TEST(FormatLabelTest, CompactForms) {
  EXPECT_EQ(FormatLabel(1.0), "1");
  EXPECT_EQ(FormatLabel(-1.0), "-1");
  EXPECT_EQ(FormatLabel(0.0), "0");
  EXPECT_EQ(FormatLabel(0.5), "0.5");
  EXPECT_EQ(FormatLabel(0.1), "0.1");
  EXPECT_EQ(FormatLabel(2.0), "2");
  EXPECT_EQ(FormatLabel(123456789.0), "123456789");
  // Whole numbers as liblinear writes its labels, however round.
  EXPECT_EQ(FormatLabel(10.0), "10");
  EXPECT_EQ(FormatLabel(20.0), "20");
  EXPECT_EQ(FormatLabel(100.0), "100");
  EXPECT_EQ(FormatLabel(-1000.0), "-1000");
  EXPECT_EQ(FormatLabel(1e15), "1000000000000000");
  EXPECT_EQ(FormatLabel(2.5e20), "2.5e+20");
  EXPECT_EQ(FormatLabel(1e-20), "1e-20");
  EXPECT_EQ(FormatLabel(0.1 + 0.2), "0.30000000000000004");
}

TEST(FormatLabelTest, RoundTripsRandomValues) {
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> mantissa(-1, 1);
  for (int i = 0; i < 2000; ++i) {
    const double v = std::ldexp(mantissa(rng), static_cast<int>(rng() % 200) - 100);
    const std::string text = FormatLabel(v);
    EXPECT_EQ(std::strtod(text.c_str(), nullptr), v) << text;
  }
}

TEST(DatasetTest, RowsIsAViewSharingStorage) {
  const Dataset data = MakeDataset({{1, {{0, 1}}}, {-1, {{1, 2}, {2, 3}}}, {1, {}}, {-1, {{0, 4}}}}, 3);
  const long owners = data.storage.use_count();
  const Dataset part = data.Rows(1, 3);
  EXPECT_EQ(data.storage.use_count(), owners + 1);
  EXPECT_EQ(part.rows(), 2);
  EXPECT_EQ(part.cols(), 3);
  EXPECT_EQ(part.nnz(), 2);
  EXPECT_EQ(part.labels.size(), 2u);
  EXPECT_EQ(part.matrix.values, data.matrix.values);  // no copy
  const std::vector<PlainRow> all = RowsOf(data);
  EXPECT_EQ(RowsOf(part), std::vector<PlainRow>(all.begin() + 1, all.begin() + 3));
  EXPECT_EQ(part.Rows(1, 2).labels[0], 1.0);
  EXPECT_EQ(RowsOf(part.Rows(1, 2)), std::vector<PlainRow>(all.begin() + 2, all.begin() + 3));
  const Dataset none = data.Rows(2, 2);
  EXPECT_EQ(none.rows(), 0);
  EXPECT_EQ(none.nnz(), 0);
}

// The column method's shards: a block's entries alone, the columns keeping their numbers.
TEST(DatasetTest, SelectColumnsKeepsABlocksEntriesAndTheirNumbers) {
  const Dataset data = MakeDataset({{1, {{0, 1}, {2, 3}}}, {-1, {{1, 2}, {2, 5}}}, {1, {}}, {-1, {{0, 4}, {1, 6}}}}, 3);
  const Dataset block = data.SelectColumns(1, 3);
  EXPECT_EQ(RowsOf(block), (std::vector<PlainRow>{{1, {{2, 3}}}, {-1, {{1, 2}, {2, 5}}}, {1, {}}, {-1, {{1, 6}}}}));
  EXPECT_EQ(block.cols(), 3);
}

// Clustered blocks: column j's entries move to column position_of[j], each row ascending again,
// the labels and the source's features following; a block is the positions [begin, end).
TEST(DatasetTest, SelectColumnsAtPositionsMovesEachEntryAndItsFeature) {
  Dataset data = MakeDataset({{1, {{0, 1}, {2, 3}}}, {-1, {{1, 2}, {2, 5}}}, {1, {}}, {-1, {{0, 4}, {1, 6}}}}, 3);
  data.columns.features = std::make_shared<std::vector<uint32_t>>(std::vector<uint32_t>{10, 20, 30});
  data.columns.source_cols = 31;
  const std::vector<uint32_t> position_of = {2, 0, 1};  // column 0 to 2, 1 to 0, 2 to 1
  const Dataset reordered = data.SelectColumns(0, 3, position_of);
  EXPECT_EQ(RowsOf(reordered), (std::vector<PlainRow>{{1, {{1, 3}, {2, 1}}}, {-1, {{0, 2}, {1, 5}}}, {1, {}},
                                                      {-1, {{0, 6}, {2, 4}}}}));
  EXPECT_EQ(*reordered.columns.features, (std::vector<uint32_t>{20, 30, 10}));
  EXPECT_EQ(reordered.source_cols(), 31);
  EXPECT_EQ(RowsOf(data)[0], (PlainRow{1, {{0, 1}, {2, 3}}}));  // a copy: the data as it was
  // Positions 1 and 2: the source's columns 2 and 0.
  const Dataset block = data.SelectColumns(1, 3, position_of);
  EXPECT_EQ(RowsOf(block), (std::vector<PlainRow>{{1, {{1, 3}, {2, 1}}}, {-1, {{1, 5}}}, {1, {}}, {-1, {{2, 4}}}}));
  EXPECT_EQ(*block.columns.features, (std::vector<uint32_t>{20, 30, 10}));
}

TEST(DatasetTest, MemoryBytes) {
  const Dataset data = MakeDataset({{1, {{0, 1}}}, {-1, {{1, 2}, {2, 3}}}, {1, {}}}, 3);
  // 3 entries x (4 + 8) + 4 row pointers x 8 + 3 labels x 8
  EXPECT_EQ(data.MemoryBytes(), 3u * 12 + 4 * 8 + 3 * 8);
  EXPECT_EQ(data.Rows(1, 2).MemoryBytes(), 2u * 12 + 2 * 8 + 1 * 8);
}

}  // namespace
}  // namespace nimbus
