// AWS Signature Version 4 (the "AWS4-HMAC-SHA256" scheme) for HTTP requests to S3, Lambda
// and any other AWS API: canonical request, string to sign, derived signing key, signature.
// Checked against the published AWS Signature Version 4 test suite (tests/data).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nimbus {

struct AwsCredentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // temporary credentials (STS, a Lambda role); may be empty
};

// One request to sign. Header names may be in any case; the signature covers all of them.
struct SigningRequest {
  std::string method;  // GET, PUT, POST, ...
  std::string path;    // the URI path, not yet encoded: "/bucket/key with space"
  std::vector<std::pair<std::string, std::string>> query;  // not yet encoded
  std::vector<std::pair<std::string, std::string>> headers;  // must include host
  std::string payload_hash;  // hex SHA-256 of the body, or "UNSIGNED-PAYLOAD"
  std::string region;
  std::string service;        // "s3", "lambda", "iam", "service" (the test suite)
  std::string amz_date;       // "20150830T123600Z"
  // S3 takes the path as it is; every other service normalizes it and encodes it twice.
  bool s3_path_rules = false;
};

struct SigningResult {
  std::string canonical_request;
  std::string string_to_sign;
  std::string signature;
  std::string signed_headers;
  std::string authorization;  // the value of the Authorization header
};

// Signs with `credentials`; the caller adds X-Amz-Date (and X-Amz-Security-Token with a
// session token, before signing, so it is covered).
SigningResult SignV4(const SigningRequest& request, const AwsCredentials& credentials);

// RFC 3986 percent-encoding as AWS specifies it (unreserved characters kept; '/' kept when
// `keep_slash`).
std::string AwsUriEncode(std::string_view text, bool keep_slash);

std::string Sha256Hex(std::string_view data);
std::string HmacSha256(std::string_view key, std::string_view data);  // raw 32 bytes
std::string HexEncode(std::string_view bytes);
std::string Base64Encode(std::string_view bytes);

// "20150830T123600Z" for a Unix time.
std::string AmzDate(int64_t unix_seconds);

}  // namespace nimbus
