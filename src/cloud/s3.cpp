#include "nimbus/cloud/s3.h"

#include <algorithm>
#include <atomic>
#include <future>
#include <thread>
#include <vector>

namespace nimbus {
namespace {

class StringBlob final : public Blob {
 public:
  explicit StringBlob(std::string bytes) : bytes_(std::move(bytes)) {}
  std::span<const std::byte> bytes() const override {
    return {reinterpret_cast<const std::byte*>(bytes_.data()), bytes_.size()};
  }

 private:
  std::string bytes_;
};

// Writes a blob as it comes: a part goes up each time part_bytes are buffered, so a blob of
// any size takes one part of memory (a small one is one PUT at Commit).
class S3BlobWriter final : public BlobWriter {
 public:
  S3BlobWriter(const S3Client* s3, std::string bucket, std::string key, std::size_t part_bytes)
      : s3_(s3), bucket_(std::move(bucket)), key_(std::move(key)),
        part_bytes_(std::max<std::size_t>(part_bytes, std::size_t{5} << 20)) {}
  Status Write(std::string_view bytes) override {
    buffer_.append(bytes);
    while (buffer_.size() >= 2 * part_bytes_) NIMBUS_RETURN_IF_ERROR(UploadPart(part_bytes_));
    return Status::Ok();
  }
  Status Commit() override {
    if (upload_id_.empty()) return s3_->PutObject(bucket_, key_, buffer_);
    NIMBUS_RETURN_IF_ERROR(UploadPart(buffer_.size()));  // the last part may be small
    return s3_->CompleteUpload(bucket_, key_, upload_id_, etags_);
  }

 private:
  Status UploadPart(std::size_t bytes) {
    if (upload_id_.empty()) {
      NIMBUS_ASSIGN_OR_RETURN(upload_id_, s3_->BeginUpload(bucket_, key_));
    }
    NIMBUS_ASSIGN_OR_RETURN(std::string etag, s3_->UploadPart(bucket_, key_, upload_id_,
                                                              static_cast<int>(etags_.size()) + 1,
                                                              std::string_view(buffer_).substr(0, bytes)));
    etags_.push_back(std::move(etag));
    buffer_.erase(0, bytes);
    return Status::Ok();
  }

  const S3Client* s3_;
  std::string bucket_;
  std::string key_;
  std::size_t part_bytes_;
  std::string buffer_;
  std::string upload_id_;  // once the blob outgrew one PUT
  std::vector<std::string> etags_;
};

// Bytes [at, end) of an object by ranged GETs, the next range fetched while the caller reads
// the last.
class S3RangeReader final : public ByteReader {
 public:
  S3RangeReader(const S3Client* s3, std::string bucket, std::string key, uint64_t begin, uint64_t end,
                std::size_t part_bytes)
      : s3_(s3), bucket_(std::move(bucket)), key_(std::move(key)), next_(begin), end_(end), part_bytes_(part_bytes) {
    Fetch();
  }
  ~S3RangeReader() override {
    if (pending_.valid()) pending_.wait();
  }

  Result<std::size_t> Read(std::span<char> into) override {
    if (offset_ == part_.size()) {
      if (!pending_.valid()) return std::size_t{0};
      Result<std::string> part = pending_.get();
      if (!part.ok()) return part.status();
      part_ = std::move(part).value();
      offset_ = 0;
      Fetch();
    }
    const std::size_t taken = std::min(into.size(), part_.size() - offset_);
    std::copy_n(part_.data() + offset_, taken, into.data());
    offset_ += taken;
    return taken;
  }

 private:
  void Fetch() {
    if (next_ >= end_) return;
    const uint64_t first = next_, last = std::min<uint64_t>(end_, next_ + part_bytes_) - 1;
    next_ = last + 1;
    pending_ = std::async(std::launch::async, [this, first, last] {
      return s3_->GetObject(bucket_, key_, std::make_pair(first, last));
    });
  }

  const S3Client* s3_;
  std::string bucket_, key_;
  uint64_t next_, end_;
  std::size_t part_bytes_;
  std::future<Result<std::string>> pending_;
  std::string part_;
  std::size_t offset_ = 0;
};

// XML text with its five predefined entities replaced.
std::string XmlText(std::string text) {
  static const std::pair<const char*, const char*> entities[] = {
      {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&apos;", "'"}, {"&amp;", "&"}};
  for (const auto& [entity, plain] : entities) {
    for (std::size_t at = text.find(entity); at != std::string::npos; at = text.find(entity, at + 1)) {
      text.replace(at, std::string_view(entity).size(), plain);
    }
  }
  return text;
}

std::string Between(const std::string& body, const std::string& open, const std::string& close) {
  const auto begin = body.find(open);
  if (begin == std::string::npos) return "";
  const auto start = begin + open.size();
  const auto end = body.find(close, start);
  return end == std::string::npos ? "" : body.substr(start, end - start);
}

}  // namespace

S3Client::S3Client(AwsConfig config) : client_(std::move(config), "s3") {}

AwsClient::Call S3Client::CallFor(const std::string& method, const std::string& bucket, const std::string& key) const {
  AwsClient::Call call;
  call.method = method;
  if (client_.config().endpoint_url.empty()) {
    // Virtual-hosted style on AWS itself.
    call.host = bucket + ".s3." + client_.config().region + ".amazonaws.com";
    call.path = "/" + key;
  } else {
    // Path style on S3-compatible servers.
    call.path = "/" + bucket + (key.empty() ? "" : "/" + key);
  }
  call.sign_payload = false;
  return call;
}

Status S3Client::ErrorOf(const HttpResponse& response, const std::string& bucket, const std::string& key) const {
  const auto [code, message] = AwsErrorOf(response.body);
  const std::string where = "s3://" + bucket + (key.empty() ? "" : "/" + key);
  const std::string detail = code.empty() ? "HTTP " + std::to_string(response.status) : code + ": " + message;
  if (code == "NoSuchBucket") return NotFound(where + ": no such bucket");
  if (code == "NoSuchKey" || (response.status == 404 && code.empty())) return NotFound(where + ": no such key");
  if (response.status == 403 || code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch" ||
      code == "AccessDenied") {
    return FailedPrecondition(where + ": access denied (" + detail + "); check the credentials from " +
                              client_.config().credentials_source);
  }
  return Unavailable(where + ": " + detail);
}

Result<std::string> S3Client::GetObject(const std::string& bucket, const std::string& key,
                                        std::optional<std::pair<uint64_t, uint64_t>> range) const {
  AwsClient::Call call = CallFor("GET", bucket, key);
  if (range) call.headers.emplace_back("range", "bytes=" + std::to_string(range->first) + "-" + std::to_string(range->second));
  NIMBUS_ASSIGN_OR_RETURN(HttpResponse response, client_.Send(call));
  if (response.status != 200 && response.status != 206) return ErrorOf(response, bucket, key);
  if (range && response.body.size() != range->second - range->first + 1) {
    return DataLoss("s3://" + bucket + "/" + key + ": a ranged GET returned " + std::to_string(response.body.size()) +
                    " bytes");
  }
  return std::move(response.body);
}

Result<uint64_t> S3Client::ObjectSize(const std::string& bucket, const std::string& key) const {
  NIMBUS_ASSIGN_OR_RETURN(HttpResponse response, client_.Send(CallFor("HEAD", bucket, key)));
  if (response.status != 200) {
    if (response.status == 404) {
      // HEAD answers carry no body: ask the bucket whether it exists at all.
      NIMBUS_ASSIGN_OR_RETURN(HttpResponse bucket_head, client_.Send(CallFor("HEAD", bucket, "")));
      if (bucket_head.status == 404) return NotFound("s3://" + bucket + ": no such bucket");
    }
    return ErrorOf(response, bucket, key);
  }
  const auto it = response.headers.find("content-length");
  if (it == response.headers.end()) return DataLoss("s3://" + bucket + "/" + key + ": no content length");
  return static_cast<uint64_t>(std::stoull(it->second));
}

Status S3Client::PutObject(const std::string& bucket, const std::string& key, std::string_view body) const {
  AwsClient::Call call = CallFor("PUT", bucket, key);
  call.body = std::string(body);
  call.sign_payload = true;
  NIMBUS_ASSIGN_OR_RETURN(HttpResponse response, client_.Send(call));
  if (response.status != 200) return ErrorOf(response, bucket, key);
  return Status::Ok();
}

Result<std::string> S3Client::BeginUpload(const std::string& bucket, const std::string& key) const {
  AwsClient::Call start = CallFor("POST", bucket, key);
  start.query = {{"uploads", ""}};
  NIMBUS_ASSIGN_OR_RETURN(HttpResponse started, client_.Send(start));
  if (started.status != 200) return ErrorOf(started, bucket, key);
  std::string upload_id = Between(started.body, "<UploadId>", "</UploadId>");
  if (upload_id.empty()) return Unavailable("s3://" + bucket + "/" + key + ": no upload id for the multipart upload");
  return upload_id;
}

Result<std::string> S3Client::UploadPart(const std::string& bucket, const std::string& key,
                                         const std::string& upload_id, int number, std::string_view body) const {
  AwsClient::Call part = CallFor("PUT", bucket, key);
  part.query = {{"partNumber", std::to_string(number)}, {"uploadId", upload_id}};
  part.body = std::string(body);
  part.sign_payload = true;
  NIMBUS_ASSIGN_OR_RETURN(HttpResponse uploaded, client_.Send(part));
  if (uploaded.status != 200) return ErrorOf(uploaded, bucket, key);
  return uploaded.headers["etag"];
}

Status S3Client::CompleteUpload(const std::string& bucket, const std::string& key, const std::string& upload_id,
                                const std::vector<std::string>& etags) const {
  std::string parts = "<CompleteMultipartUpload>";
  for (std::size_t i = 0; i < etags.size(); ++i) {
    parts += "<Part><PartNumber>" + std::to_string(i + 1) + "</PartNumber><ETag>" + etags[i] + "</ETag></Part>";
  }
  parts += "</CompleteMultipartUpload>";
  AwsClient::Call complete = CallFor("POST", bucket, key);
  complete.query = {{"uploadId", upload_id}};
  complete.body = parts;
  complete.sign_payload = true;
  NIMBUS_ASSIGN_OR_RETURN(HttpResponse completed, client_.Send(complete));
  if (completed.status != 200 || !AwsErrorOf(completed.body).first.empty()) return ErrorOf(completed, bucket, key);
  return Status::Ok();
}

Status S3Client::PutObjectInParts(const std::string& bucket, const std::string& key, std::string_view body,
                                  std::size_t part_bytes) const {
  part_bytes = std::max<std::size_t>(part_bytes, std::size_t{5} << 20);
  NIMBUS_ASSIGN_OR_RETURN(const std::string upload_id, BeginUpload(bucket, key));
  std::vector<std::string> etags;
  for (std::size_t offset = 0; offset < body.size(); offset += part_bytes) {
    NIMBUS_ASSIGN_OR_RETURN(std::string etag, UploadPart(bucket, key, upload_id, static_cast<int>(etags.size()) + 1,
                                                         body.substr(offset, part_bytes)));
    etags.push_back(std::move(etag));
  }
  return CompleteUpload(bucket, key, upload_id, etags);
}

Result<std::vector<StoreObject>> S3Client::ListObjects(const std::string& bucket, const std::string& prefix,
                                                       const std::string& delimiter) const {
  std::vector<StoreObject> objects;
  std::string token;
  for (int page = 0; page < 1000000; ++page) {  // 1,000 keys a page
    AwsClient::Call list = CallFor("GET", bucket, "");
    list.query = {{"list-type", "2"}, {"prefix", prefix}};
    if (!delimiter.empty()) list.query.emplace_back("delimiter", delimiter);
    if (!token.empty()) list.query.emplace_back("continuation-token", token);
    NIMBUS_ASSIGN_OR_RETURN(HttpResponse listed, client_.Send(list));
    if (listed.status != 200) return ErrorOf(listed, bucket, prefix);
    const std::string& body = listed.body;
    for (std::size_t at = body.find("<Contents>"); at != std::string::npos; at = body.find("<Contents>", at + 1)) {
      const std::string entry = body.substr(at, body.find("</Contents>", at) - at);
      const std::string size = Between(entry, "<Size>", "</Size>");
      objects.push_back({XmlText(Between(entry, "<Key>", "</Key>")), size.empty() ? 0 : std::stoull(size)});
    }
    if (Between(body, "<IsTruncated>", "</IsTruncated>") != "true") break;
    token = XmlText(Between(body, "<NextContinuationToken>", "</NextContinuationToken>"));
    if (token.empty()) break;
  }
  std::sort(objects.begin(), objects.end(), [](const StoreObject& a, const StoreObject& b) { return a.key < b.key; });
  return objects;
}

Status S3Client::CreateBucket(const std::string& bucket) const {
  AwsClient::Call call = CallFor("PUT", bucket, "");
  if (client_.config().region != "us-east-1") {
    call.body = "<CreateBucketConfiguration><LocationConstraint>" + client_.config().region +
                "</LocationConstraint></CreateBucketConfiguration>";
  }
  call.sign_payload = true;
  NIMBUS_ASSIGN_OR_RETURN(HttpResponse response, client_.Send(call));
  if (response.status != 200) return ErrorOf(response, bucket, "");
  return Status::Ok();
}

Result<std::unique_ptr<S3Store>> S3Store::Open(const std::string& uri) {
  if (uri.rfind("s3://", 0) != 0) return InvalidArgument(uri + ": not an s3:// location");
  std::string rest = uri.substr(5);
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  const auto slash = rest.find('/');
  const std::string bucket = rest.substr(0, slash);
  const std::string prefix = slash == std::string::npos ? "" : rest.substr(slash + 1);
  if (bucket.empty()) return InvalidArgument(uri + ": no bucket name (expected s3://bucket/prefix)");
  NIMBUS_ASSIGN_OR_RETURN(AwsConfig config, LoadAwsConfig("s3"));
  return std::make_unique<S3Store>(std::move(config), bucket, prefix);
}

S3Store::S3Store(AwsConfig config, std::string bucket, std::string prefix)
    : s3_(std::move(config)), bucket_(std::move(bucket)), prefix_(std::move(prefix)) {}

std::string S3Store::uri() const { return "s3://" + bucket_ + (prefix_.empty() ? "" : "/" + prefix_); }

std::string S3Store::Describe(const std::string& key) const { return "s3://" + bucket_ + "/" + ObjectKey(key); }

Result<std::shared_ptr<const Blob>> S3Store::Get(const std::string& key) {
  const std::string object = ObjectKey(key);
  NIMBUS_ASSIGN_OR_RETURN(const uint64_t size, s3_.ObjectSize(bucket_, object));
  if (size <= part_bytes) {
    NIMBUS_ASSIGN_OR_RETURN(std::string bytes, s3_.GetObject(bucket_, object));
    return std::shared_ptr<const Blob>(std::make_shared<StringBlob>(std::move(bytes)));
  }
  // Ranged GETs in parallel, each into its place in one buffer.
  std::string bytes(size, '\0');
  const std::size_t parts = (size + part_bytes - 1) / part_bytes;
  std::atomic<std::size_t> next{0};
  std::vector<Status> errors(parts);
  std::vector<std::thread> fetchers;
  for (int t = 0; t < std::min<int>(parallel_requests, static_cast<int>(parts)); ++t) {
    fetchers.emplace_back([&] {
      for (std::size_t part = next++; part < parts; part = next++) {
        const uint64_t first = part * part_bytes;
        const uint64_t last = std::min<uint64_t>(size, first + part_bytes) - 1;
        Result<std::string> piece = s3_.GetObject(bucket_, object, std::make_pair(first, last));
        if (!piece.ok()) {
          errors[part] = piece.status();
          continue;
        }
        std::copy(piece->begin(), piece->end(), bytes.begin() + static_cast<std::ptrdiff_t>(first));
      }
    });
  }
  for (std::thread& fetcher : fetchers) fetcher.join();
  for (const Status& error : errors) NIMBUS_RETURN_IF_ERROR(error);
  return std::shared_ptr<const Blob>(std::make_shared<StringBlob>(std::move(bytes)));
}

Result<std::unique_ptr<BlobWriter>> S3Store::OpenWriter(const std::string& key) {
  return std::unique_ptr<BlobWriter>(std::make_unique<S3BlobWriter>(&s3_, bucket_, ObjectKey(key), part_bytes));
}

Result<uint64_t> S3Store::Size(const std::string& key) { return s3_.ObjectSize(bucket_, ObjectKey(key)); }

Result<std::unique_ptr<ByteReader>> S3Store::OpenRange(const std::string& key, uint64_t begin, uint64_t end) {
  const std::string object = ObjectKey(key);
  NIMBUS_ASSIGN_OR_RETURN(const uint64_t size, s3_.ObjectSize(bucket_, object));
  end = std::min(end, size);
  return std::unique_ptr<ByteReader>(
      std::make_unique<S3RangeReader>(&s3_, bucket_, object, std::min(begin, end), end, part_bytes));
}

Result<std::vector<StoreObject>> S3Store::List() {
  const std::string prefix = prefix_.empty() ? "" : prefix_ + "/";
  NIMBUS_ASSIGN_OR_RETURN(std::vector<StoreObject> objects, s3_.ListObjects(bucket_, prefix));
  for (StoreObject& object : objects) object.key = object.key.substr(prefix.size());
  std::erase_if(objects, [](const StoreObject& object) { return object.key.empty(); });
  return objects;
}

Result<std::unique_ptr<Store>> OpenAnyStore(const std::string& uri, bool create) {
  if (uri.rfind("s3://", 0) == 0) {
    NIMBUS_ASSIGN_OR_RETURN(std::unique_ptr<S3Store> store, S3Store::Open(uri));
    return std::unique_ptr<Store>(std::move(store));
  }
  return OpenStore(uri, create);
}

}  // namespace nimbus
