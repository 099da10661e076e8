// nimbus::CrossValidate on LIBSVM text: the workers deal their rows' folds and score them.
// Its scores are those of the same rows given as arrays (whose folds this process deals); a
// worker process that dies while it scores is replaced, reads its part again, and the scores
// do not change; the folds it lists on request are the rule's.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/testing.h"
#include "nimbus/data/folds.h"
#include "nimbus/data/libsvm_reader.h"
#include "nimbus/nimbus.h"
#include "support/test_support.h"

namespace nimbus {
namespace {

using testing::HeartScalePath;
using testing::TempDir;

SolveOptions ProcessOptions() {
  SolveOptions options;
  options.l1 = 0.01;
  options.gradient_tolerance = 1e-10;
  options.runtime.kind = RuntimeKind::kProcess;
  options.runtime.worker_program = NIMBUS_BINARY;
  options.runtime.workers = 3;
  return options;
}

CvOptions FourFolds() {
  CvOptions cv;
  cv.folds = 4;
  cv.seed = 7;
  return cv;
}

// Each fold's log loss and AUC, fold after fold.
std::vector<double> FoldFigures(const CvResult& result) {
  std::vector<double> figures;
  for (const Evaluation& e : result.points.at(0).folds) {
    figures.push_back(e.log_loss);
    figures.push_back(e.auc);
    figures.push_back(static_cast<double>(e.rows));
  }
  return figures;
}

TEST(CrossValidateText, TheWorkersFoldsAndScoresAreThoseOfTheRowsInMemory) {
  const Result<CvResult> text = CrossValidate(TrainingData::LibsvmFile(HeartScalePath()), ProcessOptions(), FourFolds());
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_TRUE(text->fold_of_rows.empty());  // the master never saw the rows
  EXPECT_EQ(text->rows, 270);

  Result<Dataset> rows = ReadLibsvmFile(HeartScalePath(), LibsvmReadOptions{});
  ASSERT_TRUE(rows.ok());
  const TrainingData arrays = TrainingData::Csr(rows->matrix, rows->labels);
  const Result<CvResult> memory = CrossValidate(arrays, ProcessOptions(), FourFolds());
  ASSERT_TRUE(memory.ok()) << memory.status().ToString();
  EXPECT_EQ(memory->fold_of_rows, StratifiedFolds(rows->labels, true, 4, 7).value());

  const std::vector<double> a = FoldFigures(*text), b = FoldFigures(*memory);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-9) << i;
  EXPECT_NEAR(text->points[0].summary.objective, memory->points[0].summary.objective, 1e-10);
}

// The rounds the masters traced, and the workers' failures and launches.
struct Traced {
  int64_t last_round = -1;
  int failures = 0, launches = 0;
};

TEST(CrossValidateText, AWorkerThatDiesWhileScoringIsReplacedAndTheScoresStand) {
  Traced quiet;
  SolveOptions options = ProcessOptions();
  options.on_trace = [&quiet](std::string_view line) {
    const nlohmann::json event = nlohmann::json::parse(line);
    if (event["event"] == "round") quiet.last_round = std::max(quiet.last_round, event["round"].get<int64_t>());
  };
  const Result<CvResult> undisturbed = CrossValidate(TrainingData::LibsvmFile(HeartScalePath()), options, FourFolds());
  ASSERT_TRUE(undisturbed.ok()) << undisturbed.status().ToString();
  ASSERT_GE(quiet.last_round, 1);

  // The round after the masters' last is the first score round: worker 1 dies in it.
  Traced crashed;
  FaultInjection faults;
  faults.crash_worker = 1;
  faults.crash_round = quiet.last_round + 1;
  InjectFaults(options, faults);
  options.on_trace = [&crashed](std::string_view line) {
    const nlohmann::json event = nlohmann::json::parse(line);
    if (event["event"] != "worker") return;
    crashed.failures += event.dump().find("\"failed\"") != std::string::npos ? 1 : 0;
    crashed.launches += event.dump().find("\"launched\"") != std::string::npos ? 1 : 0;
  };
  const Result<CvResult> replaced = CrossValidate(TrainingData::LibsvmFile(HeartScalePath()), options, FourFolds());
  ASSERT_TRUE(replaced.ok()) << replaced.status().ToString();
  EXPECT_GE(crashed.failures, 1);
  EXPECT_GE(crashed.launches, 1);  // a replacement (the first workers started before the trace's sink)
  EXPECT_EQ(FoldFigures(*replaced), FoldFigures(*undisturbed));
}

TEST(CrossValidateText, TheFoldsWrittenAreTheRulesForTheFilesLabels) {
  TempDir dir;
  ASSERT_TRUE(WriteFolds(HeartScalePath(), FourFolds(), /*classification=*/true, dir.File("folds.txt")).ok());
  Result<Dataset> rows = ReadLibsvmFile(HeartScalePath(), LibsvmReadOptions{});
  ASSERT_TRUE(rows.ok());
  const std::vector<uint8_t> expected = StratifiedFolds(rows->labels, true, 4, 7).value();
  std::ifstream in(dir.File("folds.txt"));
  std::vector<uint8_t> written;
  for (int fold; in >> fold;) written.push_back(static_cast<uint8_t>(fold));
  EXPECT_EQ(written, expected);
  // More folds than rows: refused before anything is written.
  testing::WriteTextFile(dir.File("three.svm"), "1 1:1\n-1 1:2\n1 2:1\n");
  const Status refused = WriteFolds(dir.File("three.svm"), FourFolds(), true, dir.File("x.txt"));
  EXPECT_NE(refused.message().find("4 folds of 3 rows"), std::string::npos) << refused.ToString();
  EXPECT_FALSE(testing::FileExists(dir.File("x.txt")));
}

}  // namespace
}  // namespace nimbus
