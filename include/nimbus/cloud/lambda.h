// The AWS Lambda Invoke API (and CreateFunction, for deployment and tests): the master starts
// each worker as an invocation of one function, and hears how it ended.
#pragma once

#include <string>

#include "nimbus/cloud/aws.h"

namespace nimbus {

class LambdaClient {
 public:
  explicit LambdaClient(AwsConfig config);

  // POST /2015-03-31/functions/NAME/invocations with X-Amz-Invocation-Type: Event. The
  // service queues the event and answers 202 Accepted.
  Status InvokeAsync(const std::string& function, const std::string& payload) const;

  // How a synchronous invocation ended: the function's payload, or for a function error
  // X-Amz-Function-Error ("Unhandled") and a payload {"errorType": ..., "errorMessage": ...},
  // e.g. Runtime.ExitError "RequestId: ... Error: Runtime exited with error: signal: killed"
  // when Lambda killed the runtime (out of memory, most often).
  struct Ended {
    std::string function_error;  // empty: it returned
    std::string payload;
  };
  // RequestResponse: waits (up to `timeout_seconds`, the function's timeout and then some)
  // until the invocation ends. `cancel` abandons the wait.
  Result<Ended> Invoke(const std::string& function, const std::string& payload, double timeout_seconds,
                       std::shared_ptr<const std::atomic<bool>> cancel = nullptr) const;

  // POST /2015-03-31/functions: a provided.al2023 function from a deployment zip.
  Status CreateFunction(const std::string& function, const std::string& role_arn, const std::string& zip_bytes,
                        int memory_mb, int timeout_seconds) const;

 private:
  AwsClient client_;
};

}  // namespace nimbus
