// `nimbus simulate --validate` end to end on this machine: `nimbus simulate calibrate` measures
// the profile, `nimbus scale --runtime process` runs real worker processes at K = 2, 4 and 8, and
// the validation puts each prediction beside what was measured.
//
// How close the predictions come (the simulator's 20%) is a performance claim: bench/evaluation.sh
// measures it (part A on this problem and a wider one, part D on the suite's real data), and the
// issue notes carry its tables. Here the times of one machine's minute are not asserted to 20%:
// on this VM the same solve takes 250-480 ms from one second to the next, so a calibration and a
// scale run a minute apart can differ by 30% (CI saw 26-31% where a quiet machine shows 9-16%). What this test holds is what
// cannot move with the machine: the table carries the scale run's measurements unchanged, each
// error is the prediction over the measurement, the exit status is the tolerance's verdict on the
// largest of them, no prediction is off by the factor of 2 that a broken model would show, and
// each side's spread of its solves comes through to the table as that side recorded it.
// RUN_SERIAL all the same, so that the factor of 2 has the cores to itself.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "e2e/e2e_support.h"

namespace nimbus::testing {
namespace {

struct ValidationRow {
  int workers = 0;
  double measured_s = 0, predicted_s = 0, measured_round_ms = 0, predicted_round_ms = 0;
  double calibration_spread = -1, scale_spread = -1;
};

std::vector<ValidationRow> ReadValidationDat(const std::string& path) {
  std::vector<ValidationRow> rows;
  std::istringstream lines(ReadTextFile(path));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    ValidationRow row;
    fields >> row.workers >> row.measured_s >> row.predicted_s >> row.measured_round_ms >> row.predicted_round_ms >>
        row.calibration_spread >> row.scale_spread;
    EXPECT_TRUE(fields) << "not a row of seven numbers: " << line;
    rows.push_back(row);
  }
  return rows;
}

TEST(SimulatorValidation, PutsPredictionsBesideAProcessRunAndJudgesTheLargestError) {
  TempDir dir;
  ASSERT_EQ(RunNimbus({"gen", "--rows", "50000", "--cols", "20000", "--nnz-per-row", "30", "--seed", "3", "--out",
                       dir.File("d.svm")})
                .exit_code,
            0);
  const std::vector<std::string> problem = {"--data", dir.File("d.svm"), "--l1", "1e-4", "--algorithm", "admm"};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), problem.begin(), problem.end());
    return RunNimbus(args);
  };
  const CommandResult calibrated =
      with({"simulate", "calibrate", "--workers", "1,2,4,8", "--repeat", "2", "--quiet", "--out", dir.File("profile.json")});
  ASSERT_EQ(calibrated.exit_code, 0) << calibrated.err;
  const nlohmann::json profile = nlohmann::json::parse(ReadTextFile(dir.File("profile.json")));
  ASSERT_EQ(profile["points"].size(), 4u);
  EXPECT_EQ(profile["algorithm"], "admm");
  EXPECT_GT(profile["seconds_per_nnz"].get<double>(), 0);
  EXPECT_GT(profile["message_bandwidth"].get<double>(), 0);
  const CommandResult scaled = with({"scale", "--runtime", "process", "--workers", "2,4,8", "--repeat", "2", "--quiet",
                                     "--no-plots", "--out", dir.File("scale")});
  ASSERT_EQ(scaled.exit_code, 0) << scaled.err;
  auto validate = [&](double tolerance) {
    return RunNimbus({"simulate", "--profile", dir.File("profile.json"), "--validate", dir.File("scale/scale.json"),
                      "--tolerance", Number(tolerance), "--out", dir.File("validation")});
  };
  const CommandResult lenient = validate(1e6);
  ASSERT_EQ(lenient.exit_code, 0) << lenient.out << lenient.err;
  std::fputs(lenient.out.c_str(), stderr);  // the figures, for whoever reads the log

  // Every K of the scale run has its row, with the scale run's own figures.
  const nlohmann::json scale = nlohmann::json::parse(ReadTextFile(dir.File("scale/scale.json")));
  const std::vector<ValidationRow> rows = ReadValidationDat(dir.File("validation/validation.dat"));
  ASSERT_EQ(rows.size(), scale["points"].size());
  double largest = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const nlohmann::json& point = scale["points"][i];
    const ValidationRow& row = rows[i];
    SCOPED_TRACE("K = " + std::to_string(row.workers));
    EXPECT_EQ(row.workers, point["workers"].get<int>());
    EXPECT_NEAR(row.measured_s, point["time_to_solution"].get<double>(), 1e-6);
    EXPECT_NEAR(row.measured_round_ms, 1e3 * point["seconds_per_round"].get<double>(), 1e-6);
    // Each side's spread of its two solves, as that side measured it (two timings never agree
    // to the nanosecond, so a spread of 0 would be a spread not measured).
    EXPECT_NEAR(row.scale_spread, point["spread"].get<double>(), 1e-6);
    EXPECT_GT(row.scale_spread, 0);
    const auto at = std::find_if(profile["points"].begin(), profile["points"].end(),
                                 [&](const nlohmann::json& p) { return p["workers"].get<int>() == row.workers; });
    ASSERT_NE(at, profile["points"].end());
    EXPECT_NEAR(row.calibration_spread, (*at)["spread"].get<double>(), 1e-6);
    EXPECT_GT(row.calibration_spread, 0);
    for (const auto& [predicted, measured] :
         {std::pair{row.predicted_s, row.measured_s}, std::pair{row.predicted_round_ms, row.measured_round_ms}}) {
      EXPECT_GT(predicted, measured / 2);
      EXPECT_LT(predicted, measured * 2);
      largest = std::max(largest, std::abs(predicted / measured - 1));
    }
  }
  // The verdict is the tolerance's against the largest error (the .dat's six decimals leave
  // the error uncertain by about 1e-4 of the measured times).
  ASSERT_GT(largest, 1e-3);
  const CommandResult strict = validate(largest * 0.98);
  EXPECT_EQ(strict.exit_code, 1) << strict.out << strict.err;
  EXPECT_NE(strict.err.find("the predictions are off by"), std::string::npos) << strict.err;
  EXPECT_NE(strict.out.find("largest error"), std::string::npos) << strict.out;
  EXPECT_EQ(validate(largest * 1.02).exit_code, 0);

  // A miss where a side's own solves disagreed by more than the tolerance says to measure again.
  nlohmann::json noisy = scale;
  for (nlohmann::json& point : noisy["points"]) point["spread"] = 9.0;  // beyond any calibration's own
  WriteTextFile(dir.File("noisy.json"), noisy.dump());
  const CommandResult again = RunNimbus({"simulate", "--profile", dir.File("profile.json"), "--validate",
                                         dir.File("noisy.json"), "--tolerance", Number(largest * 0.98)});
  EXPECT_EQ(again.exit_code, 1) << again.out << again.err;
  EXPECT_NE(again.err.find("disagreed among themselves by up to 900%"), std::string::npos) << again.err;
  EXPECT_NE(again.out.find("+900.0%"), std::string::npos) << again.out;
}

}  // namespace
}  // namespace nimbus::testing
