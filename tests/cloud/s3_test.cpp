// The S3 store against a real S3-compatible server (moto_server on 127.0.0.1): round trips,
// large objects in parts, and the errors a user meets.
#include "nimbus/cloud/s3.h"

#include <gtest/gtest.h>

#include "nimbus/data/libsvm_reader.h"
#include "nimbus/data/manifest.h"
#include "nimbus/data/shard.h"
#include "support/test_support.h"

namespace nimbus {
namespace {

using testing::MotoServer;

AwsConfig ConfigFor(const MotoServer& server, const std::string& key = "testing", const std::string& secret = "testing") {
  AwsConfig config;
  config.credentials = {key, secret, ""};
  config.credentials_source = "the test";
  config.endpoint_url = server.endpoint();
  return config;
}

std::string Pattern(std::size_t size) {
  std::string bytes(size, '\0');
  for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>((i * 131 + i / 7919) & 0xff);
  return bytes;
}

TEST(S3Store, RoundTripsSmallAndLargeObjects) {
  MotoServer server;
  S3Client s3(ConfigFor(server));
  ASSERT_TRUE(s3.CreateBucket("nimbus-test").ok());
  S3Store store(ConfigFor(server), "nimbus-test", "runs/one");
  EXPECT_EQ(store.uri(), "s3://nimbus-test/runs/one");
  EXPECT_EQ(store.Describe("a.bin"), "s3://nimbus-test/runs/one/a.bin");

  ASSERT_TRUE(store.Put("small.txt", "hello, s3").ok());
  Result<std::shared_ptr<const Blob>> small = store.Get("small.txt");
  ASSERT_TRUE(small.ok()) << small.status().ToString();
  EXPECT_EQ((*small)->text(), "hello, s3");

  // 13 MiB in 5 MiB parts: a multipart upload, then three parallel ranged GETs.
  store.part_bytes = std::size_t{5} << 20;
  const std::string large = Pattern((std::size_t{13} << 20) + 12345);
  ASSERT_TRUE(store.Put("large.bin", large).ok());
  Result<std::shared_ptr<const Blob>> back = store.Get("large.bin");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE((*back)->text() == large);
  Result<uint64_t> size = s3.ObjectSize("nimbus-test", "runs/one/large.bin");
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(*size, large.size());
}

TEST(S3Store, ShardsAndManifestsLiveThere) {
  MotoServer server;
  S3Client s3(ConfigFor(server));
  ASSERT_TRUE(s3.CreateBucket("shards").ok());
  S3Store store(ConfigFor(server), "shards", "heart");
  Result<Dataset> data = ReadLibsvmFile(testing::HeartScalePath());
  ASSERT_TRUE(data.ok());
  Result<Manifest> written = WriteShards(*data, 3, "heart_scale", store);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  Result<Manifest> manifest = ReadManifest(store);
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  EXPECT_EQ(manifest->rows, 270);
  Result<Dataset> shard = LoadShard(store, manifest->shards[1].key, manifest->shards[1].checksum);
  ASSERT_TRUE(shard.ok()) << shard.status().ToString();
  EXPECT_EQ(shard->rows(), manifest->shards[1].rows);
}

TEST(S3Store, MissingBucketAndKeyAreNamed) {
  MotoServer server;
  S3Client s3(ConfigFor(server));
  ASSERT_TRUE(s3.CreateBucket("present").ok());
  S3Store missing_bucket(ConfigFor(server), "absent-bucket", "p");
  Result<std::shared_ptr<const Blob>> a = missing_bucket.Get("k");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kNotFound);
  EXPECT_NE(a.status().message().find("s3://absent-bucket: no such bucket"), std::string::npos) << a.status().message();
  S3Store store(ConfigFor(server), "present", "p");
  Result<std::shared_ptr<const Blob>> b = store.Get("nothing-here");
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kNotFound);
  EXPECT_NE(b.status().message().find("s3://present/p/nothing-here: no such key"), std::string::npos)
      << b.status().message();
  // A PUT into a missing bucket fails with the bucket named, and leaves nothing.
  Status put = missing_bucket.Put("k", "x");
  EXPECT_EQ(put.code(), StatusCode::kNotFound) << put.ToString();
}

// IAM's query API, for setting up a user in an authenticating moto_server.
std::string Iam(const AwsClient& iam, const std::string& body) {
  AwsClient::Call call;
  call.method = "POST";
  call.headers = {{"content-type", "application/x-www-form-urlencoded"}};
  call.body = body + "&Version=2010-05-08";
  Result<HttpResponse> response = iam.Send(call);
  EXPECT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 200) << response->body;
  return response.ok() ? response->body : "";
}

std::string Between(const std::string& text, const std::string& open, const std::string& close) {
  const auto begin = text.find(open) + open.size();
  return text.substr(begin, text.find(close, begin) - begin);
}

TEST(S3Store, SignaturesAreCheckedAndBadCredentialsAreRefused) {
  // moto_server checks signatures after 3 requests: enough to make a user, a key and a grant.
  MotoServer server(3);
  AwsClient iam(ConfigFor(server), "iam");
  Iam(iam, "Action=CreateUser&UserName=nimbus");
  const std::string key = Iam(iam, "Action=CreateAccessKey&UserName=nimbus");
  // An inline policy that allows everything: {"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}
  Iam(iam, "Action=PutUserPolicy&UserName=nimbus&PolicyName=all&PolicyDocument=" +
               AwsUriEncode(R"({"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]})",
                            false));
  const std::string key_id = Between(key, "<AccessKeyId>", "</AccessKeyId>");
  const std::string secret = Between(key, "<SecretAccessKey>", "</SecretAccessKey>");
  ASSERT_FALSE(key_id.empty());

  // Our signature is accepted by the server's own check.
  S3Client good(ConfigFor(server, key_id, secret));
  ASSERT_TRUE(good.CreateBucket("guarded").ok());
  S3Store store(ConfigFor(server, key_id, secret), "guarded", "");
  ASSERT_TRUE(store.Put("k", "v").ok());

  S3Store wrong_secret(ConfigFor(server, key_id, "not-the-secret"), "guarded", "");
  Result<std::shared_ptr<const Blob>> a = wrong_secret.Get("k");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(a.status().message().find("access denied"), std::string::npos) << a.status().message();
  Status b = wrong_secret.Put("k2", "v");
  EXPECT_NE(b.message().find("SignatureDoesNotMatch"), std::string::npos) << b.ToString();
  S3Store unknown_key(ConfigFor(server, "AKIANOSUCHKEY0000000", "x"), "guarded", "");
  Status c = unknown_key.Put("k3", "v");
  EXPECT_NE(c.message().find("InvalidAccessKeyId"), std::string::npos) << c.ToString();
}

TEST(S3Store, OpenAnyStoreReadsTheEnvironment) {
  MotoServer server;
  server.ExportEnvironment();
  ASSERT_TRUE(S3Client(ConfigFor(server)).CreateBucket("env-bucket").ok());
  Result<std::unique_ptr<Store>> store = OpenAnyStore("s3://env-bucket/some/prefix/", false);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->uri(), "s3://env-bucket/some/prefix");
  ASSERT_TRUE((*store)->Put("x", "y").ok());
  EXPECT_FALSE(OpenAnyStore("s3:///nobucket", false).ok());
}

}  // namespace
}  // namespace nimbus
