// End to end: `nimbus train` reaches liblinear's optimum (the independent reference solver).
#include <gtest/gtest.h>

#include <cmath>

#include "model.h"
#include "nimbus/data/libsvm_reader.h"
#include "support/test_support.h"

namespace nimbus::testing {
namespace {

// F at a model file (either format) on `data`, with explicit regularization.
double ObjectiveOf(const std::string& model_path, const std::string& data, double l1, double l2) {
  const CommandResult result = RunNimbus({"eval", "--model", model_path, "--data", data, "--l1", std::to_string(l1),
                                          "--l2", std::to_string(l2), "--json"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  const auto at = result.out.find("\"objective\":");
  EXPECT_NE(at, std::string::npos) << result.out;
  return std::strtod(result.out.c_str() + at + 12, nullptr);
}

TEST(LiblinearMatch, HeartScaleL1LogisticTwoWorkers) {
  TempDir dir;
  const double l1 = 0.01;
  const double rows = 270;
  const std::string reference = TrainLiblinear(6, 1.0 / (rows * l1), 1e-6, HeartScalePath(), dir.File("ll.model"));
  const CommandResult train = RunNimbus({"train", "--data", HeartScalePath(), "--l1", "0.01", "--workers", "2",
                                         "--eps-abs", "1e-9", "--eps-rel", "1e-7", "--out", dir.File("m.json")});
  ASSERT_EQ(train.exit_code, 0) << train.err;
  const double ours = ObjectiveOf(dir.File("m.json"), HeartScalePath(), l1, 0);
  const double theirs = ObjectiveOf(reference, HeartScalePath(), l1, 0);
  EXPECT_NEAR(ours, theirs, 1e-5 * theirs);
}

}  // namespace
}  // namespace nimbus::testing
