// Cross-validation folds: the fold each row is held out in, stratified by label as
// scikit-learn's StratifiedKFold(shuffle=True) is: each class's rows, in an order shuffled by
// the seed, are dealt to the folds in turn (continuing where the class before stopped), so
// every fold holds each class's share to within a row. A regression's rows are one stratum.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "nimbus/core/status.h"
#include "nimbus/data/dataset.h"

namespace nimbus {

inline constexpr int64_t kMaxFolds = 100;

// `labels` as a data set encodes them (-1/+1 or class indices; real targets when
// `classification` is false). Needs 2 <= folds <= min(kMaxFolds, rows).
Result<std::vector<uint8_t>> StratifiedFolds(std::span<const double> labels, bool classification, int64_t folds,
                                             uint64_t seed);

// The rows of each fold (ascending), from the rows' folds.
std::vector<std::vector<int64_t>> RowsOfFolds(std::span<const uint8_t> folds, int64_t fold_count);

}  // namespace nimbus
