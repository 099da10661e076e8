// Feature spaces of any size. A LIBSVM file may number its features up to 2^31 - 1 (hashed
// features) while its rows use a few thousand of them; vectors over the model sized by the
// largest index would take gigabytes for nothing. So the columns are renumbered to the
// features that occur, in ascending order, and the map back (ColumnMap, dataset.h) goes with
// the data, the plan, the shards' manifest and the model. The order is kept, so a row's
// entries still ascend and every sum over a row runs in the same order as before.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "nimbus/data/dataset.h"

namespace nimbus {

// Renumber when fewer than half of the `cols` columns occur: every vector over the model then
// shrinks at least twofold. Otherwise the dense vectors are within 2x of the compact ones,
// which is no worse than the bound the memory is held to, and the map and a pass over the
// data would buy little.
bool WorthRenumbering(int64_t occurring, int64_t cols);

// `keys` (all below `cols`) sorted ascending, each kept once: radix sorted, linear in their count.
void SortUnique(std::vector<uint32_t>& keys, int64_t cols);
// The union of two ascending, duplicate-free lists.
std::vector<uint32_t> MergeUnique(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b);

// The columns that occur among a data set's entries, and each one's rank among them.
class OccurringColumns {
 public:
  // From the columns themselves (ascending, unique, below `cols`), with the smaller index: a
  // bitmap when cols is at most 40 times their count, else buckets.
  static OccurringColumns FromSorted(std::vector<uint32_t> columns, int64_t cols);
  // `col_idx`: the entries' columns, all below `cols`. When cols is at most 32 times the
  // entries: a bitmap of cols bits and a running count per 64-bit word (3 cols / 16 bytes, at
  // most 6 bytes an entry). Otherwise nothing is sized by cols: a copy of the entries radix
  // sorted (8 bytes an entry while it sorts), kept unique, and an index of buckets of columns
  // (4 bytes per column that occurs). Either way linear, and at most two thirds of what the
  // entries themselves take (12 bytes each: an index and a value).
  static OccurringColumns Of(std::span<const uint32_t> col_idx, int64_t cols);

  const std::vector<uint32_t>& columns() const { return columns_; }  // ascending
  std::vector<uint32_t> TakeColumns() && { return std::move(columns_); }
  // The position among columns() of a column that occurs.
  uint32_t Rank(uint32_t column) const;
  // The position of `column` among columns(), or -1 if it does not occur (any column below cols).
  int64_t Find(uint32_t column) const;
  // out[k] = Rank(in[k]); `in` and `out` may be the same array.
  void Renumber(std::span<const uint32_t> in, std::span<uint32_t> out) const;

 private:
  void IndexBuckets(int64_t cols);
  // The bitmap of `columns` (entries, repeats allowed) and the running count per word; the
  // number of distinct columns.
  uint32_t IndexBitmap(std::span<const uint32_t> columns, int64_t cols);

  std::vector<uint64_t> bits_;    // the bitmap, when cols is small enough
  std::vector<uint32_t> before_;  // columns that occur in the words before each word
  std::vector<uint32_t> columns_;
  int shift_ = 0;                 // otherwise: bucket b holds the columns c with c >> shift_ == b,
  std::vector<uint32_t> first_;   // columns_[first_[b] .. first_[b + 1])
};

// `data` with its columns renumbered to the features that occur when that is worth it
// (WorthRenumbering), else `data` itself. The renumbered column indices are a copy (4 bytes
// per entry; the caller's arrays stay as they are), sharing everything else with `data`.
// `data` must be a whole data set (row_ptr[0] == 0), not yet renumbered.
Dataset RenumberToOccurring(const Dataset& data);

}  // namespace nimbus
