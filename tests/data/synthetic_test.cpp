// Synthetic data: reproducible from the seed, a valid LIBSVM file of exactly the promised
// shape, targets and labels that follow the planted model, and options validation.
#include "nimbus/data/synthetic.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "nimbus/data/libsvm_reader.h"
#include "support/test_support.h"

namespace nimbus {
namespace {

using testing::FileExists;
using testing::ReadTextFile;
using testing::TempDir;

SyntheticOptions Small(uint64_t seed = 1) {
  SyntheticOptions options;
  options.rows = 300;
  options.cols = 60;
  options.nnz_per_row = 7;
  options.seed = seed;
  return options;
}

// Margins a_r . w* from the data as read back and the summary's planted model.
std::vector<double> Margins(const Dataset& data, const SyntheticSummary& summary) {
  std::map<int64_t, double> weights;
  for (const auto& [feature, weight] : summary.planted) weights[feature - 1] = weight;
  std::vector<double> margins;
  for (int64_t r = 0; r < data.rows(); ++r) {
    double m = 0;
    for (int64_t k = data.matrix.row_ptr[r]; k < data.matrix.row_ptr[r + 1]; ++k) {
      const auto it = weights.find(data.matrix.col_idx[k]);
      if (it != weights.end()) m += data.matrix.values[k] * it->second;
    }
    margins.push_back(m);
  }
  return margins;
}

double StandardDeviation(const std::vector<double>& v) {
  double mean = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  double var = 0;
  for (double x : v) var += (x - mean) * (x - mean);
  return std::sqrt(var / static_cast<double>(v.size()));
}

TEST(SyntheticTest, SameSeedGivesTheSameBytes) {
  TempDir dir;
  ASSERT_TRUE(WriteSyntheticLibsvm(Small(42), dir.File("a.svm")).ok());
  ASSERT_TRUE(WriteSyntheticLibsvm(Small(42), dir.File("b.svm")).ok());
  const std::string a = ReadTextFile(dir.File("a.svm"));
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, ReadTextFile(dir.File("b.svm")));

  SyntheticOptions regression = Small(42);
  regression.task = SyntheticTask::kRegression;
  ASSERT_TRUE(WriteSyntheticLibsvm(regression, dir.File("c.svm")).ok());
  ASSERT_TRUE(WriteSyntheticLibsvm(regression, dir.File("d.svm")).ok());
  EXPECT_EQ(ReadTextFile(dir.File("c.svm")), ReadTextFile(dir.File("d.svm")));
}

TEST(SyntheticTest, DifferentSeedGivesDifferentData) {
  TempDir dir;
  Result<SyntheticSummary> a = WriteSyntheticLibsvm(Small(1), dir.File("a.svm"));
  Result<SyntheticSummary> b = WriteSyntheticLibsvm(Small(2), dir.File("b.svm"));
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(b.ok());
  const std::string text_a = ReadTextFile(dir.File("a.svm"));
  const std::string text_b = ReadTextFile(dir.File("b.svm"));
  EXPECT_NE(text_a, text_b);
  // Not just a different first line: the first lines differ too, and so do the models.
  EXPECT_NE(text_a.substr(0, text_a.find('\n')), text_b.substr(0, text_b.find('\n')));
  EXPECT_NE(a->planted, b->planted);
}

TEST(SyntheticTest, FileHasTheRequestedShape) {
  TempDir dir;
  const SyntheticOptions options = Small(3);
  Result<SyntheticSummary> summary = WriteSyntheticLibsvm(options, dir.File("d.svm"));
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->rows, 300);
  EXPECT_EQ(summary->nnz, 300 * 7);

  Result<Dataset> data = ReadLibsvmFile(dir.File("d.svm"));
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_EQ(data->rows(), 300);
  EXPECT_EQ(data->nnz(), 300 * 7);
  EXPECT_LE(data->cols(), 60);
  for (int64_t r = 0; r < data->rows(); ++r) {
    const int64_t begin = data->matrix.row_ptr[r], end = data->matrix.row_ptr[r + 1];
    ASSERT_EQ(end - begin, 7) << "row " << r;
    double squares = 0;
    for (int64_t k = begin; k < end; ++k) {
      EXPECT_LT(data->matrix.col_idx[k], 60u);
      EXPECT_GT(data->matrix.values[k], 0.0);
      EXPECT_LE(data->matrix.values[k], 1.0);
      squares += data->matrix.values[k] * data->matrix.values[k];
    }
    EXPECT_NEAR(squares, 1.0, 1e-4) << "rows are scaled to unit length";
  }
}

TEST(SyntheticTest, ClassificationLabelsAreSignedOnesAndCounted) {
  TempDir dir;
  Result<SyntheticSummary> summary = WriteSyntheticLibsvm(Small(4), dir.File("d.svm"));
  ASSERT_TRUE(summary.ok());
  std::istringstream lines(ReadTextFile(dir.File("d.svm")));
  std::string line;
  int64_t positives = 0, negatives = 0;
  while (std::getline(lines, line)) {
    const std::string label = line.substr(0, line.find(' '));
    ASSERT_TRUE(label == "+1" || label == "-1") << line;
    (label == "+1" ? positives : negatives) += 1;
  }
  EXPECT_EQ(positives + negatives, 300);
  EXPECT_EQ(summary->positives, positives);
  EXPECT_GT(positives, 0);
  EXPECT_GT(negatives, 0);
}

TEST(SyntheticTest, PlantedModel) {
  TempDir dir;
  Result<SyntheticSummary> summary = WriteSyntheticLibsvm(Small(5), dir.File("d.svm"));
  ASSERT_TRUE(summary.ok());
  ASSERT_EQ(summary->planted.size(), 6u);  // a tenth of 60 columns
  std::set<int64_t> features;
  for (const auto& [feature, weight] : summary->planted) {
    EXPECT_GE(feature, 1);
    EXPECT_LE(feature, 60);
    EXPECT_TRUE(std::isfinite(weight));
    EXPECT_NE(weight, 0.0);
    features.insert(feature);
  }
  EXPECT_EQ(features.size(), 6u) << "planted features repeat";

  SyntheticOptions explicit_support = Small(5);
  explicit_support.planted_nonzeros = 17;
  Result<SyntheticSummary> seventeen = WriteSyntheticLibsvm(explicit_support, dir.File("e.svm"));
  ASSERT_TRUE(seventeen.ok());
  EXPECT_EQ(seventeen->planted.size(), 17u);

  SyntheticOptions few_cols = Small(5);
  few_cols.cols = 5;
  few_cols.nnz_per_row = 5;  // every row uses every column
  Result<SyntheticSummary> one = WriteSyntheticLibsvm(few_cols, dir.File("f.svm"));
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->planted.size(), 1u);  // at least one
  Result<Dataset> data = ReadLibsvmFile(dir.File("f.svm"));
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_EQ(data->cols(), 5);
  EXPECT_EQ(data->nnz(), 300 * 5);
}

TEST(SyntheticTest, LabelsFollowTheSigmoidOfThePlantedMargin) {
  TempDir dir;
  SyntheticOptions options;
  options.rows = 4000;
  options.cols = 400;
  options.nnz_per_row = 20;
  options.planted_nonzeros = 100;
  options.seed = 9;
  Result<SyntheticSummary> summary = WriteSyntheticLibsvm(options, dir.File("d.svm"));
  ASSERT_TRUE(summary.ok());
  Result<Dataset> data = ReadLibsvmFile(dir.File("d.svm"));
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  const std::vector<double> margins = Margins(*data, *summary);
  // E[1{y = +1} - sigmoid(m)] = 0; its standard error here is under 0.008.
  double excess = 0;
  for (std::size_t r = 0; r < margins.size(); ++r) {
    excess += (data->labels[r] > 0 ? 1.0 : 0.0) - 1.0 / (1.0 + std::exp(-margins[r]));
  }
  excess /= static_cast<double>(margins.size());
  EXPECT_NEAR(excess, 0.0, 0.04);
  // Margins have a standard deviation of about margin_scale (2 by default).
  const double sd = StandardDeviation(margins);
  EXPECT_GT(sd, 0.7 * options.margin_scale);
  EXPECT_LT(sd, 1.3 * options.margin_scale);
}

TEST(SyntheticTest, RegressionWithoutNoiseWritesTheMargins) {
  TempDir dir;
  SyntheticOptions options = Small(6);
  options.task = SyntheticTask::kRegression;
  options.noise = 0;
  Result<SyntheticSummary> summary = WriteSyntheticLibsvm(options, dir.File("r.svm"));
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  LibsvmReadOptions read;
  read.label_mode = LabelMode::kRegression;
  Result<Dataset> data = ReadLibsvmFile(dir.File("r.svm"), read);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  ASSERT_EQ(data->rows(), 300);
  EXPECT_EQ(data->nnz(), 300 * 7);
  const std::vector<double> margins = Margins(*data, *summary);
  std::set<double> distinct;
  for (std::size_t r = 0; r < margins.size(); ++r) {
    EXPECT_NEAR(data->labels[r], margins[r], 1e-7 * std::fabs(margins[r]) + 1e-12) << "row " << r;
    distinct.insert(data->labels[r]);
  }
  EXPECT_GT(distinct.size(), 10u) << "real-valued targets, not a couple of classes";
}

TEST(SyntheticTest, RegressionNoiseHasTheRequestedSize) {
  TempDir dir;
  SyntheticOptions options = Small(7);
  options.rows = 3000;
  options.task = SyntheticTask::kRegression;
  options.noise = 0.5;
  Result<SyntheticSummary> summary = WriteSyntheticLibsvm(options, dir.File("r.svm"));
  ASSERT_TRUE(summary.ok());
  LibsvmReadOptions read;
  read.label_mode = LabelMode::kRegression;
  Result<Dataset> data = ReadLibsvmFile(dir.File("r.svm"), read);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  const std::vector<double> margins = Margins(*data, *summary);
  std::vector<double> residuals;
  for (std::size_t r = 0; r < margins.size(); ++r) residuals.push_back(data->labels[r] - margins[r]);
  EXPECT_NEAR(StandardDeviation(residuals), 0.5, 0.05);
  // The file's labels are plain numbers, not +1/-1.
  const std::string text = ReadTextFile(dir.File("r.svm"));
  EXPECT_NE(text.substr(0, 2), "+1");
}

TEST(SyntheticTest, APowerLawDrawsFeatureJWithProbabilityProportionalToJToTheMinusS) {
  TempDir dir;
  SyntheticOptions options;
  options.rows = 200000;
  options.cols = 100;
  options.nnz_per_row = 1;  // one draw per row: the counts follow the law itself
  options.power_law = 1.0;
  ASSERT_TRUE(WriteSyntheticLibsvm(options, dir.File("zipf.svm")).ok());
  Result<Dataset> data = ReadLibsvmFile(dir.File("zipf.svm"));
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  std::vector<double> counts(100, 0);
  for (int64_t k = 0; k < data->nnz(); ++k) counts[data->matrix.col_idx[k]] += 1;
  double harmonic = 0;
  for (int j = 1; j <= 100; ++j) harmonic += 1.0 / j;
  for (const int j : {1, 2, 5, 10, 50, 100}) {
    const double p = (1.0 / j) / harmonic;
    const double expected = p * 200000;
    const double sigma = std::sqrt(200000 * p * (1 - p));
    EXPECT_NEAR(counts[static_cast<std::size_t>(j - 1)], expected, 5 * sigma) << "feature " << j;
  }
  // Several nonzeros per row stay distinct and sorted, even with a steep law.
  options.rows = 2000;
  options.nnz_per_row = 20;
  options.power_law = 3.0;
  ASSERT_TRUE(WriteSyntheticLibsvm(options, dir.File("steep.svm")).ok());
  Result<Dataset> steep = ReadLibsvmFile(dir.File("steep.svm"));  // refuses repeated or unsorted indices
  ASSERT_TRUE(steep.ok()) << steep.status().ToString();
  EXPECT_EQ(steep->nnz(), 2000 * 20);
}

TEST(SyntheticTest, UnwritablePathIsAnError) {
  TempDir dir;
  Result<SyntheticSummary> summary = WriteSyntheticLibsvm(Small(), dir.File("missing/d.svm"));
  ASSERT_FALSE(summary.ok());
  EXPECT_EQ(summary.status().code(), StatusCode::kIoError);
}

TEST(SyntheticOptionsTest, DefaultsAreValid) { EXPECT_TRUE(SyntheticOptions{}.Validate().ok()); }

TEST(SyntheticOptionsTest, ValidateNamesTheBadField) {
  struct Case {
    const char* field;
    void (*edit)(SyntheticOptions&);
  };
  const std::vector<Case> cases = {
      {"rows", [](SyntheticOptions& o) { o.rows = 0; }},
      {"rows", [](SyntheticOptions& o) { o.rows = -5; }},
      {"cols", [](SyntheticOptions& o) { o.cols = 0; }},
      {"cols", [](SyntheticOptions& o) { o.cols = 2147483648LL; }},
      {"nnz_per_row", [](SyntheticOptions& o) { o.nnz_per_row = 0; }},
      {"nnz_per_row", [](SyntheticOptions& o) { o.nnz_per_row = o.cols + 1; }},
      {"planted_nonzeros", [](SyntheticOptions& o) { o.planted_nonzeros = -1; }},
      {"planted_nonzeros", [](SyntheticOptions& o) { o.planted_nonzeros = o.cols + 1; }},
      {"margin_scale", [](SyntheticOptions& o) { o.margin_scale = 0; }},
      {"margin_scale", [](SyntheticOptions& o) { o.margin_scale = -1; }},
      {"margin_scale", [](SyntheticOptions& o) { o.margin_scale = std::numeric_limits<double>::quiet_NaN(); }},
      {"margin_scale", [](SyntheticOptions& o) { o.margin_scale = std::numeric_limits<double>::infinity(); }},
      {"noise", [](SyntheticOptions& o) { o.noise = -0.1; }},
      {"noise", [](SyntheticOptions& o) { o.noise = std::numeric_limits<double>::quiet_NaN(); }},
      {"noise", [](SyntheticOptions& o) { o.noise = std::numeric_limits<double>::infinity(); }},
      {"power_law", [](SyntheticOptions& o) { o.power_law = -1; }},
      {"power_law", [](SyntheticOptions& o) { o.power_law = std::numeric_limits<double>::quiet_NaN(); }},
  };
  TempDir dir;
  for (const Case& c : cases) {
    SyntheticOptions options;
    c.edit(options);
    const Status status = options.Validate();
    SCOPED_TRACE(c.field);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(status.message().rfind(c.field, 0), 0u) << status.message();
    // WriteSyntheticLibsvm refuses the same options and writes nothing.
    Result<SyntheticSummary> written = WriteSyntheticLibsvm(options, dir.File("x.svm"));
    EXPECT_EQ(written.status().code(), StatusCode::kInvalidArgument);
    EXPECT_FALSE(FileExists(dir.File("x.svm")));
  }
}

TEST(SyntheticOptionsTest, BoundaryValuesAreValid) {
  SyntheticOptions options;
  options.rows = 1;
  options.cols = 1;
  options.nnz_per_row = 1;
  options.planted_nonzeros = 1;
  options.noise = 0;
  EXPECT_TRUE(options.Validate().ok());
  options.cols = 2147483647;
  options.planted_nonzeros = 0;
  EXPECT_TRUE(options.Validate().ok());
}

}  // namespace
}  // namespace nimbus
