#include "nimbus/cloud/sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cctype>
#include <ctime>

namespace nimbus {
namespace {

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// Header values: leading and trailing blanks dropped, inner runs of blanks folded to one.
std::string TrimValue(std::string_view value) {
  std::string out;
  bool blank = false;
  for (const char c : value) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      blank = !out.empty();
      continue;
    }
    if (blank) out += ' ';
    blank = false;
    out += c;
  }
  return out;
}

// For services other than S3: "." and ".." segments resolved, empty segments dropped.
std::string NormalizePath(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t begin = 0;
  while (begin <= path.size()) {
    const auto end = std::min(path.find('/', begin), path.size());
    const std::string part = path.substr(begin, end - begin);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    begin = end + 1;
  }
  std::string out = "/";
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i > 0 ? "/" : "") + parts[i];
  if (parts.size() > 0 && path.size() > 1 && path.back() == '/') out += '/';
  return out;
}

}  // namespace

std::string HexEncode(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char c : bytes) {
    out += kDigits[(static_cast<unsigned char>(c) >> 4) & 0xf];
    out += kDigits[static_cast<unsigned char>(c) & 0xf];
  }
  return out;
}

std::string Base64Encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest), sizeof digest));
}

std::string HmacSha256(std::string_view key, std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
       data.size(), digest, &length);
  return std::string(reinterpret_cast<const char*>(digest), length);
}

std::string AwsUriEncode(std::string_view text, bool keep_slash) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/')) {
      out += c;
    } else {
      out += '%';
      out += kDigits[u >> 4];
      out += kDigits[u & 0xf];
    }
  }
  return out;
}

std::string AmzDate(int64_t unix_seconds) {
  const std::time_t time = static_cast<std::time_t>(unix_seconds);
  std::tm utc{};
  gmtime_r(&time, &utc);
  char text[20];
  std::strftime(text, sizeof text, "%Y%m%dT%H%M%SZ", &utc);
  return text;
}

SigningResult SignV4(const SigningRequest& request, const AwsCredentials& credentials) {
  SigningResult result;
  // Canonical URI.
  const std::string path = request.path.empty() ? "/" : request.path;
  const std::string canonical_uri = request.s3_path_rules
                                        ? AwsUriEncode(path, /*keep_slash=*/true)
                                        : AwsUriEncode(AwsUriEncode(NormalizePath(path), true), true);
  // Canonical query: each name and value encoded, sorted by name, then value.
  std::vector<std::pair<std::string, std::string>> query;
  for (const auto& [name, value] : request.query) query.emplace_back(AwsUriEncode(name, false), AwsUriEncode(value, false));
  std::sort(query.begin(), query.end());
  std::string canonical_query;
  for (const auto& [name, value] : query) {
    if (!canonical_query.empty()) canonical_query += '&';
    canonical_query += name + "=" + value;
  }
  // Canonical headers: lower-case names, sorted; repeated names joined by commas in order.
  std::map<std::string, std::string> headers;
  for (const auto& [name, value] : request.headers) {
    std::string& joined = headers[Lower(name)];
    joined += (joined.empty() ? "" : ",") + TrimValue(value);
  }
  std::string canonical_headers;
  for (const auto& [name, value] : headers) {
    canonical_headers += name + ":" + value + "\n";
    result.signed_headers += (result.signed_headers.empty() ? "" : ";") + name;
  }
  result.canonical_request = request.method + "\n" + canonical_uri + "\n" + canonical_query + "\n" + canonical_headers +
                             "\n" + result.signed_headers + "\n" + request.payload_hash;

  const std::string date = request.amz_date.substr(0, 8);
  const std::string scope = date + "/" + request.region + "/" + request.service + "/aws4_request";
  result.string_to_sign =
      "AWS4-HMAC-SHA256\n" + request.amz_date + "\n" + scope + "\n" + Sha256Hex(result.canonical_request);

  std::string key = HmacSha256("AWS4" + credentials.secret_access_key, date);
  key = HmacSha256(key, request.region);
  key = HmacSha256(key, request.service);
  key = HmacSha256(key, "aws4_request");
  result.signature = HexEncode(HmacSha256(key, result.string_to_sign));
  result.authorization = "AWS4-HMAC-SHA256 Credential=" + credentials.access_key_id + "/" + scope +
                         ", SignedHeaders=" + result.signed_headers + ", Signature=" + result.signature;
  return result;
}

}  // namespace nimbus
