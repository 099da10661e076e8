#include "nimbus/data/store.h"

#include <sys/stat.h>

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
