// Stores: where shards, manifests and (later) spilled state live. A store maps keys
// ("shard-00003.bin") to immutable blobs. The local directory store is the default;
// remote stores (s3://bucket/prefix) plug in behind the same interface.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

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

// Bytes of a range of a blob, in order, a buffer at a time (a file's reads, S3's ranged GETs):
// what a worker reads of a data file larger than its memory.
class ByteReader {
 public:
  virtual ~ByteReader() = default;
  // The next bytes, up to into.size() of them; 0 once the range is read.
  virtual Result<std::size_t> Read(std::span<char> into) = 0;
};

// A blob in a store's listing.
struct StoreObject {
  std::string key;
  uint64_t bytes = 0;
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
  virtual Result<uint64_t> Size(const std::string& key) = 0;
  // Bytes [begin, end) of the blob (an end past its size reads to its end).
  virtual Result<std::unique_ptr<ByteReader>> OpenRange(const std::string& key, uint64_t begin, uint64_t end) = 0;
  // The blobs directly under the store (not in folders below it), in ascending order of key.
  virtual Result<std::vector<StoreObject>> List() = 0;
};

// A store in a local directory; Get() maps files read-only, so loading a shard costs no copy.
class DirectoryStore final : public Store {
 public:
  explicit DirectoryStore(std::string directory) : directory_(std::move(directory)) {}
  std::string uri() const override { return directory_; }
  std::string Describe(const std::string& key) const override { return PathOf(key); }
  Result<std::shared_ptr<const Blob>> Get(const std::string& key) override;
  Result<std::unique_ptr<BlobWriter>> OpenWriter(const std::string& key) override;
  Result<uint64_t> Size(const std::string& key) override;
  Result<std::unique_ptr<ByteReader>> OpenRange(const std::string& key, uint64_t begin, uint64_t end) override;
  Result<std::vector<StoreObject>> List() override;
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
