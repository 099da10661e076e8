// The single-process commands stream: gen, split, eval and predict on a file ten times the
// memory they may take, each process's peak (getrusage, the child's ru_maxrss) checked. A
// command that held the data would need more than the file's size; these need a few blocks of
// text per thread and vectors of the model's size.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "e2e/e2e_support.h"

namespace nimbus::testing {
namespace {

TEST(BoundedMemory, GenSplitEvalAndPredictStreamAFileTenTimesTheirPeak) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's shadow memory and quarantine are not the program's memory";
#endif
  TempDir dir;
  const std::string data = dir.File("big.svm");
  // About 450 MB: 1.5 million rows of 20 entries over 200,000 features.
  const CommandResult gen = RunNimbus({"gen", "--rows", "1500000", "--cols", "200000", "--nnz-per-row", "20", "--seed",
                                       "4", "--out", data});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const auto bytes = static_cast<long>(std::stoull(RunCommand({"stat", "-c", "%s", data}).out));
  ASSERT_GT(bytes, 400L << 20);
  // Each command's peak, at most a tenth of the file (and far below the 256 MB promised).
  auto expect_bounded = [&](const std::string& command, const CommandResult& result) {
    EXPECT_EQ(result.exit_code, 0) << command << ": " << result.err;
    EXPECT_GT(result.max_rss_kb, 0) << command;
    EXPECT_LT(result.max_rss_kb * 1024 * 10, bytes) << command << " peaked at " << result.max_rss_kb << " kB for a "
                                                    << bytes << "-byte file";
  };
  expect_bounded("gen", gen);
  expect_bounded("split", RunNimbus({"split", "--data", data, "--shards", "4", "--out", dir.File("shards")}));
  // A model to score with (trained on a small part of the rows).
  const std::string head = dir.File("head.svm");
  ASSERT_EQ(RunCommand({"sh", "-c", "head -n 20000 " + data + " > " + head}).exit_code, 0);
  Train({"--data", head, "--l1", "1e-4", "--out", dir.File("model.json")});
  const CommandResult eval = RunNimbus({"eval", "--model", dir.File("model.json"), "--data", data, "--json"});
  expect_bounded("eval", eval);
  EXPECT_NE(eval.out.find("\"rows\":1500000"), std::string::npos) << eval.out;
  expect_bounded("predict", RunNimbus({"predict", "--model", dir.File("model.json"), "--data", data, "--out",
                                       dir.File("predictions.txt")}));
  EXPECT_EQ(RunCommand({"sh", "-c", "wc -l < " + dir.File("predictions.txt")}).out, "1500000\n");
}

}  // namespace
}  // namespace nimbus::testing
