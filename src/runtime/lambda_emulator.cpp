#include "nimbus/core/subprocess.h"
#include "nimbus/runtime/lambda_emulator.h"

#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <vector>

#include "nimbus/core/clock.h"

extern char** environ;

namespace nimbus {
namespace {

std::string NewRequestId() {
  static std::atomic<uint64_t> counter{0};
  char id[64];
  std::snprintf(id, sizeof id, "%08llx-%04x-4000-8000-%012llx", static_cast<unsigned long long>(WallSeconds()) & 0xffffffffULL,
                static_cast<unsigned>(::getpid() & 0xffff), static_cast<unsigned long long>(++counter));
  return id;
}

std::string ErrorJson(const std::string& type, const std::string& message) {
  return "{\"Type\":\"User\",\"__type\":\"" + type + "\",\"message\":\"" + message + "\"}";
}

}  // namespace

Status LambdaEmulatorOptions::Validate() const {
  if (bootstrap.empty()) return InvalidArgument("bootstrap: the emulator needs the function's bootstrap to run");
  if (concurrency < 1) return InvalidArgument("concurrency: must be >= 1");
  if (!(timeout_seconds > 0)) return InvalidArgument("timeout_seconds: must be positive");
  if (retries < 0) return InvalidArgument("retries: must be >= 0");
  return Status::Ok();
}

class LambdaEmulator::Impl {
 public:
  explicit Impl(LambdaEmulatorOptions options) : options_(std::move(options)) {}
  ~Impl() { Stop(); }

  Status Start();
  void Stop();
  int port() const { return port_; }
  LambdaEmulatorStats stats() const {
    std::lock_guard lock(mutex_);
    return stats_;
  }
  std::vector<int64_t> instance_pids() const {
    std::lock_guard lock(mutex_);
    std::vector<int64_t> pids;
    for (const auto& [id, instance] : instances_) pids.push_back(instance->pid);
    return pids;
  }

 private:
  struct Result {
    bool done = false;
    bool error = false;
    std::string payload;
  };
  struct Event {
    std::string id;
    std::string payload;
    int attempt = 0;
    std::shared_ptr<Result> result;  // set for RequestResponse: the caller waits on it
  };
  struct Instance {
    int id = 0;
    pid_t pid = -1;
    std::unique_ptr<httplib::Server> api;
    std::thread server;
    int port = 0;
    std::optional<Event> current;  // assigned, not yet finished
    bool delivered = false;        // `current` was handed out by /next
    double deadline = 0;           // monotonic
    int served = 0;
    bool ending = false;
  };

  void Enqueue(Event event);
  void Dispatch();      // the background loop
  void Assign(Instance& instance, Event event);
  Status StartInstance(Event event);
  void Finish(Instance& instance, bool error, const std::string& payload);
  void Fail(Event event, const std::string& why);
  void InstallRuntimeApi(Instance& instance);

  LambdaEmulatorOptions options_;
  httplib::Server invoke_api_;
  std::thread invoke_thread_;
  std::thread dispatcher_;
  int port_ = 0;

  mutable std::mutex mutex_;
  std::condition_variable changed_;  // events, instances, results
  std::deque<Event> queue_;
  std::map<int, std::unique_ptr<Instance>> instances_;
  int next_instance_ = 0;
  bool stopping_ = false;
  LambdaEmulatorStats stats_;
};

Status LambdaEmulator::Impl::Start() {
  NIMBUS_RETURN_IF_ERROR(options_.Validate());
  // A synchronous invocation holds its request's thread until the function ends: one thread
  // per instance the concurrency allows, and some for the rest.
  invoke_api_.new_task_queue = [this] { return new httplib::ThreadPool(static_cast<size_t>(options_.concurrency) + 8); };
  invoke_api_.Post(R"(/2015-03-31/functions/([^/]+)/invocations)", [this](const httplib::Request& request,
                                                                           httplib::Response& response) {
    if (request.matches[1] != options_.function) {
      response.status = 404;
      response.set_content(ErrorJson("ResourceNotFoundException", "Function not found: " + std::string(request.matches[1])),
                           "application/json");
      return;
    }
    if (options_.require_signature && request.get_header_value("Authorization").rfind("AWS4-HMAC-SHA256 Credential=", 0) != 0) {
      response.status = 403;
      response.set_content(ErrorJson("MissingAuthenticationTokenException", "Missing Authentication Token"),
                           "application/json");
      return;
    }
    const std::string type = request.has_header("X-Amz-Invocation-Type")
                                 ? request.get_header_value("X-Amz-Invocation-Type")
                                 : "RequestResponse";
    if (type == "DryRun") {
      response.status = 204;
      return;
    }
    Event event{NewRequestId(), request.body, 0, nullptr};
    response.set_header("X-Amzn-RequestId", event.id);
    if (type == "Event") {
      Enqueue(std::move(event));
      response.status = 202;
      return;
    }
    auto result = std::make_shared<Result>();
    event.result = result;
    Enqueue(std::move(event));
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, std::chrono::duration<double>(options_.timeout_seconds + 5),
                      [&] { return result->done || stopping_; });
    response.status = 200;
    if (result->error) response.set_header("X-Amz-Function-Error", "Unhandled");
    response.set_content(result->done ? result->payload : ErrorJson("ServiceException", "stopped"), "application/json");
  });
  port_ = options_.port > 0 ? (invoke_api_.bind_to_port(options_.host, options_.port) ? options_.port : -1)
                            : invoke_api_.bind_to_any_port(options_.host);
  if (port_ <= 0) return Unavailable("cannot listen on " + options_.host + ":" + std::to_string(options_.port));
  invoke_thread_ = std::thread([this] { invoke_api_.listen_after_bind(); });
  dispatcher_ = std::thread([this] { Dispatch(); });
  return Status::Ok();
}

void LambdaEmulator::Impl::Enqueue(Event event) {
  {
    std::lock_guard lock(mutex_);
    ++stats_.invocations;
    queue_.push_back(std::move(event));
  }
  changed_.notify_all();
}

void LambdaEmulator::Impl::Assign(Instance& instance, Event event) {
  instance.current = std::move(event);
  instance.delivered = false;
  instance.deadline = MonotonicSeconds() + options_.timeout_seconds;
  if (instance.served > 0) ++stats_.warm_starts;
}

void LambdaEmulator::Impl::Fail(Event event, const std::string& why) {
  // Lambda retries a failed asynchronous invocation; a synchronous caller hears the error.
  if (!event.result && event.attempt < options_.retries) {
    ++event.attempt;
    ++stats_.retries;
    queue_.push_back(std::move(event));
    return;
  }
  ++stats_.errors;
  if (event.result) {
    event.result->done = true;
    event.result->error = true;
    // A function error's payload, as Lambda gives it (not a service error's shape).
    event.result->payload = nlohmann::json{{"errorType", "Runtime.ExitError"}, {"errorMessage", why}}.dump();
  }
}

void LambdaEmulator::Impl::Finish(Instance& instance, bool error, const std::string& payload) {
  Event event = std::move(*instance.current);
  instance.current.reset();
  ++instance.served;
  if (error) {
    Fail(std::move(event), payload);
  } else if (event.result) {
    event.result->done = true;
    event.result->payload = payload;
  }
  changed_.notify_all();
}

void LambdaEmulator::Impl::InstallRuntimeApi(Instance& instance) {
  httplib::Server& api = *instance.api;
  Instance* self = &instance;
  api.Get("/2018-06-01/runtime/invocation/next", [this, self](const httplib::Request&, httplib::Response& response) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return stopping_ || self->ending || (self->current && !self->delivered); });
    if (stopping_ || self->ending) {
      response.status = 500;
      return;
    }
    self->delivered = true;
    const Event& event = *self->current;
    response.set_header("Lambda-Runtime-Aws-Request-Id", event.id);
    response.set_header("Lambda-Runtime-Deadline-Ms",
                        std::to_string(static_cast<int64_t>((WallSeconds() + self->deadline - MonotonicSeconds()) * 1000)));
    response.set_header("Lambda-Runtime-Invoked-Function-Arn",
                        "arn:aws:lambda:us-east-1:000000000000:function:" + options_.function);
    response.set_content(event.payload, "application/json");
  });
  auto finish = [this, self](const httplib::Request& request, httplib::Response& response, bool error) {
    std::lock_guard lock(mutex_);
    if (!self->current || request.matches[1] != self->current->id) {
      response.status = 400;
      response.set_content(ErrorJson("InvalidRequestID", "not the current invocation"), "application/json");
      return;
    }
    Finish(*self, error, request.body);
    response.status = 202;
    response.set_content("{\"status\":\"OK\"}", "application/json");
  };
  api.Post(R"(/2018-06-01/runtime/invocation/([^/]+)/response)",
           [finish](const httplib::Request& q, httplib::Response& r) { finish(q, r, false); });
  api.Post(R"(/2018-06-01/runtime/invocation/([^/]+)/error)",
           [finish](const httplib::Request& q, httplib::Response& r) { finish(q, r, true); });
  api.Post("/2018-06-01/runtime/init/error", [this, self](const httplib::Request&, httplib::Response& response) {
    std::lock_guard lock(mutex_);
    self->ending = true;
    if (self->pid > 0) ::kill(self->pid, SIGKILL);
    response.status = 202;
    changed_.notify_all();
  });
}

Status LambdaEmulator::Impl::StartInstance(Event event) {
  auto instance = std::make_unique<Instance>();
  instance->id = next_instance_++;
  instance->api = std::make_unique<httplib::Server>();
  InstallRuntimeApi(*instance);
  instance->port = instance->api->bind_to_any_port("127.0.0.1");
  if (instance->port <= 0) return Unavailable("cannot open a Runtime API endpoint for a new instance");
  httplib::Server* api = instance->api.get();
  instance->server = std::thread([api] { api->listen_after_bind(); });

  SpawnOptions bootstrap;
  bootstrap.argv = {options_.bootstrap};
  bootstrap.environment.emplace();
  for (char** e = environ; *e != nullptr; ++e) bootstrap.environment->emplace_back(*e);
  bootstrap.environment->push_back("AWS_LAMBDA_RUNTIME_API=127.0.0.1:" + std::to_string(instance->port));
  bootstrap.environment->push_back("AWS_LAMBDA_FUNCTION_NAME=" + options_.function);
  bootstrap.environment->push_back("AWS_LAMBDA_FUNCTION_MEMORY_SIZE=" + std::to_string(options_.memory_mb));
  bootstrap.environment->push_back("_HANDLER=bootstrap");
  nimbus::Result<pid_t> pid = Spawn(bootstrap);
  if (!pid.ok()) {
    instance->api->stop();
    instance->server.join();
    return Unavailable("cannot start the bootstrap: " + pid.status().message());
  }
  instance->pid = *pid;
  ++stats_.cold_starts;
  Assign(*instance, std::move(event));
  instances_[instance->id] = std::move(instance);
  return Status::Ok();
}

void LambdaEmulator::Impl::Dispatch() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    // Instances that ended: a death during an invocation fails it (and Lambda retries it).
    for (auto it = instances_.begin(); it != instances_.end();) {
      Instance& instance = *it->second;
      int status = 0;
      if (::waitpid(instance.pid, &status, WNOHANG) != instance.pid) {
        if (instance.current && MonotonicSeconds() > instance.deadline) {
          ++stats_.timeouts;
          ::kill(instance.pid, SIGKILL);  // reaped next time round
        }
        ++it;
        continue;
      }
      if (instance.current) {
        ++stats_.crashes;
        Event event = std::move(*instance.current);
        instance.current.reset();
        // In Lambda's words (a killed runtime, as when it runs out of memory: "signal: killed").
        const std::string how = WIFSIGNALED(status) ? std::string("signal: ") + (WTERMSIG(status) == SIGKILL ? "killed" : "terminated")
                                                    : "exit status " + std::to_string(WEXITSTATUS(status));
        const std::string why = "RequestId: " + event.id + " Error: Runtime exited with error: " + how;
        Fail(std::move(event), why);
      }
      instance.ending = true;
      instance.api->stop();
      lock.unlock();
      instance.server.join();
      lock.lock();
      it = instances_.erase(it);
      changed_.notify_all();
    }
    // Queued invocations go to idle instances first, then to new ones up to the limit.
    while (!queue_.empty()) {
      Instance* idle = nullptr;
      for (auto& [id, instance] : instances_) {
        if (!instance->current && !instance->ending) {
          idle = instance.get();
          break;
        }
      }
      Event event = std::move(queue_.front());
      queue_.pop_front();
      if (idle != nullptr) {
        Assign(*idle, std::move(event));
      } else if (static_cast<int>(instances_.size()) < options_.concurrency) {
        if (Status started = StartInstance(event); !started.ok()) {
          std::fprintf(stderr, "nimbus lambda emulate: %s\n", started.message().c_str());
          Fail(std::move(event), started.message());
        }
      } else {
        queue_.push_front(std::move(event));  // throttled: wait for an instance
        break;
      }
    }
    changed_.notify_all();
    changed_.wait_for(lock, std::chrono::milliseconds(20));
  }
}

void LambdaEmulator::Impl::Stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    for (auto& [id, instance] : instances_) {
      if (instance->pid > 0) ::kill(instance->pid, SIGKILL);
    }
  }
  changed_.notify_all();
  invoke_api_.stop();
  if (invoke_thread_.joinable()) invoke_thread_.join();
  if (dispatcher_.joinable()) dispatcher_.join();
  for (auto& [id, instance] : instances_) {
    instance->api->stop();
    if (instance->server.joinable()) instance->server.join();
    int status = 0;
    ::waitpid(instance->pid, &status, 0);
  }
  instances_.clear();
}

LambdaEmulator::LambdaEmulator(LambdaEmulatorOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
LambdaEmulator::~LambdaEmulator() = default;
Status LambdaEmulator::Start() { return impl_->Start(); }
int LambdaEmulator::port() const { return impl_->port(); }
void LambdaEmulator::Stop() { impl_->Stop(); }
LambdaEmulatorStats LambdaEmulator::stats() const { return impl_->stats(); }
std::vector<int64_t> LambdaEmulator::instance_pids() const { return impl_->instance_pids(); }

}  // namespace nimbus
