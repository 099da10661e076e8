// Stores: the directory store's blobs and writers, and OpenStore's handling of locations.
#include "nimbus/data/store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace nimbus {
namespace {

using testing::FileExists;
using testing::ListDirectory;
using testing::ReadTextFile;
using testing::TempDir;
using testing::WriteTextFile;

TEST(DirectoryStoreTest, PutThenGet) {
  TempDir dir;
  DirectoryStore store(dir.path());
  const std::string bytes("binary\0data\xff", 12);
  ASSERT_TRUE(store.Put("blob.bin", bytes).ok());
  EXPECT_EQ(ReadTextFile(dir.File("blob.bin")), bytes);
  Result<std::shared_ptr<const Blob>> blob = store.Get("blob.bin");
  ASSERT_TRUE(blob.ok()) << blob.status().ToString();
  EXPECT_EQ((*blob)->text(), bytes);
  EXPECT_EQ((*blob)->bytes().size(), 12u);
}

TEST(DirectoryStoreTest, NamesAndPaths) {
  DirectoryStore store("/some/dir");
  EXPECT_EQ(store.uri(), "/some/dir");
  EXPECT_EQ(store.PathOf("k.bin"), "/some/dir/k.bin");
  EXPECT_EQ(store.Describe("k.bin"), "/some/dir/k.bin");
}

TEST(DirectoryStoreTest, GetMissingKeyIsNotFound) {
  TempDir dir;
  DirectoryStore store(dir.path());
  Result<std::shared_ptr<const Blob>> blob = store.Get("nope");
  ASSERT_FALSE(blob.ok());
  EXPECT_EQ(blob.status().code(), StatusCode::kNotFound);
}

TEST(DirectoryStoreTest, EmptyBlob) {
  TempDir dir;
  DirectoryStore store(dir.path());
  ASSERT_TRUE(store.Put("empty", "").ok());
  Result<std::shared_ptr<const Blob>> blob = store.Get("empty");
  ASSERT_TRUE(blob.ok()) << blob.status().ToString();
  EXPECT_TRUE((*blob)->bytes().empty());
  EXPECT_EQ((*blob)->text(), "");
}

TEST(DirectoryStoreTest, WriterShowsNothingUntilCommit) {
  TempDir dir;
  DirectoryStore store(dir.path());
  {
    Result<std::unique_ptr<BlobWriter>> writer = store.OpenWriter("k");
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    ASSERT_TRUE((*writer)->Write("abc").ok());
    ASSERT_TRUE((*writer)->Write("def").ok());
    EXPECT_FALSE(FileExists(dir.File("k")));
    EXPECT_EQ(store.Get("k").status().code(), StatusCode::kNotFound);
    ASSERT_TRUE((*writer)->Commit().ok());
  }
  Result<std::shared_ptr<const Blob>> blob = store.Get("k");
  ASSERT_TRUE(blob.ok());
  EXPECT_EQ((*blob)->text(), "abcdef");
  {
    Result<std::unique_ptr<BlobWriter>> abandoned = store.OpenWriter("other");
    ASSERT_TRUE(abandoned.ok());
    ASSERT_TRUE((*abandoned)->Write("lost").ok());
  }
  EXPECT_EQ(ListDirectory(dir.path()), std::vector<std::string>{"k"});
}

TEST(DirectoryStoreTest, BlobOutlivesReplacement) {
  TempDir dir;
  DirectoryStore store(dir.path());
  ASSERT_TRUE(store.Put("k", "first").ok());
  Result<std::shared_ptr<const Blob>> blob = store.Get("k");
  ASSERT_TRUE(blob.ok());
  ASSERT_TRUE(store.Put("k", "second!").ok());
  EXPECT_EQ((*blob)->text(), "first");  // a reader keeps the version it opened
  EXPECT_EQ((*store.Get("k"))->text(), "second!");
}

TEST(DirectoryStoreTest, WriterInMissingDirectoryFails) {
  TempDir dir;
  DirectoryStore store(dir.File("missing"));
  Result<std::unique_ptr<BlobWriter>> writer = store.OpenWriter("k");
  EXPECT_FALSE(writer.ok());
  EXPECT_FALSE(store.Put("k", "x").ok());
}

TEST(OpenStoreTest, ExistingDirectory) {
  TempDir dir;
  Result<std::unique_ptr<Store>> store = OpenStore(dir.path(), false);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->uri(), dir.path());
  ASSERT_TRUE((*store)->Put("k", "v").ok());
  EXPECT_EQ(ReadTextFile(dir.File("k")), "v");
}

TEST(OpenStoreTest, MissingDirectory) {
  TempDir dir;
  Result<std::unique_ptr<Store>> missing = OpenStore(dir.File("new/nested"), false);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(FileExists(dir.File("new")));

  Result<std::unique_ptr<Store>> created = OpenStore(dir.File("new/nested"), true);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_TRUE(std::filesystem::is_directory(dir.File("new/nested")));
}

TEST(OpenStoreTest, FileScheme) {
  TempDir dir;
  Result<std::unique_ptr<Store>> store = OpenStore("file://" + dir.path(), false);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE((*store)->Put("k", "v").ok());
  EXPECT_EQ(ReadTextFile(dir.File("k")), "v");
}

TEST(OpenStoreTest, UnsupportedSchemeAndEmptyLocation) {
  Result<std::unique_ptr<Store>> s3 = OpenStore("gopher://bucket/prefix", true);
  ASSERT_FALSE(s3.ok());
  EXPECT_EQ(s3.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s3.status().message().find("gopher"), std::string::npos);
  Result<std::unique_ptr<Store>> empty = OpenStore("", true);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);
}

TEST(OpenStoreTest, RegularFileIsNotAStore) {
  TempDir dir;
  WriteTextFile(dir.File("data.svm"), "1 1:1\n");
  Result<std::unique_ptr<Store>> store = OpenStore(dir.File("data.svm"), false);
  EXPECT_FALSE(store.ok());
  Result<std::unique_ptr<Store>> create = OpenStore(dir.File("data.svm"), true);
  EXPECT_FALSE(create.ok()) << "a file cannot become a directory store";
}

TEST(LooksLikeStoreUriTest, DirectoriesAndSchemes) {
  TempDir dir;
  WriteTextFile(dir.File("data.svm"), "1 1:1\n");
  EXPECT_TRUE(LooksLikeStoreUri(dir.path()));
  EXPECT_TRUE(LooksLikeStoreUri("s3://bucket/prefix"));
  EXPECT_TRUE(LooksLikeStoreUri("file:///tmp/x"));
  EXPECT_FALSE(LooksLikeStoreUri(dir.File("data.svm")));
  EXPECT_FALSE(LooksLikeStoreUri(dir.File("missing.svm")));
}

}  // namespace
}  // namespace nimbus
