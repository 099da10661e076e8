#include "nimbus/data/manifest.h"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <type_traits>
#include <cstdio>
#include <nlohmann/json.hpp>

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
  const Json labels = {{"binary", manifest.encoding.binary},
                       {"negative", manifest.encoding.negative},
                       {"positive", manifest.encoding.positive}};
  const Json root = {{"format", "nimbus-shards"}, {"version", kManifestVersion}, {"source", manifest.source},
                     {"rows", manifest.rows},     {"cols", manifest.cols},         {"nnz", manifest.nnz},
                     {"labels", labels},          {"shards", shards}};
  // The source is a path, and paths need not be UTF-8: replace what JSON cannot hold.
  return root.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
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
  if (version != kManifestVersion) {
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
  NIMBUS_RETURN_IF_ERROR(ReadField(labels, "binary", name + ": labels", &manifest.encoding.binary));
  NIMBUS_RETURN_IF_ERROR(ReadField(labels, "negative", name + ": labels", &manifest.encoding.negative));
  NIMBUS_RETURN_IF_ERROR(ReadField(labels, "positive", name + ": labels", &manifest.encoding.positive));
  if (manifest.encoding.binary && manifest.encoding.negative == manifest.encoding.positive) {
    return InvalidArgument(name + ": labels: 'negative' and 'positive' must differ");
  }
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
    if (entry.key.empty() || entry.key.find('/') != std::string::npos || entry.key.find("..") != std::string::npos) {
      return InvalidArgument(where + ": key '" + entry.key + "' must be a plain file name");
    }
    if (entry.rows <= 0 || entry.nnz < 0 || entry.first_row != rows) {
      return InvalidArgument(where + ": rows, nnz or first_row do not follow the previous shard");
    }
    const bool hex = checksum.size() == 16 && std::all_of(checksum.begin(), checksum.end(), [](char c) {
      return std::isxdigit(static_cast<unsigned char>(c)) != 0;
    });
    if (!hex) return InvalidArgument(where + ": checksum '" + checksum + "' is not 16 hex digits");
    entry.checksum = std::strtoull(checksum.c_str(), nullptr, 16);
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
  return manifest;
}

Result<Manifest> ReadManifest(Store& store) {
  NIMBUS_ASSIGN_OR_RETURN(std::shared_ptr<const Blob> blob, store.Get(kManifestKey));
  return ParseManifest(blob->text(), store.Describe(kManifestKey));
}

Status WriteManifest(Store& store, const Manifest& manifest) { return store.Put(kManifestKey, ManifestToJson(manifest)); }

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

Result<Manifest> WriteShards(const Dataset& data, int shards, const std::string& source, Store& store) {
  if (shards < 1) return InvalidArgument("shards: must be at least 1, got " + std::to_string(shards));
  if (shards > data.rows()) {
    return InvalidArgument("cannot split " + std::to_string(data.rows()) + " rows into " + std::to_string(shards) +
                           " shards");
  }
  Manifest manifest;
  manifest.source = source;
  manifest.rows = data.rows();
  manifest.cols = data.cols();
  manifest.nnz = data.nnz();
  manifest.encoding = data.encoding;
  const auto ranges = PartitionRows(data.matrix, shards);
  for (int i = 0; i < shards; ++i) {
    const auto [begin, end] = ranges[static_cast<std::size_t>(i)];
    const std::string key = ShardKey(i);
    NIMBUS_ASSIGN_OR_RETURN(ShardInfo info, WriteShard(data.Rows(begin, end), begin, store, key));
    manifest.shards.push_back({key, info.rows, info.nnz, begin, info.payload_checksum});
  }
  NIMBUS_RETURN_IF_ERROR(WriteManifest(store, manifest));
  return manifest;
}

}  // namespace nimbus
