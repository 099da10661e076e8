// Stores: where shards, manifests and (later) spilled state live. A store maps keys
// ("shard-00003.bin") to immutable blobs. The local directory store is the default;
// remote stores (s3://bucket/prefix) plug in behind the same interface.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "nimbus/core/status.h"

namespace nimbus {

// Bytes read from a store. The owner keeps them alive (a mapping or a buffer).
class Blob {
 public:
  virtual ~Blob() = default;
  virtual std::span<const std::byte> bytes() const = 0;
  std::string_view text() const {
    return {reinterpret_cast<const char*>(bytes().data()), bytes().size()};
  }
};

// Writes one blob; nothing is visible under the key until Commit() succeeds.
class BlobWriter {
 public:
  virtual ~BlobWriter() = default;
  virtual Status Write(std::string_view bytes) = 0;
  virtual Status Commit() = 0;
};

class Store {
 public:
  virtual ~Store() = default;
  virtual std::string uri() const = 0;
  // The blob's location, for messages: "dir/shard-00001.bin", "s3://b/p/shard-00001.bin".
  virtual std::string Describe(const std::string& key) const = 0;
  virtual Result<std::shared_ptr<const Blob>> Get(const std::string& key) = 0;
  virtual Result<std::unique_ptr<BlobWriter>> OpenWriter(const std::string& key) = 0;
  Status Put(const std::string& key, std::string_view bytes);
};

// A store in a local directory; Get() maps files read-only, so loading a shard costs no copy.
class DirectoryStore final : public Store {
 public:
  explicit DirectoryStore(std::string directory) : directory_(std::move(directory)) {}
  std::string uri() const override { return directory_; }
  std::string Describe(const std::string& key) const override { return PathOf(key); }
  Result<std::shared_ptr<const Blob>> Get(const std::string& key) override;
  Result<std::unique_ptr<BlobWriter>> OpenWriter(const std::string& key) override;
  std::string PathOf(const std::string& key) const { return directory_ + "/" + key; }

 private:
  std::string directory_;
};

// True when `location` names a store (a directory or a store URI) rather than a data file.
bool LooksLikeStoreUri(const std::string& location);

// Opens the store at `uri`: a directory path, or a scheme the build supports. With `create`
// a missing directory is made.
Result<std::unique_ptr<Store>> OpenStore(const std::string& uri, bool create);

}  // namespace nimbus
