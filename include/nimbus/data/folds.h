// Cross-validation folds: the fold each row is held out in, stratified by label and dealt so
// that any process that knows a row's class and its place among that class's rows can tell
// its fold. That is how workers that read their own part of the text find their rows' folds
// without anyone holding every label.
//
// A class's rows are dealt in blocks of K (in file order): each whole block is dealt to the K
// folds in an order shuffled by (seed, class, block), and the rows left over at the class's
// end (fewer than K) take turns in one shuffled order of the folds, each class continuing
// where the class before stopped. So every fold holds each class's share to within a row, and
// the folds' sizes differ by at most one. A regression's rows are one stratum.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "nimbus/core/status.h"
#include "nimbus/data/dataset.h"

namespace nimbus {

inline constexpr int64_t kMaxFolds = 100;

// The folds of some consecutive rows of a data set whose classes hold `class_rows` rows in
// all, the first of them preceded by `class_offsets[c]` rows of each class c.
class FoldDealer {
 public:
  FoldDealer(int64_t folds, uint64_t seed, std::vector<int64_t> class_rows, std::vector<int64_t> class_offsets);
  // The fold of the next row, of class `class_index`.
  uint8_t Next(std::size_t class_index);
  // How many rows each fold holds out.
  std::vector<int64_t> FoldRows() const;

 private:
  // The order in which block `block` of class `class_index` is dealt to the folds.
  std::vector<uint8_t> BlockOrder(std::size_t class_index, int64_t block) const;

  int64_t folds_;
  uint64_t seed_;
  std::vector<int64_t> class_rows_, next_;  // each class's rows in all, and its next row's place
  std::vector<int64_t> leftover_start_;     // where each class's leftover rows begin in leftover_order_
  std::vector<uint8_t> leftover_order_;
  std::vector<int64_t> cached_block_;       // per class, the block whose order is cached
  std::vector<std::vector<uint8_t>> cached_order_;
};

// A row's stratum: its class index (labels encoded -1/+1 or 0..C-1), or 0 for a regression.
inline std::size_t StratumOf(double label, bool classification) {
  return classification && label > 0 ? static_cast<std::size_t>(label) : 0;
}

// Every row's fold, for `labels` as a data set encodes them (-1/+1 or class indices; real
// targets when `classification` is false). Needs 2 <= folds <= min(kMaxFolds, rows).
Result<std::vector<uint8_t>> StratifiedFolds(std::span<const double> labels, bool classification, int64_t folds,
                                             uint64_t seed);

// The rows of each fold (ascending), from the rows' folds.
std::vector<std::vector<int64_t>> RowsOfFolds(std::span<const uint8_t> folds, int64_t fold_count);

}  // namespace nimbus
