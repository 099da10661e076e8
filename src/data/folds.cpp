#include "nimbus/data/folds.h"

#include <map>
#include <string>
#include <utility>

#include "nimbus/core/random.h"

namespace nimbus {

Result<std::vector<uint8_t>> StratifiedFolds(std::span<const double> labels, bool classification, int64_t folds,
                                             uint64_t seed) {
  const auto rows = static_cast<int64_t>(labels.size());
  if (folds < 2 || folds > kMaxFolds) {
    return InvalidArgument("--folds: must be in [2, " + std::to_string(kMaxFolds) + "]");
  }
  if (folds > rows) {
    return InvalidArgument("--folds: " + std::to_string(folds) + " folds of " + std::to_string(rows) + " rows");
  }
  // The strata in ascending order of label, each its rows in file order.
  std::map<double, std::vector<int64_t>> strata;
  for (int64_t r = 0; r < rows; ++r) strata[classification ? labels[static_cast<std::size_t>(r)] : 0.0].push_back(r);
  Random random(seed);
  std::vector<uint8_t> fold_of(labels.size());
  int64_t dealt = 0;
  for (auto& [label, members] : strata) {
    // Fisher-Yates, then deal in turn.
    for (std::size_t i = members.size(); i > 1; --i) std::swap(members[i - 1], members[random.Below(i)]);
    for (const int64_t r : members) fold_of[static_cast<std::size_t>(r)] = static_cast<uint8_t>(dealt++ % folds);
  }
  return fold_of;
}

std::vector<std::vector<int64_t>> RowsOfFolds(std::span<const uint8_t> folds, int64_t fold_count) {
  std::vector<std::vector<int64_t>> rows(static_cast<std::size_t>(fold_count));
  for (std::size_t r = 0; r < folds.size(); ++r) rows[folds[r]].push_back(static_cast<int64_t>(r));
  return rows;
}

}  // namespace nimbus
