// Feature spaces of any size: which columns occur and their ranks (both the bitmap and the
// sorted way, against hand-listed answers), the LIBSVM reader renumbering a file whose largest
// index is 2^31 - 1, the caller's arrays renumbered in a copy, and the map kept beside the
// shards (manifest version 2, features.bin) with every corruption of it refused.
#include "nimbus/data/feature_map.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "data/test_datasets.h"
#include "nimbus/data/libsvm_reader.h"
#include "nimbus/data/manifest.h"
#include "nimbus/data/shard.h"
#include "support/test_support.h"

namespace nimbus {
namespace {

using Json = nlohmann::json;
using testing::MakeDataset;
using testing::PlainRow;
using testing::ReadTextFile;
using testing::RowsOf;
using testing::TempDir;
using testing::WriteTextFile;

constexpr int64_t kLargestIndex = 2147483647;

TEST(WorthRenumberingTest, OnlyWhenFewerThanHalfTheColumnsOccur) {
  EXPECT_TRUE(WorthRenumbering(4, 9));
  EXPECT_FALSE(WorthRenumbering(5, 10));  // exactly half: the dense vectors are within 2x
  EXPECT_TRUE(WorthRenumbering(4, 10));
  EXPECT_TRUE(WorthRenumbering(3, kLargestIndex));
  EXPECT_FALSE(WorthRenumbering(0, 100));  // nothing occurs: nothing to renumber to
  EXPECT_FALSE(WorthRenumbering(1, 1));
}

// The same columns with repeats, in row order, under the bitmap (cols small against the
// entries) and the sorted copy (cols far above them).
TEST(OccurringColumnsTest, BitmapAndSortedCopyAgreeWithTheHandListedAnswer) {
  const std::vector<uint32_t> entries = {7, 3, 64, 7, 130, 3, 0, 64};
  const std::vector<uint32_t> expected = {0, 3, 7, 64, 130};
  for (const int64_t cols : {int64_t{131}, int64_t{200}, kLargestIndex}) {
    SCOPED_TRACE(cols);
    const OccurringColumns occurring = OccurringColumns::Of(entries, cols);
    EXPECT_EQ(occurring.columns(), expected);
    EXPECT_EQ(occurring.Rank(0), 0u);
    EXPECT_EQ(occurring.Rank(7), 2u);
    EXPECT_EQ(occurring.Rank(64), 3u);
    EXPECT_EQ(occurring.Rank(130), 4u);
    std::vector<uint32_t> renumbered = entries;
    occurring.Renumber(renumbered, renumbered);  // in place
    EXPECT_EQ(renumbered, (std::vector<uint32_t>{2, 1, 3, 2, 4, 1, 0, 3}));
  }
  const OccurringColumns high = OccurringColumns::Of(std::vector<uint32_t>{2147483646, 5}, kLargestIndex);
  EXPECT_EQ(high.columns(), (std::vector<uint32_t>{5, 2147483646}));
  EXPECT_EQ(high.Rank(2147483646), 1u);
}

TEST(LibsvmRenumberingTest, AFileUpToTheLargestIndexIsRenumberedToTheFeaturesThatOccur) {
  TempDir dir;
  WriteTextFile(dir.File("h.svm"), "1 5:0.5 100:2 2147483647:-1\n-1 100:3\n");
  LibsvmReadOptions options;
  options.renumber_columns = true;
  Result<Dataset> data = ReadLibsvmFile(dir.File("h.svm"), options);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_EQ(data->cols(), 3);
  EXPECT_EQ(data->source_cols(), kLargestIndex);
  ASSERT_TRUE(data->columns.renumbered());
  EXPECT_EQ(*data->columns.features, (std::vector<uint32_t>{4, 99, 2147483646}));
  EXPECT_EQ(data->columns.FeatureOf(2), 2147483646);
  // Features 5, 100, 2^31 - 1 are columns 0, 1, 2; values and labels as written.
  EXPECT_EQ(RowsOf(*data), (std::vector<PlainRow>{{1, {{0, 0.5}, {1, 2.0}, {2, -1.0}}}, {-1, {{1, 3.0}}}}));
  EXPECT_EQ(data->MemoryBytes(), 4u * 12 + 3 * 8 + 2 * 8 + 3 * 4);

  // Without the option: column j is feature j + 1, as before.
  Result<Dataset> as_written = ReadLibsvmFile(dir.File("h.svm"));
  ASSERT_TRUE(as_written.ok());
  EXPECT_FALSE(as_written->columns.renumbered());
  EXPECT_EQ(as_written->cols(), kLargestIndex);
  EXPECT_EQ(RowsOf(*as_written)[0].entries[2].first, 2147483646u);
}

TEST(LibsvmRenumberingTest, DataUsingHalfItsFeaturesOrMoreKeepsItsNumbers) {
  TempDir dir;
  WriteTextFile(dir.File("d.svm"), "1 1:1 3:1\n-1 4:2\n");  // 3 of 4 features occur
  LibsvmReadOptions options;
  options.renumber_columns = true;
  Result<Dataset> data = ReadLibsvmFile(dir.File("d.svm"), options);
  ASSERT_TRUE(data.ok());
  EXPECT_FALSE(data->columns.renumbered());
  EXPECT_EQ(data->cols(), 4);
  EXPECT_EQ(data->source_cols(), 4);
  EXPECT_EQ(RowsOf(*data)[0].entries[1].first, 2u);
}

TEST(RenumberToOccurringTest, TheCallersArraysAreCopiedNotChanged) {
  const Dataset data = MakeDataset({{1, {{10, 1.0}, {900, 2.0}}}, {-1, {{10, 3.0}}}, {1, {}}}, 1000);
  const Dataset renumbered = RenumberToOccurring(data);
  ASSERT_TRUE(renumbered.columns.renumbered());
  EXPECT_EQ(renumbered.cols(), 2);
  EXPECT_EQ(renumbered.source_cols(), 1000);
  EXPECT_EQ(*renumbered.columns.features, (std::vector<uint32_t>{10, 900}));
  EXPECT_EQ(RowsOf(renumbered), (std::vector<PlainRow>{{1, {{0, 1.0}, {1, 2.0}}}, {-1, {{0, 3.0}}}, {1, {}}}));
  EXPECT_EQ(data.matrix.col_idx[1], 900u);  // the original is as it was
  EXPECT_EQ(renumbered.matrix.values, data.matrix.values);  // values shared, not copied

  const Dataset dense = MakeDataset({{1, {{0, 1.0}, {1, 2.0}}}}, 3);
  EXPECT_FALSE(RenumberToOccurring(dense).columns.renumbered());
}

// ---------------------------------------------------------------------------------------------
// The map beside the shards

class RenumberedShardsTest : public ::testing::Test {
 protected:
  RenumberedShardsTest() : store_(dir_.path()) {}

  Result<Manifest> WriteHashedShards() {
    WriteTextFile(dir_.File("h.svm"), "1 5:0.5 2147483647:-1\n-1 100:3\n1 5:1 100:1\n");
    LibsvmReadOptions options;
    options.renumber_columns = true;
    Result<Dataset> data = ReadLibsvmFile(dir_.File("h.svm"), options);
    if (!data.ok()) return data.status();
    return WriteShards(*data, 2, "h.svm", store_);
  }

  TempDir dir_;
  DirectoryStore store_;
};

TEST_F(RenumberedShardsTest, ShardsHoldTheColumnsAndTheManifestTheMap) {
  Result<Manifest> written = WriteHashedShards();
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  const Json json = Json::parse(ReadTextFile(dir_.File("manifest.json")));
  EXPECT_EQ(json["version"], 2);
  EXPECT_EQ(json["cols"], 3);
  EXPECT_EQ(json["features"]["key"], "features.bin");
  EXPECT_EQ(json["features"]["source_cols"], kLargestIndex);
  EXPECT_EQ(ReadTextFile(dir_.File("features.bin")).size(), 12u);

  Result<Manifest> read = ReadManifest(store_);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  Result<ColumnMap> map = ReadColumnMap(store_, *read);
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  EXPECT_EQ(map->source_cols, kLargestIndex);
  EXPECT_EQ(*map->features, (std::vector<uint32_t>{4, 99, 2147483646}));
  Result<Dataset> first = LoadShard(store_, read->shards[0].key, read->shards[0].checksum);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->cols(), 3);
  EXPECT_EQ(RowsOf(*first)[0], (PlainRow{1, {{0, 0.5}, {2, -1.0}}}));
}

TEST_F(RenumberedShardsTest, AManifestWithoutAMapIsVersionOneAndMapsToItself) {
  const Dataset data = MakeDataset({{1, {{0, 1.0}}}, {-1, {{1, 2.0}}}}, 2);
  ASSERT_TRUE(WriteShards(data, 1, "d.svm", store_).ok());
  const Json json = Json::parse(ReadTextFile(dir_.File("manifest.json")));
  EXPECT_EQ(json["version"], 1);
  EXPECT_FALSE(json.contains("features"));
  Result<Manifest> read = ReadManifest(store_);
  ASSERT_TRUE(read.ok());
  Result<ColumnMap> map = ReadColumnMap(store_, *read);
  ASSERT_TRUE(map.ok());
  EXPECT_FALSE(map->renumbered());
}

TEST_F(RenumberedShardsTest, ACorruptOrMismatchedMapIsRefused) {
  ASSERT_TRUE(WriteHashedShards().ok());
  const std::string bytes = ReadTextFile(dir_.File("features.bin"));
  Result<Manifest> manifest = ReadManifest(store_);
  ASSERT_TRUE(manifest.ok());

  std::string flipped = bytes;
  flipped[0] ^= 1;
  WriteTextFile(dir_.File("features.bin"), flipped);
  Result<ColumnMap> map = ReadColumnMap(store_, *manifest);
  ASSERT_FALSE(map.ok());
  EXPECT_NE(map.status().message().find("features.bin: the checksum differs"), std::string::npos) << map.status().message();

  WriteTextFile(dir_.File("features.bin"), bytes.substr(0, 8));
  map = ReadColumnMap(store_, *manifest);
  ASSERT_FALSE(map.ok());
  EXPECT_NE(map.status().message().find("8 bytes, not the 4 per column of the manifest's 3 columns"), std::string::npos)
      << map.status().message();
}

TEST(ManifestFeaturesTest, TheMapNeedsVersionTwoAndVersionTwoNeedsTheMap) {
  const std::string shards = R"("shards": [{"key": "s.bin", "rows": 1, "nnz": 1, "first_row": 0, "checksum": "0000000000000001"}])";
  const std::string common = R"("format": "nimbus-shards", "source": "x", "rows": 1, "cols": 1, "nnz": 1,
      "labels": {"binary": true, "negative": -1, "positive": 1}, )" + shards;
  const std::string features = R"("features": {"key": "features.bin", "source_cols": 10, "checksum": "00000000000000ab"})";

  Result<Manifest> v1_with_map = ParseManifest("{\"version\": 1, " + common + ", " + features + "}", "m.json");
  ASSERT_FALSE(v1_with_map.ok());
  EXPECT_NE(v1_with_map.status().message().find("m.json: field 'features' needs manifest version 2"), std::string::npos);

  Result<Manifest> v2_without = ParseManifest("{\"version\": 2, " + common + "}", "m.json");
  ASSERT_FALSE(v2_without.ok());
  EXPECT_NE(v2_without.status().message().find("m.json: missing field 'features'"), std::string::npos)
      << v2_without.status().message();

  Result<Manifest> v2 = ParseManifest("{\"version\": 2, " + common + ", " + features + "}", "m.json");
  ASSERT_TRUE(v2.ok()) << v2.status().ToString();
  ASSERT_TRUE(v2->features.has_value());
  EXPECT_EQ(v2->features->source_cols, 10);
  EXPECT_EQ(v2->features->checksum, 0xabu);
  EXPECT_EQ(ParseManifest(ManifestToJson(*v2), "again").value().features->source_cols, 10);

  const std::string below = R"("features": {"key": "features.bin", "source_cols": 0, "checksum": "00000000000000ab"})";
  Result<Manifest> bad = ParseManifest("{\"version\": 2, " + common + ", " + below + "}", "m.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("m.json: features: source_cols 0 is below cols 1"), std::string::npos)
      << bad.status().message();
}

}  // namespace
}  // namespace nimbus
