// Workers as AWS Lambda functions: the custom-runtime bootstrap that runs inside the function
// (the Lambda Runtime API), the launcher the master uses to start them (the Invoke API), and
// the event that connects the two.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "nimbus/cloud/aws.h"
#include "nimbus/core/status.h"
#include "nimbus/runtime/launcher.h"

namespace nimbus {

// The event of one worker invocation, as JSON:
//   {"connect": "tcp://HOST:PORT", "run": RUN, "worker": I, "invocation": J,
//    "credentials": {"access_key_id": ..., "secret_access_key": ..., "session_token": ...},
//    "region": ..., "endpoint_url": ...,
//    "server_key": ..., "client_key": ..., "client_secret": ...}
// "credentials", "region" and "endpoint_url" are optional: by default a function uses its
// execution role. The keys are the run's CurveZMQ keys (absent only for an --insecure master).
struct LambdaWorkerEvent {
  std::string connect;
  uint64_t run_id = 0;
  int worker = 0;
  uint64_t invocation = 1;
  std::optional<AwsCredentials> credentials;
  std::string region;
  std::string endpoint_url;
  ClientCredentials keys;

  std::string ToJson() const;
  static Result<LambdaWorkerEvent> Parse(const std::string& json);
};

// The bootstrap of a provided.al2023 custom runtime: GET the next invocation from the Runtime
// API at $AWS_LAMBDA_RUNTIME_API, run the worker it names until it leaves (its lifetime budget
// is the invocation's deadline, minus `deadline_margin_seconds`), POST the response (or the
// error), and ask for the next one, so a warm instance serves many invocations. Returns when
// the Runtime API is gone.
int RunLambdaBootstrap(double deadline_margin_seconds = 2.0);

// Starts workers as invocations of `function` (InvocationType RequestResponse, each waited
// for by a thread): the master hears how each ended, "Runtime exited with error: signal:
// killed" when Lambda killed it (reported as out of memory).
std::unique_ptr<Launcher> MakeLambdaLauncher(std::string function, AwsConfig config,
                                             std::optional<AwsCredentials> pass_credentials = std::nullopt);

}  // namespace nimbus
