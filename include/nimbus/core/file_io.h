// Files: whole-file reads, read-only mappings, and writes that never leave a half-written file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "nimbus/core/status.h"

namespace nimbus {

Result<std::string> ReadFileToString(const std::string& path);

// Size in bytes of a regular file; an error for anything else.
Result<uint64_t> RegularFileSize(const std::string& path);

// Writes into a temporary file beside `path` and renames it over `path` on Commit(), so a
// reader sees either the old file or the whole new one. Without Commit() (an error, an
// early return) the temporary file is removed.
class AtomicFileWriter {
 public:
  static Result<AtomicFileWriter> Open(const std::string& path);
  ~AtomicFileWriter();
  AtomicFileWriter(AtomicFileWriter&& other) noexcept;
  AtomicFileWriter& operator=(AtomicFileWriter&&) = delete;
  AtomicFileWriter(const AtomicFileWriter&) = delete;

  Status Write(std::string_view bytes);
  Status Write(const void* data, std::size_t size) {
    return Write(std::string_view(static_cast<const char*>(data), size));
  }
  Status Commit();
  const std::string& path() const { return path_; }

 private:
  AtomicFileWriter(std::string path, std::string temp_path, int fd);
  Status FlushBuffer();

  std::string path_;
  std::string temp_path_;
  int fd_ = -1;
  std::string buffer_;
  Status error_;  // the first failed write; Commit() reports it
};

Status WriteFileAtomically(const std::string& path, std::string_view contents);

// A read-only private mapping of a whole file.
class MappedFile {
 public:
  static Result<MappedFile> Open(const std::string& path);
  MappedFile() = default;
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;

  std::span<const std::byte> bytes() const { return {static_cast<const std::byte*>(data_), size_}; }

 private:
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

// Creates a directory and its parents; fine if it exists.
Status MakeDirectories(const std::string& path);

// The absolute form of a path (for a directory other processes open from elsewhere).
std::string AbsolutePath(const std::string& path);

// A new directory under $TMPDIR (or /tmp), removed with its contents on destruction.
class TemporaryDirectory {
 public:
  static Result<TemporaryDirectory> Create(const std::string& prefix);
  TemporaryDirectory() = default;
  ~TemporaryDirectory();
  TemporaryDirectory(TemporaryDirectory&& other) noexcept : path_(std::exchange(other.path_, {})) {}
  TemporaryDirectory& operator=(TemporaryDirectory&& other) noexcept;
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace nimbus
