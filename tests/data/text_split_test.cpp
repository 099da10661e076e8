// Split in bounded memory: the shards, read back in order, are the rows the whole-file reader
// reads (labels encoded and columns renumbered the same way), with the manifest's sizes, the
// rows' weights, several files and compressed ones; and its errors name the file and line.
#include "nimbus/data/text_split.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "data/test_datasets.h"
#include "nimbus/core/file_io.h"
#include "nimbus/data/libsvm_reader.h"
#include "nimbus/data/shard.h"
#include "support/test_support.h"

namespace nimbus {
namespace {

using testing::PlainRow;
using testing::TempDir;
using testing::WriteTextFile;

// Rows of hashed features (indices up to 2^30, so the columns are renumbered), labels 3 and 7.
std::string HashedText(int rows, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::string text;
  for (int r = 0; r < rows; ++r) {
    text += random() % 3 == 0 ? "7" : "3";
    uint64_t index = 0;
    const int entries = static_cast<int>(random() % 12);
    for (int e = 0; e < entries; ++e) {
      index += 1 + random() % (uint64_t{1} << 26);
      text += " " + std::to_string(index) + ":" + std::to_string(static_cast<int>(random() % 9) - 4) + ".25";
    }
    text += "\n";
  }
  return text;
}

class TextSplitTest : public ::testing::Test {
 protected:
  TextFiles Files(const std::vector<std::pair<std::string, std::string>>& named) {
    TextFiles files;
    files.location = dir_.path();
    auto store = std::make_shared<DirectoryStore>(dir_.path());
    for (const auto& [name, text] : named) {
      WriteTextFile(dir_.File(name), text);
      files.files.push_back({dir_.path(), name, text.size(), CompressionOf(name), store});
    }
    return files;
  }
  // The shards' rows in order, and the manifest.
  std::vector<PlainRow> ShardRows(const std::string& directory, Manifest* manifest) {
    DirectoryStore store(directory);
    Result<Manifest> read = ReadManifest(store);
    EXPECT_TRUE(read.ok()) << read.status().ToString();
    std::vector<PlainRow> rows;
    if (!read.ok()) return rows;
    int64_t first_row = 0;
    for (const ShardEntry& entry : read->shards) {
      Result<Dataset> shard = LoadShard(store, entry.key, entry.checksum);
      EXPECT_TRUE(shard.ok()) << shard.status().ToString();
      if (!shard.ok()) continue;
      EXPECT_EQ(entry.first_row, first_row);
      EXPECT_EQ(entry.rows, shard->rows());
      first_row += shard->rows();
      for (PlainRow& row : testing::RowsOf(*shard)) rows.push_back(std::move(row));
      weights_.insert(weights_.end(), shard->weights.begin(), shard->weights.end());
    }
    *manifest = *read;
    return rows;
  }

  TempDir dir_;
  std::vector<double> weights_;
};

TEST_F(TextSplitTest, TheShardsAreTheWholeFilesRowsInEveryLayout) {
  const std::string text = HashedText(3000, 1);
  WriteTextFile(dir_.File("whole.svm"), text);
  LibsvmReadOptions libsvm;
  libsvm.renumber_columns = true;
  Result<Dataset> whole = ReadLibsvmFile(dir_.File("whole.svm"), libsvm);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  ASSERT_TRUE(whole->columns.renumbered());
  for (const int shards : {1, 3, 8}) {
    for (const int threads : {1, 2, 5}) {
      TextFiles files = Files({{"input.svm", text}});
      TextSplitOptions options;
      options.shards = shards;
      options.threads = threads;
      options.libsvm = libsvm;
      const std::string out = dir_.File("out-" + std::to_string(shards) + "-" + std::to_string(threads));
      ASSERT_TRUE(MakeDirectories(out).ok());
      DirectoryStore store(out);
      Result<TextSplitResult> split = SplitText(files, options, store);
      ASSERT_TRUE(split.ok()) << split.status().ToString();
      Manifest manifest;
      EXPECT_EQ(ShardRows(out, &manifest), testing::RowsOf(*whole)) << shards << " shards, " << threads << " threads";
      EXPECT_EQ(manifest.shards.size(), static_cast<std::size_t>(shards));
      EXPECT_EQ(manifest.rows, whole->rows());
      EXPECT_EQ(manifest.nnz, whole->nnz());
      EXPECT_EQ(manifest.cols, whole->cols());
      EXPECT_EQ(manifest.encoding.positive, 7);
      Result<ColumnMap> map = ReadColumnMap(store, manifest);
      ASSERT_TRUE(map.ok());
      EXPECT_EQ(*map->features, *whole->columns.features);
      EXPECT_EQ(map->source_cols, whole->source_cols());
      // Nothing else in the store: no part files left behind.
      EXPECT_EQ(testing::ListDirectory(out).size(), manifest.shards.size() + 2);
    }
  }
}

// Several files, one gzipped, with the rows' weights: the rows in the files' order, each with
// its weight; more shards than a file's lines leave the empty parts out.
TEST_F(TextSplitTest, SeveralFilesWithWeights) {
  const std::string a = "1 1:1\n-1 2:2\n1 3:3\n", b = "-1 1:4\n1 2:5\n";
  WriteTextFile(dir_.File("b.plain"), b);
  ASSERT_EQ(std::system(("gzip -c " + dir_.File("b.plain") + " > " + dir_.File("b.svm.gz")).c_str()), 0);
  TextFiles files = Files({{"a.svm", a}});
  files.files.push_back({dir_.path(), "b.svm.gz", static_cast<uint64_t>(std::stoull(
      testing::RunCommand({"stat", "-c", "%s", dir_.File("b.svm.gz")}).out)), Compression::kGzip, files.files[0].store});
  WriteTextFile(dir_.File("w.txt"), "0.5\n1\n2\n3\n4.5\n");
  TextSplitOptions options;
  options.shards = 2;
  options.sample_weights = TextFile{dir_.path(), "w.txt", 16, Compression::kNone, files.files[0].store};
  const std::string out = dir_.File("out");
  ASSERT_TRUE(MakeDirectories(out).ok());
  DirectoryStore store(out);
  Result<TextSplitResult> split = SplitText(files, options, store);
  ASSERT_TRUE(split.ok()) << split.status().ToString();
  Manifest manifest;
  const std::vector<PlainRow> rows = ShardRows(out, &manifest);
  const std::vector<PlainRow> expected = {{1, {{0, 1}}}, {-1, {{1, 2}}}, {1, {{2, 3}}}, {-1, {{0, 4}}}, {1, {{1, 5}}}};
  EXPECT_EQ(rows, expected);
  EXPECT_EQ(weights_, (std::vector<double>{0.5, 1, 2, 3, 4.5}));
  EXPECT_EQ(manifest.shards.size(), 2u);

  weights_.clear();
  options.shards = 12;  // most slices of a 15-byte file and a compressed one hold no line
  options.sample_weights.reset();
  const std::string many = dir_.File("many");
  ASSERT_TRUE(MakeDirectories(many).ok());
  DirectoryStore many_store(many);
  split = SplitText(files, options, many_store);
  ASSERT_TRUE(split.ok()) << split.status().ToString();
  EXPECT_EQ(ShardRows(many, &manifest), expected);
  EXPECT_GT(split->empty_parts, 0);
  EXPECT_EQ(manifest.shards.size() + static_cast<std::size_t>(split->empty_parts), 12u);
}

TEST_F(TextSplitTest, ABadLineOrTooFewWeightsIsAnErrorAndNothingIsWritten) {
  std::string text = HashedText(2000, 2);
  const auto at = text.find('\n', text.size() * 3 / 4);
  text.insert(at + 1, "1 5:1 4:1\n");
  const int64_t bad_line = std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at + 1), '\n') + 1;
  TextFiles files = Files({{"bad.svm", text}});
  TextSplitOptions options;
  options.shards = 4;
  const std::string out = dir_.File("out");
  ASSERT_TRUE(MakeDirectories(out).ok());
  DirectoryStore store(out);
  Result<TextSplitResult> split = SplitText(files, options, store);
  ASSERT_FALSE(split.ok());
  EXPECT_NE(split.status().message().find(dir_.File("bad.svm") + ":" + std::to_string(bad_line) +
                                          ": feature index 4 after 5"), std::string::npos)
      << split.status().message();
  EXPECT_TRUE(testing::ListDirectory(out).empty());

  files = Files({{"good.svm", "1 1:1\n-1 1:2\n1 2:1\n"}});
  WriteTextFile(dir_.File("w.txt"), "1\n2\n");
  options.sample_weights = TextFile{dir_.path(), "w.txt", 4, Compression::kNone, files.files[0].store};
  split = SplitText(files, options, store);
  ASSERT_FALSE(split.ok());
  EXPECT_NE(split.status().message().find("w.txt: 2 weights for the data's 3 rows"), std::string::npos)
      << split.status().message();
  EXPECT_TRUE(testing::ListDirectory(out).empty());
}

}  // namespace
}  // namespace nimbus
