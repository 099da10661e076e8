// The AWS Lambda Invoke API (and CreateFunction, for deployment and tests): the master starts
// each worker as an asynchronous invocation of one function.
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

  // POST /2015-03-31/functions: a provided.al2023 function from a deployment zip.
  Status CreateFunction(const std::string& function, const std::string& role_arn, const std::string& zip_bytes,
                        int memory_mb, int timeout_seconds) const;

 private:
  AwsClient client_;
};

}  // namespace nimbus
