// Rows' own weights s_r (liblinear's instance weights): a row counts s_r times in the loss.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "nimbus/core/status.h"
#include "nimbus/data/dataset.h"

namespace nimbus {

// A text file with one weight per line, a line per data row, each a finite number >= 0 (no
// blank lines, so that line r is row r). Errors name the file and
// line: an unreadable number, a negative or non-finite weight, or more or fewer lines than
// `rows`.
Result<std::vector<double>> ReadSampleWeights(const std::string& path, int64_t rows);

// ReadSampleWeights for `data`'s rows, into data.weights (kept alive with its arrays).
Status ReadSampleWeightsInto(const std::string& path, Dataset& data);

// The caller's array, held to the same rules; errors say "`what`[r]".
Status CheckSampleWeights(std::span<const double> weights, int64_t rows, const std::string& what);

}  // namespace nimbus
