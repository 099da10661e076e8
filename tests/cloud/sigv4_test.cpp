// AWS Signature Version 4 against cases of the published AWS test suite (tests/data/sigv4).
#include "nimbus/cloud/sigv4.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace nimbus {
namespace {

struct SuiteCase {
  std::string name;
  SigningRequest request;
  std::string body;
  std::string sts_hash;
  std::string authorization;
};

std::vector<SuiteCase> LoadSuite() {
  std::ifstream in(std::string(NIMBUS_SOURCE_DIR) + "/tests/data/sigv4/aws-sigv4-test-suite.txt");
  std::vector<SuiteCase> cases;
  SuiteCase current;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.find(' ');
    const std::string key = line.substr(0, space);
    const std::string value = space == std::string::npos ? "" : line.substr(space + 1);
    if (key == "case") {
      current = SuiteCase{};
      current.name = value;
    } else if (key == "method") {
      current.request.method = value;
    } else if (key == "path") {
      current.request.path = value;
    } else if (key == "query") {
      const auto equals = value.find('=');
      current.request.query.emplace_back(value.substr(0, equals), value.substr(equals + 1));
    } else if (key == "header") {
      const auto colon = value.find(':');
      current.request.headers.emplace_back(value.substr(0, colon), value.substr(colon + 1));
      if (value.substr(0, colon) == "X-Amz-Date") current.request.amz_date = value.substr(colon + 1);
    } else if (key == "body") {
      current.body = value;
    } else if (key == "sts-hash") {
      current.sts_hash = value;
    } else if (key == "authorization") {
      current.authorization = value;
    } else if (key == "end") {
      current.request.region = "us-east-1";
      current.request.service = "service";
      current.request.payload_hash = Sha256Hex(current.body);
      cases.push_back(current);
    }
  }
  return cases;
}

const AwsCredentials kSuiteCredentials{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", ""};

TEST(SigV4, PublishedTestSuiteCases) {
  const std::vector<SuiteCase> cases = LoadSuite();
  ASSERT_GE(cases.size(), 8u);
  for (const SuiteCase& c : cases) {
    SCOPED_TRACE(c.name);
    const SigningResult result = SignV4(c.request, kSuiteCredentials);
    EXPECT_EQ(result.authorization, c.authorization);
    if (!c.sts_hash.empty()) {
      EXPECT_EQ(result.string_to_sign.substr(result.string_to_sign.rfind('\n') + 1), c.sts_hash);
      EXPECT_EQ(Sha256Hex(result.canonical_request), c.sts_hash);
    }
  }
}

TEST(SigV4, CanonicalRequestOfGetVanillaQuery) {
  SigningRequest request;
  request.method = "GET";
  request.path = "/";
  request.query = {{"Param2", "value2"}, {"Param1", "value1"}};
  request.headers = {{"Host", "example.amazonaws.com"}, {"X-Amz-Date", "20150830T123600Z"}};
  request.payload_hash = Sha256Hex("");
  request.region = "us-east-1";
  request.service = "service";
  request.amz_date = "20150830T123600Z";
  EXPECT_EQ(SignV4(request, kSuiteCredentials).canonical_request,
            "GET\n/\nParam1=value1&Param2=value2\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
            "host;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(SigV4, SigningKeyOfTheDocumentedExample) {
  // AWS's documented derivation: secret wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY, 20120215,
  // us-east-1, iam.
  std::string key = HmacSha256("AWS4wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "20120215");
  key = HmacSha256(key, "us-east-1");
  key = HmacSha256(key, "iam");
  key = HmacSha256(key, "aws4_request");
  EXPECT_EQ(HexEncode(key), "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d");
}

TEST(SigV4, UriEncodingAndS3Paths) {
  EXPECT_EQ(AwsUriEncode("a b/c~d_e.f-g*h", false), "a%20b%2Fc~d_e.f-g%2Ah");
  EXPECT_EQ(AwsUriEncode("a b/c", true), "a%20b/c");
  SigningRequest s3;
  s3.method = "GET";
  s3.path = "/bucket/dir/a b.bin";
  s3.headers = {{"host", "h"}};
  s3.payload_hash = "UNSIGNED-PAYLOAD";
  s3.region = "us-east-1";
  s3.service = "s3";
  s3.amz_date = "20150830T123600Z";
  s3.s3_path_rules = true;
  const std::string s3_start = "GET\n/bucket/dir/a%20b.bin\n\nhost:h\n";
  EXPECT_EQ(SignV4(s3, kSuiteCredentials).canonical_request.substr(0, s3_start.size()), s3_start);
  // Other services normalize the path and encode it twice.
  SigningRequest other = s3;
  other.service = "service";
  other.s3_path_rules = false;
  other.path = "/a/./b/../c d";
  const std::string other_start = "GET\n/a/c%2520d\n";
  EXPECT_EQ(SignV4(other, kSuiteCredentials).canonical_request.substr(0, other_start.size()), other_start);
  EXPECT_EQ(AmzDate(1440938160), "20150830T123600Z");
  EXPECT_EQ(Base64Encode("hello"), "aGVsbG8=");
}

}  // namespace
}  // namespace nimbus
