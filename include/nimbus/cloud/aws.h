// Talking to AWS (or any API-compatible server): configuration from the standard places,
// HTTP through libcurl, and signed requests with retries.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nimbus/cloud/sigv4.h"
#include "nimbus/core/status.h"

namespace nimbus {

struct AwsConfig {
  AwsCredentials credentials;
  std::string credentials_source;  // where they came from, for messages
  std::string region = "us-east-1";
  std::string endpoint_url;        // "http://127.0.0.1:5000"; empty: AWS's own endpoint
};

// The standard chain: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, then the
// shared credentials file (AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials) at profile
// AWS_PROFILE (or "default"). Region from AWS_REGION or AWS_DEFAULT_REGION; the endpoint from
// AWS_ENDPOINT_URL_<SERVICE> (S3, LAMBDA) or AWS_ENDPOINT_URL.
Result<AwsConfig> LoadAwsConfig(const std::string& service);

// One profile of an INI credentials file.
Result<AwsCredentials> ReadCredentialsFile(const std::string& path, const std::string& profile);

struct HttpRequest {
  std::string method = "GET";
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  double timeout_seconds = 120;  // 0: none (a long poll)
  // Set: the exchange is abandoned (looked at about once a second).
  std::shared_ptr<const std::atomic<bool>> cancel;
};

struct HttpResponse {
  long status = 0;
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
};

// One HTTP exchange. An error Status only when no response came (refused, timed out).
Result<HttpResponse> HttpSend(const HttpRequest& request);

// Signed requests to one AWS service, retried with exponential backoff and jitter on
// transport errors, 5xx answers and throttling.
class AwsClient {
 public:
  AwsClient(AwsConfig config, std::string service);

  struct Call {
    std::string method = "GET";
    std::string host;  // empty: the service's default host (or the endpoint override)
    std::string path = "/";
    std::vector<std::pair<std::string, std::string>> query;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    bool sign_payload = true;  // false: "UNSIGNED-PAYLOAD" (S3 only)
    double timeout_seconds = 120;
    std::shared_ptr<const std::atomic<bool>> cancel;  // as HttpRequest's; no retry once set
  };
  Result<HttpResponse> Send(const Call& call) const;

  const AwsConfig& config() const { return config_; }
  const std::string& service() const { return service_; }
  // scheme://host[:port] of the endpoint.
  std::string BaseUrl(const std::string& host) const;
  int max_attempts = 5;
  double first_backoff_seconds = 0.1;

 private:
  AwsConfig config_;
  std::string service_;
};

// The <Code> and <Message> of an AWS XML error body (empty when there is none).
std::pair<std::string, std::string> AwsErrorOf(const std::string& body);

}  // namespace nimbus
