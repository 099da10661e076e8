#include "nimbus/data/feature_map.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <iterator>

namespace nimbus {

bool WorthRenumbering(int64_t occurring, int64_t cols) { return occurring > 0 && 2 * occurring < cols; }

namespace {

// Least significant byte first, a counting pass per byte up to the largest column's top one:
// linear, where a comparison sort of 10^8 entries takes seconds.
void RadixSort(std::vector<uint32_t>& keys, int64_t cols) {
  std::vector<uint32_t> scratch(keys.size());
  for (int shift = 0; shift < 32 && (int64_t{1} << shift) < cols; shift += 8) {
    std::array<std::size_t, 257> starts{};
    for (const uint32_t key : keys) ++starts[((key >> shift) & 255) + 1];
    for (std::size_t b = 0; b < 256; ++b) starts[b + 1] += starts[b];
    for (const uint32_t key : keys) scratch[starts[(key >> shift) & 255]++] = key;
    keys.swap(scratch);
  }
}

}  // namespace

void SortUnique(std::vector<uint32_t>& keys, int64_t cols) {
  RadixSort(keys, cols);
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
}

std::vector<uint32_t> MergeUnique(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  std::vector<uint32_t> merged;
  merged.reserve(a.size() + b.size());
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(merged));
  return merged;
}

OccurringColumns OccurringColumns::FromSorted(std::vector<uint32_t> columns, int64_t cols) {
  OccurringColumns occurring;
  if (cols > 40 * static_cast<int64_t>(std::max<std::size_t>(columns.size(), 1))) {
    occurring.columns_ = std::move(columns);
    occurring.IndexBuckets(cols);
    return occurring;
  }
  occurring.IndexBitmap(columns, cols);
  occurring.columns_ = std::move(columns);
  return occurring;
}

OccurringColumns OccurringColumns::Of(std::span<const uint32_t> col_idx, int64_t cols) {
  OccurringColumns occurring;
  const auto entries = static_cast<int64_t>(col_idx.size());
  if (cols > 32 * entries) {
    occurring.columns_.assign(col_idx.begin(), col_idx.end());
    RadixSort(occurring.columns_, cols);
    occurring.columns_.erase(std::unique(occurring.columns_.begin(), occurring.columns_.end()),
                             occurring.columns_.end());
    occurring.columns_.shrink_to_fit();
    occurring.IndexBuckets(cols);
    return occurring;
  }
  const uint32_t count = occurring.IndexBitmap(col_idx, cols);
  const std::size_t words = occurring.bits_.size();
  occurring.columns_.reserve(count);
  for (std::size_t w = 0; w < words; ++w) {
    for (uint64_t bits = occurring.bits_[w]; bits != 0; bits &= bits - 1) {
      occurring.columns_.push_back(static_cast<uint32_t>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits))));
    }
  }
  return occurring;
}

uint32_t OccurringColumns::IndexBitmap(std::span<const uint32_t> columns, int64_t cols) {
  const std::size_t words = static_cast<std::size_t>(cols + 63) / 64;
  bits_.assign(words, 0);
  for (const uint32_t j : columns) bits_[j / 64] |= uint64_t{1} << (j % 64);
  before_.resize(words);
  uint32_t count = 0;
  for (std::size_t w = 0; w < words; ++w) {
    before_[w] = count;
    count += static_cast<uint32_t>(std::popcount(bits_[w]));
  }
  return count;
}

void OccurringColumns::IndexBuckets(int64_t cols) {
  // No more buckets than columns that occur, so 4 bytes per occurring column at most, and
  // about one column in each: a rank is a bucket's start and a search of a few entries.
  const auto count = static_cast<int64_t>(std::max<std::size_t>(columns_.size(), 1));
  shift_ = 0;
  while (((cols - 1) >> shift_) + 1 > count) ++shift_;
  const auto buckets = static_cast<std::size_t>(((cols - 1) >> shift_) + 1);
  first_.resize(buckets + 1);
  std::size_t k = 0;
  for (std::size_t b = 0; b <= buckets; ++b) {
    while (k < columns_.size() && (columns_[k] >> shift_) < b) ++k;
    first_[b] = static_cast<uint32_t>(k);
  }
}

uint32_t OccurringColumns::Rank(uint32_t column) const {
  if (bits_.empty()) {
    const std::size_t bucket = column >> shift_;
    const auto begin = columns_.begin() + first_[bucket], end = columns_.begin() + first_[bucket + 1];
    const auto at = std::lower_bound(begin, end, column);
    assert(at != end && *at == column);
    return static_cast<uint32_t>(at - columns_.begin());
  }
  // The columns below it in its word, by popcount of the bits under it.
  const uint64_t below = bits_[column / 64] & ((uint64_t{1} << (column % 64)) - 1);
  return before_[column / 64] + static_cast<uint32_t>(std::popcount(below));
}

int64_t OccurringColumns::Find(uint32_t column) const {
  if (bits_.empty()) {
    const std::size_t bucket = column >> shift_;
    if (bucket + 1 >= first_.size()) return -1;
    const auto begin = columns_.begin() + first_[bucket], end = columns_.begin() + first_[bucket + 1];
    const auto at = std::lower_bound(begin, end, column);
    return at != end && *at == column ? at - columns_.begin() : -1;
  }
  if (column / 64 >= bits_.size() || (bits_[column / 64] >> (column % 64) & 1) == 0) return -1;
  return Rank(column);
}

void OccurringColumns::Renumber(std::span<const uint32_t> in, std::span<uint32_t> out) const {
  assert(in.size() == out.size());
  for (std::size_t k = 0; k < in.size(); ++k) out[k] = Rank(in[k]);
}

Dataset RenumberToOccurring(const Dataset& data) {
  const CsrView& a = data.matrix;
  assert(!data.columns.renumbered() && (a.rows == 0 || a.row_ptr[0] == 0));
  const std::span<const uint32_t> col_idx(a.col_idx, static_cast<std::size_t>(a.nnz()));
  OccurringColumns occurring = OccurringColumns::Of(col_idx, a.cols);
  if (!WorthRenumbering(static_cast<int64_t>(occurring.columns().size()), a.cols)) return data;

  struct Renumbered {
    std::shared_ptr<const void> original;  // row offsets, values and labels
    std::vector<uint32_t> col_idx;
  };
  auto renumbered = std::make_shared<Renumbered>();
  renumbered->original = data.storage;
  renumbered->col_idx.resize(col_idx.size());
  occurring.Renumber(col_idx, renumbered->col_idx);
  Dataset result = data;
  result.matrix.col_idx = renumbered->col_idx.data();
  result.matrix.cols = static_cast<int64_t>(occurring.columns().size());
  result.columns.source_cols = a.cols;
  result.columns.features = std::make_shared<const std::vector<uint32_t>>(std::move(occurring).TakeColumns());
  result.storage = std::move(renumbered);
  return result;
}

}  // namespace nimbus
