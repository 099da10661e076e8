#include "nimbus/data/manifest.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cinttypes>
#include <type_traits>
#include <cstdio>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <xxhash.h>

#include "nimbus/core/json_integer.h"
#include "nimbus/data/shard.h"

namespace nimbus {
namespace {

using Json = nlohmann::json;

std::string Hex64(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016" PRIx64, value);
  return text;
}

// Reads field `key` of `object` as T, or names the field in the error.
template <typename T>
Status ReadField(const Json& object, const char* key, const std::string& where, T* out) {
  const auto it = object.find(key);
  if (it == object.end()) return InvalidArgument(where + ": missing field '" + key + "'");
  // nlohmann converts 5.5 to an integer silently; a count must be written as an integer.
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (!it->is_number_integer()) return InvalidArgument(where + ": field '" + key + "' has the wrong type");
  }
  try {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      *out = JsonInteger<T>(*it);  // and within T's range
    } else {
      *out = it->get<T>();
    }
  } catch (const Json::exception&) {
    return InvalidArgument(where + ": field '" + key + "' has the wrong type");
  }
  return Status::Ok();
}

// The hex checksum of a manifest field, or an error naming it.
Status ParseChecksum(const std::string& text, const std::string& where, uint64_t* checksum) {
  const bool hex = text.size() == 16 && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) != 0;
  });
  if (!hex) return InvalidArgument(where + ": checksum '" + text + "' is not 16 hex digits");
  *checksum = std::strtoull(text.c_str(), nullptr, 16);
  return Status::Ok();
}

bool IsPlainKey(const std::string& key) {
  return !key.empty() && key.find('/') == std::string::npos && key.find("..") == std::string::npos;
}

Result<FeatureMapEntry> ParseFeatureMapEntry(const Json& root, const std::string& name, int64_t cols) {
  const std::string where = name + ": features";
  Json object;
  NIMBUS_RETURN_IF_ERROR(ReadField(root, "features", name, &object));
  if (!object.is_object()) return InvalidArgument(where + ": expected an object");
  FeatureMapEntry entry;
  std::string checksum;
  NIMBUS_RETURN_IF_ERROR(ReadField(object, "key", where, &entry.key));
  NIMBUS_RETURN_IF_ERROR(ReadField(object, "source_cols", where, &entry.source_cols));
  NIMBUS_RETURN_IF_ERROR(ReadField(object, "checksum", where, &checksum));
  NIMBUS_RETURN_IF_ERROR(ParseChecksum(checksum, where, &entry.checksum));
  if (!IsPlainKey(entry.key)) return InvalidArgument(where + ": key '" + entry.key + "' must be a plain file name");
  if (entry.source_cols < cols || entry.source_cols > int64_t{UINT32_MAX} + 1) {
    return InvalidArgument(where + ": source_cols " + std::to_string(entry.source_cols) + " is below cols " +
                           std::to_string(cols) + " or above 2^32");
  }
  return entry;
}

}  // namespace

std::string ShardKey(int index) {
  char key[32];
  std::snprintf(key, sizeof key, "shard-%05d.bin", index);
  return key;
}

std::string ManifestToJson(const Manifest& manifest) {
  Json shards = Json::array();
  for (const ShardEntry& shard : manifest.shards) {
    shards.push_back({{"key", shard.key},
                      {"rows", shard.rows},
                      {"nnz", shard.nnz},
                      {"first_row", shard.first_row},
                      {"checksum", Hex64(shard.checksum)}});
  }
  Json labels = {{"binary", manifest.encoding.classification},
                 {"negative", manifest.encoding.negative},
                 {"positive", manifest.encoding.positive}};
  if (manifest.encoding.multiclass()) labels["classes"] = manifest.encoding.classes;
  const int version = manifest.features ? kRenumberedManifestVersion : kManifestVersion;
  Json root = {{"format", "nimbus-shards"}, {"version", version},        {"source", manifest.source},
               {"rows", manifest.rows},     {"cols", manifest.cols},     {"nnz", manifest.nnz},
               {"labels", labels},          {"shards", shards}};
  if (manifest.features) {
    root["features"] = {{"key", manifest.features->key},
                        {"source_cols", manifest.features->source_cols},
                        {"checksum", Hex64(manifest.features->checksum)}};
  }
  // The source is a path, and paths need not be UTF-8: replace what JSON cannot hold.
  return root.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

// A multiclass store's class values (labels.classes), ascending; none for two classes.
Status ReadClasses(const Json& labels, const std::string& name, LabelEncoding* encoding) {
  if (!labels.contains("classes")) return Status::Ok();
  const Json& classes = labels["classes"];
  if (!classes.is_array() || classes.size() < 3 || !encoding->classification) {
    return InvalidArgument(name + ": labels: 'classes' must list three class values or more, of a classifier");
  }
  for (const Json& value : classes) {
    if (!value.is_number()) return InvalidArgument(name + ": labels: 'classes' must hold numbers");
    encoding->classes.push_back(value.get<double>());
  }
  const std::vector<double>& values = encoding->classes;
  if (!std::is_sorted(values.begin(), values.end()) || std::adjacent_find(values.begin(), values.end()) != values.end()) {
    return InvalidArgument(name + ": labels: 'classes' must ascend strictly");
  }
  return Status::Ok();
}

Result<Manifest> ParseManifest(std::string_view text, const std::string& name) {
  Json root;
  try {
    root = Json::parse(text);
  } catch (const Json::exception& error) {  // parse errors, and numbers out of range
    return InvalidArgument(name + ": not valid JSON: " + error.what());
  }
  if (!root.is_object()) return InvalidArgument(name + ": expected a JSON object");
  std::string format;
  int version = 0;
  NIMBUS_RETURN_IF_ERROR(ReadField(root, "format", name, &format));
  if (format != "nimbus-shards") return InvalidArgument(name + ": format is '" + format + "', not 'nimbus-shards'");
  NIMBUS_RETURN_IF_ERROR(ReadField(root, "version", name, &version));
  if (version != kManifestVersion && version != kRenumberedManifestVersion) {
    return InvalidArgument(name + ": manifest version " + std::to_string(version) + " is not supported");
  }
  Manifest manifest;
  NIMBUS_RETURN_IF_ERROR(ReadField(root, "source", name, &manifest.source));
  NIMBUS_RETURN_IF_ERROR(ReadField(root, "rows", name, &manifest.rows));
  NIMBUS_RETURN_IF_ERROR(ReadField(root, "cols", name, &manifest.cols));
  NIMBUS_RETURN_IF_ERROR(ReadField(root, "nnz", name, &manifest.nnz));
  Json labels;
  NIMBUS_RETURN_IF_ERROR(ReadField(root, "labels", name, &labels));
  if (!labels.is_object()) return InvalidArgument(name + ": field 'labels' must be an object");
  NIMBUS_RETURN_IF_ERROR(ReadField(labels, "binary", name + ": labels", &manifest.encoding.classification));
  NIMBUS_RETURN_IF_ERROR(ReadField(labels, "negative", name + ": labels", &manifest.encoding.negative));
  NIMBUS_RETURN_IF_ERROR(ReadField(labels, "positive", name + ": labels", &manifest.encoding.positive));
  if (manifest.encoding.classification && manifest.encoding.negative == manifest.encoding.positive) {
    return InvalidArgument(name + ": labels: 'negative' and 'positive' must differ");
  }
  NIMBUS_RETURN_IF_ERROR(ReadClasses(labels, name, &manifest.encoding));
  Json shards;
  NIMBUS_RETURN_IF_ERROR(ReadField(root, "shards", name, &shards));
  if (!shards.is_array() || shards.empty()) return InvalidArgument(name + ": field 'shards' must be a non-empty array");
  int64_t rows = 0, nnz = 0;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const std::string where = name + ": shards[" + std::to_string(i) + "]";
    if (!shards[i].is_object()) return InvalidArgument(where + ": expected an object");
    ShardEntry entry;
    std::string checksum;
    NIMBUS_RETURN_IF_ERROR(ReadField(shards[i], "key", where, &entry.key));
    NIMBUS_RETURN_IF_ERROR(ReadField(shards[i], "rows", where, &entry.rows));
    NIMBUS_RETURN_IF_ERROR(ReadField(shards[i], "nnz", where, &entry.nnz));
    NIMBUS_RETURN_IF_ERROR(ReadField(shards[i], "first_row", where, &entry.first_row));
    NIMBUS_RETURN_IF_ERROR(ReadField(shards[i], "checksum", where, &checksum));
    if (!IsPlainKey(entry.key)) return InvalidArgument(where + ": key '" + entry.key + "' must be a plain file name");
    if (entry.rows <= 0 || entry.nnz < 0 || entry.first_row != rows) {
      return InvalidArgument(where + ": rows, nnz or first_row do not follow the previous shard");
    }
    NIMBUS_RETURN_IF_ERROR(ParseChecksum(checksum, where, &entry.checksum));
    for (const ShardEntry& earlier : manifest.shards) {
      if (earlier.key == entry.key) return InvalidArgument(where + ": key '" + entry.key + "' appears twice");
    }
    rows += entry.rows;
    nnz += entry.nnz;
    manifest.shards.push_back(std::move(entry));
  }
  if (rows != manifest.rows || nnz != manifest.nnz) {
    return InvalidArgument(name + ": the shards' rows and nnz do not add up to the totals");
  }
  if (manifest.cols < 0) return InvalidArgument(name + ": field 'cols' is negative");
  if (version == kRenumberedManifestVersion) {
    NIMBUS_ASSIGN_OR_RETURN(manifest.features, ParseFeatureMapEntry(root, name, manifest.cols));
  } else if (root.contains("features")) {
    return InvalidArgument(name + ": field 'features' needs manifest version 2");
  }
  return manifest;
}

Result<Manifest> ReadManifest(Store& store) {
  NIMBUS_ASSIGN_OR_RETURN(std::shared_ptr<const Blob> blob, store.Get(kManifestKey));
  return ParseManifest(blob->text(), store.Describe(kManifestKey));
}

Status WriteManifest(Store& store, const Manifest& manifest) { return store.Put(kManifestKey, ManifestToJson(manifest)); }

Result<ColumnMap> ReadColumnMap(Store& store, const Manifest& manifest) {
  if (!manifest.features) return ColumnMap{};
  const FeatureMapEntry& entry = *manifest.features;
  NIMBUS_ASSIGN_OR_RETURN(std::shared_ptr<const Blob> blob, store.Get(entry.key));
  const std::string name = store.Describe(entry.key);
  const std::span<const std::byte> bytes = blob->bytes();
  if (bytes.size() != static_cast<uint64_t>(manifest.cols) * sizeof(uint32_t)) {
    return DataLoss(name + ": " + std::to_string(bytes.size()) + " bytes, not the 4 per column of the manifest's " +
                    std::to_string(manifest.cols) + " columns");
  }
  if (XXH3_64bits(bytes.data(), bytes.size()) != entry.checksum) {
    return DataLoss(name + ": the checksum differs from the manifest's");
  }
  auto features = std::make_shared<std::vector<uint32_t>>(static_cast<std::size_t>(manifest.cols));
  if (!bytes.empty()) std::memcpy(features->data(), bytes.data(), bytes.size());
  for (std::size_t k = 0; k < features->size(); ++k) {
    const bool ascends = k == 0 || (*features)[k] > (*features)[k - 1];
    if (!ascends || (*features)[k] >= static_cast<uint64_t>(entry.source_cols)) {
      return DataLoss(name + ": feature " + std::to_string(k) + " does not ascend or is past source_cols " +
                      std::to_string(entry.source_cols));
    }
  }
  ColumnMap map;
  map.source_cols = entry.source_cols;
  map.features = std::move(features);
  return map;
}

std::vector<std::pair<int64_t, int64_t>> PartitionRows(const CsrView& matrix, int parts) {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  const int64_t rows = matrix.rows;
  const int64_t base = matrix.row_ptr[0];
  // Weigh each row by its nonzeros plus one, so that empty rows still spread out.
  const double total = static_cast<double>(matrix.nnz() + rows);
  int64_t begin = 0;
  for (int part = 0; part < parts; ++part) {
    int64_t end = rows;
    if (part + 1 < parts) {
      const double target = total * (part + 1) / parts;
      end = begin + 1;
      while (end < rows - (parts - part - 1) &&
             static_cast<double>(matrix.row_ptr[end] - base + end) < target) {
        ++end;
      }
    }
    ranges.emplace_back(begin, end);
    begin = end;
  }
  return ranges;
}

Result<FeatureMapEntry> WriteColumnMap(Store& store, const ColumnMap& columns) {
  static_assert(std::endian::native == std::endian::little, "features.bin is little-endian");
  const std::vector<uint32_t>& features = *columns.features;
  const std::string_view bytes(reinterpret_cast<const char*>(features.data()), features.size() * sizeof(uint32_t));
  NIMBUS_RETURN_IF_ERROR(store.Put(kFeatureMapKey, bytes));
  return FeatureMapEntry{kFeatureMapKey, columns.source_cols, XXH3_64bits(bytes.data(), bytes.size())};
}

Result<Manifest> WriteShards(const Dataset& data, int shards, const std::string& source, Store& store) {
  if (shards < 1) return InvalidArgument("shards: must be at least 1, got " + std::to_string(shards));
  if (shards > data.rows()) {
    return InvalidArgument("cannot split " + std::to_string(data.rows()) + " rows into " + std::to_string(shards) +
                           " shards");
  }
  return WriteShards(data, PartitionRows(data.matrix, shards), source, store);
}

namespace {

// `count` shards of `data`, shard i and its first row from `shard(i)`, and the manifest.
Result<Manifest> WriteShardsOf(const Dataset& data, std::size_t count,
                               const std::function<std::pair<Dataset, int64_t>(std::size_t)>& shard,
                               const std::string& source, Store& store) {
  Manifest manifest;
  manifest.source = source;
  manifest.rows = data.rows();
  manifest.cols = data.cols();
  manifest.nnz = data.nnz();
  manifest.encoding = data.encoding;
  if (data.columns.renumbered()) {
    NIMBUS_ASSIGN_OR_RETURN(manifest.features, WriteColumnMap(store, data.columns));
  }
  for (std::size_t i = 0; i < count; ++i) {
    const std::string key = ShardKey(static_cast<int>(i));
    const auto [rows, first_row] = shard(i);
    NIMBUS_ASSIGN_OR_RETURN(ShardInfo info, WriteShard(rows, first_row, store, key));
    manifest.shards.push_back({key, info.rows, info.nnz, first_row, info.payload_checksum});
  }
  NIMBUS_RETURN_IF_ERROR(WriteManifest(store, manifest));
  return manifest;
}

}  // namespace

Result<Manifest> WriteShards(const Dataset& data, const std::vector<std::pair<int64_t, int64_t>>& ranges,
                             const std::string& source, Store& store) {
  return WriteShardsOf(
      data, ranges.size(),
      [&](std::size_t i) { return std::pair(data.Rows(ranges[i].first, ranges[i].second), ranges[i].first); }, source,
      store);
}

Result<Manifest> WriteColumnShards(const Dataset& data, const std::vector<std::pair<uint32_t, uint32_t>>& blocks,
                                   std::span<const uint32_t> position_of, const std::string& source, Store& store) {
  // Columns moved: no column map, as a map ascends (ReadColumnMap); the workers read none, and the
  // shards of more blocks than one are no store of rows to read back (each has every row).
  Dataset header = data;
  if (!position_of.empty()) header.columns = {};
  return WriteShardsOf(
      header, blocks.size(),
      [&](std::size_t i) {
        return std::pair(data.SelectColumns(blocks[i].first, blocks[i].second, position_of), int64_t{0});
      },
      source, store);
}

}  // namespace nimbus
