// A local stand-in for the AWS Lambda service, for rehearsal and tests: it accepts Invoke API
// requests (POST /2015-03-31/functions/NAME/invocations, Event or RequestResponse) and runs
// each invocation in an instance of the function's bootstrap, a process whose
// AWS_LAMBDA_RUNTIME_API points at the instance's own Runtime API endpoint. As Lambda does, it
// starts one instance per concurrent invocation, reuses an idle (warm) instance for the next
// one, ends an invocation at its timeout, and retries a failed Event invocation twice.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nimbus/core/status.h"

namespace nimbus {

struct LambdaEmulatorOptions {
  std::string host = "127.0.0.1";
  int port = 0;                            // 0: a free port
  std::string function = "nimbus-worker";  // the one function it serves
  std::string bootstrap;                   // what an instance runs (the package's bootstrap)
  int concurrency = 100;                   // instances at most
  double timeout_seconds = 900;            // per invocation, as the function's timeout
  int memory_mb = 1769;
  int retries = 2;                         // of a failed Event invocation
  bool require_signature = true;           // Invoke requests must carry a SigV4 Authorization

  Status Validate() const;
};

struct LambdaEmulatorStats {
  int64_t invocations = 0;  // accepted Invoke requests
  int64_t cold_starts = 0;  // instances started
  int64_t warm_starts = 0;  // invocations served by an instance that had served one before
  int64_t timeouts = 0;
  int64_t crashes = 0;      // instances that died during an invocation
  int64_t retries = 0;
  int64_t errors = 0;       // invocations that ended in a function error
};

class LambdaEmulator {
 public:
  explicit LambdaEmulator(LambdaEmulatorOptions options);
  ~LambdaEmulator();
  LambdaEmulator(const LambdaEmulator&) = delete;
  LambdaEmulator& operator=(const LambdaEmulator&) = delete;

  // Binds and serves in background threads.
  Status Start();
  int port() const;
  // Ends every instance and stops serving. Safe to call more than once.
  void Stop();
  LambdaEmulatorStats stats() const;
  // The process ids of the instances running now (tests kill them).
  std::vector<int64_t> instance_pids() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nimbus
