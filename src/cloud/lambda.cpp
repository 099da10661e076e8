#include "nimbus/cloud/lambda.h"

#include "nimbus/core/json_text.h"

namespace nimbus {
namespace {

Status LambdaError(const std::string& what, const HttpResponse& response) {
  // Lambda answers errors as JSON: {"Type": "...", "message": "..."}; show it as it is.
  const std::string body = response.body.size() > 300 ? response.body.substr(0, 300) + "..." : response.body;
  const std::string detail = what + ": HTTP " + std::to_string(response.status) + " " + body;
  if (response.status == 404) return NotFound(detail);
  if (response.status == 403 || response.status == 401) return FailedPrecondition(detail);
  return Unavailable(detail);
}

}  // namespace

LambdaClient::LambdaClient(AwsConfig config) : client_(std::move(config), "lambda") {}

Status LambdaClient::InvokeAsync(const std::string& function, const std::string& payload) const {
  AwsClient::Call call;
  call.method = "POST";
  call.path = "/2015-03-31/functions/" + function + "/invocations";
  call.headers = {{"x-amz-invocation-type", "Event"}, {"content-type", "application/json"}};
  call.body = payload;
  call.timeout_seconds = 30;
  NIMBUS_ASSIGN_OR_RETURN(HttpResponse response, client_.Send(call));
  if (response.status != 202) return LambdaError("invoke " + function, response);
  return Status::Ok();
}

Result<LambdaClient::Ended> LambdaClient::Invoke(const std::string& function, const std::string& payload,
                                                 double timeout_seconds,
                                                 std::shared_ptr<const std::atomic<bool>> cancel) const {
  AwsClient::Call call;
  call.method = "POST";
  call.path = "/2015-03-31/functions/" + function + "/invocations";
  call.headers = {{"x-amz-invocation-type", "RequestResponse"}, {"content-type", "application/json"}};
  call.body = payload;
  call.timeout_seconds = timeout_seconds;
  call.cancel = std::move(cancel);
  NIMBUS_ASSIGN_OR_RETURN(HttpResponse response, client_.Send(call));
  if (response.status != 200) return LambdaError("invoke " + function, response);
  const auto error = response.headers.find("x-amz-function-error");
  return Ended{error == response.headers.end() ? "" : error->second, response.body};
}

Status LambdaClient::CreateFunction(const std::string& function, const std::string& role_arn,
                                    const std::string& zip_bytes, int memory_mb, int timeout_seconds) const {
  const OrderedJson json = {{"FunctionName", function},
                            {"Runtime", "provided.al2023"},
                            {"Role", role_arn},
                            {"Handler", "bootstrap"},
                            {"MemorySize", memory_mb},
                            {"Timeout", timeout_seconds},
                            {"Code", {{"ZipFile", Base64Encode(zip_bytes)}}}};
  AwsClient::Call call;
  call.method = "POST";
  call.path = "/2015-03-31/functions";
  call.headers = {{"content-type", "application/json"}};
  call.body = JsonText(json);
  NIMBUS_ASSIGN_OR_RETURN(HttpResponse response, client_.Send(call));
  if (response.status != 201) return LambdaError("create function " + function, response);
  return Status::Ok();
}

}  // namespace nimbus
