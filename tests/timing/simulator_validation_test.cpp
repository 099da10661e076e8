// The simulator against measured runs on this machine: `nimbus simulate calibrate` measures the
// profile, `nimbus scale --runtime process` runs real worker processes at K = 2, 4 and 8, and
// `nimbus simulate --validate` must predict each time per round and time to solution within
// 20%. These cases run alone (RUN_SERIAL): they compare times. ADMM by name: its rounds of
// tens of milliseconds suit a 2-core machine; Newton's (a few milliseconds here, mostly
// messages and process wake-ups) are validated on real data by bench/evaluation.sh part D.
#include <nlohmann/json.hpp>

#include "e2e/e2e_support.h"

namespace nimbus::testing {
namespace {

TEST(SimulatorValidation, PredictsProcessRunsWithin20Percent) {
  TempDir dir;
  // Rounds of tens of milliseconds, so a scheduler's hiccup is small next to one.
  ASSERT_EQ(RunNimbus({"gen", "--rows", "50000", "--cols", "20000", "--nnz-per-row", "30", "--seed", "3", "--out",
                       dir.File("d.svm")})
                .exit_code,
            0);
  const std::vector<std::string> problem = {"--data", dir.File("d.svm"), "--l1", "1e-4", "--algorithm", "admm"};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), problem.begin(), problem.end());
    return RunNimbus(args);
  };
  // Measured times on a shared machine wander by 10% and more from one minute to the next:
  // both sides take the fastest of 5 runs at each K (interleaved over K), and a prediction that
  // misses is measured once more, profile and runs alike (the tolerance stays), before the test
  // fails.
  CommandResult validated;
  for (int attempt = 0; attempt < 2; ++attempt) {
    const CommandResult calibrated = with({"simulate", "calibrate", "--workers", "1,2,4,8", "--repeat", "5", "--quiet",
                                           "--out", dir.File("profile.json")});
    ASSERT_EQ(calibrated.exit_code, 0) << calibrated.err;
    const nlohmann::json profile = nlohmann::json::parse(ReadTextFile(dir.File("profile.json")));
    ASSERT_EQ(profile["points"].size(), 4u);
    EXPECT_EQ(profile["algorithm"], "admm");
    EXPECT_GT(profile["seconds_per_nnz"].get<double>(), 0);
    EXPECT_GT(profile["message_bandwidth"].get<double>(), 0);
    const CommandResult scaled = with({"scale", "--runtime", "process", "--workers", "2,4,8", "--repeat", "5",
                                       "--quiet", "--no-plots", "--out", dir.File("scale")});
    ASSERT_EQ(scaled.exit_code, 0) << scaled.err;
    validated = RunNimbus({"simulate", "--profile", dir.File("profile.json"), "--validate",
                           dir.File("scale/scale.json"), "--tolerance", "0.2", "--out", dir.File("validation")});
    if (validated.exit_code == 0) break;
    std::fprintf(stderr, "attempt %d:\n%s%s", attempt + 1, validated.out.c_str(), validated.err.c_str());
  }
  EXPECT_EQ(validated.exit_code, 0) << validated.out << validated.err;
  EXPECT_NE(validated.out.find("largest error"), std::string::npos) << validated.out;
  // Every K of the scale run has its row.
  const std::string table = ReadTextFile(dir.File("validation/validation.dat"));
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 4);
}

}  // namespace
}  // namespace nimbus::testing
