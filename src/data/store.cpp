#include "nimbus/data/store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "nimbus/core/file_io.h"

namespace nimbus {
namespace {

class MappedBlob final : public Blob {
 public:
  explicit MappedBlob(MappedFile file) : file_(std::move(file)) {}
  std::span<const std::byte> bytes() const override { return file_.bytes(); }

 private:
  MappedFile file_;
};

class FileBlobWriter final : public BlobWriter {
 public:
  explicit FileBlobWriter(AtomicFileWriter writer) : writer_(std::move(writer)) {}
  Status Write(std::string_view bytes) override { return writer_.Write(bytes); }
  Status Commit() override { return writer_.Commit(); }

 private:
  AtomicFileWriter writer_;
};

// A range of a file by pread: no mapping, so what is read leaves no resident pages behind
// in this process (the page cache may keep them; it gives them back under pressure).
class FileRangeReader final : public ByteReader {
 public:
  FileRangeReader(std::string path, int fd, uint64_t begin, uint64_t end)
      : path_(std::move(path)), fd_(fd), at_(begin), end_(end) {
    ::posix_fadvise(fd_, static_cast<off_t>(begin), static_cast<off_t>(end - begin), POSIX_FADV_SEQUENTIAL);
  }
  ~FileRangeReader() override { ::close(fd_); }
  FileRangeReader(const FileRangeReader&) = delete;
  FileRangeReader& operator=(const FileRangeReader&) = delete;

  Result<std::size_t> Read(std::span<char> into) override {
    const auto wanted = static_cast<std::size_t>(std::min<uint64_t>(into.size(), end_ - at_));
    while (wanted > 0) {
      const ssize_t got = ::pread(fd_, into.data(), wanted, static_cast<off_t>(at_));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return ErrnoError("cannot read " + path_, errno);
      if (got == 0) return DataLoss(path_ + ": ended at byte " + std::to_string(at_) + ", before its size");
      at_ += static_cast<uint64_t>(got);
      return static_cast<std::size_t>(got);
    }
    return std::size_t{0};
  }

 private:
  std::string path_;
  int fd_;
  uint64_t at_, end_;
};

bool IsDirectory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

Status Store::Put(const std::string& key, std::string_view bytes) {
  NIMBUS_ASSIGN_OR_RETURN(std::unique_ptr<BlobWriter> writer, OpenWriter(key));
  NIMBUS_RETURN_IF_ERROR(writer->Write(bytes));
  return writer->Commit();
}

Result<std::shared_ptr<const Blob>> DirectoryStore::Get(const std::string& key) {
  NIMBUS_ASSIGN_OR_RETURN(MappedFile file, MappedFile::Open(PathOf(key)));
  return std::shared_ptr<const Blob>(std::make_shared<MappedBlob>(std::move(file)));
}

Result<std::unique_ptr<BlobWriter>> DirectoryStore::OpenWriter(const std::string& key) {
  NIMBUS_ASSIGN_OR_RETURN(AtomicFileWriter writer, AtomicFileWriter::Open(PathOf(key)));
  return std::unique_ptr<BlobWriter>(std::make_unique<FileBlobWriter>(std::move(writer)));
}

Result<uint64_t> DirectoryStore::Size(const std::string& key) { return RegularFileSize(PathOf(key)); }

Result<std::unique_ptr<ByteReader>> DirectoryStore::OpenRange(const std::string& key, uint64_t begin, uint64_t end) {
  const std::string path = PathOf(key);
  NIMBUS_ASSIGN_OR_RETURN(const uint64_t size, RegularFileSize(path));
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("cannot open " + path, errno);
  end = std::min(end, size);
  return std::unique_ptr<ByteReader>(std::make_unique<FileRangeReader>(path, fd, std::min(begin, end), end));
}

Result<std::vector<StoreObject>> DirectoryStore::List() {
  DIR* dir = ::opendir(directory_.c_str());
  if (dir == nullptr) return ErrnoError("cannot list " + directory_, errno);
  std::vector<StoreObject> objects;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    struct stat st {};
    if (::stat(PathOf(name).c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      objects.push_back({name, static_cast<uint64_t>(st.st_size)});
    }
  }
  ::closedir(dir);
  std::sort(objects.begin(), objects.end(), [](const StoreObject& a, const StoreObject& b) { return a.key < b.key; });
  return objects;
}

bool LooksLikeStoreUri(const std::string& location) {
  return location.find("://") != std::string::npos || IsDirectory(location);
}

Result<std::unique_ptr<Store>> OpenStore(const std::string& uri, bool create) {
  const auto scheme_end = uri.find("://");
  if (scheme_end != std::string::npos) {
    const std::string scheme = uri.substr(0, scheme_end);
    if (scheme != "file") return InvalidArgument(uri + ": unsupported store scheme '" + scheme + "://'");
    return OpenStore(uri.substr(scheme_end + 3), create);
  }
  if (uri.empty()) return InvalidArgument("empty store location");
  if (!IsDirectory(uri)) {
    if (!create) return NotFound(uri + ": no such directory");
    NIMBUS_RETURN_IF_ERROR(MakeDirectories(uri));
  }
  return std::unique_ptr<Store>(std::make_unique<DirectoryStore>(uri));
}

}  // namespace nimbus
