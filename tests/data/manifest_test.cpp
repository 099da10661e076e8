// Manifests: WriteShards + ReadManifest round trips, the row partition, and ParseManifest's
// errors, each of which must name the offending field.
#include "nimbus/data/manifest.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "data/test_datasets.h"
#include "nimbus/data/libsvm_reader.h"
#include "nimbus/data/shard.h"
#include "support/test_support.h"

namespace nimbus {
namespace {

using Json = nlohmann::json;
using testing::MakeDataset;
using testing::PlainRow;
using testing::RandomRows;
using testing::ListDirectory;
using testing::ReadTextFile;
using testing::RowsOf;
using testing::TempDir;
using testing::WriteTextFile;

// ---------------------------------------------------------------------------------------------
// ShardKey

TEST(ShardKeyTest, FiveDigitNames) {
  EXPECT_EQ(ShardKey(0), "shard-00000.bin");
  EXPECT_EQ(ShardKey(7), "shard-00007.bin");
  EXPECT_EQ(ShardKey(12345), "shard-12345.bin");
  EXPECT_EQ(ShardKey(123456), "shard-123456.bin");
}

// ---------------------------------------------------------------------------------------------
// WriteShards + ReadManifest

class WriteShardsTest : public ::testing::Test {
 protected:
  WriteShardsTest() : store_(dir_.path()) {}
  TempDir dir_;
  DirectoryStore store_;
};

TEST_F(WriteShardsTest, RoundTrip) {
  const Dataset data = MakeDataset(RandomRows(101, 30, 9, 11), 30, LabelEncoding{true, 1.0, 2.0, {}});
  Result<Manifest> written = WriteShards(data, 4, "train.svm", store_);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  EXPECT_EQ(ListDirectory(dir_.path()), (std::vector<std::string>{"manifest.json", "shard-00000.bin", "shard-00001.bin",
                                                                  "shard-00002.bin", "shard-00003.bin"}));

  Result<Manifest> read = ReadManifest(store_);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  for (const Manifest* m : {&*written, &*read}) {
    EXPECT_EQ(m->source, "train.svm");
    EXPECT_EQ(m->rows, 101);
    EXPECT_EQ(m->cols, 30);
    EXPECT_EQ(m->nnz, data.nnz());
    EXPECT_TRUE(m->encoding.classification);
    EXPECT_EQ(m->encoding.negative, 1.0);
    EXPECT_EQ(m->encoding.positive, 2.0);
    ASSERT_EQ(m->shards.size(), 4u);
  }

  // Every shard file holds exactly its block of rows; together they are the data set.
  const std::vector<PlainRow> all = RowsOf(data);
  std::vector<PlainRow> joined;
  int64_t next_row = 0, nnz = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    const ShardEntry& entry = read->shards[i];
    const ShardEntry& original = written->shards[i];
    EXPECT_EQ(entry.key, ShardKey(static_cast<int>(i)));
    EXPECT_EQ(entry.key, original.key);
    EXPECT_EQ(entry.rows, original.rows);
    EXPECT_EQ(entry.nnz, original.nnz);
    EXPECT_EQ(entry.first_row, original.first_row);
    EXPECT_EQ(entry.checksum, original.checksum);
    EXPECT_EQ(entry.first_row, next_row);
    EXPECT_GT(entry.rows, 0);

    const std::string bytes = ReadTextFile(store_.PathOf(entry.key));
    EXPECT_EQ(entry.checksum, XXH3_64bits(bytes.data() + kShardHeaderBytes, bytes.size() - kShardHeaderBytes));
    Result<Dataset> shard = LoadShard(store_, entry.key);
    ASSERT_TRUE(shard.ok()) << shard.status().ToString();
    EXPECT_EQ(shard->rows(), entry.rows);
    EXPECT_EQ(shard->nnz(), entry.nnz);
    EXPECT_EQ(shard->cols(), 30);
    EXPECT_EQ(shard->encoding.negative, 1.0);
    EXPECT_EQ(shard->encoding.positive, 2.0);
    const std::vector<PlainRow> rows = RowsOf(*shard);
    EXPECT_EQ(rows, std::vector<PlainRow>(all.begin() + entry.first_row, all.begin() + entry.first_row + entry.rows));
    joined.insert(joined.end(), rows.begin(), rows.end());
    next_row += entry.rows;
    nnz += entry.nnz;
  }
  EXPECT_EQ(next_row, 101);
  EXPECT_EQ(nnz, data.nnz());
  EXPECT_EQ(joined, all);
}

// The column method's shards: every row, a block's columns at their positions each (no column
// map for columns moved: a map ascends); columns in their order keep the map.
TEST_F(WriteShardsTest, ColumnShardsHoldTheirBlocksColumnsAtTheirPositions) {
  Dataset data = MakeDataset({{1, {{0, 1}, {2, 3}, {3, 7}}}, {-1, {{1, 2}, {2, 5}}}, {1, {{3, 8}}}}, 4);
  data.columns.features = std::make_shared<std::vector<uint32_t>>(std::vector<uint32_t>{10, 20, 30, 40});
  data.columns.source_cols = 41;
  const std::vector<uint32_t> position_of = {3, 0, 2, 1};  // positions: columns 1, 3, 2, 0
  Result<Manifest> written = WriteColumnShards(data, {{0, 2}, {2, 4}}, position_of, "c.svm", store_);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  ASSERT_EQ(written->shards.size(), 2u);
  const std::vector<std::vector<PlainRow>> expected = {
      {{1, {{1, 7}}}, {-1, {{0, 2}}}, {1, {{1, 8}}}},      // columns 3 and 1 at positions 1 and 0
      {{1, {{2, 3}, {3, 1}}}, {-1, {{2, 5}}}, {1, {}}}};  // columns 2 and 0 at positions 2 and 3
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(written->shards[i].first_row, 0);
    Result<Dataset> shard = LoadShard(store_, written->shards[i].key);
    ASSERT_TRUE(shard.ok()) << shard.status().ToString();
    EXPECT_EQ(RowsOf(*shard), expected[i]) << "shard " << i;
  }
  EXPECT_FALSE(written->features.has_value());
  EXPECT_FALSE(std::filesystem::exists(store_.PathOf(kFeatureMapKey)));

  TempDir in_order_dir;
  DirectoryStore in_order(in_order_dir.path());
  Result<Manifest> one = WriteColumnShards(data, {{0, 4}}, {}, "c.svm", in_order);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  Result<Dataset> shard = LoadShard(in_order, one->shards[0].key);
  ASSERT_TRUE(shard.ok()) << shard.status().ToString();
  EXPECT_EQ(RowsOf(*shard), RowsOf(data));
  Result<ColumnMap> map = ReadColumnMap(in_order, *one);
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  EXPECT_EQ(*map->features, (std::vector<uint32_t>{10, 20, 30, 40}));
  EXPECT_EQ(map->source_cols, 41);
}

TEST_F(WriteShardsTest, ManifestJsonHasTheDocumentedShape) {
  const Dataset data = MakeDataset({{1, {{0, 1}}}, {-1, {{1, 2}, {2, 3}}}, {1, {}}}, 3);
  Result<Manifest> written = WriteShards(data, 2, "src.svm", store_);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  const Json json = Json::parse(ReadTextFile(store_.PathOf("manifest.json")));
  EXPECT_EQ(json["format"], "nimbus-shards");
  EXPECT_EQ(json["version"], 1);
  EXPECT_EQ(json["source"], "src.svm");
  EXPECT_EQ(json["rows"], 3);
  EXPECT_EQ(json["cols"], 3);
  EXPECT_EQ(json["nnz"], 3);
  EXPECT_EQ(json["labels"]["binary"], true);
  EXPECT_EQ(json["labels"]["negative"], -1.0);
  EXPECT_EQ(json["labels"]["positive"], 1.0);
  ASSERT_EQ(json["shards"].size(), 2u);
  int64_t rows = 0;
  for (const Json& shard : json["shards"]) {
    EXPECT_EQ(shard["first_row"], rows);
    rows += shard["rows"].get<int64_t>();
    const std::string checksum = shard["checksum"];
    EXPECT_EQ(checksum.size(), 16u);
    EXPECT_EQ(checksum.find_first_not_of("0123456789abcdef"), std::string::npos) << checksum;
    const std::string bytes = ReadTextFile(store_.PathOf(shard["key"].get<std::string>()));
    char expected[17];
    std::snprintf(expected, sizeof expected, "%016llx",
                  static_cast<unsigned long long>(XXH3_64bits(bytes.data() + 80, bytes.size() - 80)));
    EXPECT_EQ(checksum, expected);
  }
  EXPECT_EQ(rows, 3);
}

TEST_F(WriteShardsTest, OneShardAndOneShardPerRow) {
  const Dataset data = MakeDataset(RandomRows(6, 5, 3, 2), 5);
  Result<Manifest> one = WriteShards(data, 1, "a", store_);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  ASSERT_EQ(one->shards.size(), 1u);
  EXPECT_EQ(one->shards[0].rows, 6);
  EXPECT_EQ(one->shards[0].nnz, data.nnz());

  TempDir other;
  DirectoryStore store(other.path());
  Result<Manifest> each = WriteShards(data, 6, "a", store);
  ASSERT_TRUE(each.ok()) << each.status().ToString();
  ASSERT_EQ(each->shards.size(), 6u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(each->shards[static_cast<std::size_t>(i)].rows, 1);
    EXPECT_EQ(each->shards[static_cast<std::size_t>(i)].first_row, i);
  }
}

TEST_F(WriteShardsTest, RegressionDataKeepsItsEncoding) {
  const Dataset data = MakeDataset({{2.5, {{0, 1}}}, {-3.25, {}}, {7, {{1, 1}}}}, 2, LabelEncoding{false, -1, 1, {}});
  ASSERT_TRUE(WriteShards(data, 2, "r", store_).ok());
  Result<Manifest> read = ReadManifest(store_);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_FALSE(read->encoding.classification);
  Result<Dataset> second = LoadShard(store_, read->shards[1].key);
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->encoding.classification);
  EXPECT_EQ(second->labels.back(), 7.0);
}

TEST_F(WriteShardsTest, FromALibsvmFile) {
  Result<Dataset> data = ReadLibsvmFile(testing::HeartScalePath());
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  Result<Manifest> written = WriteShards(*data, 3, "heart_scale", store_);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  Result<Manifest> read = ReadManifest(store_);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->rows, 270);
  EXPECT_EQ(read->cols, 13);
  EXPECT_EQ(read->nnz, 3378);
}

TEST_F(WriteShardsTest, BadShardCounts) {
  const Dataset data = MakeDataset(RandomRows(3, 4, 2, 1), 4);
  for (const int shards : {0, -1, 4, 100}) {
    SCOPED_TRACE(shards);
    Result<Manifest> result = WriteShards(data, shards, "a", store_);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  }
  EXPECT_TRUE(ListDirectory(dir_.path()).empty()) << "nothing may be written for a bad request";
}

TEST_F(WriteShardsTest, MissingManifestIsNotFound) {
  Result<Manifest> read = ReadManifest(store_);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kNotFound);
}

TEST_F(WriteShardsTest, BadManifestFileNamesItsPath) {
  WriteTextFile(store_.PathOf("manifest.json"), "{\"format\": \"nimbus-shards\"");
  Result<Manifest> read = ReadManifest(store_);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(read.status().message().rfind(store_.PathOf("manifest.json") + ": ", 0), 0u) << read.status().message();
}

// Found by fuzz_manifest: a number beyond double's range made the JSON library throw instead
// of failing the parse (tests/fuzz/regressions/manifest).
TEST(ManifestJsonTest, ANumberOutOfRangeIsAnErrorNotAnException) {
  Result<Manifest> parsed = Manifest{};
  EXPECT_NO_THROW(parsed = ParseManifest(R"({"format": "nimbus-shards", "rows": 2e863})", "dir/manifest.json"));
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(parsed.status().message().rfind("dir/manifest.json: ", 0), 0u) << parsed.status().message();
}

// A source path is whatever bytes the file system allows, not necessarily UTF-8. Writing the
// manifest must not throw (errors are Status values in nimbus); if it succeeds, the store
// must be readable.
TEST_F(WriteShardsTest, NonUtf8SourceNameIsNoException) {
  const Dataset data = MakeDataset({{1, {{0, 1}}}, {-1, {{1, 2}}}}, 2);
  const std::string source = "/data/caf\xe9-latin1-\xff.svm";
  bool ok = false;
  EXPECT_NO_THROW({
    Result<Manifest> written = WriteShards(data, 2, source, store_);
    ok = written.ok();
  });
  if (ok) {
    Result<Manifest> read = ReadManifest(store_);
    EXPECT_TRUE(read.ok()) << read.status().ToString();
  }
  Manifest m;
  m.source = source;
  m.rows = 1;
  m.shards = {{"a.bin", 1, 0, 0, 0}};
  EXPECT_NO_THROW(static_cast<void>(ManifestToJson(m)));
}

TEST(ManifestJsonTest, RoundTripOfUnusualValues) {
  Manifest m;
  m.source = "dir with \"quotes\"/caf\xc3\xa9\\x.svm";
  m.rows = 5;
  m.cols = 0;
  m.nnz = 0;
  m.encoding = LabelEncoding{true, 0.1, 1e300, {}};
  m.shards = {{"a.bin", 2, 0, 0, 0}, {"b.bin", 3, 0, 2, std::numeric_limits<uint64_t>::max()}};
  Result<Manifest> parsed = ParseManifest(ManifestToJson(m), "m");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->source, m.source);
  EXPECT_EQ(parsed->rows, 5);
  EXPECT_EQ(parsed->cols, 0);
  EXPECT_EQ(parsed->encoding.negative, 0.1);
  EXPECT_EQ(parsed->encoding.positive, 1e300);
  ASSERT_EQ(parsed->shards.size(), 2u);
  EXPECT_EQ(parsed->shards[0].checksum, 0u);
  EXPECT_EQ(parsed->shards[1].checksum, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(parsed->shards[1].key, "b.bin");
  EXPECT_EQ(parsed->shards[1].first_row, 2);
}

// ---------------------------------------------------------------------------------------------
// PartitionRows

struct OwnedCsr {
  std::vector<int64_t> row_ptr{0};
  std::vector<uint32_t> col_idx;
  std::vector<double> values;
  CsrView View() const {
    CsrView v;
    v.rows = static_cast<int64_t>(row_ptr.size()) - 1;
    v.cols = 1;
    v.row_ptr = row_ptr.data();
    v.col_idx = col_idx.data();
    v.values = values.data();
    return v;
  }
};

OwnedCsr WithRowLengths(const std::vector<int64_t>& lengths) {
  OwnedCsr m;
  for (int64_t n : lengths) m.row_ptr.push_back(m.row_ptr.back() + n);
  m.col_idx.assign(static_cast<std::size_t>(m.row_ptr.back()), 0);
  m.values.assign(static_cast<std::size_t>(m.row_ptr.back()), 1.0);
  return m;
}

// Checks the partition's shape, and that each part's weight (nonzeros, plus one per row)
// is within one row's weight of an equal share, when `balanced` is set.
void CheckPartition(const CsrView& matrix, int parts, bool balanced) {
  const auto ranges = PartitionRows(matrix, parts);
  ASSERT_EQ(ranges.size(), static_cast<std::size_t>(parts));
  int64_t expected_begin = 0;
  int64_t max_row_weight = 0;
  for (int64_t r = 0; r < matrix.rows; ++r) {
    max_row_weight = std::max(max_row_weight, matrix.row_ptr[r + 1] - matrix.row_ptr[r] + 1);
  }
  const double share = static_cast<double>(matrix.nnz() + matrix.rows) / parts;
  for (const auto& [begin, end] : ranges) {
    EXPECT_EQ(begin, expected_begin) << "parts are not contiguous";
    EXPECT_LT(begin, end) << "an empty part";
    expected_begin = end;
    if (balanced) {
      const double weight = static_cast<double>(matrix.row_ptr[end] - matrix.row_ptr[begin] + (end - begin));
      EXPECT_LE(std::fabs(weight - share), static_cast<double>(max_row_weight))
          << "part [" << begin << ", " << end << ") weighs " << weight << ", an equal share is " << share;
    }
  }
  EXPECT_EQ(expected_begin, matrix.rows) << "parts do not cover every row";
}

TEST(PartitionRowsTest, UniformRowsSplitEvenly) {
  const OwnedCsr m = WithRowLengths(std::vector<int64_t>(100, 5));
  const auto ranges = PartitionRows(m.View(), 4);
  ASSERT_EQ(ranges.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(ranges[static_cast<std::size_t>(i)].first, 25 * i);
    EXPECT_EQ(ranges[static_cast<std::size_t>(i)].second, 25 * (i + 1));
  }
}

TEST(PartitionRowsTest, OnePartIsEverything) {
  const OwnedCsr m = WithRowLengths({3, 0, 7});
  const auto ranges = PartitionRows(m.View(), 1);
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0], (std::pair<int64_t, int64_t>{0, 3}));
}

TEST(PartitionRowsTest, AsManyPartsAsRows) {
  const OwnedCsr m = WithRowLengths({100, 0, 0, 50, 1, 0, 0});
  const auto ranges = PartitionRows(m.View(), 7);
  ASSERT_EQ(ranges.size(), 7u);
  for (int64_t i = 0; i < 7; ++i) EXPECT_EQ(ranges[static_cast<std::size_t>(i)], (std::pair<int64_t, int64_t>{i, i + 1}));
}

TEST(PartitionRowsTest, RandomRowLengthsAreBalanced) {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<int64_t> lengths(static_cast<std::size_t>(50 + rng() % 500));
    for (int64_t& n : lengths) n = static_cast<int64_t>(rng() % 40);
    const OwnedCsr m = WithRowLengths(lengths);
    const int parts = 1 + static_cast<int>(rng() % 12);
    SCOPED_TRACE("trial " + std::to_string(trial) + " parts " + std::to_string(parts));
    CheckPartition(m.View(), parts, true);
  }
}

TEST(PartitionRowsTest, SkewedRowsStillGiveEveryPartARow) {
  // A few huge rows among many empty ones: balance is impossible, shape is not.
  std::vector<int64_t> lengths(40, 0);
  lengths[0] = 10000;
  lengths[1] = 10000;
  lengths[39] = 10000;
  const OwnedCsr m = WithRowLengths(lengths);
  for (int parts = 1; parts <= 40; ++parts) {
    SCOPED_TRACE(parts);
    CheckPartition(m.View(), parts, false);
  }
  const OwnedCsr empty_rows = WithRowLengths(std::vector<int64_t>(10, 0));
  CheckPartition(empty_rows.View(), 3, true);  // empty rows still spread out
}

TEST(PartitionRowsTest, ViewWithOffset) {
  std::vector<int64_t> lengths(300);
  for (std::size_t i = 0; i < lengths.size(); ++i) lengths[i] = static_cast<int64_t>((i * 13) % 17);
  const OwnedCsr m = WithRowLengths(lengths);
  const CsrView view = m.View().RowRange(100, 250);
  ASSERT_NE(view.row_ptr[0], 0);
  for (int parts = 1; parts <= 10; ++parts) {
    SCOPED_TRACE(parts);
    CheckPartition(view, parts, true);
  }
}

// ---------------------------------------------------------------------------------------------
// ParseManifest errors

// A valid manifest: two shards of 2 and 3 rows, 4 + 6 nonzeros.
Json ValidManifest() {
  return Json::parse(R"({
    "format": "nimbus-shards", "version": 1, "source": "train.svm",
    "rows": 5, "cols": 13, "nnz": 10,
    "labels": {"binary": true, "negative": -1, "positive": 1},
    "shards": [
      {"key": "shard-00000.bin", "rows": 2, "nnz": 4, "first_row": 0, "checksum": "0123456789abcdef"},
      {"key": "shard-00001.bin", "rows": 3, "nnz": 6, "first_row": 2, "checksum": "FEDCBA9876543210"}
    ]})");
}

class ParseManifestTest : public ::testing::Test {
 protected:
  // Expects kInvalidArgument with a message that starts with the manifest's name and
  // contains every one of `words`.
  static void ExpectError(const Json& json, const std::vector<std::string>& words) {
    ExpectTextError(json.dump(), words);
  }
  static void ExpectTextError(const std::string& text, const std::vector<std::string>& words) {
    Result<Manifest> m = ParseManifest(text, "store/manifest.json");
    ASSERT_FALSE(m.ok()) << "accepted: " << text;
    EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
    const std::string& message = m.status().message();
    EXPECT_EQ(message.rfind("store/manifest.json: ", 0), 0u) << message;
    for (const std::string& word : words) {
      EXPECT_NE(message.find(word), std::string::npos) << "'" << word << "' not in: " << message;
    }
  }
};

TEST_F(ParseManifestTest, ValidManifestParses) {
  Result<Manifest> m = ParseManifest(ValidManifest().dump(), "m");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->source, "train.svm");
  EXPECT_EQ(m->rows, 5);
  EXPECT_EQ(m->cols, 13);
  EXPECT_EQ(m->nnz, 10);
  ASSERT_EQ(m->shards.size(), 2u);
  EXPECT_EQ(m->shards[0].checksum, 0x0123456789abcdefULL);
  EXPECT_EQ(m->shards[1].checksum, 0xfedcba9876543210ULL);
  EXPECT_EQ(m->shards[1].first_row, 2);
}

TEST_F(ParseManifestTest, NotJsonOrNotAnObject) {
  ExpectTextError("", {"JSON"});
  ExpectTextError("{\"format\": ", {"JSON"});
  ExpectTextError("not json", {"JSON"});
  ExpectTextError("[1, 2]", {"object"});
  ExpectTextError("42", {"object"});
}

TEST_F(ParseManifestTest, MissingTopLevelFields) {
  for (const std::string field : {"format", "version", "source", "rows", "cols", "nnz", "labels", "shards"}) {
    SCOPED_TRACE(field);
    Json json = ValidManifest();
    json.erase(field);
    ExpectError(json, {"'" + field + "'", "missing"});
  }
}

TEST_F(ParseManifestTest, MissingLabelFields) {
  for (const std::string field : {"binary", "negative", "positive"}) {
    SCOPED_TRACE(field);
    Json json = ValidManifest();
    json["labels"].erase(field);
    ExpectError(json, {"labels", "'" + field + "'", "missing"});
  }
}

TEST_F(ParseManifestTest, MissingShardFields) {
  for (const std::string field : {"key", "rows", "nnz", "first_row", "checksum"}) {
    SCOPED_TRACE(field);
    Json json = ValidManifest();
    json["shards"][1].erase(field);
    ExpectError(json, {"shards[1]", "'" + field + "'", "missing"});
  }
}

TEST_F(ParseManifestTest, WrongTypes) {
  struct Case {
    const char* pointer;
    Json value;
    const char* field;
  };
  const std::vector<Case> cases = {
      {"/format", 1, "format"},
      {"/version", "1", "version"},
      {"/source", 5, "source"},
      {"/rows", "5", "rows"},
      {"/cols", Json::array(), "cols"},
      {"/nnz", Json::object(), "nnz"},
      {"/nnz", nullptr, "nnz"},
      {"/labels", "binary", "labels"},
      {"/labels/binary", 1, "binary"},
      {"/labels/binary", "true", "binary"},
      {"/labels/negative", "-1", "negative"},
      {"/labels/positive", nullptr, "positive"},
      {"/shards", Json::object(), "shards"},
      {"/shards", Json::array(), "shards"},
      {"/shards", "shard-00000.bin", "shards"},
      {"/shards/0/key", 0, "key"},
      {"/shards/0/rows", "2", "rows"},
      {"/shards/1/nnz", Json::array({6}), "nnz"},
      {"/shards/1/first_row", "2", "first_row"},
      {"/shards/0/checksum", 81985529216486895LL, "checksum"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.pointer) + " = " + c.value.dump());
    Json json = ValidManifest();
    json[Json::json_pointer(c.pointer)] = c.value;
    ExpectError(json, {std::string("'") + c.field + "'"});
  }
  Json not_object = ValidManifest();
  not_object["shards"][0] = "shard-00000.bin";
  ExpectError(not_object, {"shards[0]"});
}

// Counts are integers: a fraction or a boolean where a row count belongs is a wrong type,
// not a number to be truncated.
TEST_F(ParseManifestTest, NonIntegerCountsAreWrongTypes) {
  struct Case {
    const char* pointer;
    Json value;
    const char* field;
  };
  const std::vector<Case> cases = {
      {"/rows", 5.5, "rows"},
      {"/nnz", 10.25, "nnz"},
      {"/version", 1.5, "version"},
      {"/cols", true, "cols"},
      {"/shards/1/rows", 3.9, "rows"},
      // what fuzz_checkpoint found for integers: 1e300 is a double, whose cast to an integer
      // would be undefined; an integer beyond the field's type is out of its range
      {"/rows", 1e300, "rows"},
      {"/shards/0/rows", Json(std::numeric_limits<uint64_t>::max()), "rows"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.pointer) + " = " + c.value.dump());
    Json json = ValidManifest();
    json[Json::json_pointer(c.pointer)] = c.value;
    ExpectError(json, {std::string("'") + c.field + "'"});
  }
}

TEST_F(ParseManifestTest, WrongFormatOrVersion) {
  Json format = ValidManifest();
  format["format"] = "other-shards";
  ExpectError(format, {"format", "other-shards"});
  Json version = ValidManifest();
  version["version"] = 3;  // 1, and 2 (with a feature map: feature_map_test.cpp), are read
  ExpectError(version, {"version", "3"});
  version["version"] = 0;
  ExpectError(version, {"version", "0"});
}

TEST_F(ParseManifestTest, KeysMustBePlainFileNames) {
  for (const std::string key : {"dir/shard.bin", "/etc/passwd", "../shard.bin", "..", ""}) {
    SCOPED_TRACE(key);
    Json json = ValidManifest();
    json["shards"][1]["key"] = key;
    ExpectError(json, {"shards[1]", "key"});
  }
}

TEST_F(ParseManifestTest, TotalsMustAddUp) {
  Json rows = ValidManifest();
  rows["rows"] = 6;
  ExpectError(rows, {"rows"});
  Json nnz = ValidManifest();
  nnz["nnz"] = 9;
  ExpectError(nnz, {"nnz"});
}

TEST_F(ParseManifestTest, ShardsMustFollowEachOther) {
  Json gap = ValidManifest();
  gap["shards"][1]["first_row"] = 3;
  gap["rows"] = 6;
  ExpectError(gap, {"shards[1]", "first_row"});
  Json start = ValidManifest();
  start["shards"][0]["first_row"] = 1;
  ExpectError(start, {"shards[0]", "first_row"});
  Json empty = ValidManifest();
  empty["shards"][0]["rows"] = 0;
  empty["shards"][1]["first_row"] = 0;
  empty["rows"] = 3;
  ExpectError(empty, {"shards[0]", "rows"});
  Json negative_nnz = ValidManifest();
  negative_nnz["shards"][0]["nnz"] = -4;
  negative_nnz["nnz"] = 2;
  ExpectError(negative_nnz, {"shards[0]", "nnz"});
}

TEST_F(ParseManifestTest, NegativeCols) {
  Json json = ValidManifest();
  json["cols"] = -1;
  ExpectError(json, {"'cols'"});
}

TEST_F(ParseManifestTest, BadChecksumText) {
  for (const std::string checksum : {"", "xyz", "0123456789abcde", "0123456789abcdef0", "0123456789abcdeg",
                                     "0123456789abcd f", "0123456789 abcde"}) {
    SCOPED_TRACE("'" + checksum + "'");
    Json json = ValidManifest();
    json["shards"][0]["checksum"] = checksum;
    ExpectError(json, {"shards[0]", "checksum"});
  }
}

// "16 hex digits" means exactly that: strtoull's extras (leading blanks, a sign, a 0x
// prefix) are not hex digits.
TEST_F(ParseManifestTest, ChecksumAcceptsOnlyHexDigits) {
  for (const std::string checksum : {" 123456789abcdef", "+123456789abcdef", "-123456789abcdef", "0x3456789abcdef0",
                                     "\t123456789abcdef"}) {
    SCOPED_TRACE("'" + checksum + "'");
    Json json = ValidManifest();
    json["shards"][0]["checksum"] = checksum;
    ExpectError(json, {"shards[0]", "checksum"});
  }
}

}  // namespace
}  // namespace nimbus
