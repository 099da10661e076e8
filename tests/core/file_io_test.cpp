// Whole-file reads, atomic writes (nothing half-written is ever visible, nothing is left
// behind), read-only mappings and directory creation.
#include "nimbus/core/file_io.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "support/test_support.h"

namespace nimbus {
namespace {

using testing::FileExists;
using testing::ListDirectory;
using testing::ReadTextFile;
using testing::TempDir;
using testing::WriteTextFile;

// Bytes 0..255 repeated: includes NUL, newlines and non-ASCII.
std::string BinaryPattern(std::size_t size) {
  std::string s(size, '\0');
  for (std::size_t i = 0; i < size; ++i) s[i] = static_cast<char>((i * 7 + i / 256) & 0xff);
  return s;
}

TEST(ReadFileToStringTest, ReadsBinaryContentsExactly) {
  TempDir dir;
  const std::string contents = BinaryPattern(200000);  // several read() chunks
  WriteTextFile(dir.File("f"), contents);
  Result<std::string> read = ReadFileToString(dir.File("f"));
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, contents);
}

TEST(ReadFileToStringTest, EmptyFile) {
  TempDir dir;
  WriteTextFile(dir.File("empty"), "");
  Result<std::string> read = ReadFileToString(dir.File("empty"));
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, "");
}

TEST(ReadFileToStringTest, MissingFileIsNotFound) {
  TempDir dir;
  Result<std::string> read = ReadFileToString(dir.File("missing"));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kNotFound);
  EXPECT_NE(read.status().message().find(dir.File("missing")), std::string::npos) << read.status().message();
}

TEST(ReadFileToStringTest, DirectoryIsAnError) {
  TempDir dir;
  Result<std::string> read = ReadFileToString(dir.path());
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kIoError) << read.status().ToString();
}

TEST(RegularFileSizeTest, SizesAndErrors) {
  TempDir dir;
  WriteTextFile(dir.File("f"), std::string(12345, 'a'));
  Result<uint64_t> size = RegularFileSize(dir.File("f"));
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(*size, 12345u);

  WriteTextFile(dir.File("empty"), "");
  ASSERT_TRUE(RegularFileSize(dir.File("empty")).ok());
  EXPECT_EQ(*RegularFileSize(dir.File("empty")), 0u);

  EXPECT_EQ(RegularFileSize(dir.File("missing")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(RegularFileSize(dir.path()).status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(RegularFileSize(dir.path()).status().message().find(dir.path()), std::string::npos);
}

TEST(AtomicFileWriterTest, NothingVisibleBeforeCommit) {
  TempDir dir;
  const std::string path = dir.File("out.txt");
  Result<AtomicFileWriter> writer = AtomicFileWriter::Open(path);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  EXPECT_EQ(writer->path(), path);
  ASSERT_TRUE(writer->Write("hello ").ok());
  ASSERT_TRUE(writer->Write(std::string(3 << 20, 'x')).ok());  // past the write buffer: bytes reach the disk
  ASSERT_TRUE(writer->Write("world", 5).ok());
  EXPECT_FALSE(FileExists(path));
  ASSERT_TRUE(writer->Commit().ok());
  EXPECT_TRUE(FileExists(path));
  EXPECT_EQ(ReadTextFile(path), "hello " + std::string(3 << 20, 'x') + "world");
  // Only the committed file remains: the temporary was renamed, not copied.
  EXPECT_EQ(ListDirectory(dir.path()), std::vector<std::string>{"out.txt"});
}

TEST(AtomicFileWriterTest, ManySmallAndLargeWritesKeepOrder) {
  TempDir dir;
  const std::string path = dir.File("mixed.bin");
  std::string expected;
  {
    Result<AtomicFileWriter> writer = AtomicFileWriter::Open(path);
    ASSERT_TRUE(writer.ok());
    const std::string pattern = BinaryPattern((1 << 20) + 17);
    for (int i = 0; i < 3000; ++i) {
      const std::string piece = pattern.substr(static_cast<std::size_t>(i) * 131 % 5000, static_cast<std::size_t>(i % 400));
      ASSERT_TRUE(writer->Write(piece).ok());
      expected += piece;
      if (i % 1000 == 500) {
        ASSERT_TRUE(writer->Write(pattern).ok());  // one write larger than the buffer
        expected += pattern;
      }
    }
    ASSERT_TRUE(writer->Commit().ok());
  }
  EXPECT_EQ(ReadTextFile(path), expected);
}

TEST(AtomicFileWriterTest, DestroyedWithoutCommitLeavesNothing) {
  TempDir dir;
  const std::string path = dir.File("never.txt");
  {
    Result<AtomicFileWriter> writer = AtomicFileWriter::Open(path);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE(writer->Write(std::string(2 << 20, 'y')).ok());
    EXPECT_FALSE(ListDirectory(dir.path()).empty()) << "the temporary file lives beside the target";
  }
  EXPECT_FALSE(FileExists(path));
  EXPECT_TRUE(ListDirectory(dir.path()).empty()) << "a temporary file was left behind";
}

TEST(AtomicFileWriterTest, OldContentsStayUntilCommit) {
  TempDir dir;
  const std::string path = dir.File("f.txt");
  WriteTextFile(path, "old contents");
  {
    Result<AtomicFileWriter> writer = AtomicFileWriter::Open(path);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE(writer->Write("new").ok());
    EXPECT_EQ(ReadTextFile(path), "old contents");
    ASSERT_TRUE(writer->Commit().ok());
  }
  EXPECT_EQ(ReadTextFile(path), "new");
  {
    Result<AtomicFileWriter> writer = AtomicFileWriter::Open(path);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE(writer->Write("abandoned").ok());
  }
  EXPECT_EQ(ReadTextFile(path), "new");
  EXPECT_EQ(ListDirectory(dir.path()), std::vector<std::string>{"f.txt"});
}

TEST(AtomicFileWriterTest, OpenInMissingDirectoryIsAnError) {
  TempDir dir;
  const std::string path = dir.File("no/such/dir/out.txt");
  Result<AtomicFileWriter> writer = AtomicFileWriter::Open(path);
  ASSERT_FALSE(writer.ok());
  EXPECT_EQ(writer.status().code(), StatusCode::kIoError) << writer.status().ToString();
  EXPECT_NE(writer.status().message().find(path), std::string::npos) << writer.status().message();
  EXPECT_FALSE(FileExists(path));
  EXPECT_TRUE(ListDirectory(dir.path()).empty());
}

TEST(AtomicFileWriterTest, FailedCommitRemovesTheTemporary) {
  TempDir dir;
  // A non-empty directory cannot be replaced by a file: the rename fails.
  const std::string path = dir.File("target");
  std::filesystem::create_directory(path);
  WriteTextFile(path + "/inside", "x");
  Result<AtomicFileWriter> writer = AtomicFileWriter::Open(path);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  ASSERT_TRUE(writer->Write("data").ok());
  const Status status = writer->Commit();
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kIoError);
  EXPECT_EQ(ListDirectory(dir.path()), std::vector<std::string>{"target"});
  EXPECT_EQ(ReadTextFile(path + "/inside"), "x");
}

TEST(AtomicFileWriterTest, UseAfterCommitIsFailedPrecondition) {
  TempDir dir;
  Result<AtomicFileWriter> writer = AtomicFileWriter::Open(dir.File("f"));
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE(writer->Write("a").ok());
  ASSERT_TRUE(writer->Commit().ok());
  EXPECT_EQ(writer->Write("b").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(writer->Commit().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(ReadTextFile(dir.File("f")), "a");
}

TEST(AtomicFileWriterTest, EmptyCommitMakesEmptyFile) {
  TempDir dir;
  Result<AtomicFileWriter> writer = AtomicFileWriter::Open(dir.File("empty"));
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE(writer->Commit().ok());
  EXPECT_TRUE(FileExists(dir.File("empty")));
  EXPECT_EQ(ReadTextFile(dir.File("empty")), "");
}

TEST(AtomicFileWriterTest, MovedWriterCommitsAndMovedFromDoesNothing) {
  TempDir dir;
  const std::string path = dir.File("moved.txt");
  {
    Result<AtomicFileWriter> opened = AtomicFileWriter::Open(path);
    ASSERT_TRUE(opened.ok());
    AtomicFileWriter first = std::move(opened).value();
    ASSERT_TRUE(first.Write("part one, ").ok());
    AtomicFileWriter second(std::move(first));
    ASSERT_TRUE(second.Write("part two").ok());
    EXPECT_FALSE(first.Commit().ok());  // NOLINT(bugprone-use-after-move): a moved-from writer is closed
    ASSERT_TRUE(second.Commit().ok());
  }
  EXPECT_EQ(ReadTextFile(path), "part one, part two");
  EXPECT_EQ(ListDirectory(dir.path()), std::vector<std::string>{"moved.txt"});
}

TEST(AtomicFileWriterTest, TwoWritersToOnePathDoNotShareATemporary) {
  TempDir dir;
  const std::string path = dir.File("f");
  Result<AtomicFileWriter> a = AtomicFileWriter::Open(path);
  Result<AtomicFileWriter> b = AtomicFileWriter::Open(path);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE(a->Write("from a").ok());
  ASSERT_TRUE(b->Write("from b").ok());
  ASSERT_TRUE(a->Commit().ok());
  EXPECT_EQ(ReadTextFile(path), "from a");
  ASSERT_TRUE(b->Commit().ok());
  EXPECT_EQ(ReadTextFile(path), "from b");
  EXPECT_EQ(ListDirectory(dir.path()), std::vector<std::string>{"f"});
}

TEST(WriteFileAtomicallyTest, WritesAndReplaces) {
  TempDir dir;
  const std::string path = dir.File("f");
  ASSERT_TRUE(WriteFileAtomically(path, "one").ok());
  EXPECT_EQ(ReadTextFile(path), "one");
  const std::string binary = BinaryPattern(70000);
  ASSERT_TRUE(WriteFileAtomically(path, binary).ok());
  EXPECT_EQ(ReadTextFile(path), binary);
  EXPECT_EQ(ListDirectory(dir.path()), std::vector<std::string>{"f"});
  const Status missing = WriteFileAtomically(dir.File("missing/f"), "x");
  EXPECT_EQ(missing.code(), StatusCode::kIoError);
}

TEST(MappedFileTest, MapsContents) {
  TempDir dir;
  const std::string contents = BinaryPattern(10000);
  WriteTextFile(dir.File("f"), contents);
  Result<MappedFile> file = MappedFile::Open(dir.File("f"));
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_EQ(file->bytes().size(), contents.size());
  EXPECT_EQ(std::memcmp(file->bytes().data(), contents.data(), contents.size()), 0);
}

TEST(MappedFileTest, EmptyFileHasNoBytes) {
  TempDir dir;
  WriteTextFile(dir.File("empty"), "");
  Result<MappedFile> file = MappedFile::Open(dir.File("empty"));
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->bytes().size(), 0u);
  EXPECT_TRUE(file->bytes().empty());
}

TEST(MappedFileTest, Errors) {
  TempDir dir;
  Result<MappedFile> missing = MappedFile::Open(dir.File("missing"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  Result<MappedFile> directory = MappedFile::Open(dir.path());
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.status().code(), StatusCode::kInvalidArgument);
}

TEST(MappedFileTest, MappingOutlivesTheFileName) {
  TempDir dir;
  WriteTextFile(dir.File("f"), "still here");
  Result<MappedFile> file = MappedFile::Open(dir.File("f"));
  ASSERT_TRUE(file.ok());
  std::filesystem::remove(dir.File("f"));
  const std::string text(reinterpret_cast<const char*>(file->bytes().data()), file->bytes().size());
  EXPECT_EQ(text, "still here");
}

TEST(MappedFileTest, MoveConstructAndAssign) {
  TempDir dir;
  WriteTextFile(dir.File("a"), "aaaa");
  WriteTextFile(dir.File("b"), "bb");
  Result<MappedFile> opened = MappedFile::Open(dir.File("a"));
  ASSERT_TRUE(opened.ok());
  MappedFile a = std::move(opened).value();
  const std::byte* data = a.bytes().data();
  MappedFile moved(std::move(a));
  EXPECT_EQ(moved.bytes().data(), data);
  EXPECT_EQ(moved.bytes().size(), 4u);
  EXPECT_TRUE(a.bytes().empty());  // NOLINT(bugprone-use-after-move)

  Result<MappedFile> other = MappedFile::Open(dir.File("b"));
  ASSERT_TRUE(other.ok());
  moved = std::move(other).value();  // unmaps "a", takes "b"
  ASSERT_EQ(moved.bytes().size(), 2u);
  EXPECT_EQ(static_cast<char>(moved.bytes()[0]), 'b');

  MappedFile empty;
  EXPECT_TRUE(empty.bytes().empty());
}

TEST(MakeDirectoriesTest, CreatesParentsAndAcceptsExisting) {
  TempDir dir;
  const std::string nested = dir.File("a/b/c");
  ASSERT_TRUE(MakeDirectories(nested).ok());
  EXPECT_TRUE(std::filesystem::is_directory(nested));
  EXPECT_TRUE(MakeDirectories(nested).ok());
  EXPECT_TRUE(MakeDirectories(dir.path()).ok());
}

TEST(MakeDirectoriesTest, FileInTheWayIsAnError) {
  TempDir dir;
  WriteTextFile(dir.File("file"), "x");
  const Status status = MakeDirectories(dir.File("file/sub"));
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kIoError);
  EXPECT_NE(status.message().find(dir.File("file/sub")), std::string::npos) << status.message();
}

}  // namespace
}  // namespace nimbus
