// S3 (and any S3-compatible server, such as moto_server or MinIO): objects for shards,
// manifests and spilled state, and the store `s3://bucket/prefix`.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nimbus/cloud/aws.h"
#include "nimbus/data/store.h"

namespace nimbus {

class S3Client {
 public:
  explicit S3Client(AwsConfig config);

  // The object's bytes; [first, last] for a ranged GET.
  Result<std::string> GetObject(const std::string& bucket, const std::string& key,
                                std::optional<std::pair<uint64_t, uint64_t>> range = std::nullopt) const;
  Result<uint64_t> ObjectSize(const std::string& bucket, const std::string& key) const;
  Status PutObject(const std::string& bucket, const std::string& key, std::string_view body) const;
  // Multipart upload in parts of `part_bytes` (at least 5 MiB, S3's minimum).
  Status PutObjectInParts(const std::string& bucket, const std::string& key, std::string_view body,
                          std::size_t part_bytes) const;
  // Multipart upload as the bytes come: Begin, then parts of at least 5 MiB (but the last),
  // numbered from 1, then Complete with their ETags.
  Result<std::string> BeginUpload(const std::string& bucket, const std::string& key) const;
  Result<std::string> UploadPart(const std::string& bucket, const std::string& key, const std::string& upload_id,
                                 int number, std::string_view body) const;
  Status CompleteUpload(const std::string& bucket, const std::string& key, const std::string& upload_id,
                        const std::vector<std::string>& etags) const;
  // The keys and sizes of the objects under `prefix` (ListObjectsV2), ascending; with
  // `delimiter` "/", none in a "folder" below it.
  Result<std::vector<StoreObject>> ListObjects(const std::string& bucket, const std::string& prefix,
                                               const std::string& delimiter = "/") const;
  Status CreateBucket(const std::string& bucket) const;

  const AwsClient& client() const { return client_; }

 private:
  AwsClient::Call CallFor(const std::string& method, const std::string& bucket, const std::string& key) const;
  Status ErrorOf(const HttpResponse& response, const std::string& bucket, const std::string& key) const;

  AwsClient client_;
};

// The store at s3://bucket/prefix. Large objects are fetched as parallel ranged GETs and
// written as multipart uploads.
class S3Store final : public Store {
 public:
  // Credentials, region and endpoint from LoadAwsConfig("s3").
  static Result<std::unique_ptr<S3Store>> Open(const std::string& uri);
  S3Store(AwsConfig config, std::string bucket, std::string prefix);

  std::string uri() const override;
  std::string Describe(const std::string& key) const override;
  Result<std::shared_ptr<const Blob>> Get(const std::string& key) override;
  Result<std::unique_ptr<BlobWriter>> OpenWriter(const std::string& key) override;
  Result<uint64_t> Size(const std::string& key) override;
  // Ranged GETs of part_bytes, the next one on its way while the last is read.
  Result<std::unique_ptr<ByteReader>> OpenRange(const std::string& key, uint64_t begin, uint64_t end) override;
  Result<std::vector<StoreObject>> List() override;

  // Objects larger than this are read in parallel ranges of this size (and written in parts).
  std::size_t part_bytes = std::size_t{8} << 20;
  int parallel_requests = 8;

 private:
  std::string ObjectKey(const std::string& key) const { return prefix_.empty() ? key : prefix_ + "/" + key; }
  S3Client s3_;
  std::string bucket_;
  std::string prefix_;
};

// A directory, or s3://bucket/prefix.
Result<std::unique_ptr<Store>> OpenAnyStore(const std::string& uri, bool create);

}  // namespace nimbus
