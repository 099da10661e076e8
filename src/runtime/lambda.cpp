#include "nimbus/runtime/lambda.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "nimbus/cloud/lambda.h"
#include "nimbus/core/clock.h"
#include "nimbus/core/json_integer.h"
#include "nimbus/runtime/worker_process.h"
#include "nimbus/transport/transport.h"

namespace nimbus {
namespace {

using Json = nlohmann::json;

std::string RuntimeApiUrl(const std::string& api, const std::string& path) {
  return "http://" + api + "/2018-06-01/runtime" + path;
}

// A JSON error body in the shape the Runtime API takes.
std::string ErrorBody(const std::string& type, const std::string& message) {
  return Json{{"errorType", type}, {"errorMessage", message}}.dump();
}

void Post(const std::string& url, const std::string& body, const std::string& error_type = "") {
  HttpRequest request;
  request.method = "POST";
  request.url = url;
  request.body = body;
  request.headers = {{"content-type", "application/json"}};
  if (!error_type.empty()) request.headers.emplace_back("lambda-runtime-function-error-type", error_type);
  request.timeout_seconds = 30;
  Result<HttpResponse> response = HttpSend(request);
  if (!response.ok() || response->status >= 300) {
    std::fprintf(stderr, "nimbus-lambda: cannot post to the Runtime API at %s: %s\n", url.c_str(),
                 response.ok() ? ("HTTP " + std::to_string(response->status)).c_str() : response.status().ToString().c_str());
  }
}

// Lambda's longest function timeout, and a margin: how long an invocation is waited for.
constexpr double kLongestInvocationSeconds = 900 + 60;

// How an invocation ended, in words: what the function returned, or its error (Lambda's
// "Runtime exited with error: signal: killed" when it killed the runtime).
std::string HowItEnded(const Result<LambdaClient::Ended>& ended) {
  if (!ended.ok()) return "the invocation failed: " + ended.status().message();
  if (ended->function_error.empty()) return "the function returned " + ended->payload;
  const Json error = Json::parse(ended->payload, nullptr, false);
  if (error.is_object() && error.contains("errorMessage") && error["errorMessage"].is_string()) {
    return "the function failed: " + error.value("errorType", std::string("?")) + ": " +
           error["errorMessage"].get<std::string>();
  }
  return "the function failed (" + ended->function_error + "): " + ended->payload;
}

// A synchronous invocation, waited for by a thread of its own: the master cannot see the
// function, but hears how it ended. It cannot end the function either: Kill only stops the
// wait, and a worker the master gave up on leaves on its own (BYE, or the master timeout).
class LambdaInvocation final : public Invocation {
 public:
  LambdaInvocation(const LambdaClient& client, std::string function, std::string payload)
      : cancel_(std::make_shared<std::atomic<bool>>(false)) {
    waiter_ = std::thread([this, client, function = std::move(function), payload = std::move(payload)] {
      Result<LambdaClient::Ended> ended = client.Invoke(function, payload, kLongestInvocationSeconds, cancel_);
      std::lock_guard lock(mutex_);
      how_ = HowItEnded(ended);
      ended_ = true;
    });
  }
  ~LambdaInvocation() override {
    Kill();
    waiter_.join();
  }
  bool Exited(std::string* how) override {
    std::lock_guard lock(mutex_);
    if (ended_ && how != nullptr) *how = how_;
    return ended_;
  }
  void Kill() override { cancel_->store(true); }  // the wait is abandoned within about a second
  int64_t pid() const override { return -1; }

 private:
  std::shared_ptr<std::atomic<bool>> cancel_;
  std::mutex mutex_;
  bool ended_ = false;  // guarded by mutex_
  std::string how_;
  std::thread waiter_;
};

class LambdaLauncher final : public Launcher {
 public:
  LambdaLauncher(std::string function, AwsConfig config, std::optional<AwsCredentials> pass_credentials)
      : function_(std::move(function)), client_(config), config_(std::move(config)),
        pass_credentials_(std::move(pass_credentials)) {}

  Result<std::unique_ptr<Invocation>> Launch(const LaunchRequest& request) override {
    LambdaWorkerEvent event;
    event.connect = request.connect;
    event.run_id = request.run_id;
    event.worker = request.worker;
    event.invocation = request.invocation;
    event.credentials = pass_credentials_;
    event.keys = request.credentials;
    return std::unique_ptr<Invocation>(std::make_unique<LambdaInvocation>(client_, function_, event.ToJson()));
  }

 private:
  std::string function_;
  LambdaClient client_;
  AwsConfig config_;
  std::optional<AwsCredentials> pass_credentials_;
};

}  // namespace

std::string LambdaWorkerEvent::ToJson() const {
  Json json{{"connect", connect}, {"run", run_id}, {"worker", worker}, {"invocation", invocation}};
  if (credentials) {
    json["credentials"] = {{"access_key_id", credentials->access_key_id},
                           {"secret_access_key", credentials->secret_access_key},
                           {"session_token", credentials->session_token}};
  }
  if (!region.empty()) json["region"] = region;
  if (!endpoint_url.empty()) json["endpoint_url"] = endpoint_url;
  if (keys.secure()) {
    json["server_key"] = keys.server_public;
    json["client_key"] = keys.client.public_key;
    json["client_secret"] = keys.client.secret_key;
  }
  return json.dump();
}

Result<LambdaWorkerEvent> LambdaWorkerEvent::Parse(const std::string& text) {
  Json json;
  try {
    json = Json::parse(text);
  } catch (const Json::exception& error) {  // parse errors, and numbers out of range
    return InvalidArgument(std::string("the event is not JSON: ") + error.what());
  }
  LambdaWorkerEvent event;
  try {
    event.connect = json.at("connect").get<std::string>();
    event.run_id = JsonInteger<uint64_t>(json.at("run"));
    event.worker = JsonInteger<int>(json.at("worker"));
    event.invocation = json.contains("invocation") ? JsonInteger<uint64_t>(json["invocation"]) : 1;
    if (json.contains("credentials")) {
      const Json& c = json["credentials"];
      event.credentials = AwsCredentials{c.at("access_key_id").get<std::string>(),
                                         c.at("secret_access_key").get<std::string>(), c.value("session_token", "")};
    }
    event.region = json.value("region", "");
    event.endpoint_url = json.value("endpoint_url", "");
    event.keys.server_public = json.value("server_key", "");
    event.keys.client.public_key = json.value("client_key", "");
    event.keys.client.secret_key = json.value("client_secret", "");
  } catch (const Json::exception& error) {
    return InvalidArgument(std::string("the event lacks a field or has the wrong type: ") + error.what());
  }
  if (event.connect.empty() || event.worker < 0) return InvalidArgument("the event names no master or no worker");
  if (event.keys.secure()) {
    NIMBUS_RETURN_IF_ERROR(CheckCurveKey(event.keys.server_public, "server_key"));
    NIMBUS_RETURN_IF_ERROR(CheckCurveKey(event.keys.client.public_key, "client_key"));
    NIMBUS_RETURN_IF_ERROR(CheckCurveKey(event.keys.client.secret_key, "client_secret"));
  } else if (!event.keys.client.public_key.empty() || !event.keys.client.secret_key.empty()) {
    return InvalidArgument("the event has client keys but no server_key");
  }
  return event;
}

int RunLambdaBootstrap(double deadline_margin_seconds) {
  const char* api_value = std::getenv("AWS_LAMBDA_RUNTIME_API");
  if (api_value == nullptr || *api_value == '\0') {
    std::fprintf(stderr, "nimbus-lambda: AWS_LAMBDA_RUNTIME_API is not set: this is the bootstrap of a Lambda function\n");
    return 2;
  }
  const std::string api = api_value;
  // Initialization: what every invocation will need. A failure here is reported as an init
  // error, which tells Lambda (and the emulator) that this sandbox cannot serve at all.
  if (ZmqContext::Create()->get() == nullptr) {
    Post(RuntimeApiUrl(api, "/init/error"), ErrorBody("Runtime.InitError", "cannot create a ZeroMQ context"),
         "Runtime.InitError");
    return 3;
  }
  int failed_polls = 0;
  while (true) {
    HttpRequest next;
    next.url = RuntimeApiUrl(api, "/invocation/next");
    next.timeout_seconds = 0;  // a long poll: the sandbox may wait (or be frozen) here
    Result<HttpResponse> response = HttpSend(next);
    if (!response.ok() || response->status != 200) {
      // The Runtime API going away is how a sandbox ends.
      if (++failed_polls >= 3) return 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      continue;
    }
    failed_polls = 0;
    const std::string request_id = response->headers["lambda-runtime-aws-request-id"];
    const double deadline_ms = std::atof(response->headers["lambda-runtime-deadline-ms"].c_str());
    const std::string invocation_url = RuntimeApiUrl(api, "/invocation/" + request_id);
    Result<LambdaWorkerEvent> event = LambdaWorkerEvent::Parse(response->body);
    if (!event.ok()) {
      Post(invocation_url + "/error", ErrorBody("InvalidEvent", event.status().message()), "InvalidEvent");
      continue;
    }
    if (event->credentials) {
      ::setenv("AWS_ACCESS_KEY_ID", event->credentials->access_key_id.c_str(), 1);
      ::setenv("AWS_SECRET_ACCESS_KEY", event->credentials->secret_access_key.c_str(), 1);
      ::setenv("AWS_SESSION_TOKEN", event->credentials->session_token.c_str(), 1);
    }
    if (!event->region.empty()) ::setenv("AWS_REGION", event->region.c_str(), 1);
    if (!event->endpoint_url.empty()) ::setenv("AWS_ENDPOINT_URL", event->endpoint_url.c_str(), 1);

    WorkerProcessOptions options;
    options.connect = event->connect;
    options.run_id = event->run_id;
    options.worker = event->worker;
    options.invocation = event->invocation;
    options.credentials = event->keys;
    options.process_start_wall = WallSeconds();  // this invocation's start (the sandbox may be warm)
    if (deadline_ms > 0) {
      // The lifetime budget: the invocation's deadline, less a margin to hand over in.
      options.max_lifetime = std::max(1.0, deadline_ms / 1000.0 - options.process_start_wall - deadline_margin_seconds);
    }
    const int code = RunWorkerProcess(options);
    const Json result{{"worker", event->worker}, {"invocation", event->invocation}, {"exit", code}};
    if (code == kWorkerError) {
      Post(invocation_url + "/error", ErrorBody("WorkerError", "the worker could not do its part (exit 4)"), "WorkerError");
    } else {
      Post(invocation_url + "/response", result.dump());
    }
  }
}

std::unique_ptr<Launcher> MakeLambdaLauncher(std::string function, AwsConfig config,
                                             std::optional<AwsCredentials> pass_credentials) {
  return std::make_unique<LambdaLauncher>(std::move(function), std::move(config), std::move(pass_credentials));
}

}  // namespace nimbus
