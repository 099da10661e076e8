// manifest.json: the table of contents of a sharded data set in a store.
//
//   {"format": "nimbus-shards", "version": 1, "source": "train.svm",
//    "rows": 270, "cols": 13, "nnz": 3378,
//    "labels": {"binary": true, "negative": -1, "positive": 1},
//    "shards": [{"key": "shard-00000.bin", "rows": 135, "nnz": 1690, "first_row": 0,
//                "checksum": "0f3a..."}, ...]}
//
// Version 2 adds the map of data renumbered to the features that occur (feature_map.h): the
// shards' column k is the source's feature features[k], "cols" counts the columns, and
//
//    "features": {"key": "features.bin", "source_cols": 2147483647, "checksum": "..."}
//
// names the map's blob: cols ascending 0-based feature numbers, uint32 little-endian. A
// manifest without a map is written as version 1, which older builds read too; they refuse
// version 2 rather than train on renumbered columns as if they were the source's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nimbus/core/status.h"
#include "nimbus/data/dataset.h"
#include "nimbus/data/store.h"

namespace nimbus {

inline constexpr char kManifestKey[] = "manifest.json";
inline constexpr int kManifestVersion = 1;
inline constexpr int kRenumberedManifestVersion = 2;
inline constexpr char kFeatureMapKey[] = "features.bin";

struct ShardEntry {
  std::string key;
  int64_t rows = 0;
  int64_t nnz = 0;
  int64_t first_row = 0;
  uint64_t checksum = 0;  // the shard's payload checksum
};

// Where the map of renumbered columns is kept (version 2).
struct FeatureMapEntry {
  std::string key;
  int64_t source_cols = 0;
  uint64_t checksum = 0;  // XXH3-64 of the blob
};

struct Manifest {
  std::string source;
  int64_t rows = 0;
  int64_t cols = 0;  // the shards' columns
  int64_t nnz = 0;
  LabelEncoding encoding;
  std::vector<ShardEntry> shards;
  std::optional<FeatureMapEntry> features;  // when the columns were renumbered
};

std::string ManifestToJson(const Manifest& manifest);
// `name` (the manifest's location) prefixes every error message.
Result<Manifest> ParseManifest(std::string_view json, const std::string& name);

Result<Manifest> ReadManifest(Store& store);
// The map the manifest names, checked against its checksum, count and bounds; an empty map
// (column j is feature j) when the manifest has none.
Result<ColumnMap> ReadColumnMap(Store& store, const Manifest& manifest);
Status WriteManifest(Store& store, const Manifest& manifest);
// The map of renumbered `columns` as the manifest's blob, and its entry.
Result<FeatureMapEntry> WriteColumnMap(Store& store, const ColumnMap& columns);

// Row ranges [begin, end) of `parts` contiguous blocks with nearly equal nonzeros (every
// block gets at least one row). Requires 1 <= parts <= matrix.rows.
std::vector<std::pair<int64_t, int64_t>> PartitionRows(const CsrView& matrix, int parts);

// Writes `data` as `shards` shard files plus manifest.json into `store`, and its column map
// when it was renumbered.
Result<Manifest> WriteShards(const Dataset& data, int shards, const std::string& source, Store& store);
// The same with the row blocks given (each [begin, end), in order, together every row).
Result<Manifest> WriteShards(const Dataset& data, const std::vector<std::pair<int64_t, int64_t>>& ranges,
                             const std::string& source, Store& store);
// The column method's layout: shard i holds every row with its entries in the columns at
// positions [blocks[i].first, blocks[i].second), column j at position_of[j] (empty: at j, and
// the column map written; Dataset::SelectColumns; each shard's first row is 0).
Result<Manifest> WriteColumnShards(const Dataset& data, const std::vector<std::pair<uint32_t, uint32_t>>& blocks,
                                   std::span<const uint32_t> position_of, const std::string& source, Store& store);

// Key of shard i: "shard-00007.bin".
std::string ShardKey(int index);

}  // namespace nimbus
