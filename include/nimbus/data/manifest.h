// manifest.json: the table of contents of a sharded data set in a store.
//
//   {"format": "nimbus-shards", "version": 1, "source": "train.svm",
//    "rows": 270, "cols": 13, "nnz": 3378,
//    "labels": {"binary": true, "negative": -1, "positive": 1},
//    "shards": [{"key": "shard-00000.bin", "rows": 135, "nnz": 1690, "first_row": 0,
//                "checksum": "0f3a..."}, ...]}
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nimbus/core/status.h"
#include "nimbus/data/dataset.h"
#include "nimbus/data/store.h"

namespace nimbus {

inline constexpr char kManifestKey[] = "manifest.json";
inline constexpr int kManifestVersion = 1;

struct ShardEntry {
  std::string key;
  int64_t rows = 0;
  int64_t nnz = 0;
  int64_t first_row = 0;
  uint64_t checksum = 0;  // the shard's payload checksum
};

struct Manifest {
  std::string source;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t nnz = 0;
  LabelEncoding encoding;
  std::vector<ShardEntry> shards;
};

std::string ManifestToJson(const Manifest& manifest);
// `name` (the manifest's location) prefixes every error message.
Result<Manifest> ParseManifest(std::string_view json, const std::string& name);

Result<Manifest> ReadManifest(Store& store);
Status WriteManifest(Store& store, const Manifest& manifest);

// Row ranges [begin, end) of `parts` contiguous blocks with nearly equal nonzeros (every
// block gets at least one row). Requires 1 <= parts <= matrix.rows.
std::vector<std::pair<int64_t, int64_t>> PartitionRows(const CsrView& matrix, int parts);

// Writes `data` as `shards` shard files plus manifest.json into `store`.
Result<Manifest> WriteShards(const Dataset& data, int shards, const std::string& source, Store& store);

// Key of shard i: "shard-00007.bin".
std::string ShardKey(int index);

}  // namespace nimbus
