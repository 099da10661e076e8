#include "nimbus/data/folds.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>

#include "nimbus/core/random.h"

namespace nimbus {
namespace {

// 0 .. folds-1 in an order shuffled by `stream` (Fisher-Yates).
std::vector<uint8_t> Shuffled(int64_t folds, uint64_t stream) {
  std::vector<uint8_t> order(static_cast<std::size_t>(folds));
  std::iota(order.begin(), order.end(), uint8_t{0});
  Random random(stream);
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[random.Below(i)]);
  return order;
}

// A stream of its own for each (seed, class, block); the leftovers' is class "-1".
uint64_t StreamOf(uint64_t seed, uint64_t class_index, uint64_t block) {
  return seed ^ (class_index * 0x9e3779b97f4a7c15ULL) ^ ((block + 1) * 0xc2b2ae3d27d4eb4fULL);
}

}  // namespace

FoldDealer::FoldDealer(int64_t folds, uint64_t seed, std::vector<int64_t> class_rows, std::vector<int64_t> class_offsets)
    : folds_(folds),
      seed_(seed),
      class_rows_(std::move(class_rows)),
      next_(std::move(class_offsets)),
      leftover_order_(Shuffled(folds, StreamOf(seed, ~uint64_t{0}, 0))),
      cached_block_(class_rows_.size(), -1),
      cached_order_(class_rows_.size()) {
  next_.resize(class_rows_.size(), 0);
  int64_t start = 0;
  for (const int64_t rows : class_rows_) {
    leftover_start_.push_back(start);
    start += rows % folds_;
  }
}

std::vector<uint8_t> FoldDealer::BlockOrder(std::size_t class_index, int64_t block) const {
  return Shuffled(folds_, StreamOf(seed_, class_index, static_cast<uint64_t>(block)));
}

uint8_t FoldDealer::Next(std::size_t class_index) {
  const int64_t place = next_[class_index]++;
  const int64_t block = place / folds_;
  const auto within = static_cast<std::size_t>(place % folds_);
  if (block < class_rows_[class_index] / folds_) {
    if (cached_block_[class_index] != block) {
      cached_order_[class_index] = BlockOrder(class_index, block);
      cached_block_[class_index] = block;
    }
    return cached_order_[class_index][within];
  }
  // A leftover: its turn in the leftovers' order, after the classes before it.
  return leftover_order_[static_cast<std::size_t>(leftover_start_[class_index] + static_cast<int64_t>(within)) %
                         leftover_order_.size()];
}

std::vector<int64_t> FoldDealer::FoldRows() const {
  std::vector<int64_t> rows(static_cast<std::size_t>(folds_), 0);
  int64_t leftovers = 0;
  for (const int64_t n : class_rows_) {
    for (int64_t& fold : rows) fold += n / folds_;
    leftovers += n % folds_;
  }
  for (int64_t i = 0; i < leftovers; ++i) ++rows[leftover_order_[static_cast<std::size_t>(i) % leftover_order_.size()]];
  return rows;
}

Result<std::vector<uint8_t>> StratifiedFolds(std::span<const double> labels, bool classification, int64_t folds,
                                             uint64_t seed) {
  const auto rows = static_cast<int64_t>(labels.size());
  if (folds < 2 || folds > kMaxFolds) {
    return InvalidArgument("--folds: must be in [2, " + std::to_string(kMaxFolds) + "]");
  }
  if (folds > rows) {
    return InvalidArgument("--folds: " + std::to_string(folds) + " folds of " + std::to_string(rows) + " rows");
  }
  std::vector<int64_t> class_rows;
  for (const double label : labels) {
    const std::size_t stratum = StratumOf(label, classification);
    if (stratum >= class_rows.size()) class_rows.resize(stratum + 1, 0);
    ++class_rows[stratum];
  }
  FoldDealer dealer(folds, seed, std::move(class_rows), {});
  std::vector<uint8_t> fold_of(labels.size());
  for (std::size_t r = 0; r < labels.size(); ++r) fold_of[r] = dealer.Next(StratumOf(labels[r], classification));
  return fold_of;
}

std::vector<std::vector<int64_t>> RowsOfFolds(std::span<const uint8_t> folds, int64_t fold_count) {
  std::vector<std::vector<int64_t>> rows(static_cast<std::size_t>(fold_count));
  for (std::size_t r = 0; r < folds.size(); ++r) rows[folds[r]].push_back(static_cast<int64_t>(r));
  return rows;
}

}  // namespace nimbus
