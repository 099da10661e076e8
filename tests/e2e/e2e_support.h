// Helpers for the end-to-end tests: generated data sets shared by a test suite, liblinear
// reference runs, and reading models and objectives back.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nimbus/model/model.h"
#include "nimbus/data/libsvm_reader.h"
#include "support/test_support.h"

namespace nimbus::testing {

// F of a model file (either format) on `data` with this regularization, computed by
// `nimbus eval` (whose objective code the unit tests check against hand computations).
inline double ObjectiveOf(const std::string& model_path, const std::string& data, double l1, double l2) {
  char l1_text[40], l2_text[40];
  std::snprintf(l1_text, sizeof l1_text, "%.17g", l1);
  std::snprintf(l2_text, sizeof l2_text, "%.17g", l2);
  const CommandResult result =
      RunNimbus({"eval", "--model", model_path, "--data", data, "--l1", l1_text, "--l2", l2_text, "--json"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  const auto at = result.out.find("\"objective\":");
  EXPECT_NE(at, std::string::npos) << result.out;
  return at == std::string::npos ? 0.0 : std::strtod(result.out.c_str() + at + 12, nullptr);
}

// max violation of 0 in dF(x) at the model in `model_path` (see OptimalityViolation).
inline double ViolationOf(const std::string& model_path, const std::string& data_path, LabelMode mode) {
  Result<Model> model = ReadModel(model_path);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  LibsvmReadOptions options;
  options.label_mode = mode;
  Result<Dataset> data = ReadLibsvmFile(data_path, options);
  EXPECT_TRUE(data.ok()) << data.status().ToString();
  if (!model.ok() || !data.ok()) return 1e300;
  const ProblemSpec spec = model->Spec(data->rows(), data->cols());
  CsrView matrix = data->matrix;
  matrix.cols = spec.cols;
  return OptimalityViolation(spec, matrix, data->labels, model->WeightsFor(data->cols()));
}

inline std::string Number(double value) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

// Runs `nimbus train` with these arguments and expects success.
inline CommandResult Train(const std::vector<std::string>& args) {
  std::vector<std::string> all{"train", "--quiet"};
  all.insert(all.end(), args.begin(), args.end());
  CommandResult result = RunNimbus(all);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  return result;
}

// The value of "key" in a flat JSON object, as text.
inline std::string JsonField(const std::string& json, const std::string& key) {
  const std::string quoted = "\"" + key + "\":";
  const auto at = json.find(quoted);
  if (at == std::string::npos) return "";
  const auto begin = at + quoted.size();
  const auto end = json.find_first_of(",}", begin);
  return json.substr(begin, end - begin);
}

// `nimbus ARGS...` that prints one JSON document (e.g. --json): expects success, returns it
// parsed (discarded when it is not JSON, which fails the test too).
inline nlohmann::json RunNimbusJson(const std::vector<std::string>& args) {
  const CommandResult result = RunNimbus(args);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  nlohmann::json json = nlohmann::json::parse(result.out, nullptr, false);
  EXPECT_FALSE(json.is_discarded()) << result.out;
  return json;
}

// Bad input: `nimbus BASE... ARGS...` of each case ends with exit status 2 and an error that
// contains the case's message.
struct RefusedCase {
  std::vector<std::string> args;
  std::string message;
};
inline void ExpectRefused(const std::vector<std::string>& base, const std::vector<RefusedCase>& cases) {
  for (const RefusedCase& c : cases) {
    std::vector<std::string> args = base;
    args.insert(args.end(), c.args.begin(), c.args.end());
    const CommandResult result = RunNimbus(args);
    EXPECT_EQ(result.exit_code, 2) << c.message;
    EXPECT_NE(result.err.find(c.message), std::string::npos) << result.err;
  }
}

}  // namespace nimbus::testing
