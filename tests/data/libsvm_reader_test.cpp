// The LIBSVM reader: every accepted form of input against hand-written expected rows, the
// label encodings, and every malformed input: a kInvalidArgument whose message starts with
// "<path>:<line>: " naming the right line.
#include "nimbus/data/libsvm_reader.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "support/test_support.h"

namespace nimbus {
namespace {

using testing::TempDir;
using testing::WriteTextFile;

using Entries = std::vector<std::pair<uint32_t, double>>;  // (0-based column, value)

struct Row {
  double label;
  Entries entries;
  bool operator==(const Row&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Row& row) {
  os << "{" << row.label << ":";
  for (const auto& [c, v] : row.entries) os << " " << c << "=" << v;
  return os << "}";
}

std::vector<Row> RowsOf(const Dataset& data) {
  std::vector<Row> rows;
  const CsrView& m = data.matrix;
  for (int64_t r = 0; r < m.rows; ++r) {
    Row row{data.labels[static_cast<std::size_t>(r)], {}};
    for (int64_t k = m.row_ptr[r]; k < m.row_ptr[r + 1]; ++k) row.entries.emplace_back(m.col_idx[k], m.Value(k));
    rows.push_back(std::move(row));
  }
  return rows;
}

// Appends " INDEX:VALUE" (piecewise: GCC 12 warns falsely on chained temporaries here).
void AppendEntry(std::string& text, int64_t index, const std::string& value) {
  text += ' ';
  text += std::to_string(index);
  text += ':';
  text += value;
}

class LibsvmReaderTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& contents, const std::string& name = "data.svm") {
    const std::string path = dir_.File(name);
    WriteTextFile(path, contents);
    return path;
  }

  Dataset ReadOk(const std::string& contents, const LibsvmReadOptions& options = {}) {
    const std::string path = Write(contents);
    Result<Dataset> data = ReadLibsvmFile(path, options);
    EXPECT_TRUE(data.ok()) << data.status().ToString();
    if (!data.ok()) return Dataset{};
    EXPECT_EQ(data->matrix.row_ptr[0], 0);
    EXPECT_EQ(static_cast<int64_t>(data->labels.size()), data->rows());
    return std::move(data).value();
  }

  // Reads `contents` and expects a kInvalidArgument whose message is
  // "<path>:<line>: <reason>" with `reason` containing `keyword`.
  void ExpectError(const std::string& contents, int64_t line, const std::string& keyword,
                   const LibsvmReadOptions& options = {}) {
    const std::string path = Write(contents);
    Result<Dataset> data = ReadLibsvmFile(path, options);
    ASSERT_FALSE(data.ok()) << "accepted: " << contents.substr(0, 200);
    EXPECT_EQ(data.status().code(), StatusCode::kInvalidArgument) << data.status().ToString();
    const std::string& message = data.status().message();
    const std::string prefix = path + ":" + std::to_string(line) + ": ";
    EXPECT_EQ(message.substr(0, prefix.size()), prefix) << message;
    EXPECT_NE(message.find(keyword, prefix.size()), std::string::npos)
        << "reason does not mention '" << keyword << "': " << message;
  }

  // Like ExpectError, for errors about the whole file: any line in [1, max_line].
  void ExpectFileError(const std::string& contents, int64_t max_line, const std::string& keyword,
                       const LibsvmReadOptions& options = {}) {
    const std::string path = Write(contents);
    Result<Dataset> data = ReadLibsvmFile(path, options);
    ASSERT_FALSE(data.ok());
    EXPECT_EQ(data.status().code(), StatusCode::kInvalidArgument) << data.status().ToString();
    const std::string& message = data.status().message();
    ASSERT_EQ(message.substr(0, path.size() + 1), path + ":") << message;
    std::size_t end = path.size() + 1;
    int64_t line = 0;
    while (end < message.size() && message[end] >= '0' && message[end] <= '9') {
      line = line * 10 + (message[end] - '0');
      ++end;
    }
    ASSERT_GT(end, path.size() + 1) << "no line number: " << message;
    EXPECT_EQ(message.substr(end, 2), ": ") << message;
    EXPECT_GE(line, 1) << message;
    EXPECT_LE(line, max_line) << message;
    EXPECT_NE(message.find(keyword, end), std::string::npos) << message;
  }

  TempDir dir_;
};

// ---------------------------------------------------------------------------------------------
// Valid inputs

TEST_F(LibsvmReaderTest, MinusOnePlusOneLabels) {
  const Dataset data = ReadOk("+1 1:0.5 3:2\n-1 2:-1.25\n+1 3:4\n");
  EXPECT_EQ(data.rows(), 3);
  EXPECT_EQ(data.cols(), 3);
  EXPECT_EQ(data.nnz(), 4);
  EXPECT_EQ(RowsOf(data), (std::vector<Row>{{1, {{0, 0.5}, {2, 2}}}, {-1, {{1, -1.25}}}, {1, {{2, 4}}}}));
  EXPECT_TRUE(data.encoding.classification);
  EXPECT_EQ(data.encoding.negative, -1.0);
  EXPECT_EQ(data.encoding.positive, 1.0);
}

TEST_F(LibsvmReaderTest, UnsignedPlusOneAndMinusOne) {
  const Dataset data = ReadOk("1 1:1\n-1 1:2\n");
  EXPECT_EQ(RowsOf(data), (std::vector<Row>{{1, {{0, 1}}}, {-1, {{0, 2}}}}));
}

TEST_F(LibsvmReaderTest, ZeroOneLabels) {
  const Dataset data = ReadOk("0 1:1\n1 2:1\n0 3:1\n");
  EXPECT_EQ(data.labels[0], -1.0);
  EXPECT_EQ(data.labels[1], 1.0);
  EXPECT_EQ(data.labels[2], -1.0);
  EXPECT_EQ(data.encoding.negative, 0.0);
  EXPECT_EQ(data.encoding.positive, 1.0);
}

TEST_F(LibsvmReaderTest, OneTwoLabelsLargerIsPositive) {
  const Dataset data = ReadOk("2 1:1\n1 2:1\n1 1:3\n2 2:3\n");
  EXPECT_EQ(std::vector<double>(data.labels.begin(), data.labels.end()), (std::vector<double>{1, -1, -1, 1}));
  EXPECT_EQ(data.encoding.negative, 1.0);
  EXPECT_EQ(data.encoding.positive, 2.0);
}

TEST_F(LibsvmReaderTest, LargerLabelIsPositiveWhateverComesFirst) {
  const Dataset a = ReadOk("5 1:1\n-7 1:1\n");
  EXPECT_EQ(a.labels[0], 1.0);
  EXPECT_EQ(a.labels[1], -1.0);
  EXPECT_EQ(a.encoding.positive, 5.0);
  EXPECT_EQ(a.encoding.negative, -7.0);
  const Dataset b = ReadOk("-7 1:1\n5 1:1\n");
  EXPECT_EQ(b.labels[0], -1.0);
  EXPECT_EQ(b.labels[1], 1.0);
  const Dataset c = ReadOk("0.25 1:1\n0.5 1:1\n");
  EXPECT_EQ(c.labels[0], -1.0);
  EXPECT_EQ(c.labels[1], 1.0);
  EXPECT_EQ(c.encoding.positive, 0.5);
}

TEST_F(LibsvmReaderTest, CrlfLineEnds) {
  const Dataset data = ReadOk("1 1:1 2:2\r\n-1 3:3\r\n\r\n# comment\r\n1 2:5 # note\r\n");
  EXPECT_EQ(RowsOf(data), (std::vector<Row>{{1, {{0, 1}, {1, 2}}}, {-1, {{2, 3}}}, {1, {{1, 5}}}}));
}

TEST_F(LibsvmReaderTest, TrailingBlanksAndTabs) {
  const Dataset data = ReadOk("1 1:1 \t \n-1\t2:2\t3:3\t\t\n  1   4:4   \r\n");
  EXPECT_EQ(RowsOf(data), (std::vector<Row>{{1, {{0, 1}}}, {-1, {{1, 2}, {2, 3}}}, {1, {{3, 4}}}}));
}

TEST_F(LibsvmReaderTest, CommentsAndBlankLines) {
  const std::string text =
      "# a header comment\n"
      "\n"
      "   \t  \n"
      "1 1:1 # trailing comment 7:7 with an entry in it\n"
      "-1 2:2#comment right after the value\n"
      "    # indented comment\n"
      "1#comment right after the label\n"
      "\n";
  const Dataset data = ReadOk(text);
  EXPECT_EQ(RowsOf(data), (std::vector<Row>{{1, {{0, 1}}}, {-1, {{1, 2}}}, {1, {}}}));
  EXPECT_EQ(data.cols(), 2);
}

TEST_F(LibsvmReaderTest, NumberForms) {
  const Dataset data = ReadOk("1 1:1e-3 2:-2.5E+2 3:.5 4:+3 5:7. 6:-0.125 7:1e-300\n-1.0e0 1:1\n");
  const std::vector<Row> rows = RowsOf(data);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].entries, (Entries{{0, 1e-3}, {1, -250}, {2, 0.5}, {3, 3}, {4, 7}, {5, -0.125}, {6, 1e-300}}));
  EXPECT_EQ(rows[0].label, 1.0);
  EXPECT_EQ(rows[1].label, -1.0);
  EXPECT_EQ(data.encoding.negative, -1.0);
}

TEST_F(LibsvmReaderTest, FinalLineWithoutNewline) {
  const Dataset data = ReadOk("1 1:1\n-1 2:2 3:3");
  EXPECT_EQ(RowsOf(data), (std::vector<Row>{{1, {{0, 1}}}, {-1, {{1, 2}, {2, 3}}}}));
  const Dataset crlf = ReadOk("1 1:1\r\n-1 2:2\r");
  EXPECT_EQ(RowsOf(crlf), (std::vector<Row>{{1, {{0, 1}}}, {-1, {{1, 2}}}}));
}

TEST_F(LibsvmReaderTest, RowsWithOnlyALabel) {
  const Dataset data = ReadOk("1\n-1 2:2\n-1\n1 # nothing but a comment\n1 1:1");
  EXPECT_EQ(RowsOf(data), (std::vector<Row>{{1, {}}, {-1, {{1, 2}}}, {-1, {}}, {1, {}}, {1, {{0, 1}}}}));
  EXPECT_EQ(data.cols(), 2);
  EXPECT_EQ(data.nnz(), 2);
}

TEST_F(LibsvmReaderTest, NoFeaturesAtAll) {
  const Dataset data = ReadOk("1\n-1\n");
  EXPECT_EQ(data.rows(), 2);
  EXPECT_EQ(data.cols(), 0);
  EXPECT_EQ(data.nnz(), 0);
}

TEST_F(LibsvmReaderTest, ColsIsTheLargestIndexInAnyRow) {
  const Dataset data = ReadOk("1 3:1 40:1\n-1 2:1\n1 7:1\n");
  EXPECT_EQ(data.cols(), 40);
  EXPECT_EQ(RowsOf(data)[0].entries, (Entries{{2, 1}, {39, 1}}));
}

TEST_F(LibsvmReaderTest, LargestIndexIsAccepted) {
  const Dataset data = ReadOk("1 5:1 2147483647:2\n-1 1:1\n");
  EXPECT_EQ(data.cols(), 2147483647);
  EXPECT_EQ(RowsOf(data)[0].entries, (Entries{{4, 1}, {2147483646u, 2}}));
}

TEST_F(LibsvmReaderTest, LeadingZerosInIndex) {
  const Dataset data = ReadOk("1 01:1 0010:2\n-1 1:1\n");
  EXPECT_EQ(RowsOf(data)[0].entries, (Entries{{0, 1}, {9, 2}}));
}

TEST_F(LibsvmReaderTest, LineLongerThanFourMebibytes) {
  // Row 2 has 700,000 entries (about 6 MiB of text): longer than any read buffer of 4 MiB.
  std::string text = "1 1:0.5\n-1";
  const int entries = 700000;
  for (int i = 1; i <= entries; ++i) AppendEntry(text, i, std::to_string(i % 9 + 1));
  text += "\n1 3:3\n-1 2:2";
  ASSERT_GT(text.size(), std::size_t{5} << 20);
  const Dataset data = ReadOk(text);
  ASSERT_EQ(data.rows(), 4);
  EXPECT_EQ(data.cols(), entries);
  EXPECT_EQ(data.nnz(), entries + 3);
  const CsrView& m = data.matrix;
  ASSERT_EQ(m.row_ptr[2] - m.row_ptr[1], entries);
  for (int k = 0; k < entries; k += 997) {
    const int64_t at = m.row_ptr[1] + k;
    EXPECT_EQ(m.col_idx[at], static_cast<uint32_t>(k));
    EXPECT_EQ(m.values[at], static_cast<double>((k + 1) % 9 + 1));
  }
  EXPECT_EQ(m.values[m.row_ptr[2] - 1], static_cast<double>(entries % 9 + 1));
  EXPECT_EQ(RowsOf(data)[2], (Row{1, {{2, 3}}}));
  EXPECT_EQ(RowsOf(data)[3], (Row{-1, {{1, 2}}}));
  EXPECT_EQ(data.labels[1], -1.0);
}

TEST_F(LibsvmReaderTest, CrlfSplitAcrossTheFourMebibyteBoundary) {
  // Short CRLF lines, then one line padded so that its '\r' is the last byte of the first
  // 4 MiB and its '\n' the first byte after; then more lines.
  const std::size_t boundary = std::size_t{4} << 20;
  std::string text;
  int64_t rows = 0;
  while (text.size() + 9 < boundary - 40) {
    text += "1 1:0.5\r\n";
    ++rows;
  }
  const std::string head = "-1 2:1 #";
  text += head + std::string(boundary - 1 - text.size() - head.size(), 'x');
  text += "\r\n";
  ASSERT_EQ(text[boundary - 1], '\r');
  ASSERT_EQ(text[boundary], '\n');
  text += "1 3:1\r\n";
  const Dataset data = ReadOk(text);
  ASSERT_EQ(data.rows(), rows + 2);
  EXPECT_EQ(RowsOf(data)[static_cast<std::size_t>(rows)], (Row{-1, {{1, 1}}}));
  EXPECT_EQ(RowsOf(data)[static_cast<std::size_t>(rows + 1)], (Row{1, {{2, 1}}}));
}

TEST_F(LibsvmReaderTest, ManyRowsAcrossSeveralBuffers) {
  std::string text;
  const int rows = 300000;
  for (int r = 0; r < rows; ++r) {
    text += (r % 3 == 0 ? "+1" : "-1");
    AppendEntry(text, r % 50 + 1, std::to_string(r));
    text += " 77:0.25\n";
  }
  ASSERT_GT(text.size(), std::size_t{5} << 20);
  const Dataset data = ReadOk(text);
  ASSERT_EQ(data.rows(), rows);
  EXPECT_EQ(data.nnz(), 2 * rows);
  EXPECT_EQ(data.cols(), 77);
  for (int r = 0; r < rows; r += 1237) {
    const int64_t k = data.matrix.row_ptr[r];
    EXPECT_EQ(data.matrix.row_ptr[r + 1] - k, 2);
    EXPECT_EQ(data.matrix.col_idx[k], static_cast<uint32_t>(r % 50));
    EXPECT_EQ(data.matrix.values[k], static_cast<double>(r));
    EXPECT_EQ(data.matrix.col_idx[k + 1], 76u);
    EXPECT_EQ(data.labels[static_cast<std::size_t>(r)], r % 3 == 0 ? 1.0 : -1.0);
  }
}

TEST_F(LibsvmReaderTest, RegressionKeepsRawTargets) {
  LibsvmReadOptions options;
  options.label_mode = LabelMode::kRegression;
  const Dataset data = ReadOk("3.5 1:1\n-2 2:1\n0 1:1\n1e2 2:2\n3.5 1:2\n", options);
  EXPECT_EQ(std::vector<double>(data.labels.begin(), data.labels.end()), (std::vector<double>{3.5, -2, 0, 100, 3.5}));
  EXPECT_FALSE(data.encoding.classification);
  EXPECT_EQ(data.encoding.Encode(3.5), 3.5);
}

TEST_F(LibsvmReaderTest, RegressionAcceptsASingleTarget) {
  LibsvmReadOptions options;
  options.label_mode = LabelMode::kRegression;
  const Dataset data = ReadOk("7 1:1\n7 2:1\n", options);
  EXPECT_EQ(data.labels[0], 7.0);
  EXPECT_EQ(data.labels[1], 7.0);
}

TEST_F(LibsvmReaderTest, ExpectedLabelsAllowOneLabelOnly) {
  LibsvmReadOptions options;
  options.expected_labels = LabelEncoding{true, 0.0, 1.0, {}};
  const Dataset ones = ReadOk("1 1:1\n1 2:1\n", options);
  EXPECT_EQ(ones.labels[0], 1.0);
  EXPECT_EQ(ones.labels[1], 1.0);
  EXPECT_EQ(ones.encoding.negative, 0.0);
  EXPECT_EQ(ones.encoding.positive, 1.0);
  const Dataset zeros = ReadOk("0 1:1\n", options);
  EXPECT_EQ(zeros.labels[0], -1.0);
}

TEST_F(LibsvmReaderTest, ExpectedLabelsMapAsTheModelMaps) {
  // The model's mapping wins over "the larger label is +1".
  LibsvmReadOptions options;
  options.expected_labels = LabelEncoding{true, 2.0, 1.0, {}};
  const Dataset data = ReadOk("1 1:1\n2 1:1\n", options);
  EXPECT_EQ(data.labels[0], 1.0);
  EXPECT_EQ(data.labels[1], -1.0);
  EXPECT_EQ(data.encoding.negative, 2.0);
  EXPECT_EQ(data.encoding.positive, 1.0);
}

TEST_F(LibsvmReaderTest, ExpectedLabelsRejectOtherLabels) {
  LibsvmReadOptions options;
  options.expected_labels = LabelEncoding{true, -1.0, 1.0, {}};
  ExpectError("1 1:1\n# c\n-1 1:1\n0 1:1\n", 4, "label", options);
  ExpectError("2 1:1\n", 1, "label", options);
}

TEST_F(LibsvmReaderTest, ExpectedLabelsMustDiffer) {
  LibsvmReadOptions options;
  options.expected_labels = LabelEncoding{true, 1.0, 1.0, {}};
  EXPECT_EQ(options.Validate().code(), StatusCode::kInvalidArgument);
  const std::string path = Write("1 1:1\n");
  Result<Dataset> data = ReadLibsvmFile(path, options);
  ASSERT_FALSE(data.ok());
  EXPECT_EQ(data.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(LibsvmReadOptions{}.Validate().ok());
}

TEST_F(LibsvmReaderTest, ReadsLiblinearsExample) {
  Result<Dataset> data = ReadLibsvmFile(testing::HeartScalePath());
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_EQ(data->rows(), 270);
  EXPECT_EQ(data->cols(), 13);
  int positives = 0;
  for (double label : data->labels) positives += label > 0 ? 1 : 0;
  // heart_scale: 120 rows labelled +1 and 150 labelled -1.
  EXPECT_EQ(positives, 120);
}

// ---------------------------------------------------------------------------------------------
// Malformed inputs. Most put the bad line third, after a data row and a comment, so the line
// count must include skipped lines.

const std::string kPrefix = "1 1:1\n# comment\n";
const std::string kTwoLabels = "1 1:1\n-1 1:1\n";

TEST_F(LibsvmReaderTest, NonNumericLabel) {
  ExpectError(kPrefix + "abc 1:1\n", 3, "label");
  ExpectError("yes 1:1\n", 1, "label");
  ExpectError(kPrefix + "1.5.2 1:1\n", 3, "label");
  ExpectError(kPrefix + "++1 1:1\n", 3, "label");
  ExpectError(kPrefix + "+-1 1:1\n", 3, "label");
  ExpectError(kPrefix + "0x1 1:1\n", 3, "label");
  ExpectError(kPrefix + "1:1 2:1\n", 3, "label");  // a line without a label
}

TEST_F(LibsvmReaderTest, NonNumericValue) {
  ExpectError(kPrefix + "-1 1:abc\n", 3, "value");
  ExpectError(kPrefix + "-1 1:1 2:1x\n", 3, "value");
  ExpectError(kPrefix + "-1 1:1.2.3\n", 3, "value");
  ExpectError(kPrefix + "-1 1::1\n", 3, "value");
  ExpectError(kPrefix + "-1 1:1:2\n", 3, "value");
  ExpectError(kPrefix + "-1 1:--1\n", 3, "value");
}

TEST_F(LibsvmReaderTest, IndexZero) {
  ExpectError(kPrefix + "-1 0:1\n", 3, "index 0");
  ExpectError("1 0:1 2:1\n", 1, "index 0");
  ExpectError(kPrefix + "-1 000:1\n", 3, "index 0");
}

TEST_F(LibsvmReaderTest, NonAscendingIndex) {
  ExpectError(kPrefix + "-1 3:1 2:1\n", 3, "ascend");
  ExpectError(kPrefix + "-1 1:1 5:1 4:1\n", 3, "ascend");
}

TEST_F(LibsvmReaderTest, DuplicateIndex) {
  ExpectError(kPrefix + "-1 2:1 2:1\n", 3, "duplicate");
  ExpectError(kPrefix + "-1 2:1 02:3\n", 3, "duplicate");
}

TEST_F(LibsvmReaderTest, MissingColon) {
  ExpectError(kPrefix + "1 3 4\n", 3, "':'");
  ExpectError(kPrefix + "1 3:1 4\n", 3, "':'");
  ExpectError(kPrefix + "1 3:1 4 # comment\n", 3, "':'");
}

TEST_F(LibsvmReaderTest, MissingValue) {
  ExpectError(kPrefix + "1 3:\n", 3, "value");
  ExpectError(kPrefix + "1 3: 4:1\n", 3, "value");
  ExpectError(kPrefix + "1 3:\r\n", 3, "value");
  ExpectError(kPrefix + "1 3:#c\n", 3, "value");
  ExpectError(kPrefix + "1 3:", 3, "value");
}

TEST_F(LibsvmReaderTest, MalformedEntries) {
  ExpectError(kPrefix + "1 :4\n", 3, "INDEX:VALUE");
  ExpectError(kPrefix + "1 -3:4\n", 3, "INDEX:VALUE");
  ExpectError(kPrefix + "1 3a:4\n", 3, "INDEX:VALUE");
  ExpectError(kPrefix + "1 3:4 junk\n", 3, "INDEX:VALUE");
}

TEST_F(LibsvmReaderTest, NonFiniteValues) {
  for (const std::string value : {"nan", "NaN", "-nan", "inf", "-inf", "Infinity", "1e999", "-1e999"}) {
    SCOPED_TRACE(value);
    ExpectError(kPrefix + "-1 1:1 2:" + value + "\n", 3, "finite");
  }
}

TEST_F(LibsvmReaderTest, ValuesTooSmallToRepresentReadAsZero) {
  // As strtod (and so liblinear) reads them; only overflow is an error.
  const Dataset data = ReadOk("+1 1:1e-400 2:-1e-400 3:1e-320\n-1 1:1\n");
  ASSERT_EQ(data.nnz(), 4);
  EXPECT_EQ(data.matrix.values[0], 0.0);
  EXPECT_EQ(data.matrix.values[1], 0.0);
  EXPECT_TRUE(std::signbit(data.matrix.values[1]));
  EXPECT_EQ(data.matrix.values[2], 1e-320);  // a subnormal, kept
}

TEST_F(LibsvmReaderTest, NonFiniteLabels) {
  for (const std::string label : {"nan", "NAN", "inf", "-inf", "+inf", "infinity", "1e999", "-1e999"}) {
    SCOPED_TRACE(label);
    ExpectError(kTwoLabels + "\n" + label + " 1:1\n", 4, "finite");
  }
  LibsvmReadOptions regression;
  regression.label_mode = LabelMode::kRegression;
  ExpectError(kTwoLabels + "nan 1:1\n", 3, "finite", regression);
  ExpectError("1e999 1:1\n", 1, "finite", regression);
}

TEST_F(LibsvmReaderTest, IndexOverflow) {
  ExpectError(kPrefix + "-1 99999999999:1\n", 3, "overflow");
  ExpectError(kPrefix + "-1 2147483648:1\n", 3, "overflow");
  ExpectError(kPrefix + "-1 4294967297:1\n", 3, "overflow");  // 2^32 + 1: must not wrap to 1
  ExpectError(kPrefix + "-1 18446744073709551617:1\n", 3, "overflow");  // 2^64 + 1
  ExpectError(kPrefix + "-1 1:1 99999999999999999999999999999:1\n", 3, "overflow");
}

// Three labels or more are classes, numbered in ascending order of value.
TEST_F(LibsvmReaderTest, MulticlassLabelsBecomeClassIndices) {
  const Dataset data = ReadOk("7 1:1\n-2 1:1\n# c\n0.5 2:1\n7 1:1\n3 1:1\n");
  EXPECT_TRUE(data.encoding.classification);
  EXPECT_EQ(data.encoding.classes, (std::vector<double>{-2, 0.5, 3, 7}));
  EXPECT_EQ(std::vector<double>(data.labels.begin(), data.labels.end()), (std::vector<double>{3, 0, 1, 3, 2}));
  // A test file for a multiclass model may hold some of its classes, and no other.
  LibsvmReadOptions for_model;
  for_model.expected_labels = data.encoding;
  const Dataset test = ReadOk("3 1:1\n-2 1:1\n", for_model);
  EXPECT_EQ(std::vector<double>(test.labels.begin(), test.labels.end()), (std::vector<double>{2, 0}));
  ExpectError("3 1:1\n4 1:1\n", 2, "not one of the model's 4 classes -2 .. 7", for_model);
}

TEST_F(LibsvmReaderTest, TooManyDistinctLabels) {
  std::string contents;
  for (int label = 0; label <= kMaxClasses; ++label) contents += std::to_string(label) + " 1:1\n";
  ExpectError(contents, kMaxClasses + 1, "the most classes a classifier takes");
  LibsvmReadOptions regression;
  regression.label_mode = LabelMode::kRegression;
  EXPECT_EQ(ReadOk(contents, regression).rows(), kMaxClasses + 1);
}

TEST_F(LibsvmReaderTest, EmptyFile) { ExpectError("", 1, "empty"); }

TEST_F(LibsvmReaderTest, OnlyCommentsAndBlankLines) {
  ExpectFileError("# just\n# comments\n", 2, "no data");
  ExpectFileError("\n\n   \n", 3, "no data");
  ExpectFileError("# no newline at the end", 1, "no data");
}

TEST_F(LibsvmReaderTest, SingleLabelInBinaryMode) {
  ExpectFileError("1 1:1\n1 2:1\n1 3:1\n", 3, "label");
  ExpectFileError("-1 1:1\n", 1, "label");
}

TEST_F(LibsvmReaderTest, BinaryJunk) {
  std::mt19937_64 rng(99);
  std::string junk(4096, '\0');
  for (char& c : junk) c = static_cast<char>(rng() & 0xff);
  junk[0] = '\0';  // starts with NUL: the first line cannot parse
  const std::string path = Write(junk);
  Result<Dataset> data = ReadLibsvmFile(path);
  ASSERT_FALSE(data.ok());
  EXPECT_EQ(data.status().code(), StatusCode::kInvalidArgument);
  const std::string& message = data.status().message();
  EXPECT_EQ(message.substr(0, path.size() + 4), path + ":1: ") << message;
  // Unprintable bytes are escaped in the message, never copied raw.
  for (char c : message) {
    EXPECT_TRUE(c >= 0x20 && c < 0x7f) << "raw byte " << static_cast<int>(static_cast<unsigned char>(c));
  }
}

TEST_F(LibsvmReaderTest, BinaryJunkAfterValidLines) {
  std::string junk = kTwoLabels + "# fine so far\n";
  junk += std::string("\x01\xfe\x00\x7f\x80 \x00", 7);
  std::mt19937_64 rng(5);
  for (int i = 0; i < 1000; ++i) junk += static_cast<char>(rng() & 0xff);
  ExpectError(junk, 4, "label");
  ExpectError(kTwoLabels + std::string("1 1:0.5\x00\x01\n", 10), 3, "value");
  ExpectError(kTwoLabels + std::string("1\x00 1:1\n", 7), 3, "label");
}

TEST_F(LibsvmReaderTest, ErrorLineCountsAcrossLongLinesAndBuffers) {
  // The bad line comes after a 5 MiB line and many short ones, so it is in a later buffer.
  std::string text = "1 1:1\n-1";
  for (int i = 1; i <= 600000; ++i) AppendEntry(text, i, "1");
  text += "\n";
  for (int i = 0; i < 100000; ++i) text += "1 2:0.5\n";
  text += "# comment\n-1 3:1 3:2\n";
  ExpectError(text, 100004, "duplicate");
}

TEST_F(LibsvmReaderTest, NonexistentPathIsNotFound) {
  Result<Dataset> data = ReadLibsvmFile(dir_.File("no-such-file.svm"));
  ASSERT_FALSE(data.ok());
  EXPECT_EQ(data.status().code(), StatusCode::kNotFound);
  EXPECT_NE(data.status().message().find(dir_.File("no-such-file.svm")), std::string::npos);
}

TEST_F(LibsvmReaderTest, DirectoryIsNotAFile) {
  Result<Dataset> data = ReadLibsvmFile(dir_.path());
  ASSERT_FALSE(data.ok());
  EXPECT_EQ(data.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace nimbus
