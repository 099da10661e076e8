#include "nimbus/data/sample_weights.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <utility>

namespace nimbus {
namespace {

Status CheckWeight(double weight, const std::string& where) {
  if (!std::isfinite(weight) || weight < 0) {
    return InvalidArgument(where + ": the weight must be a finite number >= 0, got " + std::to_string(weight));
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<double>> ReadSampleWeights(const std::string& path, int64_t rows) {
  std::ifstream in(path);
  if (!in) return NotFound(path + ": cannot open the sample weights file");
  std::vector<double> weights;
  weights.reserve(static_cast<std::size_t>(std::max<int64_t>(rows, 0)));
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    const std::string where = path + ":" + std::to_string(number);
    const auto first = line.find_first_not_of(" \t\r");
    line = first == std::string::npos ? "" : line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
    double weight = 0;
    const auto [end, error] = std::from_chars(line.data(), line.data() + line.size(), weight);
    if (line.empty() || error != std::errc() || end != line.data() + line.size()) {
      return InvalidArgument(where + ": '" + line + "' is not a number (one weight per line, a line per row)");
    }
    NIMBUS_RETURN_IF_ERROR(CheckWeight(weight, where));
    if (static_cast<int64_t>(weights.size()) == rows) {
      return InvalidArgument(where + ": more weights than the data's " + std::to_string(rows) + " rows");
    }
    weights.push_back(weight);
  }
  if (in.bad()) return DataLoss(path + ": read error");
  if (static_cast<int64_t>(weights.size()) != rows) {
    return InvalidArgument(path + ": " + std::to_string(weights.size()) + " weights for the data's " +
                           std::to_string(rows) + " rows (one weight per line, a line per row)");
  }
  return weights;
}

Status ReadSampleWeightsInto(const std::string& path, Dataset& data) {
  NIMBUS_ASSIGN_OR_RETURN(std::vector<double> weights, ReadSampleWeights(path, data.rows()));
  data.AdoptWeights(std::move(weights));
  return Status::Ok();
}

Status CheckSampleWeights(std::span<const double> weights, int64_t rows, const std::string& what) {
  if (static_cast<int64_t>(weights.size()) != rows) {
    return InvalidArgument(what + ": " + std::to_string(weights.size()) + " weights for " + std::to_string(rows) +
                           " rows");
  }
  for (std::size_t r = 0; r < weights.size(); ++r) {
    NIMBUS_RETURN_IF_ERROR(CheckWeight(weights[r], what + "[" + std::to_string(r) + "]"));
  }
  return Status::Ok();
}

}  // namespace nimbus
