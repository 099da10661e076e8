// The binary shard format: a row block of a data set as CSR arrays behind a checked header.
//
//   offset  size  field
//        0     8  magic "NIMBSHRD"
//        8     4  format version (1)
//       12     4  flags: bit 0 = labels are a binary encoding, bit 1 = rows have weights,
//                 bit 2 = labels are class indices; version 2: bit 3 = values are float32
//                 (each exactly a float), bit 4 = no values (every one is 1)
//       16     8  rows
//       24     8  cols (the whole data set's columns: its features, or those that occur
//                 when it was renumbered; the map is beside the manifest, manifest.h)
//       32     8  nnz
//       40     8  first_row (this shard's first row in the whole data set)
//       48     8  label_negative (file value of -1)
//       56     8  label_positive (file value of +1)
//       64     8  payload checksum (XXH3-64 of every byte after the header)
//       72     8  header checksum (XXH3-64 of bytes 0..71)
//       80        payload: row_ptr (rows+1 x int64, from 0), labels (rows x f64),
//                 weights (rows x f64, if bit 1), values (nnz x f64, or x f32 with bit 3, or
//                 none with bit 4), col_idx (nnz x u32, 0-based)
//
// Version 2 differs from 1 only by the compact values; a shard of doubles is still written as
// version 1, which older builds read.
//
// All little-endian. Loading maps the file and points the Dataset into it: no copy, no parse.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "nimbus/core/status.h"
#include "nimbus/data/dataset.h"
#include "nimbus/data/store.h"

namespace nimbus {

inline constexpr uint32_t kShardFormatVersion = 2;
inline constexpr std::size_t kShardHeaderBytes = 80;

struct ShardInfo {
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t nnz = 0;
  int64_t first_row = 0;
  uint64_t payload_checksum = 0;
};

// A shard file's size: the header and the payload.
uint64_t ShardFileBytes(int64_t rows, int64_t nnz, bool weighted, CsrValues values);

// Writes rows of `data` as one shard under `key`. `first_row` is recorded for reference.
Result<ShardInfo> WriteShard(const Dataset& data, int64_t first_row, Store& store, const std::string& key);

// A shard file written in place, its rows arriving in parts, in any order and from any thread:
// each part's place is known beforehand from the rows and entries before it (a scan), so a
// shard of any size is written a block of rows at a time. Finish() checksums what was written
// (a read of the file) and writes the header; until then the file is not a valid shard.
class ShardFileWriter {
 public:
  // `values`: how the shard holds them (compact only where exact; the blocks written may
  // hold them in any form).
  static Result<std::unique_ptr<ShardFileWriter>> Create(std::string path, int64_t rows, int64_t cols, int64_t nnz,
                                                         bool weighted, CsrValues values, const LabelEncoding& encoding,
                                                         int64_t first_row);
  ~ShardFileWriter();
  ShardFileWriter(const ShardFileWriter&) = delete;
  ShardFileWriter& operator=(const ShardFileWriter&) = delete;

  // Rows [row, row + block.rows) of the shard, whose entries start at `entry`: the block's own
  // offsets from 0, its labels as the shard holds them (encoded), weights if the shard has them.
  Status Write(int64_t row, int64_t entry, const CsrView& block, std::span<const double> labels,
               std::span<const double> weights);
  Result<ShardInfo> Finish();
  const std::string& path() const { return path_; }

 private:
  ShardFileWriter(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  Status WriteAt(uint64_t offset, const void* data, std::size_t bytes);

  std::string path_;
  int fd_;
  int64_t rows_ = 0, cols_ = 0, nnz_ = 0, first_row_ = 0;
  bool weighted_ = false;
  CsrValues values_ = CsrValues::kDouble;
  LabelEncoding encoding_;
};

// Checks header, sizes, checksum and index bounds, then returns a Dataset over the blob.
// `name` is used in error messages.
Result<Dataset> DecodeShard(std::shared_ptr<const Blob> blob, const std::string& name);

// Loads and checks a shard; with `expected_checksum` (from the manifest), a shard whose
// payload checksum differs is refused: it is not the shard the manifest lists.
Result<Dataset> LoadShard(Store& store, const std::string& key, std::optional<uint64_t> expected_checksum = {});

}  // namespace nimbus
