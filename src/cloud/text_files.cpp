#include "nimbus/cloud/text_files.h"

#include <sys/stat.h>

#include "nimbus/cloud/s3.h"
#include "nimbus/core/args.h"
#include "nimbus/core/file_io.h"
#include "nimbus/data/manifest.h"

namespace nimbus {
namespace {

enum class PathKind { kMissing, kFile, kDirectory, kOther };

PathKind KindOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return PathKind::kMissing;
  return S_ISREG(st.st_mode) ? PathKind::kFile : S_ISDIR(st.st_mode) ? PathKind::kDirectory : PathKind::kOther;
}

TextFile FileIn(const std::shared_ptr<Store>& store, const StoreObject& object) {
  return TextFile{store->uri(), object.key, object.bytes, CompressionOf(object.key), store};
}

// Every data file a store lists, in order of name.
Status AddListed(const std::shared_ptr<Store>& store, const std::string& location, TextFiles& text) {
  NIMBUS_ASSIGN_OR_RETURN(const std::vector<StoreObject> objects, store->List());
  const std::size_t before = text.files.size();
  for (const StoreObject& object : objects) {
    if (IsDataFileName(object.key)) text.files.push_back(FileIn(store, object));
  }
  if (text.files.size() == before) return NotFound(location + ": holds no data files");
  return Status::Ok();
}

// One location of a list: a local file or directory, an S3 object or prefix.
Status AddLocation(const std::string& location, TextFiles& text) {
  if (location.rfind("s3://", 0) == 0) {
    const auto slash = location.rfind('/');
    if (slash > 5 && slash + 1 < location.size()) {
      // An object, if the key names one.
      NIMBUS_ASSIGN_OR_RETURN(std::unique_ptr<Store> parent, OpenAnyStore(location.substr(0, slash), false));
      const std::string key = location.substr(slash + 1);
      if (Result<uint64_t> size = parent->Size(key); size.ok()) {
        text.files.push_back(FileIn(std::shared_ptr<Store>(std::move(parent)), {key, *size}));
        return Status::Ok();
      } else if (size.status().code() != StatusCode::kNotFound ||
                 size.status().message().find("no such bucket") != std::string::npos) {
        return size.status();
      }
    }
    NIMBUS_ASSIGN_OR_RETURN(std::unique_ptr<Store> prefix, OpenAnyStore(location, false));
    Status listed = AddListed(std::shared_ptr<Store>(std::move(prefix)), location, text);
    if (listed.code() == StatusCode::kNotFound && listed.message().find("no such bucket") == std::string::npos) {
      return NotFound(location + ": no such object, nor objects under it");
    }
    return listed;
  }
  switch (KindOf(location)) {
    case PathKind::kMissing:
      return NotFound(location + ": no such file or directory");
    case PathKind::kOther:
      return InvalidArgument(location + ": not a regular file or a directory");
    case PathKind::kDirectory: {
      NIMBUS_ASSIGN_OR_RETURN(std::unique_ptr<Store> dir, OpenStore(AbsolutePath(location), false));
      return AddListed(std::shared_ptr<Store>(std::move(dir)), location, text);
    }
    case PathKind::kFile:
      break;
  }
  const std::string path = AbsolutePath(location);
  const auto slash = path.rfind('/');
  NIMBUS_ASSIGN_OR_RETURN(std::unique_ptr<Store> dir, OpenStore(slash == 0 ? "/" : path.substr(0, slash), false));
  const std::string key = path.substr(slash + 1);
  NIMBUS_ASSIGN_OR_RETURN(const uint64_t size, dir->Size(key));
  text.files.push_back(FileIn(std::shared_ptr<Store>(std::move(dir)), {key, size}));
  return Status::Ok();
}

// A directory or prefix with a manifest: a store of shards.
Result<std::shared_ptr<Store>> StoreAt(const std::string& location) {
  if (location.rfind("s3://", 0) != 0 && KindOf(location) != PathKind::kDirectory) return std::shared_ptr<Store>();
  if (location.find(',') != std::string::npos) return std::shared_ptr<Store>();
  NIMBUS_ASSIGN_OR_RETURN(std::unique_ptr<Store> store, OpenAnyStore(location, false));
  Result<uint64_t> manifest = store->Size(kManifestKey);
  if (manifest.ok()) return std::shared_ptr<Store>(std::move(store));
  if (manifest.status().code() == StatusCode::kNotFound) return std::shared_ptr<Store>();
  return manifest.status();
}

}  // namespace

Result<DataLocation> LocateData(const std::string& location) {
  if (location.empty()) return InvalidArgument("--data: empty location");
  DataLocation found;
  found.location = location;
  NIMBUS_ASSIGN_OR_RETURN(found.store, StoreAt(location));
  if (found.store) return found;
  found.text.location = location;
  for (const std::string& part : SplitList(location)) NIMBUS_RETURN_IF_ERROR(AddLocation(part, found.text));
  return found;
}

Result<TextFiles> FindTextFiles(const std::string& location) {
  NIMBUS_ASSIGN_OR_RETURN(DataLocation found, LocateData(location));
  if (found.is_store()) {
    return InvalidArgument(location + ": a store of shards (it has a manifest.json), not LIBSVM text");
  }
  return std::move(found.text);
}

}  // namespace nimbus
