// AWS configuration from the standard places, and retries of signed requests.
#include "nimbus/cloud/aws.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <cstdlib>
#include <thread>

#include "support/test_support.h"

namespace nimbus {
namespace {

using testing::TempDir;
using testing::WriteTextFile;

// Sets environment variables for one test and restores the previous ones afterwards.
class ScopedEnvironment {
 public:
  ScopedEnvironment() {
    for (const char* name : {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                             "AWS_SHARED_CREDENTIALS_FILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL",
                             "AWS_ENDPOINT_URL_S3", "HOME"}) {
      const char* value = std::getenv(name);
      saved_.emplace_back(name, value != nullptr ? std::optional<std::string>(value) : std::nullopt);
      ::unsetenv(name);
    }
  }
  ~ScopedEnvironment() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }
  void Set(const char* name, const std::string& value) { ::setenv(name, value.c_str(), 1); }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

constexpr char kCredentialsFile[] =
    "# comment\n"
    "[default]\n"
    "aws_access_key_id = AKIADEFAULT\n"
    "aws_secret_access_key = default-secret\n"
    "\n"
    "[ci]\n"
    "aws_access_key_id=AKIACI\n"
    "aws_secret_access_key=ci-secret\n"
    "aws_session_token=ci-token\n";

TEST(AwsConfig, EnvironmentComesFirst) {
  ScopedEnvironment env;
  TempDir dir;
  WriteTextFile(dir.File("credentials"), kCredentialsFile);
  env.Set("AWS_SHARED_CREDENTIALS_FILE", dir.File("credentials"));
  env.Set("AWS_ACCESS_KEY_ID", "AKIAENV");
  env.Set("AWS_SECRET_ACCESS_KEY", "env-secret");
  env.Set("AWS_SESSION_TOKEN", "env-token");
  Result<AwsConfig> config = LoadAwsConfig("s3");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->credentials.access_key_id, "AKIAENV");
  EXPECT_EQ(config->credentials.session_token, "env-token");
  EXPECT_EQ(config->region, "us-east-1");  // the default
  EXPECT_TRUE(config->endpoint_url.empty());
}

TEST(AwsConfig, SharedFileWithProfileRegionAndEndpoint) {
  ScopedEnvironment env;
  TempDir dir;
  WriteTextFile(dir.File("credentials"), kCredentialsFile);
  env.Set("AWS_SHARED_CREDENTIALS_FILE", dir.File("credentials"));
  Result<AwsConfig> plain = LoadAwsConfig("s3");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->credentials.access_key_id, "AKIADEFAULT");
  EXPECT_NE(plain->credentials_source.find("[default]"), std::string::npos);

  env.Set("AWS_PROFILE", "ci");
  env.Set("AWS_DEFAULT_REGION", "eu-north-1");
  env.Set("AWS_ENDPOINT_URL", "http://127.0.0.1:9000/");
  env.Set("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:9100");
  Result<AwsConfig> ci = LoadAwsConfig("s3");
  ASSERT_TRUE(ci.ok());
  EXPECT_EQ(ci->credentials.access_key_id, "AKIACI");
  EXPECT_EQ(ci->credentials.session_token, "ci-token");
  EXPECT_EQ(ci->region, "eu-north-1");
  EXPECT_EQ(ci->endpoint_url, "http://127.0.0.1:9100");  // the service's own override wins
  EXPECT_EQ(LoadAwsConfig("lambda")->endpoint_url, "http://127.0.0.1:9000");  // trailing slash dropped
  env.Set("AWS_REGION", "ap-south-1");  // over AWS_DEFAULT_REGION
  EXPECT_EQ(LoadAwsConfig("s3")->region, "ap-south-1");
}

TEST(AwsConfig, MissingCredentialsSayWhereTheyWereLookedFor) {
  ScopedEnvironment env;
  TempDir dir;
  env.Set("HOME", dir.path());
  Result<AwsConfig> none = LoadAwsConfig("s3");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("AWS_ACCESS_KEY_ID"), std::string::npos);
  EXPECT_NE(none.status().message().find(dir.path() + "/.aws/credentials"), std::string::npos) << none.status().message();
  WriteTextFile(dir.File("credentials"), kCredentialsFile);
  EXPECT_EQ(ReadCredentialsFile(dir.File("credentials"), "nope").status().code(), StatusCode::kNotFound);
  WriteTextFile(dir.File("broken"), "[default]\naws_access_key_id\n");
  EXPECT_NE(ReadCredentialsFile(dir.File("broken"), "default").status().message().find("broken:2: expected KEY = VALUE"),
            std::string::npos);
  env.Set("AWS_ACCESS_KEY_ID", "AKIAONLY");
  EXPECT_NE(LoadAwsConfig("s3").status().message().find("AWS_SECRET_ACCESS_KEY is not"), std::string::npos);
}

// A local HTTP server that fails the first `failures` requests with `status`.
class FlakyServer {
 public:
  FlakyServer(int failures, int status) {
    server_.Get("/thing", [this, failures, status](const httplib::Request& request, httplib::Response& response) {
      seen_authorization_ = request.get_header_value("Authorization");
      if (++requests_ <= failures) {
        response.status = status;
        response.set_content(status == 503 ? "<Error><Code>SlowDown</Code><Message>Reduce your request rate.</Message></Error>"
                                           : "<Error><Code>NoSuchKey</Code><Message>Not there.</Message></Error>",
                             "application/xml");
        return;
      }
      response.set_content("fine", "text/plain");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~FlakyServer() {
    server_.stop();
    thread_.join();
  }
  AwsConfig Config() const {
    AwsConfig config;
    config.credentials = {"AKIATEST", "secret", ""};
    config.endpoint_url = "http://127.0.0.1:" + std::to_string(port_);
    return config;
  }
  int requests() const { return requests_; }
  const std::string& authorization() const { return seen_authorization_; }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int> requests_{0};
  std::string seen_authorization_;
};

TEST(AwsClient, RetriesThrottlingAndServerErrorsThenSucceeds) {
  FlakyServer server(2, 503);
  AwsClient client(server.Config(), "s3");
  client.first_backoff_seconds = 0.01;
  AwsClient::Call call;
  call.path = "/thing";
  Result<HttpResponse> response = client.Send(call);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "fine");
  EXPECT_EQ(server.requests(), 3);
  EXPECT_EQ(server.authorization().rfind("AWS4-HMAC-SHA256 Credential=AKIATEST/", 0), 0u) << server.authorization();
}

TEST(AwsClient, GivesUpAfterItsAttemptsAndSaysWhy) {
  FlakyServer server(100, 500);
  AwsClient client(server.Config(), "s3");
  client.first_backoff_seconds = 0.01;
  client.max_attempts = 3;
  AwsClient::Call call;
  call.path = "/thing";
  Result<HttpResponse> response = client.Send(call);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(server.requests(), 3);
  EXPECT_NE(response.status().message().find("after 3 attempts"), std::string::npos) << response.status().message();
  EXPECT_NE(response.status().message().find("HTTP 500"), std::string::npos);
}

TEST(AwsClient, ClientErrorsAreNotRetried) {
  FlakyServer server(100, 404);
  AwsClient client(server.Config(), "s3");
  AwsClient::Call call;
  call.path = "/thing";
  Result<HttpResponse> response = client.Send(call);
  ASSERT_TRUE(response.ok());
  EXPECT_EQ(response->status, 404);
  EXPECT_EQ(server.requests(), 1);
}

TEST(AwsClient, ARefusedConnectionIsAnErrorNotAHang) {
  AwsConfig config;
  config.credentials = {"a", "b", ""};
  config.endpoint_url = "http://127.0.0.1:" + std::to_string(testing::FreePort());
  AwsClient client(config, "s3");
  client.first_backoff_seconds = 0.01;
  client.max_attempts = 2;
  AwsClient::Call call;
  Result<HttpResponse> response = client.Send(call);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace nimbus
