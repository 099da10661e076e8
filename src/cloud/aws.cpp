#include "nimbus/cloud/aws.h"

#include <curl/curl.h>

#include <strings.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <random>
#include <thread>

#include "nimbus/core/clock.h"

namespace nimbus {
namespace {

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

std::string Trim(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  const auto end = text.find_last_not_of(" \t\r\n");
  return text.substr(begin, end - begin + 1);
}

std::string Upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

void InitCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::size_t CollectBody(char* data, std::size_t size, std::size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

std::size_t CollectHeader(char* data, std::size_t size, std::size_t count, void* out) {
  const std::string line(data, size * count);
  const auto colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    (*static_cast<std::map<std::string, std::string>*>(out))[name] = Trim(line.substr(colon + 1));
  }
  return size * count;
}

// "scheme://host:port/..." -> ("scheme", "host:port").
std::pair<std::string, std::string> SplitUrl(const std::string& url) {
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return {"https", url};
  const std::string rest = url.substr(scheme_end + 3);
  return {url.substr(0, scheme_end), rest.substr(0, rest.find('/'))};
}

bool Retryable(long status, const std::string& body) {
  if (status >= 500 || status == 429) return true;
  const std::string code = AwsErrorOf(body).first;
  return code == "Throttling" || code == "ThrottlingException" || code == "SlowDown" ||
         code == "TooManyRequestsException" || code == "RequestTimeout";
}

}  // namespace

Result<AwsCredentials> ReadCredentialsFile(const std::string& path, const std::string& profile) {
  std::ifstream in(path);
  if (!in) return NotFound(path + ": no such credentials file");
  AwsCredentials credentials;
  std::string line, section;
  bool found = false;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    line = Trim(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[') {
      if (line.back() != ']') return InvalidArgument(path + ":" + std::to_string(number) + ": unclosed section");
      section = Trim(line.substr(1, line.size() - 2));
      found = found || section == profile;
      continue;
    }
    if (section != profile) continue;
    const auto equals = line.find('=');
    if (equals == std::string::npos) {
      return InvalidArgument(path + ":" + std::to_string(number) + ": expected KEY = VALUE");
    }
    const std::string key = Trim(line.substr(0, equals));
    const std::string value = Trim(line.substr(equals + 1));
    if (key == "aws_access_key_id") credentials.access_key_id = value;
    if (key == "aws_secret_access_key") credentials.secret_access_key = value;
    if (key == "aws_session_token") credentials.session_token = value;
  }
  if (!found) return NotFound(path + ": no profile [" + profile + "]");
  if (credentials.access_key_id.empty() || credentials.secret_access_key.empty()) {
    return InvalidArgument(path + ": profile [" + profile + "] lacks aws_access_key_id or aws_secret_access_key");
  }
  return credentials;
}

Result<AwsConfig> LoadAwsConfig(const std::string& service) {
  AwsConfig config;
  if (!Env("AWS_ACCESS_KEY_ID").empty()) {
    config.credentials = {Env("AWS_ACCESS_KEY_ID"), Env("AWS_SECRET_ACCESS_KEY"), Env("AWS_SESSION_TOKEN")};
    if (config.credentials.secret_access_key.empty()) {
      return InvalidArgument("AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not");
    }
    config.credentials_source = "the environment (AWS_ACCESS_KEY_ID)";
  } else {
    std::string path = Env("AWS_SHARED_CREDENTIALS_FILE");
    if (path.empty()) path = Env("HOME") + "/.aws/credentials";
    const std::string profile = Env("AWS_PROFILE").empty() ? "default" : Env("AWS_PROFILE");
    Result<AwsCredentials> credentials = ReadCredentialsFile(path, profile);
    if (!credentials.ok()) {
      return FailedPrecondition("no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or give a "
                                "shared credentials file (" +
                                credentials.status().message() + ")");
    }
    config.credentials = *credentials;
    config.credentials_source = path + " [" + profile + "]";
  }
  if (!Env("AWS_REGION").empty()) {
    config.region = Env("AWS_REGION");
  } else if (!Env("AWS_DEFAULT_REGION").empty()) {
    config.region = Env("AWS_DEFAULT_REGION");
  }
  const std::string specific = Env(("AWS_ENDPOINT_URL_" + Upper(service)).c_str());
  config.endpoint_url = !specific.empty() ? specific : Env("AWS_ENDPOINT_URL");
  while (!config.endpoint_url.empty() && config.endpoint_url.back() == '/') config.endpoint_url.pop_back();
  return config;
}

namespace {

// curl's progress callback: non-zero abandons the transfer.
int AbandonIfCancelled(void* cancel, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<const std::atomic<bool>*>(cancel)->load() ? 1 : 0;
}

}  // namespace

Result<HttpResponse> HttpSend(const HttpRequest& request) {
  InitCurlOnce();
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return Internal("cannot start a curl session");
  HttpResponse response;
  curl_slist* headers = nullptr;
  bool has_content_type = false;
  for (const auto& [name, value] : request.headers) {
    headers = curl_slist_append(headers, (name + ": " + value).c_str());
    has_content_type = has_content_type || strcasecmp(name.c_str(), "content-type") == 0;
  }
  // curl would label a body as a form, which servers then parse away.
  if (!has_content_type) headers = curl_slist_append(headers, "Content-Type: application/octet-stream");
  headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 10L);
  if (request.timeout_seconds > 0) {
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout_seconds * 1000));
  }
  if (request.cancel) {
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, AbandonIfCancelled);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, request.cancel.get());
  }
  if (request.method == "HEAD") curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  if (!request.body.empty() || request.method == "PUT" || request.method == "POST") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  }
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, CollectBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response.body);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, CollectHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &response.headers);
  const CURLcode code = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  if (code != CURLE_OK) {
    return Unavailable(request.method + " " + request.url + ": " + curl_easy_strerror(code));
  }
  return response;
}

std::pair<std::string, std::string> AwsErrorOf(const std::string& body) {
  auto element = [&](const std::string& name) {
    const auto begin = body.find("<" + name + ">");
    if (begin == std::string::npos) return std::string();
    const auto start = begin + name.size() + 2;
    const auto end = body.find("</" + name + ">", start);
    return end == std::string::npos ? std::string() : body.substr(start, end - start);
  };
  return {element("Code"), element("Message")};
}

AwsClient::AwsClient(AwsConfig config, std::string service) : config_(std::move(config)), service_(std::move(service)) {}

std::string AwsClient::BaseUrl(const std::string& host) const {
  if (!config_.endpoint_url.empty()) return config_.endpoint_url;
  return "https://" + (host.empty() ? service_ + "." + config_.region + ".amazonaws.com" : host);
}

Result<HttpResponse> AwsClient::Send(const Call& call) const {
  const std::string base = BaseUrl(call.host);
  std::string url = base + AwsUriEncode(call.path, /*keep_slash=*/true);
  std::string query;
  for (const auto& [name, value] : call.query) {
    query += query.empty() ? '?' : '&';
    query += AwsUriEncode(name, false);
    query += '=';
    query += AwsUriEncode(value, false);
  }
  url += query;
  const std::string payload_hash = call.sign_payload ? Sha256Hex(call.body) : "UNSIGNED-PAYLOAD";
  std::mt19937_64 jitter(std::random_device{}());
  double backoff = first_backoff_seconds;
  Status last_error;
  for (int attempt = 1; attempt <= max_attempts; ++attempt) {
    // Signed afresh each attempt: the signature covers the time.
    SigningRequest signing;
    signing.method = call.method;
    signing.path = call.path;
    signing.query = call.query;
    signing.amz_date = AmzDate(static_cast<int64_t>(WallSeconds()));
    signing.headers = call.headers;
    signing.headers.emplace_back("host", SplitUrl(base).second);
    signing.headers.emplace_back("x-amz-date", signing.amz_date);
    signing.headers.emplace_back("x-amz-content-sha256", payload_hash);
    if (!config_.credentials.session_token.empty()) {
      signing.headers.emplace_back("x-amz-security-token", config_.credentials.session_token);
    }
    signing.payload_hash = payload_hash;
    signing.region = config_.region;
    signing.service = service_;
    signing.s3_path_rules = service_ == "s3";
    const SigningResult signature = SignV4(signing, config_.credentials);

    HttpRequest request;
    request.method = call.method;
    request.url = url;
    request.body = call.body;
    request.timeout_seconds = call.timeout_seconds;
    request.cancel = call.cancel;
    for (const auto& header : signing.headers) {
      if (header.first != "host") request.headers.push_back(header);
    }
    request.headers.emplace_back("Authorization", signature.authorization);
    Result<HttpResponse> response = HttpSend(request);
    if (response.ok() && !Retryable(response->status, response->body)) return response;
    if (call.cancel && call.cancel->load()) return Unavailable(call.method + " " + url + ": abandoned");
    last_error = response.ok() ? Unavailable(call.method + " " + url + ": HTTP " + std::to_string(response->status) +
                                             " " + AwsErrorOf(response->body).first)
                               : response.status();
    if (attempt == max_attempts) break;
    std::uniform_real_distribution<double> spread(0.5, 1.5);
    std::this_thread::sleep_for(std::chrono::duration<double>(backoff * spread(jitter)));
    backoff *= 2;
  }
  return last_error.WithContext("after " + std::to_string(max_attempts) + " attempts");
}

}  // namespace nimbus
